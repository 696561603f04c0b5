"""Viewer: one image, video frame or GIF frame full screen, magnified from the source file.

`z` wherever media are shown (Item, Session, the study screens, Compare) opens it on the selected
medium; `m` goes to the next medium of the same round or item, `escape` back to the screen it was
opened from, which is left exactly as it was (the viewer is pushed over it, never rebuilds it).

Zoom (fit, 1×, 2×, 4×, 8× of the source pixels) and pan are tui/media/zoom.py's; the source is decoded
at full resolution in a thread worker through the media layer's LRU (zoom.SOURCES) and each view's
picture is cached too (image.PICTURES), so a zoom step or a pan never decodes the file again. Videos
and animated images play at their own rate (tui/media/playback.py) on a Textual timer: the frame
due is decoded in a worker, frames the decoder cannot keep up with are skipped, keys stay live.
A missing or corrupt file is one line on screen (the picture box's placeholder), never a crash.
"""

from __future__ import annotations

from pathlib import Path
from typing import Sequence

from rich.text import Text
from textual.app import ComposeResult
from textual.binding import Binding
from textual.timer import Timer
from textual.widgets import Static
from textual.worker import Worker, WorkerState

from scorer.model import Media
from tui.bases.screen import BaseScreen
from tui.media import image as img
from tui.media import zoom as zm
from tui.media.frames import FrameSource, is_animated, open_frames
from tui.media.playback import Clock, frame_times
from tui.media.source import MediaError, local_path
from tui.media.viewer_text import frame_line, shown_path, status_line
from tui.widgets.picture import PictureView

ANIMATED = (".gif", ".webp", ".apng")  # image files that may hold frames: played like a video


class ViewerCanvas(PictureView):
    """The viewer's picture box: tells the screen when a picture (or a failure) has arrived."""

    CENTRED = True

    def on_worker_state_changed(self, event: Worker.StateChanged) -> None:
        # PictureView's handler (called too: Textual dispatches to every class) has stored it
        if event.worker.group == "picture" and event.state == WorkerState.SUCCESS:
            self.screen.call_later(self.screen.picture_arrived)  # type: ignore[attr-defined]


