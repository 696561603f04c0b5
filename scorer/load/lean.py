"""A lean run reader: predictions.jsonl straight into the scorer's columns, no raw rows kept.

`load_runs` keeps every upstream row (`Prediction.raw`), which the app and the evidence diagnostics
need, but a million rows of dicts do not fit in 2 GB. When no report section needs the raw rows,
the scorer reads runs with `read_frame` instead: each line is parsed, the fields the scores need are
copied into typed columns, and the dict is dropped. The frame has scorer.frame.COLUMNS (same values
as `predictions_frame(bench, load_runs(...))`, tested) plus `choices`, and the runs come back as
`Run` objects without predictions. The files are hashed while they are read (for report inputs).
"""

from __future__ import annotations

import hashlib
import multiprocessing
import os
from concurrent.futures import ProcessPoolExecutor
from collections.abc import Callable, Iterable, Mapping, Sequence
from dataclasses import dataclass
from operator import attrgetter
from pathlib import Path
from typing import TYPE_CHECKING, Any

import msgspec
import numpy as np

from scorer.errors import DataError, UserError
from scorer.forked import worker_count
from scorer.frame import COLUMNS
from scorer.load.join import logged_question, question_id_of, question_matches
from scorer.load.memeye import read_json
from scorer.load.row_checks import SCORE_FIELDS, lenient_row, row_problems
from scorer.load.rows import loads, num
from scorer.load.runs import PREDICTIONS, find_run_folders, gc_paused, run_identity
from scorer.load.tasks import resolve_task
from scorer.metrics.answers import SHARED_LETTERS, choices_of_row
from scorer.model import X_LABELS, Y_LABELS, Benchmark, Run, RunProblem, frozen_map
from scorer.names import DEFAULT_DISPLAY_NAMES, display_name

if TYPE_CHECKING:  # imported where used: runs are read while pandas loads (scorer.scoring.score)
    import pandas as pd

NUMERIC = SCORE_FIELDS  # the scores read into columns; a text value in one is a reader problem


@dataclass(frozen=True)
class LeanRuns:
    frame: pd.DataFrame  # COLUMNS + choices, one row per prediction row that joins to an item
    runs: tuple[Run, ...]  # identities only (predictions=())
    files: tuple[tuple[str, str, int], ...]  # (path, sha256, bytes) of every file read
    unmatched: int  # rows that match no benchmark item (validate lists them)


def _text(v: Any) -> str:
    if v is None:
        return ""
    if isinstance(v, str):
        return v
    import json

    return json.dumps(v, ensure_ascii=False)


def _hash_file(path: Path) -> tuple[bytes, str]:
    try:
        data = path.read_bytes()
    except OSError as err:
        raise DataError(path, "", f"cannot read: {err.strerror or err}") from None
    return data, hashlib.sha256(data).hexdigest()


def _json_file(path: Path, files: list) -> dict:
    """A small JSON object file (config.json / metrics.json), read and hashed once."""
    try:
        data = path.read_bytes()
    except FileNotFoundError:
        return {}
    except OSError as err:
        raise DataError(path, "", f"cannot read: {err.strerror or err}") from None
    files.append((str(path), hashlib.sha256(data).hexdigest(), len(data)))
    try:
        value = loads(data)
    except ValueError:
        value = read_json(path)  # raises the standard one-line error (file:line:col: message)
    if not isinstance(value, dict):
        raise DataError(path, "", "must be a JSON object")
    return value


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
        self.tasks = frozenset(t.name for t in bench.tasks)
        cols: dict[str, list] = {c: [] for c in (*ITEM_COLUMNS, "answer")}
        for pos, it in enumerate(bench.items()):
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


