"""The report formats `--format` accepts (kept apart from the writers, which import pandas)."""

from __future__ import annotations

from typing import Sequence

from scorer.errors import UserError

FORMATS = ("md", "csv", "json", "tex", "png")
DEFAULT_FORMATS = ("md", "csv", "json")


def parse_formats(text: str | Sequence[str]) -> tuple[str, ...]:
    items = text.split(",") if isinstance(text, str) else [p for t in text for p in t.split(",")]
    out = []
    for f in (i.strip().lower() for i in items):
        if not f:
            continue
        f = {"markdown": "md", "latex": "tex", "figures": "png"}.get(f, f)
        if f not in FORMATS:
            raise UserError(f"--format: unknown format {f!r} (choose from {', '.join(FORMATS)})")
        if f not in out:
            out.append(f)
    if not out:
        raise UserError("--format: no format given")
    return tuple(out)
