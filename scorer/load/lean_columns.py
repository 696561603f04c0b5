"""The lean reader's columns: one run's rows (decoded structs or dicts) that join to an item, as a
compact chunk (numbers and item positions as arrays, run constants once per folder), and the
chunks expanded into the frame's columns (scorer.load.frame.COLUMNS) once at the end.
"""

from __future__ import annotations

from collections.abc import Mapping
from operator import attrgetter
from typing import TYPE_CHECKING, Any

import numpy as np

from scorer.load.frame import COLUMNS
from scorer.load.join import logged_question, question_id_of, question_matches
from scorer.load.joined_rows import EvidenceRows, JoinedRows, evidence_dicts, evidence_segment
from scorer.load.row_checks import SCORE_FIELDS
from scorer.metrics.logged_lists import RoundNames
from scorer.model import X_LABELS, Y_LABELS, Benchmark, Item, Run
from scorer.model.rows import SHARED_LETTERS, choices_of_row, num, rotation_oddity, row_rotation_oddity, row_text
from scorer.names import display_name

if TYPE_CHECKING:  # imported where used: runs are read while pandas loads (scorer.scoring.score)
    import pandas as pd

NUMERIC = SCORE_FIELDS  # the scores read into columns; a text value in one is a reader problem
RUN_COLUMNS = ("run_key", "backbone", "method", "display", "modality", "folder")  # constant per run folder
ITEM_COLUMNS = ("item_id", "task", "x", "y", "answerable", "cluster")  # from the joined item
_TRI = np.array([None, False, True], dtype=object)  # code + 1 → a logged bool, or None when absent


class ItemTable:
    """The benchmark's items as arrays, so that joined rows carry one integer (the item's position)
    and their item columns are gathered at C speed."""

    def __init__(self, bench: Benchmark) -> None:
        # (task, mode, idx) → (position, question, answer, the question as a legacy MCQ row logs it)
        self.index: dict[tuple[str, str, int], tuple[int, str, str, str | None]] = {}
        self.by_question_id: dict[tuple[str, str, str], tuple[int, str, str, str | None]] = {}
        self.bench = bench
        self.tasks = frozenset(t.name for t in bench.tasks)
        self.items: list[Item] = list(bench.items())  # by position
        # an MCQ item's position by its id (how scorer.metrics.gates joins rows: "<task>:<idx>")
        self.mcq_by_id = {it.item_id: pos for pos, it in enumerate(self.items) if it.mode == "mcq"}
        cols: dict[str, list] = {c: [] for c in (*ITEM_COLUMNS, "answer")}
        for pos, it in enumerate(self.items):
            entry = (pos, it.question, it.answer, logged_question(it))
            self.index[(it.task, it.mode, it.index)] = entry
            qid = question_id_of(it)
            if qid is not None:
                self.by_question_id[(it.task, it.mode, qid)] = entry
            cols["item_id"].append(it.item_id)
            cols["task"].append(it.task)
            cols["x"].append(tuple(sorted(v for v in it.x if v in X_LABELS)))
            cols["y"].append(tuple(sorted(v for v in it.y if v in Y_LABELS)))
            cols["answerable"].append(it.answerable)
            cols["cluster"].append(it.cluster)
            cols["answer"].append(it.answer)
        self.arrays = {c: _object_array(v) if c != "answerable" else np.array(v, dtype=bool) for c, v in cols.items()}


def _object_array(values: list) -> np.ndarray:
    out = np.empty(len(values), dtype=object)
    out[:] = values  # element-wise: tuples stay tuples
    return out


