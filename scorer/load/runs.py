"""Reader for upstream run folders (DESIGN.md §3): config.json, metrics.json, predictions.jsonl.

Any folder tree containing such folders loads as is. Every upstream row field is kept (`raw`);
what memscope understands is mapped into Prediction fields: rotation MCQ, legacy MCQ and open rows,
and the retrieval logs (our evidence extension, or upstream's method_runtime seed/selected rounds).
Joining rows to items and checking their questions is `join.py`'s job, not this reader's.
"""

from __future__ import annotations

import os
import re
from pathlib import Path
from collections.abc import Collection
from typing import Any, Iterable

from scorer.errors import DataError
from scorer.forked import gc_paused  # noqa: F401 (re-exported: the readers pause the collector)
from scorer.load.jsonio import jsonl_lines, loads, read_json, read_regular, stat_or_none
from scorer.load.row_checks import lenient_row, row_problems
from scorer.load.tasks import resolve_task
from scorer.model import Prediction, Run, RunProblem, frozen_map
from scorer.model.run import CONFIG, METRICS, PREDICTIONS
from scorer.names import family_from_modality

NO_RUN_FOLDER = f"no run folder under it (a folder with {PREDICTIONS})"
FOLDER_RE = re.compile(r"^(?P<stamp>\d{8}_\d{6})_(?P<rest>.+)$")


def find_run_folders(path: Path) -> list[Path]:
    """Every folder under `path` (or `path` itself) holding a predictions.jsonl, sorted."""
    path = Path(path)
    if stat_or_none(path, follow=False) is None:
        raise DataError(path, "", "no such file or folder")
    if path.name != PREDICTIONS:
        stat_or_none(path)  # a symlink loop, a name too long: one line naming it
    if path.is_file() or path.name == PREDICTIONS and not path.is_dir():
        if path.name == PREDICTIONS:
            return [path.parent]
        raise DataError(path, "", f"expected a run folder or a tree of them (with {PREDICTIONS})")
    if not path.is_dir():  # /dev/null, a FIFO: nothing to read is not "no problems"
        raise DataError(path, "", f"not a folder: expected a run folder or a tree of them (with {PREDICTIONS})")
    return walk_run_folders(path)


def walk_run_folders(root: Path, shown: Path | None = None) -> list[Path]:
    """The folders under the folder `root` (itself included) holding a predictions.jsonl, in walk
    order, links not followed; none is an error naming `shown` (default: `root`) — a mistyped
    folder would otherwise give a clean report of nothing."""
    found = []
    for dirpath, dirnames, filenames in os.walk(root, followlinks=False):
        dirnames.sort()
        if PREDICTIONS in filenames or PREDICTIONS in dirnames:  # a folder named so is an error when read
            found.append(Path(dirpath))
    if not found:
        raise DataError(shown if shown is not None else root, "", NO_RUN_FOLDER)
    return found


def normalise_modality(v: Any) -> str | None:
    """A run's family from its logged modality, by the explicit table in scorer.names (text,
    multimodal, no_visual); an unknown value is kept as written (its family is then `other`)."""
    if not isinstance(v, str) or not v.strip():
        return None
    return family_from_modality(v) or v.strip().lower()


def _name(v: Any) -> str:
    if isinstance(v, dict):
        for k in ("name", "model_name", "model", "id"):
            if isinstance(v.get(k), str):
                return v[k]
        return ""
    return v if isinstance(v, str) else ""


def parse_row(row: dict, line: int, task: str, mode: str) -> Prediction:
    """A Prediction from one upstream row: its identity; scores and texts are read from the row."""
    get = row.get
    t, m, idx = get("task"), get("mode"), get("idx")
    return Prediction(
        t if type(t) is str and t else task,
        m if type(m) is str and m else mode,
        idx if type(idx) is int else -1,
        line,
        row,
    )


def read_rows(path: Path, problems: list[RunProblem] | None = None) -> list[tuple[int, dict]]:
    """(line number, row) of every row; a line with bare NaN/Infinity is read with those values
    missing, and a problem saying so is appended to `problems`."""
    data = read_regular(path)
    rows = []
    for line_no, line in enumerate(jsonl_lines(data), start=1):
        try:
            row = loads(line)
        except ValueError:
            if not line.strip():
                continue
            row = lenient_row(path, line, line_no, problems)
        if type(row) is not dict:
            raise DataError(path, str(line_no), "a prediction row must be a JSON object")
        rows.append((line_no, row))
    return rows


