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
from array import array
from dataclasses import dataclass
from pathlib import Path
from typing import Any, Callable, Iterable, Mapping, Sequence

import numpy as np
import pandas as pd

from scorer.errors import DataError
from scorer.frame import COLUMNS
from scorer.load.join import same_question
from scorer.load.memeye import read_json
from scorer.load.rows import json_error, loads, num
from scorer.load.runs import (
    FOLDER_RE,
    PREDICTIONS,
    _first,
    _method_name,
    _name,
    find_run_folders,
    gc_paused,
    normalise_modality,
)
from scorer.metrics.answers import choices_of_row
from scorer.model import X_LABELS, Y_LABELS, Benchmark, Run, frozen_map
from scorer.names import DEFAULT_DISPLAY_NAMES, display_name

NUMERIC = ("em", "judge", "bleu_1", "f1", "exact_match", "contains_gt")


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
    if not path.is_file():
        return {}
    data, digest = _hash_file(path)
    files.append((str(path), digest, len(data)))
    value = read_json(path)
    if not isinstance(value, dict):
        raise DataError(path, "", "must be a JSON object")
    return value


def _identity(folder: Path, config: dict, metrics: dict, first: dict) -> tuple[str, str, str, str, str | None]:
    """(backbone, method, task, mode, modality), inferred exactly as scorer.load.runs does."""
    folder_match = FOLDER_RE.match(folder.name)
    method = _method_name(metrics, first)
    backbone = _name(_first(metrics.get("model_name"), config.get("model"), first.get("model")))
    if folder_match and (not backbone or not method):
        rest = folder_match["rest"]
        if method and rest.endswith("_" + method):
            backbone = backbone or rest[: -len(method) - 1]
        elif backbone and rest.startswith(backbone + "_"):
            method = method or rest[len(backbone) + 1:]
    if not backbone:
        raise DataError(folder, "", "cannot tell the run's backbone (no metrics.json model_name or config.json model)")
    if not method:
        raise DataError(folder, "", "cannot tell the run's method (no method_name in metrics.json or rows)")
    task = _name(_first(metrics.get("task_name"), config.get("task"), first.get("task"))) or folder.parent.name
    mode = _first(metrics.get("mode"), first.get("mode"))
    mode = mode.lower() if isinstance(mode, str) else ""
    if mode not in ("mcq", "open"):
        mode = "open" if first and not first.get("rotations") and first.get("choice") is None else "mcq"
    modality = normalise_modality(_first(metrics.get("method_modality"), first.get("method_modality")))
    if modality is None:
        modality = normalise_modality(method.rsplit("__", 1)[-1]) if "__" in method else None
    return backbone, method, task, mode, modality


class _Columns:
    """Typed column buffers: floats in array('d'), references to shared item values in lists."""

    def __init__(self) -> None:
        self.num = {c: array("d") for c in NUMERIC}
        self.obj: dict[str, list] = {c: [] for c in (
            "run_key", "backbone", "method", "display", "modality", "mode", "task", "item_id", "x", "y",
            "answerable", "cluster", "valid_choice", "abstained", "question_ok", "pred", "gt", "folder", "choices")}
        self.ints = {c: array("q") for c in ("idx", "line")}

    def frame(self) -> pd.DataFrame:
        data: dict[str, Any] = {}
        for c in COLUMNS:
            if c in self.num:
                data[c] = np.frombuffer(self.num[c], dtype=float).copy()
            elif c in self.ints:
                data[c] = np.frombuffer(self.ints[c], dtype=np.int64).copy()
            else:
                data[c] = self.obj[c]
        data["choices"] = self.obj["choices"]
        return pd.DataFrame(data)


def _item_index(bench: Benchmark) -> dict[tuple[str, str, int], tuple]:
    """(task, mode, idx) → the per-item values every joined row shares (one object per item)."""
    out = {}
    for it in bench.items():
        x = tuple(sorted(v for v in it.x if v in X_LABELS))
        y = tuple(sorted(v for v in it.y if v in Y_LABELS))
        out[(it.task, it.mode, it.index)] = (it.item_id, it.task, x, y, it.answerable, it.cluster, it.question, it.answer)
    return out