class _Columns:
    """Compact per-folder chunks (numbers and item positions as arrays, run constants once per
    folder), expanded into the frame's columns once at the end."""

    def __init__(self) -> None:
        self.runs: dict[str, list] = {c: [] for c in (*RUN_COLUMNS, "n")}
        self.lists: dict[str, list] = {c: [] for c in ("mode", "pred", "gt", "choices")}
        self.arrays: dict[str, list[np.ndarray]] = {c: [] for c in (*NUMERIC, "idx", "line", "item", "qok", "valid", "abst",
                                                                    "nrot")}

    def add(self, chunk: dict[str, Any]) -> None:
        for c in RUN_COLUMNS:
            self.runs[c].append(chunk["run"][c])
        self.runs["n"].append(chunk["n"])
        for c in self.lists:
            self.lists[c].extend(chunk[c])
        for c in self.arrays:
            self.arrays[c].append(chunk[c])

    def merge(self, other: _Columns) -> None:
        for c in self.runs:
            self.runs[c].extend(other.runs[c])
        for c in self.lists:
            self.lists[c].extend(other.lists[c])
        for c in self.arrays:
            self.arrays[c].extend(other.arrays[c])

    def state(self) -> tuple:
        return self.runs, self.lists, self.arrays

    @classmethod
    def from_state(cls, state: tuple) -> _Columns:
        c = cls()
        c.runs, c.lists, c.arrays = state
        return c

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
        data["rotations_logged"] = arr["nrot"].astype(np.int64)  # entries of the row's rotations list
        import pandas as pd

        return pd.DataFrame(data)


_NAN = float("nan")
_MODES = {"mcq": "mcq", "open": "open"}  # shared strings for the common values


class _Rotation(msgspec.Struct):
    rotation_idx: Any = None
    choice: Any = None


_Number = bool | float | None  # JSON integers are accepted (as floats); strings are not


# The fields of an upstream row the scores need; msgspec skips every other field without building
# it (retrieved lists, usage, runtime logs: most of a row's bytes). A row whose fields do not fit
# these types (a score logged as a string, a rotation that is not an object) fails the whole file
# over to the general path, which reads any row as a dict.
_Row = msgspec.defstruct("_Row", [
    *((name, Any, None) for name in ("task", "mode", "idx", "question", "gt", "pred", "valid_choice", "abstained",
                                     "choice", "question_id")),
    ("rotations", list[_Rotation] | None, None),
    *((name, _Number, None) for name in NUMERIC),
])
_ROWS = msgspec.json.Decoder(list[_Row])


def _num_slow(v: Any) -> float:
    if v is None:
        return _NAN
    if v.__class__ is bool or v.__class__ is int:
        return float(v)
    f = num(v)
    return _NAN if f is None else f


def _struct_choices(row: _Row) -> tuple | None:
    """choices_of_row for a decoded _Row (same result, tested)."""
    rots = row.rotations
    if rots:
        if [r.rotation_idx for r in rots] == list(range(len(rots))):
            return tuple([SHARED_LETTERS.get(c, c) if (c := r.choice).__class__ is str else c for r in rots])
        return choices_of_row({"rotations": [{"rotation_idx": r.rotation_idx, "choice": r.choice} for r in rots]}, "mcq")
    c = row.choice
    return (c,) if isinstance(c, str) else None