def _first(*values: Any) -> Any:
    for v in values:
        if v not in (None, "", [], {}):
            return v
    return None


# Method names the upstream runner never suffixes with their modality (its effective method name).
UNSUFFIXED_METHODS = frozenset({"full_context_multimodal", "full_context_text_only", "full_context_no_visual",
                                "question_only", "semantic_rag_multimodal", "semantic_rag_text_only"})


def _method_name(metrics: dict, first_row: dict) -> str:
    eff = _first(first_row.get("effective_method_name"), metrics.get("effective_method_name"))
    if isinstance(eff, str):
        return eff
    base = _first(metrics.get("method_name"), first_row.get("method_name"))
    base = base if isinstance(base, str) else ""
    modality = _first(metrics.get("method_modality"), first_row.get("method_modality"))
    if base and base not in UNSUFFIXED_METHODS and isinstance(modality, str) \
            and modality in ("text_only", "multimodal", "no_visual") \
            and not base.endswith(("__text_only", "__multimodal", "__no_visual")):
        return f"{base}__{modality}"
    return base


def run_identity(folder: Path, config: dict, metrics: dict, first: dict) -> tuple[str, str, str, str, str | None]:
    """(backbone, method, task, mode, modality) of a run folder, from its files, first row and name."""
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


def read_run_folder(folder: Path, tasks: Collection[str] = ()) -> Run:
    """One run folder, with its raw rows. `tasks`: the benchmark's task names, to resolve the
    run's task against (scorer.load.tasks); empty, the run keeps the name it gives."""
    # Present but not a regular file (a folder, a symlink loop, a FIFO) is an error, not "absent".
    config = read_json(folder / CONFIG) if os.path.lexists(folder / CONFIG) else {}
    metrics = read_json(folder / METRICS) if os.path.lexists(folder / METRICS) else {}
    if not isinstance(config, dict):
        raise DataError(folder / CONFIG, "", "must be a JSON object")
    if not isinstance(metrics, dict):
        raise DataError(folder / METRICS, "", "must be a JSON object")
    problems: list[RunProblem] = []
    rows = read_rows(folder / PREDICTIONS, problems)
    problems += row_problems(str(folder / PREDICTIONS), rows)
    first = rows[0][1] if rows else {}
    backbone, method, task, mode, modality = run_identity(folder, config, metrics, first)
    task, note = resolve_task(task, config, metrics, tasks)
    if note:
        problems.append(RunProblem(str(folder / METRICS), "note", note, "task_name"))
    predictions = tuple(parse_row(row, line, task, mode) for line, row in rows)
    return Run(
        backbone=backbone,
        method=method,
        mode=mode,
        task=task,
        folder=folder,
        modality=modality,
        config=frozen_map(config),
        metrics=frozen_map(metrics),
        predictions=predictions,
        problems=tuple(problems),
    )


def load_runs(paths: Iterable[str | Path] | str | Path, benchmark: Any = None,
              problems: list[DataError] | None = None) -> list[Run]:
    """Read every run folder under the given paths, in a stable order.

    With a `benchmark`, each run's task is resolved against its task names (scorer.load.tasks);
    joining rows to items and checking their questions is scorer.load.join's job, so that reading
    stays separate from validating. With `problems`, a folder that cannot be read (a file cut short
    mid-row) is appended there and left out, so that `validate` reports it beside everything else;
    without, its error is raised.
    """
    if isinstance(paths, (str, Path)):
        paths = [paths]
    folders: dict[Path, None] = {}  # ordered, and O(1) membership with hundreds of folders
    for p in paths:
        for f in find_run_folders(Path(p)):
            folders.setdefault(f.resolve(), None)
    tasks = frozenset(t.name for t in benchmark.tasks) if benchmark is not None else frozenset()
    with gc_paused():
        if problems is None:
            return [read_run_folder(f, tasks) for f in folders]
        out = []
        for f in folders:
            try:
                out.append(read_run_folder(f, tasks))
            except DataError as err:
                problems.append(err)
        return out
