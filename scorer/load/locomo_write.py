"""What a LoCoMo import produces (scorer.load.locomo), held in memory, and writing it out: the
dialog files, the embedded images and IMPORT_REPORT.json, replacing only what an earlier import
wrote when asked to (--force).
"""

from __future__ import annotations

import hashlib
import json
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from scorer.errors import UserError
from scorer.load.paths import inside

REPORT_NAME = "IMPORT_REPORT.json"


@dataclass
class Conversion:
    """What an import produces, held in memory until written."""

    dialogs: dict[str, dict] = field(default_factory=dict)  # task name → dialog JSON object
    images: dict[str, bytes] = field(default_factory=dict)  # relative path → bytes (embedded images)
    report: dict = field(default_factory=dict)


def dumps(obj: Any) -> str:
    return json.dumps(obj, ensure_ascii=False, indent=1) + "\n"


def _previous_files(out: Path) -> list[Path]:
    """Files a previous import wrote into `out` (listed in its report), so --force can replace them."""
    try:
        listed = json.loads((out / REPORT_NAME).read_text(encoding="utf-8")).get("files", [])
    except (OSError, ValueError, AttributeError):
        return []
    paths = [out / REPORT_NAME]
    for rel in listed if isinstance(listed, list) else []:
        p = out / str(rel)
        if isinstance(rel, str) and not Path(rel).is_absolute() and inside(p, out):
            paths.append(p)
    return paths


def _remove_previous(out: Path) -> None:
    """Delete only what an earlier import wrote (other files are left alone), then its emptied folders."""
    old = _previous_files(out)
    for p in old:
        if p.is_file():
            p.unlink()
    for d in sorted({p.parent for p in old}, key=lambda d: len(d.parts), reverse=True):
        while d != out and inside(d, out) and d.is_dir() and not any(d.iterdir()):
            d.rmdir()
            d = d.parent


def write(conv: Conversion, out: Path, force: bool = False, source: Path | None = None) -> dict:
    """Write the benchmark and IMPORT_REPORT.json into `out`; return the report."""
    out = Path(out)
    if out.exists() and not out.is_dir():
        raise UserError(f"{out}: exists and is not a folder")
    if out.is_dir() and any(out.iterdir()):
        if not force:
            raise UserError(f"{out}: folder is not empty (use --force to replace a previous import)")
        _remove_previous(out)
    files = {f"dialog/{task}_Open.json": dumps(dialog) for task, dialog in conv.dialogs.items()}
    try:
        (out / "dialog").mkdir(parents=True, exist_ok=True)
        for rel, data in sorted(conv.images.items()):
            (out / rel).parent.mkdir(parents=True, exist_ok=True)
            (out / rel).write_bytes(data)
        for rel, text in sorted(files.items()):
            (out / rel).write_text(text, encoding="utf-8")
        report = dict(conv.report)
        if source is not None:
            report = {"source": {"file": source.name, "sha256": hashlib.sha256(source.read_bytes()).hexdigest()},
                      **report}
        report["files"] = sorted(files) + sorted(conv.images)
        (out / REPORT_NAME).write_text(dumps(report), encoding="utf-8")
    except OSError as err:
        raise UserError(f"{out}: cannot write: {err.strerror or err}") from None
    return report
