"""Making a study of any kind from one description, `StudySpec` — the one function behind both
`memscope study new` and the app's study form (tui/modals/study_form.py), so the two take the same
options with the same defaults and refuse the same mistakes with the same words.

`OPTIONS` lists every option once: its flag, the kinds it is for, its help, its default (the
StudySpec field's); the command line registers its arguments from it and the form draws its fields
from it. `make_study(spec, bench, runs, store)` checks the spec, plans the queue and stores it.
No Textual, no printing: `summary` gives the lines the command prints and the form shows.
"""

from __future__ import annotations

import math
from collections.abc import Sequence
from dataclasses import dataclass, fields, replace
from typing import Any

from scorer.errors import UserError
from scorer.load.join import Joiner
from scorer.metrics.constants import DEFAULT_PREVALENCE, DEFAULT_SEED, OPTION_BOUNDS
from scorer.model import Benchmark, Run
from scorer.store.adjudicate import OF_CHOICES, of_kind, plan_adjudication
from scorer.store.db import Store
from scorer.store.queues import STUDY_KINDS, Study
from scorer.store.sampling import DEFAULT_METHODS, DEFAULT_MODE, StudyPlan, parse_per_cell, plan_agreement, plan_labels, plan_oracle

SAMPLED = ("agreement", "oracle", "labels")  # the kinds drawn per (X, Y) cell


@dataclass(frozen=True)
class StudySpec:
    """What a study is made of. None means "the default" (DEFAULT_METHODS, DEFAULT_MODE[kind], …)."""

    kind: str
    name: str
    per_cell: str | None = None
    methods: str | None = None
    backbone: str | None = None
    mode: str | None = None
    seed: int = DEFAULT_SEED
    show_judge_after: bool = False
    of: str | None = None
    include_judge: bool = False
    from_study: str | None = None
    kappa: float | None = None
    half_width: float | None = None
    prevalence: float | None = None


@dataclass(frozen=True)
class StudyOption:
    field: str  # the StudySpec field
    flag: str
    kinds: tuple[str, ...]  # the study kinds it is for
    help: str
    metavar: str | None = None
    choices: tuple[str, ...] | None = None
    switch: bool = False  # a flag without a value (store_true)
    number: type | None = None  # int or float: parsed as that
    required: tuple[str, ...] = ()  # the kinds that need it

    @property
    def default(self) -> Any:
        return next(f.default for f in fields(StudySpec) if f.name == self.field)


OPTIONS: tuple[StudyOption, ...] = (
    StudyOption("per_cell", "--per-cell", SAMPLED, "items per (X, Y) cell: a number, or a range such as 8-10 "
                "(drawn per cell)", metavar="N", required=SAMPLED),
    StudyOption("methods", "--methods", ("agreement",), f"methods by run or display name (default "
                f"{','.join(DEFAULT_METHODS)})", metavar="A,B"),
    StudyOption("backbone", "--backbone", ("agreement",), "the backbone whose runs to use (needed when the "
                "methods ran on several)", metavar="B"),
    StudyOption("mode", "--mode", SAMPLED, "item form: agreement open (default), oracle mcq (default); labels "
                "any form", choices=("open", "mcq")),
    StudyOption("seed", "--seed", STUDY_KINDS, f"the seed of the sample and of each annotator's order "
                f"(default {DEFAULT_SEED})", metavar="S", number=int),
    StudyOption("show_judge_after", "--show-judge-after", ("agreement",), "show the judge's score once the "
                "annotator has committed (default: never)", switch=True),
    StudyOption("kappa", "--kappa", ("agreement",), "the κ the study should show: with --half-width, the pairs "
                "it needs are planned and printed", metavar="K", number=float),
    StudyOption("half_width", "--half-width", ("agreement",), "the planned 95% CI half-width of κ: `study "
                "list` says how many more pairs reach it", metavar="W", number=float),
    StudyOption("prevalence", "--prevalence", ("agreement",), f"the expected share of accepts, for the plan "
                f"(default {DEFAULT_PREVALENCE})", metavar="P", number=float),
    StudyOption("of", "--of", ("adjudicate",), "what to adjudicate: annotators' labels, verdicts or oracle "
                "answers", choices=OF_CHOICES, required=("adjudicate",)),
    StudyOption("include_judge", "--include-judge", ("adjudicate",), "also queue the verdicts where the human "
                "majority and the judge disagree (needs --runs)", switch=True),
    StudyOption("from_study", "--from", ("adjudicate",), "only the acts of this study (default: every act of "
                "that kind in the database)", metavar="STUDY"),
)
RUNS_KINDS = ("agreement", "adjudicate")  # --runs: the predictions judged / the judge's scores


