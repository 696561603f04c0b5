"""Joined (run, item, prediction) records shared by the evidence, recency, delivery, abstention,
oracle-evidence and gates sections, with the per-item answer score they all pair on.

A "run group" is (backbone, method, mode) over every task folder it has, the unit a report row
describes. An item answered twice by one group (the same run folder passed twice) keeps the first
row and says so. Answer score = MCQ EM over rotations / open judge, computed by scorer.metrics.answers
exactly as the matrix computes it.

The records are built once per context from the rows the runs were read into
(scorer.load.joined_rows.JoinedRows: with the lean reader, each row's evidence fields only, from the
same parse as the frame; with runs read whole, their Prediction objects), keyed and de-duplicated
with integer codes, and grouped once; sections fork after `prepare` has parsed every row's lists.
"""

from __future__ import annotations

from itertools import repeat
from typing import Any, Iterable, Mapping, NamedTuple, Sequence

import numpy as np

from scorer.load.lean import joined_from_runs
from scorer.load.joined_rows import JOINED, LIST_FIELDS, JoinedRows, same_lists
from scorer.load.lean_columns import ItemTable
from scorer.load.runs import gc_paused
from scorer.metrics.answers import coerce_judge, mcq_em
from scorer.metrics.evidence_flat import FlatEvidence, flat_arrays, logged_lists
from scorer.metrics.logged_lists import LoggedLists
from scorer.metrics.evidence_at_k import AtK, at_k
from scorer.model.rows import choices_of_row
from scorer.model import Item, Prediction, Task
from scorer.names import display_name
from scorer.sections.base import ScoreContext

MODE_METRIC = {"mcq": "em", "open": "judge"}


class Record(NamedTuple):  # a tuple: built for every joined row, four times cheaper than a frozen dataclass
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


_UNSCORED = object()  # a record whose row the scored frame does not hold


def frame_scores(ctx: ScoreContext) -> dict[tuple[str, str, str, str], float | None]:
    """(backbone, method, mode, item_id) → the score the matrix uses (ctx.frame is already scored),
    None where it has none: a missing score, or one the checks withheld (a judge off its scale), which
    no section may read back from the row."""
    f = ctx.frame
    if f is None or not len(f) or not {"backbone", "method", "mode", "item_id", "em", "judge"} <= set(f.columns):
        return {}
    vals = np.where(f["mode"].to_numpy() == "mcq", f["em"].to_numpy(dtype=float), f["judge"].to_numpy(dtype=float))
    cols = [f[c].to_numpy().tolist() for c in ("backbone", "method", "mode", "item_id")]
    return dict(zip(zip(*cols), [v if v == v else None for v in vals.tolist()]))


def collect(ctx: ScoreContext) -> tuple[list[Record], list[str]]:
    """One record per (group, item): where several run folders answer the same item, the last one
    is kept, as the score helper's frame keeps it, and a warning says so. Computed once per
    context (five sections read the records)."""
    hit = ctx.memo.get("evidence_records")
    if hit is None:
        with gc_paused():  # tens of thousands of records: the collector would walk the whole heap for them
            hit = ctx.memo["evidence_records"] = _collect(ctx)
        groups, ctx.memo["evidence_group_rows"] = grouped(hit[0], ctx.memo.pop("evidence_group_code", None))
        _GROUPS.clear()  # the latest context's only: nothing is kept alive past it
        _GROUPS[id(hit[0])] = (hit[0], groups)
    records, warnings = hit
    return records, list(warnings)


def grouped(records: Sequence[Record], code: np.ndarray | None = None
            ) -> tuple[dict[tuple[str, str, str], list[Record]], dict[tuple[str, str, str], np.ndarray]]:
    """The records of each run group and their indices (ascending), groups in order of first
    appearance. `code`: one integer per record, equal exactly for records of one group (collect's
    codes); without it, found here."""
    if code is None:
        index: dict[tuple[str, str, str], int] = {}
        code = np.fromiter((index.setdefault((r.backbone, r.method, r.mode), len(index)) for r in records),
                           dtype=np.int64, count=len(records))
    groups: dict[tuple[str, str, str], list[Record]] = {}
    rows: dict[tuple[str, str, str], np.ndarray] = {}
    if not len(records):
        return groups, rows
    order = np.argsort(code, kind="stable")  # each group's records together, in record order
    start, first = _runs_of(code[order], order)
    for u in np.argsort(first, kind="stable").tolist():
        idx = order[start[u]:start[u + 1]]
        r = records[int(idx[0])]
        g = (r.backbone, r.method, r.mode)
        rows[g] = idx
        groups[g] = list(map(records.__getitem__, idx.tolist()))
    return groups, rows