def _columns(rows: list, lines: list[int], run: Run, names: Mapping[str, str], table: ItemTable,
             shared: dict | None = None) -> tuple[dict, int]:
    """One run's rows (dicts, or _Row from the fast path) that join to an item, as a compact
    chunk, and how many did not join. Column by column, so that each field is read at C speed
    where it can be; the same values as scorer.load.runs.parse_row + scorer.frame.predictions_frame.
    `shared` interns choice tuples and short answers across chunks (a worker's chunk travels to
    the parent pickled, and a shared object is pickled once)."""
    task, mode = run.task, run.mode
    fast = bool(rows) and rows[0].__class__ is _Row
    if fast:
        def col(name: str) -> list:
            return list(map(attrgetter(name), rows))
    else:
        def col(name: str) -> list:
            return [r.get(name) for r in rows]
    tasks = [v if v.__class__ is str and v else (_text(v) or task) for v in col("task")]
    modes = [_MODES.get(v, v) if v.__class__ is str and v else (_text(v) or mode) for v in col("mode")]
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
    if unmatched:
        rows = [rows[i] for i in keep]
        lines = [lines[i] for i in keep]
        modes = [modes[i] for i in keep]
        idxs = [idxs[i] for i in keep]
        items = [items[i] for i in keep]
    n = len(rows)
    shared = {} if shared is None else shared
    questions = [v if v.__class__ is str else _text(v) for v in col("question")]
    gts = [v if v.__class__ is str else _text(v) for v in col("gt")]
    preds = [v if v.__class__ is str else _text(v) for v in col("pred")]
    preds = [shared.setdefault(v, v) if len(v) <= 8 else v for v in preds]
    if fast:
        choices = [_struct_choices(r) if m == "mcq" else None for r, m in zip(rows, modes)]
    else:
        choices = [choices_of_row(r, m) if m == "mcq" else None for r, m in zip(rows, modes)]
    choices = [c if c is None else shared.setdefault(c, c) for c in choices]
    chunk: dict[str, Any] = {
        "run": {"run_key": run.key, "backbone": run.backbone, "method": run.method,
                "display": display_name(run.method, names), "modality": run.modality, "folder": str(run.folder)},
        "n": n, "mode": modes,
        "item": np.fromiter((it[0] for it in items), dtype=np.int64, count=n),
        "qok": np.fromiter((not q or q == it[1] or question_matches(q, it[1], it[3]) for q, it in zip(questions, items)),
                           dtype=bool, count=n),
        "nrot": np.fromiter((len(v) if v.__class__ is list else 0 for v in col("rotations")), dtype=np.int64, count=n),
        "valid": np.array([int(v) if v.__class__ is bool else -1 for v in col("valid_choice")], dtype=np.int8),
        "abst": np.array([int(v) if v.__class__ is bool else -1 for v in col("abstained")], dtype=np.int8),
        "pred": preds,
        "gt": [None if g == it[2] else g for g, it in zip(gts, items)],  # None: the item's own answer text
        "choices": choices,
        "idx": np.array(idxs, dtype=np.int64), "line": np.array(lines, dtype=np.int64),
    }
    for c in NUMERIC:
        if fast:  # the schema admits only bool, number or null: numpy maps None to NaN, bools to 0/1
            chunk[c] = np.array(col(c), dtype=float)
        else:
            chunk[c] = np.array([v if v.__class__ is float else _num_slow(v) for v in col(c)], dtype=float)
    return chunk, unmatched


def _split_lines(data: bytes) -> tuple[list[int], list[bytes]]:
    lines, raw = [], []
    for line_no, line in enumerate(data.split(b"\n"), start=1):
        if line.strip():
            lines.append(line_no)
            raw.append(line)
    return lines, raw


def _decode_rows(raw: list[bytes], pred_path: Path, lines: list[int],
                 problems: list[RunProblem] | None = None) -> list:
    """Every line's row: _Row objects when the whole file fits the fast schema, else dicts. A line
    with bare NaN/Infinity is read with those values missing (a problem says so)."""
    body = b"[" + b",".join(raw) + b"]"
    try:
        return _ROWS.decode(body)
    except (msgspec.DecodeError, msgspec.ValidationError, OverflowError, RecursionError):
        pass
    try:  # one parse for the whole file (orjson is several times faster on bytes than on str)
        rows = loads(body)
        if not all(r.__class__ is dict for r in rows):
            raise ValueError
        return rows
    except ValueError:  # line by line: NaN-bearing lines are read leniently, a bad line is named
        return [_parse(line, pred_path, n, problems) for line, n in zip(raw, lines)]


def _read_folder(folder: Path, table: ItemTable, cols: _Columns, names: Mapping[str, str], files: list,
                 shared: dict | None = None) -> tuple[Run, int]:
    config = _json_file(folder / "config.json", files)
    metrics = _json_file(folder / "metrics.json", files)
    pred_path = folder / PREDICTIONS
    data, digest = _hash_file(pred_path)
    files.append((str(pred_path), digest, len(data)))
    lines, raw = _split_lines(data)
    del data
    problems: list[RunProblem] = []
    rows = _decode_rows(raw, pred_path, lines, problems)
    first = (rows[0] if rows[0].__class__ is dict else _parse(raw[0], pred_path, lines[0])) if rows else {}
    del raw
    if rows and rows[0].__class__ is dict:  # the fast schema admits no text where a score goes
        problems += row_problems(str(pred_path), list(zip(lines, rows)))
    backbone, method, task, mode, modality = run_identity(folder, config, metrics, first)
    task, note = resolve_task(task, config, metrics, table.tasks)
    if note:
        problems.append(RunProblem(str(folder / "metrics.json"), "note", note, "task_name"))
    run = Run(backbone=backbone, method=method, mode=mode, task=task, folder=folder, modality=modality,
              config=frozen_map(config), metrics=frozen_map(metrics), problems=tuple(problems))
    found, unmatched = _columns(rows, lines, run, names, table, shared)
    cols.add(found)
    return run, unmatched