class Columns:
    """Compact per-folder chunks (numbers and item positions as arrays, run constants once per
    folder), expanded into the frame's columns once at the end."""

    def __init__(self, evidence: bool = False) -> None:
        self.runs: dict[str, list] = {c: [] for c in (*RUN_COLUMNS, "n")}
        self.lists: dict[str, list] = {c: [] for c in ("mode", "pred", "gt", "choices", *(("ev",) if evidence else ()))}
        self.arrays: dict[str, list[np.ndarray]] = {c: [] for c in (*NUMERIC, "idx", "line", "item", "qok", "valid", "abst",
                                                                    "nrot", "rodd", *(("gate",) if evidence else ()))}

    def add(self, chunk: dict[str, Any]) -> None:
        for c in RUN_COLUMNS:
            self.runs[c].append(chunk["run"][c])
        self.runs["n"].append(chunk["n"])
        for c in self.lists:
            if c == "ev":  # one segment per chunk (scorer.load.joined_rows.EvidenceRows)
                self.lists[c].append(chunk[c])
            else:
                self.lists[c].extend(chunk[c])
        for c in self.arrays:
            self.arrays[c].append(chunk[c])

    def merge(self, other: Columns) -> None:
        for c in self.runs:
            self.runs[c].extend(other.runs[c])
        for c in self.lists:
            self.lists[c].extend(other.lists[c])
        for c in self.arrays:
            self.arrays[c].extend(other.arrays[c])

    def state(self) -> tuple:
        """What from_state rebuilds, sent from a reader worker: each column's arrays joined into one
        (pickling thousands of small arrays costs more than the rows they hold)."""
        arrays = {c: [np.concatenate(v)] if len(v) > 1 else v for c, v in self.arrays.items()}
        return self.runs, self.lists, arrays

    @classmethod
    def from_state(cls, state: tuple) -> Columns:
        c = cls()
        c.runs, c.lists, c.arrays = state
        return c

    def joined(self, items: ItemTable) -> JoinedRows | None:
        """The joined rows' evidence fields and keys (None unless read with `evidence`)."""
        if "ev" not in self.lists:
            return None
        counts = np.asarray(self.runs["n"], dtype=np.int64)
        cat = {c: (np.concatenate(self.arrays[c]) if self.arrays[c] else np.zeros(0, dtype=np.int64)).astype(np.int64)
               for c in ("item", "gate", "idx", "line")}
        abst = self.arrays["abst"]  # per row: the logged `abstained` as 0/1, -1 when not a bool
        return JoinedRows(run=np.repeat(np.arange(len(counts), dtype=np.int64), counts), mode=self.lists["mode"],
                          item=cat["item"], gate=cat["gate"], idx=cat["idx"], line=cat["line"],
                          rows=EvidenceRows(self.lists["ev"]), items=items.items,
                          abstained_logged=any(bool((a >= 0).any()) for a in abst))

    def frame(self, items: ItemTable) -> pd.DataFrame:
        arr = {c: (np.concatenate(v) if v else np.zeros(0)) for c, v in self.arrays.items()}
        counts = np.asarray(self.runs["n"], dtype=np.int64)
        pos = arr["item"].astype(np.int64)
        data: dict[str, Any] = {}
        for c in COLUMNS:
            if c in RUN_COLUMNS:
                data[c] = np.repeat(_object_array(self.runs[c]), counts)
            elif c in ITEM_COLUMNS:
                data[c] = items.arrays[c][pos]
            elif c in NUMERIC:
                data[c] = arr[c].astype(float)
            elif c in ("idx", "line"):
                data[c] = arr[c].astype(np.int64)
            elif c == "question_ok":
                data[c] = arr["qok"].astype(bool)
            elif c in ("valid_choice", "abstained"):
                codes = arr["valid" if c == "valid_choice" else "abst"].astype(np.int64)
                # as pandas infers it from the values: bool when none is missing, else object
                data[c] = codes.astype(bool) if len(codes) and (codes >= 0).all() else _TRI[codes + 1]
            elif c == "gt":
                gt = _object_array(self.lists["gt"])
                same = np.equal(gt, None)
                gt[same] = items.arrays["answer"][pos[same]]  # the item's own string when equal
                data[c] = gt
            else:
                data[c] = _object_array(self.lists[c])
        data["choices"] = _object_array(self.lists["choices"])
        data["rotations_logged"] = arr["nrot"].astype(np.int64)  # the rotations list's entries, or 1 (a `choice`)
        data["rotation_oddity"] = arr["rodd"].astype(np.int8)  # scorer.model.rows.rotation_oddity's bits
        import pandas as pd

        return pd.DataFrame(data)


_NAN = float("nan")
_MODES = {"mcq": "mcq", "open": "open"}  # shared strings for the common values


def _num_or_nan(v: Any) -> float:
    f = num(v)
    return _NAN if f is None else f


def _struct_choices(row: Any, unordered: list[int], i: int) -> tuple | None:
    """choices_of_row for a row decoded by the fast schema (scorer.load.lean; same result, tested);
    row `i` is added to `unordered` when its rotation_idx are not 0, 1, … in order."""
    rots = row.rotations
    if rots:
        if [r.rotation_idx for r in rots] == list(range(len(rots))):
            return tuple([SHARED_LETTERS.get(c, c) if (c := r.choice).__class__ is str else None for r in rots])
        unordered.append(i)
        return choices_of_row({"rotations": [{"rotation_idx": r.rotation_idx, "choice": r.choice} for r in rots]}, "mcq")
    c = row.choice
    return (c,) if isinstance(c, str) else None


def _oddities(rows: list, choices: list, unordered: list[int], fast: bool) -> np.ndarray:
    """Per row, rotation_oddity's bits (LOGGED_ORDER, NON_TEXT_CHOICE); only rows that can have any
    are looked at: those whose rotations were not logged in order, and those with an unread choice."""
    out = np.zeros(len(rows), dtype=np.int8)
    for i in sorted({*unordered, *(i for i, c in enumerate(choices) if c is not None and None in c)}):
        if fast:
            rots = rows[i].rotations or ()
            out[i] = rotation_oddity([r.rotation_idx for r in rots], [r.choice for r in rots])
        else:
            out[i] = row_rotation_oddity(rows[i])
    return out


