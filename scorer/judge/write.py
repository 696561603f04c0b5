"""Writing judged runs: new run folders mirroring the input tree, or the input itself (--in-place).

A judged row gets `judge`, `judge_reasoning` and `judge_model`; the values it had before are kept as
`judge_previous` / `judge_reasoning_previous` (and `judge_model_previous` when the earlier score
named its judge), which `memscope score` compares as judge vs judge. A row that could not be
judged gets `judge: null` and `judge_failed: <reason>` (never the old judge's score, which would
mix two judges in one run). Rows not selected are copied unchanged. config.json gains a `judge`
object (model, public base URL, prompt sha256, levels, counts; never a key). Files are replaced
atomically (temp file + rename).
"""

from __future__ import annotations

import json
import os
import re
import shutil
import tempfile
from pathlib import Path
from typing import Any, Mapping, Sequence

from scorer.errors import UserError
from scorer.judge.runner import LoadedRun, Result
from scorer.model.run import CONFIG, PREDICTIONS

try:
    import orjson

    def _dumps(row: Mapping) -> bytes:
        try:
            return orjson.dumps(row)
        except TypeError:  # e.g. an integer past 64 bits: the standard library copes
            return json.dumps(row, ensure_ascii=False).encode("utf-8")
except ImportError:  # pragma: no cover - orjson is a core dependency

    def _dumps(row: Mapping) -> bytes:
        return json.dumps(row, ensure_ascii=False).encode("utf-8")

PANEL_MEDIAN = "panel-median"


def safe_name(name: str) -> str:
    """A model name as one path component: `openai/gpt-4o` → `openai_gpt-4o`."""
    s = re.sub(r"[^A-Za-z0-9._+-]+", "_", name).strip("._")
    return s or "model"


def model_dirs(out: Path, models: Sequence[str]) -> dict[str, Path]:
    """One tree per judge: OUT itself for a single judge, OUT/<model> for a panel."""
    if len(models) == 1:
        return {models[0]: out}
    dirs: dict[str, Path] = {}
    used: set[str] = {PANEL_MEDIAN}
    for m in models:
        base = name = safe_name(m)
        n = 2
        while name.lower() in used:
            name, n = f"{base}_{n}", n + 1
        used.add(name.lower())
        dirs[m] = out / name
    return dirs


def relative_folders(runs: Sequence[LoadedRun]) -> list[Path]:
    """Each run folder's path relative to its --runs root; prefixed by the root's name when
    several roots were given, so that two trees never land in one place."""
    roots = list(dict.fromkeys(lr.root for lr in runs))
    labels: dict[Path, Path] = {}
    used: set[str] = set()
    for root in roots:
        base = name = safe_name(root.resolve().name)
        n = 2
        while name in used:
            name, n = f"{base}_{n}", n + 1
        used.add(name)
        labels[root] = Path(name)
    out = []
    for lr in runs:
        folder, root = lr.run.folder, lr.root
        root_dir = root.parent if root.is_file() else root
        rel = folder.resolve().relative_to(root_dir.resolve())
        if rel == Path("."):
            rel = Path(folder.resolve().name)
        out.append(labels[root] / rel if len(roots) > 1 else rel)
    return out


def check_targets(runs: Sequence[LoadedRun], out: Path, targets: Sequence[Path]) -> None:
    """Refuse any output that would overwrite or nest inside the input (that is --in-place's job)."""
    out_r = out.resolve()
    inputs = {lr.run.folder.resolve() for lr in runs}
    for lr in runs:
        root = lr.root.resolve()
        root = root.parent if root.is_file() else root
        if out_r == root or root in out_r.parents:
            raise UserError(f"--out {out} is inside the input runs {lr.root}: choose a folder outside "
                            "it, or use --in-place to rewrite the input")
    for t in targets:
        if t.resolve() in inputs:
            raise UserError(f"--out {out} would overwrite the input run folder {t}: choose another "
                            "folder, or use --in-place")


def _atomic_write(path: Path, data: bytes) -> None:
    fd, tmp = tempfile.mkstemp(prefix=f".{path.name}.", suffix=".tmp", dir=path.parent)
    try:
        with os.fdopen(fd, "wb") as fh:
            fh.write(data)
        os.replace(tmp, path)
    except BaseException:
        Path(tmp).unlink(missing_ok=True)
        raise


def judged_row(raw: Mapping[str, Any], model: str, result: Result | None) -> dict:
    row = dict(raw)
    if raw.get("judge") is not None or raw.get("judge_reasoning") not in (None, ""):
        row["judge_previous"] = raw.get("judge")
        row["judge_reasoning_previous"] = raw.get("judge_reasoning")
        if isinstance(raw.get("judge_model"), str):  # who gave it, for judge-vs-judge agreement in `score`
            row["judge_model_previous"] = raw["judge_model"]
        else:
            row.pop("judge_model_previous", None)
    row.pop("judge_failed", None)
    row["judge_model"] = model
    if result is None or result.error is not None:
        row["judge"] = None
        row["judge_reasoning"] = None
        row["judge_failed"] = result.error if result is not None else "not judged"
    else:
        row["judge"] = float(result.score)
        row["judge_reasoning"] = result.reasoning
    return row


def write_run_folder(lr: LoadedRun, target: Path, rows: Mapping[int, dict], judge_meta: Mapping[str, Any]) -> None:
    """Write one run folder at `target` (which may be the input folder, for --in-place): rows in
    `rows` (by index) replaced, the rest copied; config.json with `judge`; other files copied."""
    run, source = lr.run, lr.run.folder
    target.mkdir(parents=True, exist_ok=True)
    in_place = target.resolve() == source.resolve()
    if not in_place:
        for f in sorted(source.iterdir()):
            if f.is_file() and not f.is_symlink() and f.name not in (PREDICTIONS, CONFIG):
                shutil.copy2(f, target / f.name)
    lines = []
    for i, p in enumerate(run.predictions):
        lines.append(_dumps(rows[i] if i in rows else p.raw))
    _atomic_write(target / PREDICTIONS, b"\n".join(lines) + (b"\n" if lines else b""))
    config = dict(run.config)
    if "judge" in config:
        config["judge_previous"] = config["judge"]
    config["judge"] = dict(judge_meta)
    _atomic_write(target / CONFIG, (json.dumps(config, indent=2, ensure_ascii=False) + "\n").encode("utf-8"))


def write_json(path: Path, data: Any) -> None:
    path.parent.mkdir(parents=True, exist_ok=True)
    _atomic_write(path, (json.dumps(data, indent=2, ensure_ascii=False) + "\n").encode("utf-8"))