def spec_from(values: dict[str, Any]) -> StudySpec:
    """A StudySpec from named values (argparse's, the form's); empty text means the default."""
    kw = {}
    for f in fields(StudySpec):
        v = values.get(f.name)
        if isinstance(v, str) and not v.strip():
            v = None
        if v is None and f.name == "seed":
            continue
        kw[f.name] = v.strip() if isinstance(v, str) else v
    return StudySpec(**kw)


def _a(kind: str) -> str:
    return ("an " if kind[0] in "aeiou" else "a ") + kind


def _shown(v: Any) -> bool:
    return v not in (None, False, "")


def check_spec(spec: StudySpec, runs_given: bool = False) -> StudySpec:
    """Refuse an option that is not for the spec's kind, a missing required one, a number out of
    range; the spec with its numbers parsed."""
    if spec.kind not in STUDY_KINDS:
        raise UserError(f"study kind must be one of {', '.join(STUDY_KINDS)}, got {spec.kind!r}")
    if not spec.name or not str(spec.name).strip():
        raise UserError("a study needs a name (--name NAME)")
    for opt in OPTIONS:
        value = getattr(spec, opt.field)
        if spec.kind not in opt.kinds and _shown(value) and value != opt.default:
            kinds = " and ".join(opt.kinds) if len(opt.kinds) < 3 else ", ".join(opt.kinds[:-1]) + " and " + opt.kinds[-1]
            raise UserError(f"{opt.flag} is for {kinds} studies only (this is {_a(spec.kind)} study)")
        if spec.kind in opt.required and not _shown(value):
            raise UserError(f"{_a(spec.kind)} study needs {opt.flag}")
        if opt.choices and _shown(value) and value not in opt.choices:
            raise UserError(f"{opt.flag} must be one of {', '.join(opt.choices)}, got {value!r}")
        if opt.number is not None and _shown(value):
            try:
                num = opt.number(value)
            except (TypeError, ValueError):
                raise UserError(f"{opt.flag} must be a{'n integer' if opt.number is int else ' number'}, "
                                f"got {value!r}") from None
            if not math.isfinite(num):
                raise UserError(f"{opt.flag} must be a finite number, got {value!r}")
            spec = replace(spec, **{opt.field: num})
    if runs_given and spec.kind not in RUNS_KINDS:
        raise UserError(f"--runs is for agreement and adjudicate studies only (this is {_a(spec.kind)} study)")
    if spec.kind in SAMPLED:
        parse_per_cell(spec.per_cell)  # a bad quota is refused before any file is read
    lo, hi = OPTION_BOUNDS["seed"]
    if not lo <= spec.seed <= hi:
        raise UserError(f"--seed must be between {lo:,} and {hi:,}, got {spec.seed:,}")
    if spec.kappa is not None and spec.half_width is None:
        raise UserError("--kappa plans the study's size for a CI half-width: give --half-width W too")
    if spec.prevalence is not None and spec.half_width is None:
        raise UserError("--prevalence is for planning the study's size: give --half-width W too")
    if spec.half_width is not None and not 0 < spec.half_width < 1:
        raise UserError(f"--half-width must lie between 0 and 1, got {spec.half_width:g}")
    return spec