def _parse(line: bytes, path: Path, line_no: int, problems: list[RunProblem] | None = None) -> dict:
    try:
        row = loads(line)
    except ValueError:
        row = lenient_row(path, line, line_no, problems)
    if not isinstance(row, dict):
        raise DataError(path, str(line_no), "a prediction row must be a JSON object")
    return row


def run_folders(paths: Iterable[str | Path] | str | Path) -> list[Path]:
    """Every run folder under `paths`, resolved and in the order scorer.load.runs.load_runs reads
    them. The roots are resolved once and walked without following links, so the folders below
    are resolved already (one realpath per folder costs seconds over 20,000 folders)."""
    if isinstance(paths, (str, Path)):
        paths = [paths]
    folders: dict[Path, None] = {}
    for p in paths:
        root = Path(p)
        if not root.exists():
            raise DataError(root, "", "no such file or folder")
        if root.is_file():
            for f in find_run_folders(root):  # a predictions.jsonl named directly
                folders.setdefault(f.resolve(), None)
            continue
        for dirpath, dirnames, filenames in os.walk(root.resolve(), followlinks=False):
            dirnames.sort()
            if PREDICTIONS in filenames:
                folders.setdefault(Path(dirpath), None)
    return list(folders)


_WORKER: dict[str, Any] = {}  # the item index and names, set before forking and inherited by workers
MIN_FOLDERS_PARALLEL = 64


def _read_chunk(folders: list[Path], progress: Callable[[int], None] | None = None) -> tuple:
    """Read some folders; returns plain data (Run holds read-only mappings, which do not pickle; a
    DataError's message travels as text)."""
    cols, files, idents, unmatched, shared = _Columns(), [], [], 0, {}
    try:
        with gc_paused():
            for i, f in enumerate(folders):
                run, miss = _read_folder(f, _WORKER["table"], cols, _WORKER["names"], files, shared)
                idents.append((run.backbone, run.method, run.mode, run.task, run.folder, run.modality,
                               dict(run.config), dict(run.metrics), run.problems))
                unmatched += miss
                if progress:
                    progress(i + 1)
    except UserError as err:
        return ("error", str(err))
    return ("ok", idents, cols.state(), files, unmatched)


def _balanced_parts(folders: list[Path], n: int) -> list[list[Path]]:
    """`n` contiguous parts of `folders` with about the same bytes of predictions each (folder
    order is kept: the frame's row order does not depend on the number of workers)."""
    sizes = []
    for f in folders:
        try:
            sizes.append(os.stat(f / PREDICTIONS).st_size + 1)
        except OSError:
            sizes.append(1)  # reported when read
    total, parts, start, acc = sum(sizes), [], 0, 0
    for i, size in enumerate(sizes):
        acc += size
        if len(parts) < n - 1 and acc >= total * (len(parts) + 1) / n:
            parts.append(folders[start:i + 1])
            start = i + 1
    parts.append(folders[start:])
    return [p for p in parts if p]


PARTS_PER_PROCESS = 6  # parts claimed one at a time: whoever is free takes the next


def _claim() -> int | None:
    """The next unread part's index, from a counter every process shares; None when none is left."""
    counter = _WORKER["next"]
    with counter.get_lock():
        i = counter.value
        if i >= len(_WORKER["parts"]):
            return None
        counter.value = i + 1
    return i


def _claim_and_read(_: int) -> list[tuple[int, tuple]]:
    """Worker: read parts until none is left."""
    out = []
    while (i := _claim()) is not None:
        out.append((i, _read_chunk(_WORKER["parts"][i])))
    return out


