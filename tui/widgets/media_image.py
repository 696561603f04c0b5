"""MediaImage: one image Media as a picture, or a placeholder saying why it cannot be shown.

Only the loader-resolved `Media.path` is opened, re-checked against the benchmark root; remote
images show their URL and caption as plain text and are never fetched.
"""

from __future__ import annotations

from pathlib import Path

from scorer.model import Media
from tui.media import zoom as zm
from tui.media.source import MediaError, local_path
from tui.widgets.picture import PictureView


class MediaImage(PictureView):
    """An image, fitted to the widget's size (set it in CSS: e.g. `height: 14; width: 60`)."""

    def __init__(self, media: Media, root: Path | None, allow_outside_root: bool = False, *,
                 id: str | None = None, classes: str | None = None) -> None:
        super().__init__(id=id, classes=classes)
        self.root, self.allow_outside_root = root, allow_outside_root
        self.media = media
        self.path: Path | None = None
        self._open(media)

    def set_media(self, media: Media) -> None:
        """Show another image in this box, in place (a thumbnail reused for the next item)."""
        if media != self.media:
            self.media = media
            self._open(media)

    def _open(self, media: Media) -> None:
        try:
            path = local_path(media, self.root, self.allow_outside_root)
        except MediaError as exc:
            self.path = None
            self.fail(str(exc))
            return
        self.path = path
        self.show(("image", str(path)), lambda cells: zm.thumbnail_picture(path, cells), media.name)
