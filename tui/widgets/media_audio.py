"""MediaAudio: an audio Media with its duration, a waveform (Sparkline) and play/stop; while playing,
a marker under the waveform and the position in the title follow the clip; `seek(±1)` moves by a
second (playing on from there when playing).

The clip is read in a thread worker; play/stop run in a thread worker too, because the first play
probes PortAudio (an import and a device query) and `sd.stop()` may wait for the stream to close.
When sound is impossible the widget shows one line saying why, with the clip's path; the waveform
stays. The player is injected (tests pass a NullPlayer); the default is the process-wide one.
"""

from __future__ import annotations

import threading
import time
from pathlib import Path

from rich.text import Text
from textual.app import ComposeResult
from textual.containers import Vertical
from textual.timer import Timer
from textual.widgets import Sparkline, Static
from textual.worker import Worker, WorkerState

from scorer.model import Media
from tui.media.audio import AudioUnavailable, Clip, Player, default_player, fmt_duration, read_clip, waveform
from tui.media.source import MediaError, local_path
from tui.text import safe

BUCKETS = 512  # peaks fed to the Sparkline; it reduces them per column (max)
SERVER_AUDIO = "audio plays on the server, not in this browser"  # the line play gives under memscope serve


class MediaAudio(Vertical, can_focus=True):
    DEFAULT_CSS = """
    MediaAudio { height: auto; width: 100%; }
    MediaAudio > .audio-title { height: 1; }
    MediaAudio > Sparkline { height: 3; margin: 0 0; }
    MediaAudio > .audio-marker { height: 1; color: $accent; }
    MediaAudio > .audio-message { height: auto; color: $warning; }
    MediaAudio:focus > .audio-title { background: $accent 30%; }
    """

    def __init__(self, media: Media, root: Path | None, allow_outside_root: bool = False,
                 player: Player | None = None, *, id: str | None = None, classes: str | None = None) -> None:
        super().__init__(id=id, classes=classes)
        self.media = media
        self.player = player or default_player()
        self.clip: Clip | None = None
        self.error: str | None = None
        self.message: str | None = None
        self.playing = False
        self._busy = False
        self._pending_start = 0.0
        self._timer: Timer | None = None
        self.path: Path | None = None
        self.root = root
        self.clip_at = 0.0  # seconds into the clip where playing (re)started, or the paused position
        self._since = 0.0  # monotonic time playing (re)started
        try:
            self.path = local_path(media, root, allow_outside_root)
        except MediaError as exc:
            self.error = str(exc)

    def compose(self) -> ComposeResult:
        yield Static(classes="audio-title")
        yield Sparkline([], summary_function=max)
        yield Static(classes="audio-marker")
        yield Static(classes="audio-message")

    def on_mount(self) -> None:
        self._update_title()
        self._set_message(self.error)
        self.query_one(Sparkline).display = False  # until there is a waveform
        if self.path is None:
            return
        path = self.path

        def load() -> tuple[Clip, list[float]] | str:
            try:
                clip = read_clip(path)
                return clip, waveform(clip, BUCKETS)
            except MediaError as exc:
                return str(exc)
            except Exception as exc:  # never a crash
                return f"cannot read audio {path}: {type(exc).__name__}: {exc}"

        self.run_worker(load, group="audio-load", thread=True, exit_on_error=False)

    # -- play / stop ----------------------------------------------------------------------------
    def position(self) -> float:
        """Seconds into the clip: moving while playing, else where it stopped (or was sought to)."""
        if self.clip is None:
            return 0.0
        pos = self.clip_at + (time.monotonic() - self._since if self.playing else 0.0)
        return max(0.0, min(pos, self.clip.duration))

    def seek(self, delta: float) -> None:
        """Move by `delta` seconds (clamped); a playing clip plays on from there."""
        if self.clip is None or self._busy:
            return
        pos = max(0.0, min(self.position() + delta, self.clip.duration))
        if self.playing:
            self._start(pos)
        else:
            self.clip_at = 0.0 if pos >= self.clip.duration else pos
            self._update_title()

    def toggle(self) -> None:
        """Play if stopped, stop if playing. Never waits on the event loop."""
        if self.clip is None or self._busy:
            return
        if self.playing:
            self.clip_at = self.position()
            self._run(stop=True, start=0.0)
        else:
            self._start(self.clip_at)

    def _start(self, start: float) -> None:
        self._pending_start = start
        self._run(stop=False, start=start)

    def _run(self, stop: bool, start: float) -> None:
        self._busy = True
        player, clip = self.player, self.clip

        def work() -> tuple[str, str | None]:
            if stop:
                player.stop()
                return "stopped", None
            try:
                player.play(clip, start)
                return "playing", None
            except AudioUnavailable as exc:
                return "unavailable", str(exc)
            except Exception as exc:
                return "unavailable", f"no audio: {type(exc).__name__}: {exc}"

        self.run_worker(work, group="audio-play", thread=True, exit_on_error=False)

    def stop(self) -> None:
        """Stop now if this widget is playing (leaving the round)."""
        if self.playing:
            # off the event loop: stopping a PortAudio stream may wait for its buffers
            threading.Thread(target=self.player.stop, daemon=True).start()
            self.playing = False

    def on_worker_state_changed(self, event: Worker.StateChanged) -> None:
        if event.state != WorkerState.SUCCESS or event.worker.group not in ("audio-load", "audio-play"):
            return
        event.stop()
        result = event.worker.result
        if event.worker.group == "audio-load":
            if isinstance(result, str):
                self.error = result
            else:
                self.clip, peaks = result
                spark = self.query_one(Sparkline)
                spark.data = peaks
                spark.display = True
            self._update_title()
            self._set_message(self.error)
            return
        self._busy = False
        state, why = result
        self.playing = state == "playing"
        if self.playing:
            self._since = time.monotonic()
            self.clip_at = self._pending_start
        message = None if why is None else f"{why} — {self.shown_path()}"
        if state != "stopped" and getattr(self.app, "is_web", False):  # memscope serve: not in the browser
            message = SERVER_AUDIO + ("" if message is None else f": {message}")
        self._set_message(message)
        if self.playing:
            if self._timer is None:
                self._timer = self.set_interval(0.1, self._tick)
        elif self._timer is not None:
            self._timer.stop()
            self._timer = None
        self._update_title()
        # the first play may have pointed fd 2 (Textual's screen) at /dev/null while probing
        self.app.refresh(layout=True)

    def _tick(self) -> None:
        if self.playing and not self.player.is_playing():
            self.playing = False
            self.clip_at = 0.0  # played to the end: the next play starts over
            if self._timer is not None:
                self._timer.stop()
                self._timer = None
        self._update_title()

    # -- text -------------------------------------------------------------------------------------
    def shown_path(self) -> str:
        """The clip's path, relative to the benchmark root when inside it (short enough for one line)."""
        if self.path is None:
            return self.media.ref
        if self.root is not None:
            try:
                return str(self.path.resolve().relative_to(Path(self.root).resolve()))
            except ValueError:
                pass
        return str(self.path)

    def state_text(self) -> str:
        if self.error:
            return "unavailable"
        if self.clip is None:
            return "loading…"
        return "▶ playing" if self.playing else "■ stopped"

    def _update_title(self) -> None:
        dur = fmt_duration(self.clip.duration) if self.clip is not None else "–:––"
        if self.clip is not None and (self.playing or self.clip_at):
            dur = f"{fmt_duration(self.position())} / {dur}"
        self._update_marker()
        hint = "" if self.has_class("media-thumb") else "   space play/stop"  # thumbnails: other keys
        if getattr(self.app, "is_web", False):  # memscope serve: the sound is the server's
            hint += " (plays on the server)"
        t = Text.assemble(("♪ ", "bold"), safe(self.media.name, "bold", one_line=True),
                          f"  {dur}  ", (self.state_text(), "green" if self.playing else ""), (hint, "dim"))
        t.no_wrap, t.overflow = True, "ellipsis"
        self.query_one(".audio-title", Static).update(t)

    def _update_marker(self) -> None:
        """▲ under the waveform at the playing (or paused) position; blank when at the start, stopped."""
        marker = self.query_one(".audio-marker", Static)
        if self.clip is None or not (self.playing or self.clip_at) or not self.clip.duration:
            marker.update("")
            return
        width = max(1, self.query_one(Sparkline).size.width or self.size.width)
        col = min(width - 1, int(self.position() / self.clip.duration * width))
        marker.update(" " * col + "▲")

    def _set_message(self, text: str | None) -> None:
        self.message = text
        msg = self.query_one(".audio-message", Static)
        msg.update(safe(text or "", one_line=True))
        msg.display = bool(text)

    def on_unmount(self) -> None:
        self.stop()
