"""Building the three kinds of study (DESIGN §4, issue 5): a seeded, stratified list of (item, mode,
run) entries — a study plan — that `Store.create_study` keeps.

- agreement: per (X, Y) cell N items, each × every named method's prediction (MemEye's judge study:
  3 per cell × FC(V), SRAG(V) on gpt-5.4-mini = 72 pairs). Blind: the app shows a blind id, never the
  run, and the store shuffles the order per annotator.
- oracle: per cell N MCQ items (or open ones with mode open) that have gold clue rounds; the app
  shows only those rounds, then one rotation of the options.
- labels: per cell N items (a range such as 8-10 draws each cell's count, as the paper's 100-item
  label study did); the app hides the gold labels until the annotator commits.

The same benchmark, runs, options and seed always give the same entries in the same order.
No Textual, no printing: the command (scorer/commands/study.py) renders.
"""

from __future__ import annotations

import random
import re
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from typing import Any

from scorer.errors import UserError
from scorer.load.join import Joiner
from scorer.metrics.constants import OPTION_BOUNDS
from scorer.model import X_LABELS, Y_LABELS, Benchmark, Item, Run
from scorer.names import DEFAULT_DISPLAY_NAMES, display_name, method_matches

DEFAULT_METHODS = ("FC(V)", "SRAG(V)")  # MemEye's judge study
CELLS = tuple(f"{x}_{y}" for y in Y_LABELS for x in X_LABELS)  # the paper's table order: Y rows, X columns
DEFAULT_MODE = {"agreement": "open", "oracle": "mcq", "labels": None}


@dataclass(frozen=True)
class StudyPlan:
    kind: str
    seed: int
    params: Mapping[str, Any]
    entries: tuple[tuple[str, str | None, str | None, str], ...]  # (item_id, mode, run_key, stratum)
    shortfalls: tuple[str, ...] = ()  # cells that had fewer eligible items than asked

    @property
    def n_items(self) -> int:
        return len({e[0] for e in self.entries})


def parse_per_cell(text: str | int) -> tuple[int, int]:
    """`3` → (3, 3); `8-10` → (8, 10)."""
    m = re.fullmatch(r"\s*(\d+)\s*(?:-\s*(\d+)\s*)?", str(text))
    if not m:
        raise UserError(f"--per-cell must be a number or a range such as 8-10, got {text!r}")
    lo = int(m.group(1))
    hi = int(m.group(2)) if m.group(2) else lo
    if lo < 1 or hi < lo:
        raise UserError(f"--per-cell must be at least 1 (and a range low-high with low ≤ high), got {text!r}")
    if hi > OPTION_BOUNDS["per_cell"][1]:
        raise UserError(f"--per-cell must be at most {OPTION_BOUNDS['per_cell'][1]:,}")
    return lo, hi


def cell_members(items: Sequence[Item]) -> dict[str, list[str]]:
    """Cell name → sorted distinct item ids in it (an item with several labels is in several cells)."""
    out: dict[str, set[str]] = {c: set() for c in CELLS}
    for it in items:
        for x, y in it.cells:
            out.setdefault(f"{x}_{y}", set()).add(it.item_id)
    return {c: sorted(ids) for c, ids in out.items()}


def stratified_sample(members: Mapping[str, Sequence[str]], per_cell: tuple[int, int],
                      rng: random.Random) -> tuple[list[tuple[str, str]], list[str], dict[str, int]]:
    """Pick per cell its quota of distinct items, each item in one cell only.

    Quotas are drawn first, in the fixed cell order; then the scarcest cells choose first, so a
    multi-label item is not taken by a well-stocked cell that did not need it. Returns
    ([(item_id, cell)], shortfall messages, {cell: n taken})."""
    lo, hi = per_cell
    quota = {c: rng.randint(lo, hi) for c in members}
    taken: set[str] = set()
    picks: dict[str, list[str]] = {}
    shortfalls = []
    for cell in sorted(members, key=lambda c: (len(members[c]), c)):
        free = [i for i in sorted(members[cell]) if i not in taken]
        k = min(quota[cell], len(free))
        chosen = rng.sample(free, k)
        picks[cell] = sorted(chosen)
        taken.update(chosen)
        if k < quota[cell]:
            shortfalls.append(f"cell {cell}: {k} of {quota[cell]} item(s) (only {len(free)} eligible)")
    order = [c for c in CELLS if c in picks] + sorted(c for c in picks if c not in CELLS)
    out = [(item_id, cell) for cell in order for item_id in picks[cell]]
    return out, shortfalls, {c: len(picks[c]) for c in order}


def _rng(kind: str, seed: int) -> random.Random:
    return random.Random(f"memscope-study\x1f{kind}\x1f{seed}")