class ViewerScreen(BaseScreen):
    WHERE = "Viewer"
    CSS_PATH = "viewer.tcss"
    AUTO_FOCUS = ""
    BINDINGS = [
        Binding("plus,equals_sign", "zoom(1)", "Zoom in", key_display="+/-",
                tooltip="magnify: fit, 1×, 2×, 4×, 8× of the source pixels", id="viewer.zoom-in"),
        Binding("minus", "zoom(-1)", "Zoom out", show=False, tooltip="back down one zoom level",
                id="viewer.zoom-out"),
        Binding("0", "fit", "Fit", tooltip="the whole picture in the screen", id="viewer.fit"),
        Binding("left", "pan(-1, 0)", "Pan", key_display="←↑↓→", priority=True,
                tooltip="pan (at fit, ←/→ step a video's frames)", id="viewer.pan-left"),
        Binding("right", "pan(1, 0)", "Pan right", show=False, priority=True, id="viewer.pan-right"),
        Binding("up", "pan(0, -1)", "Pan up", show=False, priority=True, id="viewer.pan-up"),
        Binding("down", "pan(0, 1)", "Pan down", show=False, priority=True, id="viewer.pan-down"),
        Binding("full_stop", "frame(1)", "Frame", key_display=",/.", tooltip="the next frame (, the previous)",
                id="viewer.next-frame"),
        Binding("comma", "frame(-1)", "Previous frame", show=False, id="viewer.prev-frame"),
        Binding("space", "play", "Play/pause", priority=True, tooltip="play or pause a video or animation",
                id="media.play"),
        Binding("m", "next_media", "Next medium", tooltip="the next image or video of this round or item",
                id="media.next"),
        Binding("escape", "back", "Back", key_display="esc", tooltip="back to where you were", id="back"),
        Binding("z", "back", "Close", show=False, tooltip="z again: back to where you were", id="media.view"),
    ]

    def __init__(self, media: Sequence[Media], index: int = 0) -> None:
        super().__init__()
        self.media = list(media)
        self.index = max(0, min(index, len(self.media) - 1))
        self.view = zm.View()
        self.frame = 0
        self.source: FrameSource | None = None  # a video's or animation's frames
        self.times: list[float] = []
        self.size_px: tuple[int, int] | None = None  # the source's pixel size, once known
        self.error: str | None = None
        self.clock: Clock | None = None
        self._timer: Timer | None = None
        self._opening = 0  # which open request is current (m pressed while a video opens)
        self._still: Path | None = None  # the still image shown (None: a video or animation)
        # (The still is decoded once the screen is up, not beside its push: Pillow takes the GIL back
        # between a PNG's 64 KB chunks, and decoding beside the push and first layout measured slower,
        # first picture median 150 → 136 ms over nine pairs, issue 15.)

    def body(self) -> ComposeResult:
        yield ViewerCanvas(id="viewer-picture")
        yield Static(id="viewer-status")
        yield Static(id="viewer-frame")

    def on_mount(self) -> None:
        self._open()

    @property
    def current(self) -> Media:
        return self.media[self.index]

    @property
    def canvas(self) -> ViewerCanvas:
        return self.query_one(ViewerCanvas)

    def box(self) -> tuple[int, int]:
        c = self.canvas.content_size
        return img.box_px((max(1, c.width), max(1, c.height)))

    @property
    def playing(self) -> bool:
        return self.clock is not None and self.clock.playing

    # -- opening a medium ----------------------------------------------------------------------------
    def _open(self) -> None:
        self._stop_timer()
        self._close_source()
        self.view, self.frame, self.size_px, self.error, self.times = zm.View(), 0, None, None, []
        self._still = None
        self.refresh_bindings()
        self._opening += 1
        m = self.current
        root, allow = self.state.bench.root, self.state.allow_outside_root
        self.query_one("#viewer-frame", Static).display = m.kind == "video"
        if m.kind == "image":
            try:
                path = local_path(m, root, allow)
            except MediaError as exc:
                self._failed(str(exc))
                return
            if path.suffix.lower() in ANIMATED:
                self._open_frames(m, root, allow, path)  # played if it has frames, else a still
                return
            self._show_still(path)
            return
        self._open_frames(m, root, allow)

    def _show_still(self, path: Path) -> None:
        view = self.view
        self._still = path

        def build(cells: tuple[int, int]) -> img.Picture:
            if view == zm.View():  # the first picture: no need to wait for the full-resolution decode
                return zm.fit_picture(path, cells)
            key, source = zm.load_source(path)
            return zm.zoomed_picture(source, key, view, cells)

        self.canvas.show(("viewer", str(path), view), build, self.current.name, keep=True)
        self._status()

    def _open_frames(self, m: Media, root, allow, still: Path | None = None) -> None:
        ticket = self._opening

        def work() -> tuple[int, FrameSource | Path | str]:
            try:
                if still is not None and not is_animated(still):
                    return ticket, still
                return ticket, open_frames(m, root, allow)
            except MediaError as exc:
                return ticket, str(exc)
            except Exception as exc:  # a line on screen, never a crash
                return ticket, f"cannot open {m.kind}: {type(exc).__name__}: {exc}"

        self.canvas.fail("opening…")
        self.run_worker(work, group="viewer-open", thread=True, exit_on_error=False)
        self._status()

    def on_worker_state_changed(self, event: Worker.StateChanged) -> None:
        if event.worker.group != "viewer-open" or event.state != WorkerState.SUCCESS:
            return
        ticket, result = event.worker.result
        if ticket != self._opening or not self.is_attached:
            if isinstance(result, FrameSource):
                result.close()
            return
        if isinstance(result, str):
            self._failed(result)
            return
        if isinstance(result, Path):
            self._show_still(result)
            return
        self.source = result
        self.times = frame_times(result.count, result.time_of)
        self.refresh_bindings()
        self._show_frame()

    def _failed(self, reason: str) -> None:
        self.error = reason
        self.canvas.fail(reason)
        self._status()

    def _show_frame(self) -> None:
        src, i, view = self.source, self.frame, self.view
        if src is None:
            return
        fkey = src.key(i)

        def build(cells: tuple[int, int]) -> img.Picture:
            source = zm.SOURCES.get_or_build(fkey, lambda: img.flatten(src.frame(i)))
            return zm.zoomed_picture(source, fkey, view, cells)

        self.canvas.show(("viewer", fkey, view), build, f"frame {i + 1}", keep=True)
        self._status()

    def _reshow(self) -> None:
        if self.source is not None:
            self._show_frame()
        elif self.error is None and self.current.kind == "image":
            try:
                path = local_path(self.current, self.state.bench.root, self.state.allow_outside_root)
            except MediaError as exc:
                self._failed(str(exc))
                return
            self._show_still(path)

    def picture_arrived(self) -> None:
        pic = self.canvas.picture
        if pic is not None:
            first = self.size_px is None
            self.size_px = pic.source_size
            if first and self.source is None and self._still is not None:
                path = self._still  # decode the full resolution now, so the first zoom step is quick
                self.run_worker(lambda: _prefetch(path), group="viewer-prefetch", thread=True, exit_on_error=False)
            if first and self.view != zm.View():
                self._set_view(self.view)
        elif self.canvas.error and self.canvas.error != "opening…":
            self.error = self.canvas.error
        self._status()

    def check_action(self, action: str, parameters: tuple[object, ...]) -> bool | None:
        if action in ("frame", "play"):  # a video's or animation's keys only
            return self.source is not None
        if action == "next_media":
            return len(self.media) > 1
        return True

    # -- what the status lines say ----------------------------------------------------------------
    def shown_path(self) -> str:
        """The file, relative to the benchmark root when inside it."""
        return shown_path(self.current, self.state.bench.root)

    def status_text(self) -> Text:
        return status_line(self.media, self.index, self.shown_path(), self.error, self.size_px, self.view,
                           self.box(), img.mode())

    def frame_text(self) -> Text:
        return frame_line(self.source, self.frame, self.times, self.playing, self.error)

    def _status(self) -> None:
        # one row each, whatever they say (viewer.tcss): new text repaints them, no relayout of the screen
        self.query_one("#viewer-status", Static).update(self.status_text(), layout=False)
        if self.current.kind == "video" or self.source is not None:
            self.query_one("#viewer-frame", Static).display = True
            self.query_one("#viewer-frame", Static).update(self.frame_text(), layout=False)

    # -- zoom and pan ------------------------------------------------------------------------------
    def _set_view(self, view: zm.View) -> None:
        if self.size_px is not None:
            view = zm.clamp(view, self.size_px, self.box())
        if view == self.view and self.canvas.picture is not None:
            self._status()
            return
        self.view = view
        self._reshow()

    def action_zoom(self, delta: int) -> None:
        if self.size_px is None:
            return
        box = self.box()
        z = zm.step_zoom(self.view.zoom, delta, self.size_px, box)
        self._set_view(zm.rezoom(self.view, z, self.size_px, box))

    def action_fit(self) -> None:
        self._set_view(zm.View())

    def action_pan(self, dx: int, dy: int) -> None:
        if self.size_px is None:
            return
        box = self.box()
        horiz, vert = zm.can_pan(self.view, self.size_px, box)
        if dx and not horiz and self.source is not None:
            self.action_frame(dx)  # nothing to pan to sideways: ←/→ step the video
            return
        self._set_view(zm.pan(self.view, dx, dy, self.size_px, box))

    def on_resize(self) -> None:
        if self.size_px is not None:
            self.call_after_refresh(self._set_view, self.view)

    # -- frames and playback -----------------------------------------------------------------------
    def action_frame(self, delta: int) -> None:
        if self.source is None:
            return
        if self.playing:
            self._pause()
        new = max(0, min(self.frame + delta, self.source.count - 1))
        if new != self.frame:
            self.frame = new
            self._show_frame()

    def action_play(self) -> None:
        if self.source is None or self.source.count < 2:
            if self.source is not None:
                self.notify("a single frame: nothing to play", timeout=2)
            return
        if self.playing:
            self._pause()
            return
        self.clock = Clock(self.times)
        self.clock.start(self.frame)
        self._tick()

    def _tick(self) -> None:
        self._timer = None
        if self.clock is None or not self.clock.playing or self.source is None:
            return
        i, wait = self.clock.due()
        if i != self.frame:
            self.frame = i
            self._show_frame()
        if wait is None:
            self._status()
            return
        self._status()
        self._timer = self.set_timer(wait, self._tick)

    def _pause(self) -> None:
        if self.clock is not None:
            self.clock.stop()
        self._stop_timer()
        self._status()

    def _stop_timer(self) -> None:
        if self._timer is not None:
            self._timer.stop()
            self._timer = None

    def _close_source(self) -> None:
        if self.source is not None:
            self.source.close()
            self.source = None

    # -- moving on ---------------------------------------------------------------------------------
    def action_next_media(self) -> None:
        if len(self.media) < 2:
            self.notify("the only image or video here", timeout=2)
            return
        if self.clock is not None:
            self.clock.stop()
        self.index = (self.index + 1) % len(self.media)
        self._open()

    def action_back(self) -> None:
        self._pause()
        self.app.pop_screen()

    def on_unmount(self) -> None:
        self._stop_timer()
        self._close_source()


def _prefetch(path: Path) -> None:
    try:
        zm.load_source(path)
    except MediaError:
        pass  # the next zoom step says what is wrong with the file