def _runs_of(sorted_code: np.ndarray, order: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """(where each distinct code's run starts in the sorted codes (one more at the end), the first
    record of each)."""
    new = np.ones(len(sorted_code), dtype=bool)
    new[1:] = sorted_code[1:] != sorted_code[:-1]
    start = np.append(np.flatnonzero(new), len(sorted_code))
    return start, order[start[:-1]]


def mirrored(ctx: ScoreContext) -> set[tuple[str, str]]:
    """mirrored_modes of the context's records, computed once per context."""
    hit = ctx.memo.get("mirrored_modes")
    if hit is None:
        records = collect(ctx)[0]
        f = flat(ctx)
        hit = ctx.memo["mirrored_modes"] = mirrored_modes(records, (f.has_ret | f.has_del).tolist(), group_rows(ctx))
    return hit


def prepare(ctx: ScoreContext) -> None:
    """Fill the context's shared evidence data (every row's lists parsed once, into flat arrays) in
    this process, before the sections that read them are forked."""
    flat(ctx)
    at(ctx, ctx.options.k)  # the values at K the evidence and delivery sections both read
    group_rows(ctx)
    mirrored(ctx)


def flat(ctx: ScoreContext) -> FlatEvidence:
    """The records' logged rankings and delivered lists as flat arrays (scorer.metrics.evidence_flat),
    row i = record i; computed once per context."""
    hit = ctx.memo.get("evidence_flat")
    if hit is None:
        records = collect(ctx)[0]
        with gc_paused():
            hit = ctx.memo["evidence_flat"] = flat_of(records, ctx.memo.get("evidence_item_pos"),
                                                      ctx.memo.get("evidence_logged"))
        _FLAT.clear()  # the latest context's only, as _GROUPS
        _FLAT[id(records)] = (records, hit)
    return hit


_FLAT: dict[int, tuple[list[Record], FlatEvidence]] = {}  # id(records) → (records, flat_of(records)) of flat's


def flat_for(records: Sequence[Record]) -> FlatEvidence:
    """flat_of(records), the one flat(ctx) built when `records` is the context's list."""
    hit = _FLAT.get(id(records))
    if hit is not None and hit[0] is records:
        return hit[1]
    return flat_of(records)


def flat_of(records: Sequence[Record], item_pos: np.ndarray | None = None,
            logged: LoggedLists | None = None) -> FlatEvidence:
    """flat_arrays of the records; `item_pos` (optional) numbers their items (equal positions, one
    item), as the joined rows do; `logged` (optional): what each record's row logged, as
    logged_lists reads it (the lean reader's workers parse it), else parsed here."""
    if item_pos is None:
        slots: dict[int, int] = {}
        item_pos = np.fromiter((slots.setdefault(id(r.item), len(slots)) for r in records), dtype=np.int64,
                               count=len(records))
    _, first, item_of = np.unique(item_pos, return_index=True, return_inverse=True)  # first: each item's first record
    items = [(records[i].task, records[i].item) for i in first.tolist()]
    if logged is None:
        logged = LoggedLists.build([logged_lists(p.raw, lambda p=p: p.delivered) for p in (r.prediction for r in records)])
    return flat_arrays(items, item_of.reshape(-1), logged)


def at(ctx: ScoreContext, k: int) -> AtK:
    """The records' per-item evidence values at K (scorer.metrics.evidence_flat.at_k), once per K."""
    key = ("evidence_at", k)
    hit = ctx.memo.get(key)
    if hit is None:
        hit = ctx.memo[key] = at_k(flat(ctx), k)
    return hit


def group_rows(ctx: ScoreContext) -> dict[tuple[str, str, str], np.ndarray]:
    """Record indices (into collect's list) of each run group, in by_group's order."""
    collect(ctx)  # which fills it
    return ctx.memo["evidence_group_rows"]


def joined_rows(ctx: ScoreContext) -> JoinedRows:
    """The rows the runs were read into (scorer.load.joined_rows.JoinedRows), kept by the reader in
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
    # Column by column (C-speed maps), then one Record per chosen row.
    item_pos = j.item[chosen]
    ctx.memo["evidence_item_pos"] = item_pos  # the records' items, numbered (scorer.metrics.evidence_flat)
    logged = j.logged
    if logged is not None:  # what each record's row logged, parsed by the reader's workers
        ctx.memo["evidence_logged"] = logged.take(chosen)
    items = list(map(j.items.__getitem__, item_pos.tolist()))
    run_of = j.run[chosen].tolist()
    backbones, methods, displays, configs = (list(map(col.__getitem__, run_of)) for col in zip(*per_run))
    rows = list(map(j.rows.__getitem__, chosen))
    modes = list(map(j.mode.__getitem__, chosen))
    if not all(r.__class__ is Prediction for r in rows):  # JoinedRows.prediction, column by column
        preds = list(map(_prediction, [it.task for it in items], modes, j.idx[chosen].tolist(),
                         j.line[chosen].tolist(), rows))
        rows = [r if r.__class__ is Prediction else p for r, p in zip(rows, preds)] \
            if any(r.__class__ is Prediction for r in rows) else preds
    modes = [p.mode for p in rows]
    # each record's run group as one integer: (backbone, method) per run, then the mode (grouped)
    mode_no: dict[str, int] = {}
    mode_of = np.fromiter((mode_no.setdefault(m, len(mode_no)) for m in modes), dtype=np.int64, count=len(modes))
    ctx.memo["evidence_group_code"] = run_pair[j.run[chosen]] * max(len(mode_no), 1) + mode_of
    scores = [scored.get(k, _UNSCORED) for k in zip(backbones, methods, modes, [it.item_id for it in items])]
    for i in [i for i, v in enumerate(scores) if v is _UNSCORED]:  # not in the scored frame: scored here
        scores[i] = item_score(items[i], rows[i], levels)
    by_task = {t.name: t for t in bench.tasks}
    tasks = [by_task.get(it.task) or bench.task_of(it) for it in items]
    # Record._make of each row's fields, without a Python call per row
    records = list(map(tuple.__new__, repeat(Record, len(rows)),
                       zip(backbones, methods, displays, modes, tasks, items, rows, scores, configs)))
    warnings = [f"{k}: {n} item(s) answered by several run folders; the last folder's row is used"
                for k, n in dupes.items()]
    return records, warnings


_SLOTS = tuple(Prediction.__dict__[f].__set__ for f in ("task", "mode", "idx", "line", "raw", "parsed"))


def _prediction(task: str, mode: str, idx: int, line: int, raw: Mapping[str, Any]) -> Prediction:
    """Prediction(task, mode, idx, line, raw), built as its dataclass __init__ builds it (each slot set
    past the frozen __setattr__), at half the cost: one is built for every joined row."""
    p = object.__new__(Prediction)
    set_task, set_mode, set_idx, set_line, set_raw, set_parsed = _SLOTS
    set_task(p, task)
    set_mode(p, mode)
    set_idx(p, idx)
    set_line(p, line)
    set_raw(p, raw)
    set_parsed(p, None)
    return p


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


def mirrored_modes(records: Sequence[Record], any_logged: Sequence[bool] | None = None,
                   rows: Mapping[tuple[str, str, str], Sequence[int]] | None = None) -> set[tuple[str, str]]:
    """(backbone, method) pairs whose MCQ and open runs logged the same retrieved and delivered lists
    for every item: their retrieval tables would repeat row for row, so tables show them once.
    `any_logged[i]`: record i logged a retrieved or a delivered list (default: read from its row);
    `rows`: each group's record indices (default: found)."""
    groups = by_group(records)
    if any_logged is None:
        any_logged = [r.prediction.retrieved is not None or r.prediction.delivered is not None for r in records]
    if rows is None:
        pos = {id(r): i for i, r in enumerate(records)}
        rows = {g: [pos[id(r)] for r in recs] for g, recs in groups.items()}
    out = set()
    for (backbone, method, mode), recs in groups.items():
        other = groups.get((backbone, method, "open"))
        if mode != "mcq" or other is None or len(other) != len(recs) \
                or not any(any_logged[i] for i in rows[(backbone, method, mode)]):  # nothing logged: nothing to fold
            continue
        theirs = {r.item.item_id: r.prediction for r in other}
        for r in recs:  # item by item, stopping at the first difference
            q = theirs.get(r.item.item_id)
            if q is None:
                break
            p = r.prediction
            # the same logged fields (or the same JSON text of them) read the same lists
            if not same_lists(p.raw, q.raw) and _logged_fields(p) != _logged_fields(q):
                log = _log(p)
                if log != _log(q):
                    break
        else:  # every item the same, and the group logged a list (checked above)
            out.add((backbone, method))
    return out


def _logged_fields(p) -> tuple:
    """The row fields scorer.model.rows reads a row's retrieved and delivered lists from (the lean
    reader's LIST_FIELDS, which same_lists compares as one JSON text)."""
    get = p.raw.get
    return tuple([get(k) for k in LIST_FIELDS])


def _log(p) -> tuple:
    ret = None if p.retrieved is None else tuple((e.round_id, e.score, e.recency_age) for e in p.retrieved)
    return (ret, p.delivered)