def _read_folder(folder: Path, index: Mapping, cols: _Columns, names: Mapping[str, str], files: list) -> tuple[Run, int]:
    config = _json_file(folder / "config.json", files)
    metrics = _json_file(folder / "metrics.json", files)
    pred_path = folder / PREDICTIONS
    data, digest = _hash_file(pred_path)
    files.append((str(pred_path), digest, len(data)))
    first: dict = {}
    for raw in data.split(b"\n"):
        if raw.strip():
            first = _parse(raw, pred_path, 1) if not first else first
            break
    backbone, method, task, mode, modality = _identity(folder, config, metrics, first)
    run = Run(backbone=backbone, method=method, mode=mode, task=task, folder=folder, modality=modality,
              config=frozen_map(config), metrics=frozen_map(metrics))
    key, display, folder_s = run.key, display_name(method, names), str(folder)
    o, nm, it = cols.obj, cols.num, cols.ints
    unmatched = 0
    try:
        text = data.decode("utf-8")
    except UnicodeDecodeError as err:
        raise DataError(pred_path, f"byte {err.start}", "not UTF-8 text") from None
    del data
    for line_no, line in enumerate(text.split("\n"), start=1):
        if not line.strip():
            continue
        row = _parse(line, pred_path, line_no)
        r_task = _text(row.get("task")) or task
        r_mode = _text(row.get("mode")) or mode
        idx = row.get("idx")
        idx = idx if isinstance(idx, int) and not isinstance(idx, bool) else -1
        item = index.get((r_task, r_mode, idx)) or index.get((task, r_mode, idx))
        if item is None:
            unmatched += 1
            continue
        item_id, i_task, x, y, answerable, cluster, i_question, i_answer = item
        question = _text(row.get("question"))
        gt = _text(row.get("gt"))
        valid, abst = row.get("valid_choice"), row.get("abstained")
        for c in NUMERIC:
            v = num(row.get(c))
            nm[c].append(np.nan if v is None else v)
        it["idx"].append(idx)
        it["line"].append(line_no)
        o["run_key"].append(key)
        o["backbone"].append(backbone)
        o["method"].append(method)
        o["display"].append(display)
        o["modality"].append(modality)
        o["mode"].append(r_mode)
        o["task"].append(i_task)
        o["item_id"].append(item_id)
        o["x"].append(x)
        o["y"].append(y)
        o["answerable"].append(answerable)
        o["cluster"].append(cluster)
        o["valid_choice"].append(valid if isinstance(valid, bool) else None)
        o["abstained"].append(abst if isinstance(abst, bool) else None)
        o["question_ok"].append(not question or question == i_question or same_question(question, i_question))
        o["pred"].append(_text(row.get("pred")))
        o["gt"].append(i_answer if gt == i_answer else gt)  # share the item's string when equal
        o["folder"].append(folder_s)
        o["choices"].append(choices_of_row(row, r_mode))
    return run, unmatched


def _parse(line: str | bytes, path: Path, line_no: int) -> dict:
    try:
        row = loads(line)
    except ValueError:
        col, msg = json_error(line.encode() if isinstance(line, str) else line)
        raise DataError(path, f"{line_no}:{col}" if col else str(line_no), msg) from None
    if not isinstance(row, dict):
        raise DataError(path, str(line_no), "a prediction row must be a JSON object")
    return row


def run_folders(paths: Iterable[str | Path] | str | Path) -> list[Path]:
    if isinstance(paths, (str, Path)):
        paths = [paths]
    folders: list[Path] = []
    for p in paths:
        for f in find_run_folders(Path(p)):
            if f not in folders:
                folders.append(f)
    return folders


def read_frame(
    bench: Benchmark,
    paths: Iterable[str | Path] | str | Path,
    names: Mapping[str, str] = DEFAULT_DISPLAY_NAMES,
    progress: Callable[[int, int], None] | None = None,
) -> LeanRuns:
    """Every run folder under `paths`, read into one frame (rows that join to an item)."""
    folders = run_folders(paths)
    index = _item_index(bench)
    cols = _Columns()
    runs: list[Run] = []
    files: list[tuple[str, str, int]] = []
    unmatched = 0
    with gc_paused():
        for i, folder in enumerate(folders):
            run, miss = _read_folder(folder, index, cols, names, files)
            runs.append(run)
            unmatched += miss
            if progress:
                progress(i + 1, len(folders))
        frame = cols.frame()
    return LeanRuns(frame, tuple(runs), tuple(files), unmatched)


def rotation_choices(bench: Benchmark, runs: Sequence[Run]) -> list[tuple | None]:
    """`choices` for the rows of predictions_frame(bench, runs), in its order (the full reader)."""
    from scorer.load.join import Joiner

    return [choices_of_row(p.raw, p.mode) for _, p, _ in Joiner(bench).pairs(runs)]