def _read_parts(parts: list[list[Path]], n_processes: int, table: ItemTable, names: Mapping[str, str],
                progress: Callable[[int, int], None] | None, total: int,
                meanwhile: Callable[[], Any] | None = None) -> list[tuple]:
    """Each part's _read_chunk result, in order. This process and `n_processes` − 1 forked workers
    claim parts from a shared counter, so none waits while parts are left; this process first runs
    `meanwhile` (if given) and reads what is left by then. Only the workers' parts are pickled. A
    worker that dies leaves its parts to be read here; an error in a part comes back as its
    ("error", message)."""
    counter = multiprocessing.get_context("fork").Value("i", 0)
    _WORKER.update(table=table, names=names, parts=parts, next=counter)
    results: dict[int, tuple] = {}
    done = 0
    try:
        with ProcessPoolExecutor(n_processes - 1, mp_context=multiprocessing.get_context("fork")) as pool:
            futures = [pool.submit(_claim_and_read, k) for k in range(n_processes - 1)]
            if meanwhile is not None:
                meanwhile()
            while (i := _claim()) is not None:
                results[i] = _read_chunk(parts[i])
                done += len(parts[i])
                if progress:
                    progress(done, total)
            for fut in futures:
                try:
                    results.update(fut.result())
                except Exception:  # noqa: BLE001 — a broken pool: its parts are read below
                    pass
        for i, part in enumerate(parts):
            if i not in results:
                results[i] = _read_chunk(part)
    finally:
        _WORKER.clear()
    if progress:
        progress(total, total)
    return [results[i] for i in range(len(parts))]


def _workers(n_folders: int) -> int:
    return worker_count(n_folders, None if n_folders >= MIN_FOLDERS_PARALLEL else 1, env="MEMSCOPE_READ_WORKERS")


def read_frame(
    bench: Benchmark,
    paths: Iterable[str | Path] | str | Path,
    names: Mapping[str, str] = DEFAULT_DISPLAY_NAMES,
    progress: Callable[[int, int], None] | None = None,
    meanwhile: Callable[[], Any] | None = None,
) -> LeanRuns:
    """Every run folder under `paths`, read into one frame (rows that join to an item). Many
    folders are read by this process and forked workers (one per CPU in all, at most 4;
    MEMSCOPE_READ_WORKERS=1 turns that off); the result is the same, in the same order.
    `meanwhile`, if given, is called once in this process while the runs are read."""
    folders = run_folders(paths)
    items = ItemTable(bench)
    cols = _Columns()
    runs: list[Run] = []
    files: list[tuple[str, str, int]] = []
    unmatched = 0
    n_workers = min(_workers(len(folders)), max(1, len(folders)))
    with gc_paused():
        if n_workers == 1:
            if meanwhile is not None:
                meanwhile()
            shared: dict = {}
            for i, folder in enumerate(folders):
                run, miss = _read_folder(folder, items, cols, names, files, shared)
                runs.append(run)
                unmatched += miss
                if progress:
                    progress(i + 1, len(folders))
        else:
            parts = _balanced_parts(folders, n_workers * PARTS_PER_PROCESS)
            for res in _read_parts(parts, n_workers, items, names, progress, len(folders), meanwhile):
                if res[0] == "error":
                    raise UserError(res[1])
                _, idents, state, found, miss = res
                cols.merge(_Columns.from_state(state))
                runs += [Run(backbone=b, method=m, mode=mo, task=t, folder=f, modality=mod,
                             config=frozen_map(cf), metrics=frozen_map(me), problems=pr)
                         for b, m, mo, t, f, mod, cf, me, pr in idents]
                files += found
                unmatched += miss
        frame = cols.frame(items)
    return LeanRuns(frame, tuple(runs), tuple(files), unmatched)


def frame_from_runs(bench: Benchmark, runs: Sequence[Run], names: Mapping[str, str] = DEFAULT_DISPLAY_NAMES) -> tuple[pd.DataFrame, int]:
    """The same frame (and unmatched-row count) from runs read with their raw rows (load_runs)."""
    items = ItemTable(bench)
    cols = _Columns()
    unmatched = 0
    for run in runs:
        found, miss = _columns([p.raw for p in run.predictions], [p.line for p in run.predictions], run, names,
                               items)
        cols.add(found)
        unmatched += miss
    return cols.frame(items), unmatched
