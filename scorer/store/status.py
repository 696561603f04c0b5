"""Where a study stands (issue 16): each annotator's progress, the current agreement of every two
annotators on the study's entries, and — in an agreement study — the judge-vs-human κ so far with
its analytic 95% CI and n, and about how many more pairs bring the CI to the planned half-width.
`memscope study list` prints it and the app's Study screen shows it (one computation, one wording).

- Pairwise: Cohen's κ (nominal) of two annotators over the entries both answered in this study: the
  verdict (accept / reject / borderline), the X and the Y label set (each set one category), the
  oracle answer (an option is read in the rotation each annotator saw: give the benchmark), an
  adjudication's decision.
- κ so far: the judge (score ≥ 0.5 → accept; the scores the study recorded when it was made)
  against each annotator and, with two or more, their strict majority; borderline verdicts, ties
  and entries without a judge score are excluded and counted. The pairs to go assume κ and the
  marginals stay as observed (scorer.metrics.kappa_plan.pairs_to_go).

No printing: `status_lines` gives the text (data text in it is the caller's to make safe).
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, field
from itertools import combinations
from typing import Any

from scorer.metrics.kappa import cohen_kappa
from scorer.metrics.kappa_plan import pairs_to_go
from scorer.model import Benchmark
from scorer.store.adjudicate import act_value, entries_of, judge_verdict, strict_majority
from scorer.store.db import Store
from scorer.store.queues import STUDY_EVENT, Study

DECIDED = ("accept", "reject")


@dataclass(frozen=True)
class Pairwise:
    rater_a: str
    rater_b: str
    on: str  # "verdict", "X", "Y", "answer", "decision"
    n: int
    observed: float | None
    kappa: float | None
    undefined_reason: str | None = None


@dataclass(frozen=True)
class LiveKappa:
    human: str  # an annotator, or "majority"
    n: int
    excluded: int
    kappa: float | None
    ci_low: float | None  # None also when no pair disagrees (the analytic SE is 0: no interval)
    ci_high: float | None
    planned_half_width: float | None
    to_go: int | None  # more pairs to reach the planned half-width (None: no plan, or κ undefined)
    undefined_reason: str | None = None

    @property
    def half_width(self) -> float | None:
        return None if self.ci_low is None else (self.ci_high - self.ci_low) / 2


@dataclass(frozen=True)
class StudyStatus:
    study: Study
    progress: list[dict[str, Any]]
    pairwise: list[Pairwise] = field(default_factory=list)
    live: list[LiveKappa] = field(default_factory=list)
    notes: list[str] = field(default_factory=list)
    planned_pairs: int | None = None  # from `study new --kappa --half-width`
    # annotators whose answers in the study came without a queue (`annotations import`): entries answered
    unqueued: dict[str, int] = field(default_factory=dict)


def _values(study: Study, store: Store, bench: Benchmark | None) -> dict[str, dict[tuple, dict[str, Any]]]:
    """{aspect: {entry: {annotator: value}}} of the study's current answers."""
    kind = STUDY_EVENT[study.kind]
    rows = store.current(kind, study=study.name)
    out: dict[str, dict[tuple, dict[str, Any]]] = {}
    for entry, acts in entries_of(rows).items():
        for annotator, row in acts.items():
            if kind == "label":
                x, y = act_value("label", row)
                out.setdefault("X", {}).setdefault(entry, {})[annotator] = "+".join(x)
                out.setdefault("Y", {}).setdefault(entry, {})[annotator] = "+".join(y)
            elif kind == "adjudication":
                of = row.get("of")
                decision = {**(row.get("decision") or {}), "item_id": row["item_id"]}
                out.setdefault("decision", {}).setdefault(entry, {})[annotator] = (of, act_value(of, decision, bench))
            else:
                aspect = "verdict" if kind == "verdict" else "answer"
                out.setdefault(aspect, {}).setdefault(entry, {})[annotator] = act_value(kind, row, bench)
    return out


def pairwise(values: Mapping[str, Mapping[tuple, Mapping[str, Any]]]) -> list[Pairwise]:
    out = []
    for aspect, entries in values.items():
        annotators = sorted({a for acts in entries.values() for a in acts})
        for a, b in combinations(annotators, 2):
            both = [(acts[a], acts[b]) for acts in entries.values() if a in acts and b in acts]
            if not both:
                out.append(Pairwise(a, b, aspect, 0, None, None, "no entry answered by both"))
                continue
            codes = {v: i for i, v in enumerate(sorted({repr(v) for pair in both for v in pair}))}
            ra, rb = [codes[repr(u)] for u, _ in both], [codes[repr(v)] for _, v in both]
            k = cohen_kappa(ra, rb)
            out.append(Pairwise(a, b, aspect, k.n, k.observed, k.kappa, k.undefined_reason))
    return out


