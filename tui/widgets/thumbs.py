"""The thumbnail of one media item in a clue card: a label line and the media helper's widget
(tui/widgets/media.py, compact), which decodes off the UI thread and shows a placeholder with the
reason when the file is missing, corrupt or outside the benchmark root."""

from __future__ import annotations

from textual.containers import Vertical
from textual.widget import Widget
from textual.widgets import Static

from scorer.model import Media
from tui.widgets.media import media_label, media_widget


def media_thumb(m: Media, state) -> Widget:
    return Vertical(
        Static(media_label(m), classes="thumb-label"),
        media_widget(m, state.bench.root, state.allow_outside_root, compact=True),
        classes="thumb",
    )
