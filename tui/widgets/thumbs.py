"""Thumbnails of media items (a clue card's, a question's): a label line and the media helper's widget
(tui/widgets/media.py, compact), which decodes off the UI thread and shows a placeholder with the
reason when the file is missing, corrupt or outside the benchmark root.

An image thumbnail is one widget (its label painted by the picture box). `ThumbRow` is a row of
thumbnails refilled in place: moving to the next item hands an image thumbnail the next image (label
updated, picture reloaded off the UI thread) instead of removing and mounting widgets — a keystroke's
budget (a video or audio thumbnail is reused for its own medium only: the same round in another
item). The thumbnails still missing are mounted by `settle()`, which the owner calls after the item's
first paint; spare image thumbnails are hidden and kept for the next item, spare others removed.
"""

from __future__ import annotations

from typing import Sequence

from textual.containers import Horizontal, Vertical
from textual.widget import Widget
from textual.widgets import Static

from scorer.model import Media
from tui.widgets.media import media_label, media_widget
from tui.widgets.media_image import MediaImage


class ImageThumb(MediaImage):
    """An image thumbnail: ONE widget, its label painted as the picture box's first line."""

    def __init__(self, m: Media, state) -> None:
        super().__init__(m, state.bench.root, state.allow_outside_root, classes="thumb media-thumb image-thumb")
        self.label = media_label(m)

    def can_show(self, m: Media) -> bool:
        return m.kind == "image"

    def set_media(self, m: Media) -> None:
        """Show another image here, in place (the picture reloads off the UI thread)."""
        if m != self.media:
            self.label = media_label(m)
            super().set_media(m)


class MediaThumb(Vertical):
    """A video or audio thumbnail: a label line above the media helper's compact widget."""

    def __init__(self, m: Media, state) -> None:
        super().__init__(classes="thumb")
        self.media = m
        self._root, self._allow = state.bench.root, state.allow_outside_root

    def compose(self):
        yield Static(media_label(self.media), classes="thumb-label")
        yield media_widget(self.media, self._root, self._allow, compact=True)

    def can_show(self, m: Media) -> bool:
        return False  # a player or a frame source each: a new one for another medium (after the paint)

    def set_media(self, m: Media) -> None:
        """Only ever its own medium (the same round in another item): nothing to change."""


Thumb = ImageThumb | MediaThumb


def media_thumb(m: Media, state) -> Thumb:
    return ImageThumb(m, state) if m.kind == "image" else MediaThumb(m, state)


def _show(widget: Widget, shown: bool) -> None:
    if widget.display != shown:  # each change relayouts: only when it changes
        widget.display = shown


class ThumbRow(Horizontal):
    """A row of thumbnails, refilled in place by `fill(media)`; `settle()` after the first paint."""

    def __init__(self, **kw) -> None:
        super().__init__(**kw)
        self.media: tuple[Media, ...] = ()
        self._thumbs: list[Thumb] = []  # in the row's order: those shown, then the spare (hidden) ones
        self._slots: list[Thumb | Media] = []  # per medium shown: its thumbnail, or the medium until settle()

    def fill(self, media: Sequence[Media]) -> None:
        """Show `media`: reuse the thumbnails in place where they fit (the same medium, else the same
        kind), hide the rest; the media left without one get theirs from settle()."""
        media = tuple(media)
        if media == self.media:
            return
        spare = list(self._thumbs)
        slots: list[Thumb | Media] = []
        for m in media:
            t = next((t for t in spare if t.media == m), None) or next((t for t in spare if t.can_show(m)), None)
            if t is None:
                slots.append(m)
                continue
            spare.remove(t)
            t.set_media(m)
            _show(t, True)
            slots.append(t)
        for t in spare:
            _show(t, False)
        shown = [t for t in slots if not isinstance(t, Media)]
        self._arrange(shown + spare)
        self.media, self._slots = media, slots
        # the row keeps a thumbnail's height until its thumbnails are mounted (no jump)
        self._set_pending(not shown and bool(media))

    def _set_pending(self, pending: bool) -> None:
        self.set_marks(self.classes | {"pending"} if pending else self.classes - {"pending"})

    def _arrange(self, order: list[Thumb]) -> None:
        """Put the thumbnails in `order` (a relayout, which the caller's batch does anyway)."""
        if order == self._thumbs:
            return
        for i, t in enumerate(order):
            if i == 0:
                if self._thumbs and self._thumbs[0] is not t:
                    self.move_child(t, before=self._thumbs[0])
            elif self._thumbs.index(t) != self._thumbs.index(order[i - 1]) + 1:
                self.move_child(t, after=order[i - 1])
            self._thumbs.remove(t)
            self._thumbs.insert(i, t)

    def set_marks(self, classes) -> None:
        """Set the row's classes, restyling the row alone: a class change restyles a widget's whole
        subtree, the thumbnails' too (a few ms each time for a row of video and audio thumbnails),
        yet their styles never depend on the row's classes (app.tcss styles a clue card's parts by
        their marks, never the parts' descendants). They repaint on the row's background."""
        classes, old = set(classes), set(self.classes)
        if classes == old:
            return
        for c in old - classes:
            self.remove_class(c, update=False)
        self.add_class(*classes, update=False)
        if not self.is_mounted:
            return  # mounting styles it
        self.app.stylesheet.update_nodes([self])
        if "selected" in classes ^ old:  # another background: the thumbnails repaint on it
            for w in self.walk_children():
                w.notify_style_update()  # inherited styles (the background) are cached per widget
                w.refresh()

    async def settle(self) -> None:
        """After the item's first paint: mount the thumbnails `fill` could not reuse, and drop spare
        video and audio ones (they hold a frame source or a clip; spare image ones stay, to reuse)."""
        if not self.is_attached:
            return
        # the plan is settled before the first await: a fill coming meanwhile sees the new thumbnails
        mounts: list[tuple[Thumb, Thumb | None]] = []  # (new thumbnail, the one it goes before)
        slots = list(self._slots)
        for j, s in enumerate(slots):
            if isinstance(s, Media):
                slots[j] = media_thumb(s, self.app.state)
        shown = [t for t in slots if isinstance(t, (ImageThumb, MediaThumb))]
        spare = [t for t in self._thumbs if t not in shown]
        drop = [t for t in spare if not isinstance(t, ImageThumb)]
        for j, s in enumerate(self._slots):
            if isinstance(s, Media):
                after = next((t for t in self._slots[j + 1:] if not isinstance(t, Media)), None)
                before = after if after is not None else next((t for t in spare if t not in drop), None)
                mounts.append((slots[j], before))
        self._slots = slots
        self._thumbs = shown + [t for t in spare if t not in drop]
        if drop:
            await self.remove_children(drop)
        for t, before in mounts:
            await self.mount(t, before=before) if before is not None else await self.mount(t)
        if mounts:
            self._set_pending(False)