def judge_scores(bench: Benchmark, runs: Sequence[Run]) -> dict[tuple[str, str, str], float]:
    """{(item_id, mode, run_key): judge score} of every scored prediction that joins to an item."""
    out = {}
    for run, p, item in Joiner(bench).pairs(runs):
        s = p.judge
        if s is not None and s == s:
            out.setdefault((item.item_id, run.mode, run.key), s)
    return out


def plan_study(spec: StudySpec, bench: Benchmark, runs: Sequence[Run], store: Store) -> StudyPlan:
    """The queue `spec` describes (checked first), not yet stored."""
    spec = check_spec(spec)
    if spec.kind == "adjudicate":
        kind = of_kind(spec.of)
        if spec.from_study is not None:
            store.study(spec.from_study)  # one line naming the studies there are, if it is not one
        rows = store.current(kind, study=spec.from_study)
        judge = judge_scores(bench, runs) if spec.include_judge and runs else None
        return plan_adjudication(rows, kind, spec.seed, bench=bench, include_judge=spec.include_judge,
                                 judge=judge, source=spec.from_study)
    per_cell = parse_per_cell(spec.per_cell)
    mode = spec.mode or DEFAULT_MODE[spec.kind]
    if spec.kind == "agreement":
        if not runs:
            raise UserError("an agreement study needs the runs whose predictions are judged: --runs DIR…")
        methods = [m.strip() for m in spec.methods.split(",") if m.strip()] if spec.methods else list(DEFAULT_METHODS)
        twice = sorted({m for m in methods if methods.count(m) > 1})
        if twice:
            raise UserError(f"--methods names {', '.join(map(repr, twice))} more than once")
        plan = plan_agreement(bench, runs, per_cell, spec.seed, methods, spec.backbone, mode,
                              show_judge=spec.show_judge_after)
        if spec.half_width is not None:
            planned: dict[str, Any] = {"half_width": spec.half_width}
            if spec.kappa is not None:
                from scorer.metrics.kappa_plan import plan_kappa  # numpy: not for `memscope --help`

                try:
                    kp = plan_kappa(spec.kappa, spec.half_width, spec.prevalence or DEFAULT_PREVALENCE)
                except ValueError as err:
                    raise UserError(str(err)) from None
                planned.update(kappa=kp.kappa, prevalence=kp.prevalence, pairs=kp.pairs)
            plan = replace(plan, params={**plan.params, "plan": planned})
        return plan
    if spec.kind == "oracle":
        return plan_oracle(bench, per_cell, spec.seed, mode)
    return plan_labels(bench, per_cell, spec.seed, spec.mode)


def make_study(spec: StudySpec, bench: Benchmark, runs: Sequence[Run], store: Store) -> tuple[Study, StudyPlan]:
    """Plan the study and store it (committed when this returns)."""
    plan = plan_study(spec, bench, runs, store)
    study = store.create_study(spec.name, plan.kind, plan.seed, plan.params, plan.entries)
    return study, plan


def summary(study: Study, plan: StudyPlan, db: str) -> list[str]:
    """What making the study did, as plain lines (the caller makes data text safe to show)."""
    what = f"{len(plan.entries)} entries"
    if plan.kind == "agreement":
        what += f" ({plan.n_items} items × {len(plan.params['methods'])} methods on {plan.params['backbone']}, blind)"
    elif plan.kind == "adjudicate":
        what += f" of {plan.params['of']} acts ({plan.params['candidates']} entries looked at, unblinded)"
    else:
        what += f" ({plan.n_items} items)"
    lines = [f"study {study.name!r}: {plan.kind}, {what}, seed {plan.seed} → {db}"]
    label = "queued because" if plan.kind == "adjudicate" else "per cell"
    lines.append(f"  {label}: " + ", ".join(f"{c} {n}" for c, n in plan.params["strata"].items()))
    lines += [f"  short: {s}" for s in plan.shortfalls]
    planned = plan.params.get("plan")
    if planned and "pairs" in planned:
        lines.append(f"  planned: κ {planned['kappa']:g} ± {planned['half_width']:g} (95%) at prevalence "
                     f"{planned['prevalence']:g} needs {planned['pairs']} pairs; this study has {len(plan.entries)}")
    return lines
