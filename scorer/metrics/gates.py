"""Validation gates: MemEye's item-construction checks recomputed from ablation runs (MemEye §3 and
App. "Item-Level Filtering and Taxonomy Audit Details").

Gates, each read from MCQ runs of one ablation method (recognised by method name, configurable):
- question_only  (question + rotated options, no dialogue): robust success = an option/world-knowledge
  shortcut;
- no_visual      (question + options + clue-round text, no image or caption): robust success = the
  dialogue text leaks the answer;
- caption_only   (question + options + clue rounds with minimal captions): robust success = the visual
  evidence is too easily replaced by text;
- oracle         (question + options + clue rounds + original images): failure = ambiguous,
  under-specified or too hard, i.e. not a memory problem.
Robust success = solved under every MCQ rotation (each rotation's EM = 1, so rotation-averaged EM ≥
`solved`, default 1.0); failure = rotation-averaged EM ≤ `unsolved` (default 0.25, chance). With several
backbones (the paper's two-model panel) an item is flagged when every backbone that ran the gate
meets the condition (`panel="all"`), or any one (`panel="any"`).

The taxonomy-structure audit adds items whose clue structure cannot carry their Y label (a Y2/Y3
item with fewer than two existing clue rounds; an answerable item none of whose clues exists).

Pure functions: no I/O, no printing. `items_to_revisit` is what the app calls to flag items.
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from typing import Iterable, Mapping, Sequence

import numpy as np

from scorer.metrics.scales import in_unit_interval
from scorer.model import Benchmark, Item, Prediction, Run
from scorer.names import DEFAULT_DISPLAY_NAMES, display_name

GATES = ("question_only", "no_visual", "caption_only", "oracle")
GATE_TITLES = {
    "question_only": "question-only", "no_visual": "no-visual clue text", "caption_only": "caption-only clue",
    "oracle": "oracle visual evidence", "structure": "clue structure",
}
# Regular expressions searched (case-insensitively) in a run's method name and display name.
DEFAULT_GATE_METHODS: Mapping[str, tuple[str, ...]] = {
    "question_only": (r"question[_-]?only", r"option[_-]?only", r"^q-only$"),
    "no_visual": (r"no[_-]?visual", r"text[_-]?only[_-]?clue", r"clue[_-]?text[_-]?only"),
    "caption_only": (r"caption[_-]?only", r"minimal[_-]?caption"),
    "oracle": (r"^clue_only_context__multimodal$", r"^oracle\(v\)$", r"oracle[_-]?visual"),
}
SOLVED = 1.0
UNSOLVED = 0.25


def gate_patterns(config: Mapping[str, Sequence[str]] | None = None) -> dict[str, list[re.Pattern[str]]]:
    """Compiled matchers per gate. A user entry replaces that gate's defaults; plain names match a
    method or display name exactly, entries starting with `re:` are regular expressions."""
    merged: dict[str, Sequence[str]] = {g: [f"re:{p}" for p in DEFAULT_GATE_METHODS[g]] for g in GATES}
    for gate, names in (config or {}).items():
        if gate not in GATES:
            raise ValueError(f"unknown gate {gate!r}; gates are {', '.join(GATES)}")
        merged[gate] = [names] if isinstance(names, str) else list(names)
    return {g: [re.compile(e[3:], re.I) if e.startswith("re:") else re.compile(f"^{re.escape(e)}$")
                for e in entries] for g, entries in merged.items()}


def gate_of(method: str, patterns: Mapping[str, list[re.Pattern[str]]],
            names: Mapping[str, str] = DEFAULT_DISPLAY_NAMES) -> str | None:
    shown = display_name(method, names)
    for gate in GATES:
        if any(p.search(method) or p.search(shown) for p in patterns[gate]):
            return gate
    return None


# ----------------------------------------------------------------------------------- observations


@dataclass(frozen=True)
class GateObservation:
    """One MCQ item answered under one gate by one backbone."""

    item_id: str
    gate: str
    backbone: str
    em: float  # rotation-averaged EM
    n_rotations: int


def _exact_match(em: float | None) -> float | None:
    """A recorded em that can be an exact match (finite, in [0, 1]), else None: a 7 or a −1 is not
    averaged in (the rotation is scored by its choice, as when no em is logged)."""
    return em if em is not None and in_unit_interval(em) else None


def ignored_ems(p: Prediction) -> int:
    """How many recorded ems of an MCQ row (its own, or its rotations') rotation_em left out."""
    values = [r.em for r in p.rotations] if p.rotations else [p.em]
    return sum(v is not None and _exact_match(v) is None for v in values)


def rotation_em(p: Prediction) -> tuple[float | None, int]:
    """(rotation-averaged EM, rotations) of an MCQ row; a rotation without an `em` (or with one
    outside [0, 1]) is scored by its choice against its correct position."""
    rots = p.rotations
    if not rots:
        em = _exact_match(p.em)
        return em, (1 if em is not None else 0)
    ems = []
    for r in rots:
        em = _exact_match(r.em)
        if em is not None:
            ems.append(em)
        elif r.correct_position is not None:
            ems.append(float(r.choice is not None and r.choice.upper() == r.correct_position.upper()))
    return (float(np.mean(ems)) if ems else None), len(ems)


def gate_observations(
    bench: Benchmark,
    runs: Iterable[Run],
    gate_methods: Mapping[str, Sequence[str]] | None = None,
    names: Mapping[str, str] = DEFAULT_DISPLAY_NAMES,
) -> list[GateObservation]:
    def mcq_rows(run: Run) -> Iterable[tuple[Prediction, Item | None]]:
        for p in run.predictions:
            if p.mode == "mcq":
                yield p, bench.item(p.item_id, "mcq") or bench.item(f"{run.task}:{p.idx}", "mcq")

    return observations_of(((run, mcq_rows(run)) for run in runs), gate_methods, names)


def observations_of(
    runs: Iterable[tuple[Run, Iterable[tuple[Prediction, Item | None]]]],
    gate_methods: Mapping[str, Sequence[str]] | None = None,
    names: Mapping[str, str] = DEFAULT_DISPLAY_NAMES,
    ignored: list[tuple[str, int]] | None = None,
) -> list[GateObservation]:
    """gate_observations over rows already joined: per run, its MCQ rows with their item (None:
    none), read only for runs under a gate. With `ignored`, (file:line, count) of each row with a
    recorded em outside [0, 1] that was left out is appended there."""
    patterns = gate_patterns(gate_methods)
    out = []
    for run, rows in runs:
        gate = gate_of(run.method, patterns, names)
        if gate is None:
            continue
        for p, item in rows:
            if ignored is not None and (n := ignored_ems(p)):
                ignored.append((f"{run.folder}/predictions.jsonl:{p.line}", n))
            em, n_rot = rotation_em(p)
            if item is not None and em is not None:
                out.append(GateObservation(item.item_id, gate, run.backbone, em, n_rot))
    return out


# ----------------------------------------------------------------------------------- outcomes


@dataclass(frozen=True)
class GateOutcome:
    item_id: str
    gate: str
    flagged: bool
    backbones: tuple[str, ...]
    ems: tuple[float, ...]  # aligned with backbones
    reason: str = ""


def gate_outcomes(
    observations: Iterable[GateObservation],
    solved: float = SOLVED,
    unsolved: float = UNSOLVED,
    panel: str = "all",
) -> list[GateOutcome]:
    """One outcome per (item, gate) observed; a backbone seen twice keeps its lowest EM for the
    shortcut gates and its highest for the oracle gate (the conservative reading)."""
    if panel not in ("all", "any"):
        raise ValueError(f"panel must be 'all' or 'any', got {panel!r}")
    grouped: dict[tuple[str, str], dict[str, float]] = {}
    for o in observations:
        per = grouped.setdefault((o.item_id, o.gate), {})
        keep = max if o.gate == "oracle" else min
        per[o.backbone] = keep(per[o.backbone], o.em) if o.backbone in per else o.em
    combine = all if panel == "all" else any
    out = []
    for (item_id, gate), per in grouped.items():
        bbs = tuple(sorted(per))
        ems = tuple(per[b] for b in bbs)
        if gate == "oracle":
            flagged = combine(e <= unsolved for e in ems)
            why = f"unsolved under oracle visual evidence (EM ≤ {unsolved:g})"
        else:
            flagged = combine(e >= solved for e in ems)
            why = f"shortcut: solved under every rotation with {GATE_TITLES[gate]} input"
        detail = ", ".join(f"{b} EM {e:.2f}" for b, e in zip(bbs, ems))
        out.append(GateOutcome(item_id, gate, flagged, bbs, ems, f"{why} ({detail})" if flagged else ""))
    return sorted(out, key=lambda o: (o.item_id, GATES.index(o.gate)))


def structure_findings(bench: Benchmark) -> dict[str, list[str]]:
    """Items whose clue structure cannot carry their Y label (MemEye's taxonomy-structure audit)."""
    out: dict[str, list[str]] = {}
    seen: set[str] = set()
    for item in bench.items():
        if item.item_id in seen:  # an MCQ item and its open mirror share labels and clues
            continue
        seen.add(item.item_id)
        task = bench.task_of(item)
        n = len(task.clue_chain(item))
        reasons = []
        if item.answerable and item.clue_rounds and n == 0:
            reasons.append("clue structure: none of the clue rounds exists in the task")
        for y in ("Y2", "Y3"):
            if y in item.y and item.answerable and n < 2:
                reasons.append(f"clue structure: {y} item has {n} existing clue round(s); needs at least 2")
        if reasons:
            out[item.item_id] = reasons
    return out


def items_to_revisit(
    bench: Benchmark,
    runs: Iterable[Run],
    gate_methods: Mapping[str, Sequence[str]] | None = None,
    names: Mapping[str, str] = DEFAULT_DISPLAY_NAMES,
    solved: float = SOLVED,
    unsolved: float = UNSOLVED,
    panel: str = "all",
    structure: bool = True,
) -> dict[str, list[str]]:
    """item_id → reasons to revisit it (gate flags, then clue-structure findings), for the report's
    list and the app's flags. Items with no reason are absent."""
    out: dict[str, list[str]] = {}
    obs = gate_observations(bench, runs, gate_methods, names)
    for o in gate_outcomes(obs, solved, unsolved, panel):
        if o.flagged:
            out.setdefault(o.item_id, []).append(o.reason)
    if structure:
        for item_id, reasons in structure_findings(bench).items():
            out.setdefault(item_id, []).extend(reasons)
    return out


@dataclass(frozen=True)
class CellPassRate:
    x: str
    y: str
    gate: str  # a gate, or "all" (items passing every gate they were put through)
    passed: int
    n: int

    @property
    def rate(self) -> float | None:
        return self.passed / self.n if self.n else None


def pass_rates_by_cell(outcomes: Iterable[GateOutcome], items: Iterable[Item]) -> list[CellPassRate]:
    """Pass rates per (X, Y) cell and gate; an item with several labels counts in each cell."""
    cells = {i.item_id: i.cells for i in items}
    by_item: dict[str, dict[str, bool]] = {}
    for o in outcomes:
        by_item.setdefault(o.item_id, {})[o.gate] = not o.flagged
    tally: dict[tuple[str, str, str], list[int]] = {}
    for item_id, gates in by_item.items():
        for x, y in cells.get(item_id, ()):
            for gate, ok in [*gates.items(), ("all", all(gates.values()))]:
                t = tally.setdefault((x, y, gate), [0, 0])
                t[0] += ok
                t[1] += 1
    order = {g: i for i, g in enumerate((*GATES, "all"))}
    return [CellPassRate(x, y, g, p, n) for (x, y, g), (p, n) in
            sorted(tally.items(), key=lambda kv: (kv[0][0], kv[0][1], order[kv[0][2]]))]