def live_kappa(study: Study, store: Store, half_width: float | None = None) -> tuple[list[LiveKappa], list[str]]:
    """Judge vs each annotator (and their majority) so far, in an agreement study."""
    scores = study.params.get("judge_scores")
    if study.kind != "agreement":
        return [], []
    if not scores:
        return [], ["κ so far needs the judge's scores, which this study did not record (made before they "
                    "were): score it with `memscope score … --db`"]
    items = store.study_items(study.name)
    judge = {(it.item_id, it.mode, it.run_key): s for it, s in zip(items, scores)}
    planned = half_width if half_width is not None else (study.params.get("plan") or {}).get("half_width")
    verdicts = entries_of(store.current("verdict", study=study.name))
    annotators = sorted({a for acts in verdicts.values() for a in acts})
    humans = [(a, {e: acts[a]["verdict"] for e, acts in verdicts.items() if a in acts}) for a in annotators]
    if len(annotators) >= 2:
        humans.append(("majority", {e: strict_majority([r["verdict"] for r in acts.values()])
                                    for e, acts in verdicts.items()}))
    out = []
    for human, said in humans:
        pairs = [(judge_verdict(judge.get(e)), v) for e, v in said.items()]
        kept = [(j, h) for j, h in pairs if j is not None and h in DECIDED]
        if not kept:
            out.append(LiveKappa(human, 0, len(pairs), None, None, None, planned, None,
                                 "no decided verdict with a judge score yet"))
            continue
        k = cohen_kappa([j for j, _ in kept], [h for _, h in kept], labels=DECIDED)
        to_go = pairs_to_go(k.confusion, planned) if planned is not None and k.kappa is not None else None
        # No pair disagrees yet: the analytic SE is 0 whatever n, and κ ± 0 is no interval (none shown).
        low, high = (None, None) if k.se == 0 else (k.ci_low, k.ci_high)
        out.append(LiveKappa(human, k.n, len(pairs) - len(kept), k.kappa, low, high, planned, to_go,
                             k.undefined_reason))
    return out, []


def study_status(store: Store, name: str, bench: Benchmark | None = None,
                 half_width: float | None = None) -> StudyStatus:
    study = store.study(name)
    notes = []
    if study.kind == "oracle" and bench is None:
        notes.append("oracle choices compare by letter within one rotation: give the benchmark to compare "
                     "options across rotations")
    live, more = live_kappa(study, store, half_width)
    progress = store.progress(name)
    return StudyStatus(study, progress, pairwise(_values(study, store, bench)), live, notes + more,
                       (study.params.get("plan") or {}).get("pairs"), _unqueued(study, store, progress))


def _unqueued(study: Study, store: Store, progress: list[dict[str, Any]]) -> dict[str, int]:
    """Entries answered per annotator who has no queue in the study (their events were imported)."""
    queued = {p["annotator"] for p in progress}
    counts: dict[str, int] = {}
    for acts in entries_of(store.current(STUDY_EVENT[study.kind], study=study.name)).values():
        for annotator in acts:
            if annotator not in queued:
                counts[annotator] = counts.get(annotator, 0) + 1
    return dict(sorted(counts.items()))


NO_CI = "no 95% CI yet (the analytic SE is 0 while no pair disagrees)"


def _num(v: float | None) -> str:
    return "—" if v is None else f"{v:.3f}"


def _ci_within_range(low: float, high: float) -> str:
    """The analytic interval as shown: κ ± 1.96·se cut to κ's range [−1, 1], saying where it was cut
    (the normal approximation runs past ±1 at small n or κ near ±1; the bounds kept are statsmodels')."""
    cut = [f"{'upper' if b > 0 else 'lower'} bound {b:.3f} cut at {1 if b > 0 else -1}"
           for b in (low, high) if abs(b) > 1]
    text = f"{_num(max(-1.0, low))}, {_num(min(1.0, high))}]"
    return text + (f" ({'; '.join(cut)}: the normal approximation runs past κ's range)" if cut else "")


def status_lines(st: StudyStatus) -> list[str]:
    """The status as indented plain lines (after the study's own line)."""
    lines = []
    n = st.study.n_items
    if not st.progress and not st.unqueued:
        lines.append("  no annotator has started")
    for p in st.progress:
        pct = 100.0 * p["done"] / p["total"] if p["total"] else 0.0
        lines.append(f"  {p['annotator']}: {p['done']}/{p['total']} ({pct:.0f}%)")
    for annotator, answered in st.unqueued.items():
        lines.append(f"  {annotator}: {answered} of {n} entries answered (no queue: events imported, "
                     "not answered in the app)")
    for pw in st.pairwise:
        if pw.kappa is None:
            why = pw.undefined_reason or "undefined"
            obs = f", agreement {_num(pw.observed)}" if pw.observed is not None else ""
            lines.append(f"  agreement {pw.rater_a} vs {pw.rater_b} on {pw.on}: κ undefined ({why}){obs}, n {pw.n}")
        else:
            lines.append(f"  agreement {pw.rater_a} vs {pw.rater_b} on {pw.on}: κ {_num(pw.kappa)}, "
                         f"agreement {_num(pw.observed)}, n {pw.n}")
    for lk in st.live:
        head = f"  κ so far, judge vs {lk.human}: "
        if lk.kappa is None:
            lines.append(head + f"undefined ({lk.undefined_reason}), n {lk.n}, excluded {lk.excluded}")
            continue
        if lk.ci_low is None:
            text = head + f"{_num(lk.kappa)}, {NO_CI}, n {lk.n}, excluded {lk.excluded}"
        else:
            text = (head + f"{_num(lk.kappa)} [95% CI {_ci_within_range(lk.ci_low, lk.ci_high)} "
                    f"(± {_num(lk.half_width)}), n {lk.n}, excluded {lk.excluded}")
        if lk.planned_half_width is None:
            text += "; no planned width (study new --half-width W)"
        elif lk.to_go == 0:
            text += f"; planned ± {lk.planned_half_width:g} reached"
        elif lk.to_go is None:
            text += "; pairs to go unknown" + (" until one does" if lk.ci_low is None else "")
        elif lk.to_go is not None:
            text += f"; about {lk.to_go} more pairs to ± {lk.planned_half_width:g}"
            if lk.to_go > n - lk.n - lk.excluded:
                text += f" (more than this study's {n} entries hold)"
        lines.append(text)
    if st.planned_pairs is not None:
        lines.append(f"  planned: {st.planned_pairs} pairs (study new --kappa --half-width)")
    lines += [f"  note: {x}" for x in st.notes]
    return lines
