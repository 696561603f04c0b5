"""A lean run reader: predictions.jsonl straight into the scorer's columns, no raw rows kept.

`load_runs` keeps every upstream row (`Prediction.raw`), which the app and the evidence diagnostics
need, but a million rows of dicts do not fit in 2 GB. When no report section needs the raw rows,
the scorer reads runs with `read_frame` instead: each line is parsed, the fields the scores need are
copied into typed columns (scorer.load.lean_columns), and the dict is dropped. The frame has
scorer.load.frame.COLUMNS (same values as `predictions_frame(bench, load_runs(...))`, tested) plus
`choices` and `rotations_logged`, and the runs come back as `Run` objects without predictions.
Many folders are read by forked workers (scorer.load.parallel). The files are hashed while they
are read (for report inputs).
"""

from __future__ import annotations

import hashlib
import os
from collections.abc import Callable, Iterable, Mapping, Sequence
from dataclasses import dataclass
from functools import partial
from pathlib import Path
from typing import TYPE_CHECKING, Any

import msgspec
import numpy as np

from scorer.errors import DataError, UserError
from scorer.forked import worker_count
from scorer.load.jsonio import jsonl_lines, loads, parse_json, read_regular
from scorer.load.joined_rows import JoinedRows
from scorer.load.lean_columns import NUMERIC, Columns, ItemTable, row_columns
from scorer.load.parallel import read_parts
from scorer.load.row_checks import NUMBER_FIELDS, lenient_row, row_problems
from scorer.load.runs import find_run_folders, gc_paused, run_identity, walk_run_folders
from scorer.load.tasks import resolve_task
from scorer.metrics.logged_lists import RoundNames
from scorer.model import Benchmark, Run, RunProblem, frozen_map
from scorer.model.run import CONFIG, METRICS, PREDICTIONS
from scorer.names import DEFAULT_DISPLAY_NAMES

if TYPE_CHECKING:  # imported where used: runs are read while pandas loads (scorer.scoring.score)
    import pandas as pd


@dataclass(frozen=True)
class LeanRuns:
    frame: pd.DataFrame  # COLUMNS + choices, one row per prediction row that joins to an item
    runs: tuple[Run, ...]  # identities only (predictions=())
    files: tuple[tuple[str, str, int], ...]  # (path, sha256, bytes) of every file read
    unmatched: int  # rows that match no benchmark item (validate lists them)
    joined: JoinedRows | None = None  # with `evidence`: what the evidence sections read


def _hash_file(path: Path) -> tuple[bytes, str]:
    data = read_regular(path)
    return data, hashlib.sha256(data).hexdigest()


def _json_file(path: Path, files: list) -> dict:
    """A small JSON object file (config.json / metrics.json), read and hashed once; {} when there
    is none (a link to nothing is an error, as any file that cannot be read)."""
    try:
        data = read_regular(path)
    except DataError:
        if not os.path.lexists(path):  # asked only when the read failed: one call less per file
            return {}
        raise
    files.append((str(path), hashlib.sha256(data).hexdigest(), len(data)))
    value = parse_json(path, data)  # a one-line error (file:line:col: message) when it is not JSON
    if not isinstance(value, dict):
        raise DataError(path, "", "must be a JSON object")
    return value


class _Rotation(msgspec.Struct):
    rotation_idx: Any = None
    choice: Any = None


_Number = bool | float | None  # JSON integers are accepted (as floats); strings are not
_Strict = float | None  # a score upstream writes as a number: true/false is a reader problem too


def _score_type(name: str) -> Any:
    return _Strict if name in NUMBER_FIELDS else _Number


# The fields of an upstream row the scores need; msgspec skips every other field without building
# it (retrieved lists, usage, runtime logs: most of a row's bytes). A row whose fields do not fit
# these types (a score logged as a string, a rotation that is not an object) fails the whole file
# over to the general path, which reads any row as a dict.
_Row = msgspec.defstruct("_Row", [
    *((name, Any, None) for name in ("task", "mode", "idx", "question", "gt", "pred", "valid_choice", "abstained",
                                     "choice", "question_id")),
    ("rotations", list[_Rotation] | None, None),
    *((name, _score_type(name), None) for name in NUMERIC),
])
_ROWS = msgspec.json.Decoder(list[_Row])


class _RotationFull(msgspec.Struct):
    rotation_idx: Any = None
    choice: Any = None
    correct_position: Any = None
    em: Any = None
    pred: Any = None


class _Runtime(msgspec.Struct):
    seed_round_ids: Any = None
    top_candidates: Any = None
    selected_round_ids: Any = None
    history_source: Any = None


