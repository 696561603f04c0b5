"""Joined (run, item, prediction) records shared by the evidence, recency, delivery, abstention,
oracle-evidence and gates sections, with the per-item answer score they all pair on.

A "run group" is (backbone, method, mode) over every task folder it has, the unit a report row
describes. An item answered twice by one group (the same run folder passed twice) keeps the first
row and says so. Answer score = MCQ EM over rotations / open judge, computed by scorer.metrics.answers
exactly as the matrix computes it.

The records are built once per context from the rows the runs were read into
(scorer.load.lean_columns.JoinedRows: with the lean reader, each row's evidence fields only, from the
same parse as the frame; with runs read whole, their Prediction objects), keyed and de-duplicated
with integer codes, and grouped once; sections fork after `prepare` has parsed every row's lists.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any, Iterable, Mapping, Sequence

import numpy as np

from scorer.load.lean import joined_from_runs
from scorer.load.lean_columns import JOINED, ItemTable, JoinedRows
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
    ok = vals == vals
    cols = [f[c].to_numpy()[ok].tolist() for c in ("backbone", "method", "mode", "item_id")]
    return dict(zip(zip(*cols), vals[ok].tolist()))


def collect(ctx: ScoreContext) -> tuple[list[Record], list[str]]:
    """One record per (group, item): where several run folders answer the same item, the last one
    is kept, as the score helper's frame keeps it, and a warning says so. Computed once per
    context (five sections read the records)."""
    hit = ctx.memo.get("evidence_records")
    if hit is None:
        hit = ctx.memo["evidence_records"] = _collect(ctx)
        groups: dict[tuple[str, str, str], list[Record]] = {}
        for r in hit[0]:
            groups.setdefault((r.backbone, r.method, r.mode), []).append(r)
        _GROUPS.clear()  # the latest context's only: nothing is kept alive past it
        _GROUPS[id(hit[0])] = (hit[0], groups)
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
    for r in collect(ctx)[0]:
        p = r.prediction
        p.retrieved, p.delivered  # parsed once here (kept on the row), not again in each forked section
    mirrored(ctx)


def joined_rows(ctx: ScoreContext) -> JoinedRows:
    """The rows the runs were read into (scorer.load.lean_columns.JoinedRows), kept by the reader in
    ctx.memo; a context built around loaded runs without it joins them here, once."""
    hit = ctx.memo.get(JOINED)
    if hit is None:
        hit = ctx.memo[JOINED] = joined_from_runs(ItemTable(ctx.bench), ctx.runs)
    return hit


def _collect(ctx: ScoreContext) -> tuple[list[Record], list[str]]:
    j = joined_rows(ctx)
    runs = list(ctx.runs)
    n = len(j.item)
    if not n:
        return [], []
    # One integer key per row for (backbone, method, mode, item id): run constants per run, codes per item.
    pairs: dict[tuple[str, str], int] = {}
    run_pair = np.array([pairs.setdefault((r.backbone, r.method), len(pairs)) for r in runs], dtype=np.int64)
    ids: dict[str, int] = {}
    item_code = np.array([ids.setdefault(it.item_id, len(ids)) for it in j.items], dtype=np.int64)
    modes: dict[str, int] = {}
    mode_code = np.array([modes.setdefault(m, len(modes)) for m in j.mode], dtype=np.int64)
    key = (run_pair[j.run] * len(modes) + mode_code) * max(len(ids), 1) + item_code[j.item]
    _, first, inverse = np.unique(key, return_index=True, return_inverse=True)
    inverse = inverse.reshape(-1)
    last = np.full(len(first), -1, dtype=np.int64)
    np.maximum.at(last, inverse, np.arange(n, dtype=np.int64))
    order = np.argsort(first, kind="stable")  # a record sits where its key was first seen…
    chosen = last[order].tolist()  # …and holds the last row with that key (the score helper's frame keeps it)
    dupes: dict[str, int] = {}
    for i in np.nonzero(first[inverse] != np.arange(n))[0].tolist():
        label = f"{runs[j.run[i]].key} ({j.mode[i]})"
        dupes[label] = dupes.get(label, 0) + 1
    scored = frame_scores(ctx)
    names, levels, bench = ctx.options.names, ctx.options.judge_levels, ctx.bench
    per_run = [(r.backbone, r.method, display_name(r.method, names),
                r.config.get("method") if isinstance(r.config, Mapping) else None) for r in runs]
    tasks: dict[str, Task] = {}
    items, run_of, item_of = j.items, j.run.tolist(), j.item.tolist()
    records = []
    for i in chosen:
        backbone, method, display, method_cfg = per_run[run_of[i]]
        item = items[item_of[i]]
        p = j.prediction(i)
        key = (backbone, method, p.mode, item.item_id)
        score = scored[key] if key in scored else item_score(item, p, levels)
        task = tasks.get(item.task)
        if task is None:
            task = tasks[item.task] = bench.task_of(item)
        records.append(Record(backbone, method, display, p.mode, task, item, p, score, method_cfg))
    warnings = [f"{k}: {n} item(s) answered by several run folders; the last folder's row is used"
                for k, n in dupes.items()]
    return records, warnings


def by_group(records: Iterable[Record]) -> dict[tuple[str, str, str], list[Record]]:
    """Records by run group, in order of first appearance (for the context's own records, the
    grouping collect built once; callers only read it)."""
    hit = _GROUPS.get(id(records))
    if hit is not None and hit[0] is records:
        return hit[1]
    out: dict[tuple[str, str, str], list[Record]] = {}
    for r in records:
        out.setdefault((r.backbone, r.method, r.mode), []).append(r)
    return out


_GROUPS: dict[int, tuple[list[Record], dict]] = {}  # id(records) → (records, by_group(records)) of collect's lists


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
    groups = by_group(records)
    out = set()
    for (backbone, method, mode), recs in groups.items():
        other = groups.get((backbone, method, "open"))
        if mode != "mcq" or other is None or len(other) != len(recs):
            continue
        theirs = {r.item.item_id: r.prediction for r in other}
        logged = False
        for r in recs:  # item by item, stopping at the first difference
            q = theirs.get(r.item.item_id)
            if q is None:
                break
            p = r.prediction
            if _logged_fields(p) != _logged_fields(q):  # the same logged fields read the same lists
                log = _log(p)
                if log != _log(q):
                    break
            logged = logged or p.retrieved is not None or p.delivered is not None
        else:
            if logged:
                out.add((backbone, method))
    return out


def _logged_fields(p) -> tuple:
    """The row fields scorer.model.rows reads a row's retrieved and delivered lists from."""
    raw = p.raw
    return (raw.get("retrieved"), raw.get("method_runtime"), raw.get("delivered"), raw.get("context_round_ids"),
            raw.get("clue_rounds"), raw.get("history_source"))


def _log(p) -> tuple:
    ret = None if p.retrieved is None else tuple((e.round_id, e.score, e.recency_age) for e in p.retrieved)
    return (ret, p.delivered)


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