def row_columns(rows: list, lines: list[int], run: Run, names: Mapping[str, str], table: ItemTable,
                shared: dict | None = None, fast: bool = False, evidence: bool = False,
                round_names: RoundNames | None = None) -> tuple[dict, int]:
    """One run's rows (dicts, or with `fast` structs of the lean reader's schema) that join to an
    item, as a compact chunk, and how many did not join. Column by column, so that each field is
    read at C speed where it can be; the same values as scorer.load.runs.parse_row +
    scorer.load.frame.predictions_frame. `shared` interns choice tuples and short answers across
    chunks (a worker's chunk travels to the parent pickled, and a shared object is pickled once);
    `round_names` numbers the round ids the evidence fields log, across chunks alike."""
    task, mode = run.task, run.mode
    if fast:
        def col(name: str) -> list:
            return list(map(attrgetter(name), rows))
    else:
        def col(name: str) -> list:
            return [r.get(name) for r in rows]
    tasks = [v if v.__class__ is str and v else (row_text(v) or task) for v in col("task")]
    modes = [_MODES.get(v, v) if v.__class__ is str and v else (row_text(v) or mode) for v in col("mode")]
    idxs = [v if v.__class__ is int else -1 for v in col("idx")]
    index = table.index
    qids = col("question_id")
    if table.by_question_id and any(q.__class__ is str and q for q in qids):
        # A fork's rows carry question_id, and their idx is a position in eval.question_ids: the id joins.
        by_qid = table.by_question_id
        items = [by_qid.get((task, m, q)) if q.__class__ is str and q else None for q, m in zip(qids, modes)]
        items = [it if it is not None else index.get(k) for it, k in zip(items, zip(tasks, modes, idxs))]
    else:
        items = [index.get(k) for k in zip(tasks, modes, idxs)]
    missing = [i for i, it in enumerate(items) if it is None]
    for i in missing:  # upstream rows may name a task the benchmark spells differently: use the run's
        items[i] = index.get((task, modes[i], idxs[i]))
    keep = [i for i, it in enumerate(items) if it is not None]
    unmatched = len(rows) - len(keep)
    if evidence:
        # The evidence fields of each kept row, and the item the gates section joins an MCQ row to
        # (by "<task>:<idx>" only, as scorer.metrics.gates does).
        ev_rows = (evidence_segment if fast else evidence_dicts)(rows, keep, round_names)
        by_id = table.mcq_by_id
        gate_pos = np.array([by_id.get(f"{tasks[i]}:{idxs[i]}", by_id.get(f"{task}:{idxs[i]}", -1))
                             if modes[i] == "mcq" else -1 for i in keep], dtype=np.int64)
    if unmatched:
        rows = [rows[i] for i in keep]
        lines = [lines[i] for i in keep]
        modes = [modes[i] for i in keep]
        idxs = [idxs[i] for i in keep]
        items = [items[i] for i in keep]
    n = len(rows)
    shared = {} if shared is None else shared
    questions = [v if v.__class__ is str else row_text(v) for v in col("question")]
    gts = [v if v.__class__ is str else row_text(v) for v in col("gt")]
    preds = [v if v.__class__ is str else row_text(v) for v in col("pred")]
    preds = [shared.setdefault(v, v) if len(v) <= 8 else v for v in preds]
    unordered: list[int] = []  # rows whose rotations are not logged in order (the dict path: every MCQ row)
    if fast:
        choices = [_struct_choices(r, unordered, i) if m == "mcq" else None for i, (r, m) in enumerate(zip(rows, modes))]
    else:
        choices = [choices_of_row(r, m) if m == "mcq" else None for r, m in zip(rows, modes)]
        unordered = [i for i, m in enumerate(modes) if m == "mcq"]
    oddity = _oddities(rows, choices, unordered, fast)
    choices = [c if c is None else shared.setdefault(c, c) for c in choices]
    chunk: dict[str, Any] = {
        "run": {"run_key": run.key, "backbone": run.backbone, "method": run.method,
                "display": display_name(run.method, names), "modality": run.modality, "folder": str(run.folder)},
        "n": n, "mode": modes,
        "item": np.fromiter((it[0] for it in items), dtype=np.int64, count=n),
        "qok": np.fromiter((not q or q == it[1] or question_matches(q, it[1], it[3]) for q, it in zip(questions, items)),
                           dtype=bool, count=n),
        # rotations logged: the list's entries, or 1 for a single `choice` (rotation 0 of the item's)
        "nrot": np.fromiter((len(v) if v.__class__ is list else int(c is not None)
                             for v, c in zip(col("rotations"), choices)), dtype=np.int64, count=n),
        "valid": np.array([int(v) if v.__class__ is bool else -1 for v in col("valid_choice")], dtype=np.int8),
        "abst": np.array([int(v) if v.__class__ is bool else -1 for v in col("abstained")], dtype=np.int8),
        "pred": preds,
        "gt": [None if g == it[2] else g for g, it in zip(gts, items)],  # None: the item's own answer text
        "choices": choices,
        "idx": np.array(idxs, dtype=np.int64), "line": np.array(lines, dtype=np.int64),
        "rodd": oddity,
    }
    if evidence:
        chunk["ev"], chunk["gate"] = ev_rows, gate_pos
    for c in NUMERIC:
        if fast:  # the schema admits only bool, number or null: numpy maps None to NaN, bools to 0/1
            chunk[c] = np.array(col(c), dtype=float)
        else:
            chunk[c] = np.array([v if v.__class__ is float else _num_or_nan(v) for v in col(c)], dtype=float)
    return chunk, unmatched
