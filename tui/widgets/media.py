"""`media_widget(...)`: the right widget for one Media — image, video or audio — for any screen.

The Session screen shows media full size; the Item screen's clue cards can use `compact=True` for
thumbnails (size them in CSS via the `media-thumb` class).
"""

from __future__ import annotations

from pathlib import Path

from rich.text import Text
from textual.widget import Widget
from textual.widgets import Static

from scorer.model import Media
from tui.media.audio import Player
from tui.text import safe
from tui.widgets.media_audio import MediaAudio
from tui.widgets.media_image import MediaImage
from tui.widgets.media_video import MediaVideo

ICON = {"image": "▣ image", "video": "▶ video", "audio": "♪ audio"}
CAPTION = {"image": "caption", "video": "video caption", "audio": "transcript"}


def media_widget(media: Media, root: Path | None, allow_outside_root: bool = False,
                 player: Player | None = None, compact: bool = False, id: str | None = None) -> Widget:
    """The widget showing `media` (its placeholder with the reason when it cannot be shown)."""
    classes = "media-thumb" if compact else "media-full"
    if media.kind == "image":
        return MediaImage(media, root, allow_outside_root, id=id, classes=classes)
    if media.kind == "video":
        return MediaVideo(media, root, allow_outside_root, id=id, classes=classes)
    if media.kind == "audio":
        return MediaAudio(media, root, allow_outside_root, player=player, id=id, classes=classes)
    return Static(safe(f"unknown media kind {media.kind!r}: {media.ref}"), id=id, classes=classes)


def media_label(media: Media, n: int | None = None, of: int | None = None) -> Text:
    """`▣ image 1/2 · name` — the line above a media widget (name literal)."""
    out = Text(ICON.get(media.kind, media.kind), style="bold")
    if n is not None and of and of > 1:
        out.append(f" {n}/{of}")
    out.append(" · ")
    out.append_text(safe(media.name, one_line=True))
    return out


def caption_line(media: Media) -> Text | None:
    """The caption / transcript as literal text, or None when there is none."""
    if not media.text:
        return None
    out = Text(f"{CAPTION.get(media.kind, 'text')}: ", style="bold dim")
    out.append_text(safe(media.text, "italic"))
    return out
