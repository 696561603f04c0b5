"""Which media a screen shows and which one is selected: what the viewer (`z`) opens on."""

from __future__ import annotations

from textual.screen import Screen

from scorer.model import Media
from tui.widgets.media_image import MediaImage
from tui.widgets.media_video import MediaVideo

VIEWABLE = ("image", "video")


def media_on(screen: Screen) -> tuple[list[Media], int] | None:
    """The images and videos `screen` shows, in screen order (each once), and which one is selected:
    the focused medium, else the first inside the screen's `.selected` part (the Item screen's
    highlighted clue), else the first. None when there is none."""
    found: list[Media] = []
    chosen: int | None = None
    focused = screen.focused
    for w in screen.query("MediaImage, MediaVideo"):
        if not isinstance(w, (MediaImage, MediaVideo)) or w.media.kind not in VIEWABLE:
            continue
        if not w.display or any(not a.display for a in w.ancestors_with_self if hasattr(a, "display")):
            continue
        if w.media in found:
            k = found.index(w.media)
        else:
            found.append(w.media)
            k = len(found) - 1
        if chosen is None and focused is not None and (w is focused or w in focused.ancestors):
            chosen = k
        if chosen is None and any(a.has_class("selected") for a in w.ancestors):
            chosen = k
    if not found:
        return None
    return found, chosen or 0
