"""Joined (run, item, prediction) records shared by the evidence, recency, delivery, abstention,
oracle-evidence and gates sections, with the per-item answer score they all pair on.

A "run group" is (backbone, method, mode) over every task folder it has, the unit a report row
describes. An item answered twice by one group (the same run folder passed twice) keeps the first
row and says so. Answer score = MCQ EM over rotations / open judge, computed by scorer.metrics.answers
exactly as the matrix computes it.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any, Iterable, Mapping, Sequence

import numpy as np

from scorer.load.join import Joiner
from scorer.metrics.answers import coerce_judge, mcq_em
from scorer.model.rows import choices_of_row
from scorer.model import Item, Prediction, Task
from scorer.names import display_name
from scorer.sections.base import ScoreContext, Table
from scorer.sections.methods import PAPER_ORDER

MODE_METRIC = {"mcq": "em", "open": "judge"}


@dataclass(frozen=True)
class Record:
    backbone: str
    method: str
    display: str
    mode: str
    task: Task
    item: Item
    prediction: Prediction
    score: float | None
    method_config: Any = None

    @property
    def group(self) -> tuple[str, str, str]:
        return (self.backbone, self.method, self.mode)

    @property
    def cluster(self) -> str:
        return self.item.cluster or self.item.task


def item_score(item: Item, p: Prediction, judge_levels: int = 5) -> float | None:
    if item.mode == "mcq":
        return mcq_em(choices_of_row(p.raw, "mcq"), [r.answer for r in item.rotations] or None, p.em)
    return coerce_judge(p.judge, judge_levels)


def frame_scores(ctx: ScoreContext) -> dict[tuple[str, str, str, str], float]:
    """(backbone, method, mode, item_id) → the score the matrix uses (ctx.frame is already scored)."""
    f = ctx.frame
    if f is None or not len(f) or not {"backbone", "method", "mode", "item_id", "em", "judge"} <= set(f.columns):
        return {}
    vals = np.where(f["mode"].to_numpy() == "mcq", f["em"].to_numpy(dtype=float), f["judge"].to_numpy(dtype=float))
    keys = zip(f["backbone"], f["method"], f["mode"], f["item_id"])
    return {k: float(v) for k, v in zip(keys, vals) if v == v}


def collect(ctx: ScoreContext) -> tuple[list[Record], list[str]]:
    """One record per (group, item): where several run folders answer the same item, the last one
    is kept, as the score helper's frame keeps it, and a warning says so. Computed once per
    context (five sections read the records)."""
    hit = ctx.memo.get("evidence_records")
    if hit is None:
        hit = ctx.memo["evidence_records"] = _collect(ctx)
    records, warnings = hit
    return records, list(warnings)


def mirrored(ctx: ScoreContext) -> set[tuple[str, str]]:
    """mirrored_modes of the context's records, computed once per context."""
    hit = ctx.memo.get("mirrored_modes")
    if hit is None:
        hit = ctx.memo["mirrored_modes"] = mirrored_modes(collect(ctx)[0])
    return hit


def prepare(ctx: ScoreContext) -> None:
    """Fill the context's shared evidence data (and parse every row's retrieval) in this process,
    before the sections that read them are forked."""
    mirrored(ctx)


def _collect(ctx: ScoreContext) -> tuple[list[Record], list[str]]:
    scored = frame_scores(ctx)
    kept: dict[tuple, Record] = {}
    dupes: dict[str, int] = {}
    joiner = Joiner(ctx.bench)
    for run, p, item in joiner.pairs(ctx.runs):
        key = (run.backbone, run.method, p.mode, item.item_id)
        if key in kept:
            label = f"{run.key} ({p.mode})"
            dupes[label] = dupes.get(label, 0) + 1
        method_cfg = run.config.get("method") if isinstance(run.config, Mapping) else None
        score = scored[key] if key in scored else item_score(item, p, ctx.options.judge_levels)
        kept[key] = Record(run.backbone, run.method, display_name(run.method, ctx.options.names), p.mode,
                           ctx.bench.task_of(item), item, p, score, method_cfg)
    warnings = [f"{k}: {n} item(s) answered by several run folders; the last folder's row is used"
                for k, n in dupes.items()]
    return list(kept.values()), warnings


def by_group(records: Iterable[Record]) -> dict[tuple[str, str, str], list[Record]]:
    out: dict[tuple[str, str, str], list[Record]] = {}
    for r in records:
        out.setdefault(r.group, []).append(r)
    return out