# With the evidence sections (scorer.load.joined_rows.EVIDENCE_FIELDS): the same fields, and what
# those sections read, in the same single parse. The retrieval logs are kept as their JSON text
# (msgspec.Raw: not parsed with the row), written into each row's lists JSON and parsed once there
# for the evidence arrays (scorer.load.joined_rows.evidence_segment).
_EvRow = msgspec.defstruct("_EvRow", [
    *((name, Any, None) for name in ("task", "mode", "idx", "question", "gt", "pred", "valid_choice", "abstained",
                                     "choice", "question_id")),
    *((name, msgspec.Raw, None) for name in ("retrieved", "delivered", "context_round_ids", "clue_rounds",
                                             "history_source")),
    ("rotations", list[_RotationFull] | None, None),
    ("method_runtime", _Runtime | None, None),
    *((name, _score_type(name), None) for name in NUMERIC),
])
_EV_ROWS = msgspec.json.Decoder(list[_EvRow])
_FAST = (_Row, _EvRow)


def _split_lines(data: bytes) -> tuple[list[int], list[bytes]]:
    """The file's non-blank lines (as they are, not stripped) and their 1-based numbers, split as
    every reader splits them (scorer.load.jsonio.jsonl_lines)."""
    raw = jsonl_lines(data)
    if raw and not raw[-1]:
        raw.pop()  # the empty text after the last line's end (no line of its own)
    if [line[:1] for line in raw].count(b"{") == len(raw):
        # Every line starts with "{" (a row, as upstream writes them): none is blank, and the lines
        # are numbered in order — no strip per line (40 ms at MemEye scale; bytes.count of "\n{" over
        # the files, the first way tried, cost as much).
        return list(range(1, len(raw) + 1)), raw
    lines, raw = [], []
    for line_no, line in enumerate(jsonl_lines(data), start=1):
        if line.strip():
            lines.append(line_no)
            raw.append(line)
    return lines, raw


def _decode_rows(raw: list[bytes], pred_path: Path, lines: list[int],
                 problems: list[RunProblem] | None = None, evidence: bool = False) -> list:
    """Every line's row: _Row (with `evidence`, _EvRow) objects when the whole file fits the fast
    schema, else dicts. A line with bare NaN/Infinity is read with those values missing (a problem
    says so)."""
    body = b"[" + b",".join(raw) + b"]"
    try:
        return (_EV_ROWS if evidence else _ROWS).decode(body)
    except (msgspec.DecodeError, msgspec.ValidationError, OverflowError, RecursionError):
        pass
    try:  # one parse for the whole file (orjson is several times faster on bytes than on str)
        rows = loads(body)
        if not all(r.__class__ is dict for r in rows):
            raise ValueError
        return rows
    except ValueError:  # line by line: NaN-bearing lines are read leniently, a bad line is named
        return [_parse(line, pred_path, n, problems) for line, n in zip(raw, lines)]


def _read_folder(folder: Path, table: ItemTable, cols: Columns, names: Mapping[str, str], files: list,
                 shared: dict | None = None, evidence: bool = False,
                 round_names: RoundNames | None = None) -> tuple[Run, int]:
    config = _json_file(folder / CONFIG, files)
    metrics = _json_file(folder / METRICS, files)
    pred_path = folder / PREDICTIONS
    data, digest = _hash_file(pred_path)
    files.append((str(pred_path), digest, len(data)))
    lines, raw = _split_lines(data)
    del data
    problems: list[RunProblem] = []
    rows = _decode_rows(raw, pred_path, lines, problems, evidence)
    fast = bool(rows) and rows[0].__class__ in _FAST
    first = (_parse(raw[0], pred_path, lines[0]) if fast else rows[0]) if rows else {}
    del raw
    if rows and not fast:  # the fast schema admits no text where a score goes
        problems += row_problems(str(pred_path), list(zip(lines, rows)))
    backbone, method, task, mode, modality = run_identity(folder, config, metrics, first)
    task, note = resolve_task(task, config, metrics, table.tasks)
    if note:
        problems.append(RunProblem(str(folder / METRICS), "note", note, "task_name"))
    run = Run(backbone=backbone, method=method, mode=mode, task=task, folder=folder, modality=modality,
              config=frozen_map(config), metrics=frozen_map(metrics), problems=tuple(problems))
    found, unmatched = row_columns(rows, lines, run, names, table, shared, fast, evidence, round_names)
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
        if not os.path.isdir(root):  # a predictions.jsonl named directly, or an error
            for f in find_run_folders(root):  # a predictions.jsonl named directly
                folders.setdefault(f.resolve(), None)
            continue
        for f in walk_run_folders(root.resolve(), shown=root):
            folders.setdefault(f, None)
    return list(folders)


MIN_FOLDERS_PARALLEL = 64
PARTS_PER_PROCESS = 12  # parts claimed one at a time: whoever is free takes the next


def _read_chunk(folders: list[Path], table: ItemTable, names: Mapping[str, str], evidence: bool = False) -> tuple:
    """Read some folders; returns plain data (Run holds read-only mappings, which do not pickle; a
    DataError's message travels as text)."""
    cols, files, idents, unmatched, shared, round_names = Columns(evidence), [], [], 0, {}, RoundNames()
    try:
        with gc_paused():
            for f in folders:
                run, miss = _read_folder(f, table, cols, names, files, shared, evidence, round_names)
                idents.append((run.backbone, run.method, run.mode, run.task, run.folder, run.modality,
                               dict(run.config), dict(run.metrics), run.problems))
                unmatched += miss
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


