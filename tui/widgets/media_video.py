"""MediaVideo: a video Media stepped frame by frame, with a frame counter.

The frame source (pre-extracted frames, an animated GIF/WebP, or a video file through PyAV) is opened
in a thread worker; each frame is decoded, shrunk and rendered in a thread worker too, through the
shared picture cache, so holding → never blocks input. `step(±1)` moves the counter at once.
`toggle()` plays and pauses at the clip's own rate (tui/media/playback.py) on a Textual timer: the
frame due is shown (frames the decoder cannot keep up with are skipped), never a loop that blocks.
"""

from __future__ import annotations

from pathlib import Path

from rich.text import Text
from textual.app import ComposeResult
from textual.containers import Vertical
from textual.timer import Timer
from textual.widgets import Static
from textual.worker import Worker, WorkerState

from scorer.model import Media
from tui.media import image as img
from tui.media.frames import FrameSource, open_frames
from tui.media.playback import Clock, fmt_time, frame_times
from tui.media.source import MediaError
from tui.text import safe
from tui.widgets.picture import PictureView


class MediaVideo(Vertical, can_focus=True):
    DEFAULT_CSS = """
    MediaVideo { height: auto; width: 100%; }
    MediaVideo > PictureView { height: 14; }
    MediaVideo > .video-counter { height: 1; color: $text-muted; }
    MediaVideo:focus > .video-counter { color: $text; background: $accent 30%; }
    """

    def __init__(self, media: Media, root: Path | None, allow_outside_root: bool = False, *,
                 id: str | None = None, classes: str | None = None) -> None:
        super().__init__(id=id, classes=classes)
        self.media = media
        self.root = root
        self.allow = allow_outside_root
        self.source: FrameSource | None = None
        self.index = 0
        self.error: str | None = None
        self.clock: Clock | None = None
        self._timer: Timer | None = None

    def compose(self) -> ComposeResult:
        yield PictureView()
        yield Static(Text("opening video…", style="dim italic"), classes="video-counter")

    def on_mount(self) -> None:
        media, root, allow = self.media, self.root, self.allow

        def open_source() -> FrameSource | str:
            try:
                return open_frames(media, root, allow)
            except MediaError as exc:
                return str(exc)
            except Exception as exc:  # a placeholder, never a crash
                return f"cannot open video: {type(exc).__name__}: {exc}"

        self.run_worker(open_source, group="video-open", thread=True, exit_on_error=False)

    def on_worker_state_changed(self, event: Worker.StateChanged) -> None:
        if event.worker.group != "video-open" or event.state != WorkerState.SUCCESS:
            return
        event.stop()
        result = event.worker.result
        if isinstance(result, str):
            self.error = result
            self.query_one(PictureView).fail(result)
            self.query_one(".video-counter", Static).update(Text("video unavailable", style="dim"))
            return
        if not self.is_attached:  # left the round while opening
            result.close()
            return
        self.source = result
        self._show()

    @property
    def count(self) -> int:
        return self.source.count if self.source is not None else 0

    @property
    def playing(self) -> bool:
        return self.clock is not None and self.clock.playing

    def toggle(self) -> bool:
        """Play from the frame shown, or pause. False when there is nothing to play."""
        if self.source is None or self.count < 2:
            return False
        if self.playing:
            self.pause()
            return True
        self.clock = Clock(frame_times(self.count, self.source.time_of))
        self.clock.start(self.index)
        self._tick()
        return True

    def pause(self) -> None:
        if self.clock is not None:
            self.clock.stop()
        if self._timer is not None:
            self._timer.stop()
            self._timer = None
        if self.source is not None and self.is_mounted:
            self.query_one(".video-counter", Static).update(safe(self.counter_text(), one_line=True))

    def _tick(self) -> None:
        self._timer = None
        if self.clock is None or not self.clock.playing or self.source is None:
            return
        i, wait = self.clock.due()
        if i != self.index:
            self.index = i
        self._show(keep=True)
        if wait is not None:
            self._timer = self.set_timer(wait, self._tick)

    def step(self, delta: int) -> bool:
        """Move `delta` frames (clamped). False when nothing moved (not open yet, or at an end)."""
        if self.source is None:
            return False
        if self.playing:
            self.pause()
        new = max(0, min(self.index + delta, self.count - 1))
        if new == self.index:
            return False
        self.index = new
        self._show()
        return True

    def counter_text(self) -> str:
        if self.source is None:
            return self.error or "opening video…"
        t = self.source.time_of(self.index)
        when = f" · {fmt_time(t)}" if t is not None else ""
        state = " · ▶ playing" if self.playing else ""
        hint = "" if self.has_class("media-thumb") else "   ←/→ step  space play"  # thumbnails: the screen's keys differ
        return f"frame {self.index + 1}/{self.count}{when} · {self.source.kind}{state}{hint}"

    def _show(self, keep: bool = False) -> None:
        src, i = self.source, self.index
        if src is None:
            return
        key = src.key(i)

        def build(cells: tuple[int, int]) -> img.Picture:
            m = img.mode()
            return img.PICTURES.get_or_build((key, cells, m), lambda: img.picture(src.frame(i), cells, mode_=m))

        self.query_one(PictureView).show(key, build, f"frame {i + 1}", keep=keep)
        self.query_one(".video-counter", Static).update(safe(self.counter_text(), one_line=True))

    def on_unmount(self) -> None:
        if self._timer is not None:
            self._timer.stop()
            self._timer = None
        if self.source is not None:
            self.source.close()
            self.source = None