def resolve_methods(runs: Sequence[Run], wanted: Sequence[str], mode: str, backbone: str | None,
                    names: Mapping[str, str] = DEFAULT_DISPLAY_NAMES) -> tuple[str, dict[str, str]]:
    """(backbone, {wanted name: run key}) for runs of `mode`. UserError naming what is missing."""
    of_mode = [r for r in runs if r.mode == mode]
    if not of_mode:
        raise UserError(f"no {mode} runs loaded (pass --runs DIR with {mode} run folders)")
    keys: dict[str, dict[str, set[str]]] = {}  # wanted → backbone → run keys
    for w in wanted:
        for r in of_mode:
            if method_matches(r.method, w, names):
                keys.setdefault(w, {}).setdefault(r.backbone, set()).add(r.key)
    missing = [w for w in wanted if w not in keys]
    if missing:
        known = sorted({display_name(r.method, names) for r in of_mode})
        raise UserError(f"no {mode} run of method {missing[0]!r} (methods: {', '.join(known)})")
    backbones = sorted({r.backbone for r in of_mode})
    if backbone is not None:
        if backbone not in backbones:
            raise UserError(f"no {mode} runs on backbone {backbone!r} (backbones: {', '.join(backbones)})")
        lacking = [w for w in wanted if backbone not in keys[w]]
        if lacking:
            raise UserError(f"backbone {backbone!r} has no {mode} run of method {lacking[0]!r}")
    else:
        common = sorted(set.intersection(*(set(keys[w]) for w in wanted)))
        if not common:
            raise UserError(f"no backbone has {mode} runs of all of {', '.join(wanted)}")
        if len(common) > 1:
            raise UserError(f"the methods were run on several backbones ({', '.join(common)}): "
                            "choose one with --backbone")
        backbone = common[0]
    chosen = {}
    for w in wanted:
        found = sorted(keys[w][backbone])
        if len(found) > 1:
            raise UserError(f"method name {w!r} matches several runs ({', '.join(found)}): name one by its run name")
        chosen[w] = found[0]
    if len(set(chosen.values())) < len(chosen):
        raise UserError("two of the --methods name the same run")
    return backbone, chosen


def plan_agreement(bench: Benchmark, runs: Sequence[Run], per_cell: tuple[int, int], seed: int,
                   methods: Sequence[str] = DEFAULT_METHODS, backbone: str | None = None, mode: str = "open",
                   names: Mapping[str, str] = DEFAULT_DISPLAY_NAMES, show_judge: bool = False) -> StudyPlan:
    if not methods:
        raise UserError("an agreement study needs at least one method (--methods A,B)")
    backbone, chosen = resolve_methods(runs, methods, mode, backbone, names)
    answered: dict[str, set[str]] = {k: set() for k in chosen.values()}
    scores: dict[tuple[str, str], float | None] = {}
    for run, p, item in Joiner(bench).pairs([r for r in runs if r.key in answered and r.mode == mode]):
        answered[run.key].add(item.item_id)
        judge = p.judge
        scores.setdefault((run.key, item.item_id), judge if judge is not None and judge == judge else None)
    both = set.intersection(*answered.values())
    items = [it for it in bench.items(mode) if it.item_id in both]
    if not items:
        raise UserError(f"no {mode} item was answered by every one of {', '.join(methods)} on {backbone}")
    picks, shortfalls, strata = stratified_sample(cell_members(items), per_cell, _rng("agreement", seed))
    entries = tuple((item_id, mode, key, cell) for item_id, cell in picks for key in chosen.values())
    params = {"per_cell": list(per_cell), "methods": list(methods), "backbone": backbone, "mode": mode,
              "bench": bench.name, "strata": strata, "blind": True, "show_judge_after": bool(show_judge),
              "eligible_items": len(items),
              # the judge's score of each entry, in entry order: `study list` shows κ so far from it
              "judge_scores": [scores.get((key, item_id)) for item_id, _, key, _ in entries]}
    return StudyPlan("agreement", seed, params, entries, tuple(shortfalls))


def _has_clues(bench: Benchmark, it: Item) -> bool:
    return bool(bench.task_of(it).clue_chain(it))


def plan_oracle(bench: Benchmark, per_cell: tuple[int, int], seed: int, mode: str = "mcq") -> StudyPlan:
    items = [it for it in bench.items(mode) if _has_clues(bench, it) and (mode == "open" or it.rotations)]
    if not items:
        raise UserError(f"no {mode} item has gold clue rounds" + (" and options" if mode == "mcq" else ""))
    picks, shortfalls, strata = stratified_sample(cell_members(items), per_cell, _rng("oracle", seed))
    entries = tuple((item_id, mode, None, cell) for item_id, cell in picks)
    params = {"per_cell": list(per_cell), "mode": mode, "bench": bench.name, "strata": strata,
              "rotation": "seeded per annotator", "eligible_items": len(items)}
    return StudyPlan("oracle", seed, params, entries, tuple(shortfalls))


def plan_labels(bench: Benchmark, per_cell: tuple[int, int], seed: int, mode: str | None = None) -> StudyPlan:
    forms: dict[str, Item] = {}
    for it in bench.items(mode):
        forms.setdefault(it.item_id, it)  # an item's MCQ and open forms share their labels
    items = list(forms.values())
    if not items:
        raise UserError("the benchmark has no items to label")
    picks, shortfalls, strata = stratified_sample(cell_members(items), per_cell, _rng("labels", seed))
    entries = tuple((item_id, mode, None, cell) for item_id, cell in picks)
    params = {"per_cell": list(per_cell), "mode": mode, "bench": bench.name, "strata": strata,
              "gold_hidden": True, "eligible_items": len(items)}
    return StudyPlan("labels", seed, params, entries, tuple(shortfalls))