def _workers(n_folders: int) -> int:
    return worker_count(n_folders, None if n_folders >= MIN_FOLDERS_PARALLEL else 1, env="MEMSCOPE_READ_WORKERS")


def read_frame(
    bench: Benchmark,
    paths: Iterable[str | Path] | str | Path,
    names: Mapping[str, str] = DEFAULT_DISPLAY_NAMES,
    progress: Callable[[int, int], None] | None = None,
    meanwhile: Callable[[], Any] | None = None,
    evidence: bool = False,
) -> LeanRuns:
    """Every run folder under `paths`, read into one frame (rows that join to an item). Many
    folders are read by this process and forked workers (one per CPU in all, at most 4;
    MEMSCOPE_READ_WORKERS=1 turns that off); the result is the same, in the same order.
    `meanwhile`, if given, is called once in this process while the runs are read. With
    `evidence`, the same parse also keeps what the evidence sections read (`joined`)."""
    folders = run_folders(paths)
    items = ItemTable(bench)
    cols = Columns(evidence)
    runs: list[Run] = []
    files: list[tuple[str, str, int]] = []
    unmatched = 0
    n_workers = min(_workers(len(folders)), max(1, len(folders)))
    with gc_paused():
        if n_workers == 1:
            if meanwhile is not None:
                meanwhile()
            shared: dict = {}
            round_names = RoundNames()
            for i, folder in enumerate(folders):
                run, miss = _read_folder(folder, items, cols, names, files, shared, evidence, round_names)
                runs.append(run)
                unmatched += miss
                if progress:
                    progress(i + 1, len(folders))
        else:
            parts = _balanced_parts(folders, n_workers * PARTS_PER_PROCESS)
            work = partial(_read_chunk, table=items, names=names, evidence=evidence)
            for res in read_parts(parts, n_workers, work, progress, len(folders), meanwhile):
                if res[0] == "error":
                    raise UserError(res[1])
                _, idents, state, found, miss = res
                cols.merge(Columns.from_state(state))
                runs += [Run(backbone=b, method=m, mode=mo, task=t, folder=f, modality=mod,
                             config=frozen_map(cf), metrics=frozen_map(me), problems=pr)
                         for b, m, mo, t, f, mod, cf, me, pr in idents]
                files += found
                unmatched += miss
        frame = cols.frame(items)
    return LeanRuns(frame, tuple(runs), tuple(files), unmatched, cols.joined(items))


def frame_from_runs(bench: Benchmark, runs: Sequence[Run], names: Mapping[str, str] = DEFAULT_DISPLAY_NAMES) -> tuple[pd.DataFrame, int]:
    """The same frame (and unmatched-row count) from runs read with their raw rows (load_runs)."""
    frame, unmatched, _ = read_loaded(bench, runs, names, joined=False)
    return frame, unmatched


def read_loaded(bench: Benchmark, runs: Sequence[Run], names: Mapping[str, str] = DEFAULT_DISPLAY_NAMES,
                joined: bool = True) -> tuple[pd.DataFrame, int, JoinedRows | None]:
    """frame_from_runs, and (`joined`) the joined rows with their Prediction objects (what the
    evidence sections read)."""
    items = ItemTable(bench)
    cols = Columns()
    unmatched = 0
    for run in runs:
        found, miss = row_columns([p.raw for p in run.predictions], [p.line for p in run.predictions], run, names,
                                  items)
        cols.add(found)
        unmatched += miss
    return cols.frame(items), unmatched, joined_from_runs(items, runs) if joined else None


def joined_from_runs(items: ItemTable, runs: Sequence[Run]) -> JoinedRows:
    """The JoinedRows of loaded runs: their Prediction objects, joined by scorer.load.join.Joiner
    (rows whose question differs included), `gate` as scorer.metrics.gates.gate_observations joins."""
    from scorer.load.join import Joiner

    pos = {id(it): i for i, it in enumerate(items.items)}
    by_id = items.mcq_by_id
    joiner = Joiner(items.bench)
    run_no, mode, item, gate, idx, line, rows = [], [], [], [], [], [], []
    for r, run in enumerate(runs):
        for p in run.predictions:
            it = joiner.item(run, p)
            if it is None:
                continue
            run_no.append(r)
            mode.append(p.mode)
            item.append(pos[id(it)])
            gate.append(by_id.get(p.item_id, by_id.get(f"{run.task}:{p.idx}", -1)) if p.mode == "mcq" else -1)
            idx.append(p.idx)
            line.append(p.line)
            rows.append(p)

    def arr(v: list) -> np.ndarray:
        return np.array(v, dtype=np.int64)

    return JoinedRows(arr(run_no), mode, arr(item), arr(gate), arr(idx), arr(line), rows, items.items)
