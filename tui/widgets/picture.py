"""PictureView: shows one picture (a still, or a video frame) sized to the widget, loaded off the UI thread.

The owner hands it a `build(cells) -> Picture` job; the view runs it in a thread worker whenever the
job or the widget's size changes, and shows a placeholder line meanwhile or when the job fails
(tui.media raises MediaError with the reason). Half-cell pictures arrive as ready-made Strips, so
painting is a list lookup; Sixel/Kitty pictures go to textual-image's widget, already shrunk.

The view paints the half-cell lines and the "loading …" line itself (no child widget for them): a
picture arriving swaps content in place (toggling which child is displayed would relayout the whole
screen, once per image), and a thumbnail is one widget to lay out and composite, not three.
"""

from __future__ import annotations

from typing import Callable

from rich.style import Style as RichStyle
from rich.text import Text
from textual.app import ComposeResult
from textual.filter import ANSIToTruecolor, LineFilter
from textual.strip import Strip
from textual.widget import Widget
from textual.widgets import Static
from textual.worker import Worker, WorkerState

from tui.media import image as img
from tui.media.source import MediaError
from tui.text import safe

Build = Callable[[tuple[int, int]], img.Picture]


class PictureView(Widget):
    """A picture box. `show(key, build, what)` sets the job; `fail(reason)` shows a placeholder."""

    DEFAULT_CSS = """
    PictureView { height: 12; width: 100%; }
    PictureView > .picture-placeholder { width: 100%; height: auto; color: $text-muted; padding: 0 1; }
    PictureView.-labelled > * { margin-top: 1; }
    PictureView > .picture--label { color: $text-muted; }
    """
    COMPONENT_CLASSES = {"picture--label"}
    CENTRED = False  # half-cell pictures drawn in the middle of the box (the viewer), else top-left

    def __init__(self, *, id: str | None = None, classes: str | None = None) -> None:
        super().__init__(id=id, classes=classes)
        self._key: object = None
        self._build: Build | None = None
        self._what = ""
        self._shown: tuple[object, tuple[int, int]] | None = None  # (key, cells) on screen
        self._wanted: tuple[object, tuple[int, int]] | None = None  # (key, cells) being loaded
        self.picture: img.Picture | None = None
        self.error: str | None = None
        self._strips: tuple[Strip, ...] = ()  # half-cell lines painted by render_line
        self._message: Text | None = None  # or this line (e.g. "loading …")
        self._painted = True  # False while a child (placeholder, graphics) shows instead
        self._label: Text | None = None
        self._bg = None  # set while painting (render_lines)

    @property
    def label(self) -> Text | None:
        """A line above the picture (a thumbnail's name), painted by render_line; None: no line."""
        return self._label

    @label.setter
    def label(self, text: Text | None) -> None:
        self._label = text
        # children (the placeholder, a Sixel/Kitty picture) go below it
        self.set_class(text is not None, "-labelled", update=self.is_mounted)
        self.refresh()

    def compose(self) -> ComposeResult:
        ph = Static(classes="picture-placeholder")
        ph.display = False  # for a failure's reason only; loading is painted by render_line
        yield ph

    def render_lines(self, crop):
        # the box's background, once per paint rather than per line (it walks the ancestors)
        self._bg = self.rich_style
        try:
            return super().render_lines(crop)
        finally:
            self._bg = None

    def get_line_filters(self) -> list[LineFilter]:
        """The app's line filters, less ANSIToTruecolor while a half-cell picture is painted: every
        line is then the picture's truecolour cells (no dim) or blanks in a truecolour box style, which
        that filter returns unchanged — but only after a cache lookup per segment, ~30 ms the first
        time a 120×37 photo (every cell its own style) is painted. Any other line (the label, a
        message, a box with padding, a border, an ANSI colour or dim from the CSS) keeps it."""
        filters = list(super().get_line_filters())
        if self._painted and self._strips and self._label is None and _truecolour(self._bg) \
                and self.styles.gutter == (0, 0, 0, 0) and not any(edge for edge, _ in self.styles.outline):
            return [f for f in filters if not isinstance(f, ANSIToTruecolor)]
        return filters

    def render_line(self, y: int) -> Strip:
        """The half-cell picture's line `y`, or the one-line message on line 0; blank beyond them (and
        under a failure's placeholder or a Sixel/Kitty picture, which are child widgets)."""
        width = self.size.width
        bg = self._bg or self.rich_style  # the box's own background beyond the picture
        if self._label is not None:
            if y == 0:
                return self._label_line(width, bg)
            y -= 1
        if self._painted and self._strips and self.CENTRED:
            dy = max(0, (self.size.height - (self._label is not None) - len(self._strips)) // 2)
            if dy <= y < dy + len(self._strips):
                strip = self._strips[y - dy]
                dx = max(0, (width - strip.cell_length) // 2)
                return Strip.join([Strip.blank(dx, bg), strip]).crop_extend(0, width, bg) if dx else \
                    strip.crop_extend(0, width, bg)
            return Strip.blank(width, bg)
        if self._painted and y < len(self._strips):
            return self._strips[y].crop_extend(0, width, bg)
        if y == 0 and self._painted and self._message is not None and not self._strips:
            line = Text(" ", style=bg)  # the placeholder's left padding
            line.append_text(self._message)
            line.truncate(width)
            return Strip(list(line.render(self.app.console)), line.cell_len).crop_extend(0, width, bg)
        return Strip.blank(width, bg)

    def on_mount(self) -> None:
        # literal and on one line: render_line paints it as raw segments (a file name may hold ESC or \n)
        self._placeholder(safe(f"loading {self._what}…" if self._what else "", "dim italic", one_line=True))
        self._request()

    def _label_line(self, width: int, bg) -> Strip:
        lines = self._label.wrap(self.app.console, max(1, width))  # its first line, as a 1-line Static
        muted = self.get_component_rich_style("picture--label").color  # blended on this box's background
        line = Text(style=bg + RichStyle(color=muted))
        if lines:
            line.append_text(lines[0])
        line.truncate(width)
        return Strip(list(line.render(self.app.console)), line.cell_len).crop_extend(0, width, bg)

    # -- the owner's API ------------------------------------------------------------------------
    def show(self, key: object, build: Build, what: str = "", keep: bool = False) -> None:
        """Show the picture `build` makes; `key` identifies it (same key, same size: nothing to do).
        Another key on a mounted view (a reused thumbnail) shows "loading …" at once, in place;
        with `keep` the picture on screen stays until the new one arrives (playback, zoom steps)."""
        changed = key != self._key or self.error is not None
        keep = keep and self.picture is not None and self.error is None
        self._key, self._build, self._what = key, build, what
        self.error = None
        if self.is_mounted:
            if changed and not keep:
                self.picture = None
                self._shown = None
                self._restore_box()
                self._placeholder(safe(f"loading {what}…" if what else "", "dim italic", one_line=True))
            self._request()

    def fail(self, reason: str) -> None:
        """Show `reason` instead of a picture."""
        self._key, self._build = None, None
        self._wanted = self._shown = None  # an answer still on its way is for another picture
        self.error = reason
        self.picture = None
        if self.is_mounted:
            self._placeholder(safe(reason), failed=True)

    # -- internals --------------------------------------------------------------------------------
    def on_resize(self) -> None:
        self._request()

    def _cells(self) -> tuple[int, int]:
        return self.content_size.width, self.content_size.height - (self._label is not None)

    def _request(self) -> None:
        if self._build is None:
            if self.error is not None:
                self._placeholder(safe(self.error), failed=True)
            return
        cells = self._cells()
        if cells[0] < 1 or cells[1] < 1:
            return  # not laid out yet: on_resize will come
        want = (self._key, cells)
        if want == self._shown or want == self._wanted:
            return
        self._wanted = want
        build, key = self._build, self._key

        def work() -> tuple[object, tuple[int, int], img.Picture | str]:
            try:
                return key, cells, build(cells)
            except MediaError as exc:
                return key, cells, str(exc)
            except Exception as exc:  # a placeholder, never a crash
                return key, cells, f"cannot show {self._what or 'picture'}: {type(exc).__name__}: {exc}"

        self.run_worker(work, group="picture", exclusive=True, thread=True, exit_on_error=False)

    def on_worker_state_changed(self, event: Worker.StateChanged) -> None:
        if event.worker.group != "picture" or event.state != WorkerState.SUCCESS:
            return
        event.stop()
        key, cells, result = event.worker.result
        if (key, cells) != self._wanted:
            return  # a stale answer: the job or the size changed meanwhile
        self._wanted = None
        self._shown = (key, cells)
        if isinstance(result, str):
            self.picture, self.error = None, result
            self._placeholder(safe(result), failed=True)
        else:
            self.picture, self.error = result, None
            self._paint(result)

    def _placeholder(self, text: Text, failed: bool = False) -> None:
        ph = self.query_one(".picture-placeholder", Static)
        if not failed:
            # loading keeps the box (no jump), painted in place by render_line: no relayout
            self._strips, self._message, self._painted = (), text, True
            _show(ph, False)
            self.refresh()
            for g in self._graphics():
                _show(g, False)
            return
        # a reason needs a line or two (wrapped), not the picture's box
        self.styles.height = "auto"
        ph.update(text)
        _show(ph, True)
        self._strips, self._message, self._painted = (), None, False
        self.refresh()
        for g in self._graphics():
            _show(g, False)

    def _graphics(self) -> list[Widget]:
        return [w for w in self.children if not isinstance(w, Static)]

    def _restore_box(self) -> None:
        if self.styles.has_rule("height") and self.styles.height is not None and self.styles.height.is_auto:
            self.styles.clear_rule("height")  # back to the CSS box after a failure

    def _paint(self, pic: img.Picture) -> None:
        self._restore_box()
        _show(self.query_one(".picture-placeholder", Static), False)
        if pic.mode == img.HALFCELL:
            # usually "loading" was painted: the picture swaps in place
            self._strips, self._message, self._painted = pic.strips, None, True
            self.refresh()
            return
        self._strips, self._message, self._painted = (), None, False
        self.refresh()
        existing = self._graphics()
        if existing:
            g = existing[0]
            g.image = pic.image
        else:
            g = img.graphics_widget_class()(pic.image)
            self.mount(g)
        g.styles.width, g.styles.height = pic.cells
        g.display = True


def _truecolour(style: RichStyle | None) -> bool:
    """Whether ANSIToTruecolor leaves `style` as it is: truecolour (or no) colours and no dim."""
    return style is not None and not style.dim and all(
        c is None or c.triplet is not None for c in (style.color, style.bgcolor))


def _show(widget: Widget, shown: bool) -> None:
    """Set `display` only when it changes: each change relayouts the screen."""
    if widget.display != shown:
        widget.display = shown