def group_fields(records: Sequence[Record]) -> dict[str, str]:
    r = records[0]
    return {"backbone": r.backbone, "method": r.method, "display": r.display, "mode": r.mode}


def find_groups(records: Iterable[Record], wanted: str, names: Mapping[str, str]) -> list[tuple[str, str, str]]:
    """Groups whose method or display name (or `backbone/method` run key) is `wanted`."""
    out = []
    for g in by_group(records):
        backbone, method, _ = g
        if wanted in (method, display_name(method, names), f"{backbone}/{method}",
                      f"{backbone}/{display_name(method, names)}"):
            out.append(g)
    return out


def mean_or_none(values: Iterable[float | None]) -> tuple[float | None, int]:
    v = np.array([x for x in values if x is not None and x == x], dtype=float)
    return (float(v.mean()) if v.size else None), int(v.size)



def bootstrap_note(ctx: ScoreContext) -> str:
    o = ctx.options
    unit = "clusters (persona/conversation)" if o.clustered else "items"
    return f"percentile 95% CI, {o.resamples:,} resamples of {unit}, seed {o.seed}"


COLUMN_TITLES = {
    "method": "Method", "backbone": "Backbone", "mode": "Mode", "y": "Y", "x": "X", "task": "Task", "n": "n",
    "any_clue_recall": "Any-Clue", "coverage": "Coverage", "full_clue_recall": "Full-Clue", "n_y3": "n Y3",
    "latest_clue_recall": "Latest", "stale_dominance": "Stale-Dom.", "rank_inversion": "Rank-Inv.",
    "latest_miss": "Latest-Miss", "required_fact_recall": "Req.-Fact Recall", "chain_retrieved": "Chain Retr.",
    "chain_delivered": "Chain Deliv.", "n_retrieved": "n Retr.", "n_delivered": "n Deliv.",
}


def titled(name: str, title: str, rows: Sequence[Mapping[str, Any]], columns: Sequence[str], note: str = "",
           titles: Mapping[str, str] | None = None) -> Table:
    """A Table whose columns carry the paper's headings (row keys are the headings)."""
    mapping = {**COLUMN_TITLES, **(titles or {})}
    heads = [mapping.get(c, c) for c in columns]
    if len(set(heads)) != len(heads):
        raise ValueError(f"table {name}: repeated column headings {heads}")
    out = [{h: r.get(c) for c, h in zip(columns, heads)} for r in rows]
    return Table(name, title, out, heads, note)


def mirrored_modes(records: Iterable[Record]) -> set[tuple[str, str]]:
    """(backbone, method) pairs whose MCQ and open runs logged the same retrieved and delivered lists
    for every item: their retrieval tables would repeat row for row, so tables show them once."""
    logs: dict[tuple[str, str, str], dict[str, tuple]] = {}
    for r in records:
        p = r.prediction
        ret = None if p.retrieved is None else tuple((e.round_id, e.score, e.recency_age) for e in p.retrieved)
        logs.setdefault(r.group, {})[r.item.item_id] = (ret, p.delivered)
    out = set()
    for (backbone, method, mode), log in logs.items():
        other = logs.get((backbone, method, "open"))
        if mode == "mcq" and other is not None and other == log and any(v != (None, None) for v in log.values()):
            out.add((backbone, method))
    return out


def fold_modes(rows: Iterable[Mapping[str, Any]], mirrored: set[tuple[str, str]]) -> list[dict]:
    """Table rows (with `backbone`, `method_name`, `mode`) with mirrored MCQ rows dropped and the open
    row's mode shown as "open = mcq"."""
    out = []
    for r in rows:
        key = (r.get("backbone"), r.get("method_name"))
        if key in mirrored and r.get("mode") == "mcq":
            continue
        out.append({**r, "mode": "open = mcq"} if key in mirrored and r.get("mode") == "open" else dict(r))
    return out


FOLD_NOTE = " Mode \"open = mcq\": the MCQ and open runs logged identical lists, shown once."


def method_order(display: str) -> tuple[int, str]:
    """Sort key putting methods in the MemEye table order (others after, alphabetically)."""
    base = display.split(" ")[0]  # "SRAG(V) budget" sorts beside SRAG(V)
    return (PAPER_ORDER.index(base) if base in PAPER_ORDER else len(PAPER_ORDER), display)
