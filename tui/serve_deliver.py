"""Files the app writes (case cards), sent to the browser when the app runs under `memscope serve`."""

from __future__ import annotations

from pathlib import Path
from typing import Iterable


def deliver(app, paths: Iterable[Path]) -> int:
    """In a browser (textual-serve), send each file to it as a download (Textual's deliver_binary);
    the number sent (0 in a terminal, where the files are simply on disk)."""
    if not getattr(app, "is_web", False):
        return 0
    n = 0
    for p in paths:
        app.deliver_binary(p, save_filename=p.name)
        n += 1
    return n
