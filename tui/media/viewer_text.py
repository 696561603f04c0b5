"""What the viewer's two status lines say (tui/screens/viewer.py): the file, its pixel size, the zoom
and the visible region; a video's or animation's frame, time and play state. Data text (file names)
goes through tui.text.safe.

No widgets here: plain texts from the viewer's state.
"""

from __future__ import annotations

from pathlib import Path
from typing import Sequence

from rich.text import Text

from scorer.model import Media
from tui.media import zoom as zm
from tui.media.playback import end_time, fmt_time
from tui.text import safe


def shown_path(m: Media, root) -> str:
    """The file, relative to the benchmark root when inside it."""
    if m.path is None:
        return m.name
    try:
        return str(Path(m.path).resolve().relative_to(Path(root).resolve()))
    except (ValueError, OSError, TypeError):
        return str(m.path)


def status_line(media: Sequence[Media], index: int, path: str, error: str | None, size_px: tuple[int, int] | None,
                view: zm.View, box: tuple[int, int], mode: str) -> Text:
    out = Text()
    if len(media) > 1:
        out.append(f"{index + 1}/{len(media)} ", style="bold")
    out.append_text(safe(path, one_line=True))
    if error:
        out.append("  · unavailable", style="bold red")
        return out
    if size_px is None:
        out.append("  · loading…", style="dim")
        return out
    w, h = size_px
    reg = zm.region(view, size_px, box)
    z = (f"fit ({reg.scale:.2g}×)" if view.zoom == zm.FIT else f"{view.zoom}×")
    out.append(f"  · {w}×{h} px · zoom {z} · showing x {reg.x0}–{reg.x1}, y {reg.y0}–{reg.y1}")
    out.append(f" · {mode}", style="dim")
    return out


def frame_line(source, frame: int, times: Sequence[float], playing: bool, error: str | None) -> Text:
    if source is None:
        return Text("opening…" if error is None else "", style="dim")
    n = source.count
    t = times[frame] if times else 0.0
    state = "▶ playing" if playing else "⏸ paused"
    return Text(f"frame {frame + 1}/{n} · {fmt_time(t)} / {fmt_time(end_time(times))} · {state}"
                f" · {source.kind}", style="bold" if playing else "")
