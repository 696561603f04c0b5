"""Playing a frame source at its own rate: which frame is due at a moment, and when the next one is.

A `Clock` is started at a frame and asked, at each timer tick, which frame the wall clock has reached
(frames the decoder could not keep up with are skipped, never queued: playback keeps time) and how
long to wait for the next. Times come from the source (PyAV presentation timestamps, GIF durations);
a source without them (a folder of frames) plays at DEFAULT_FPS. Pure: no Textual, no decoding.
"""

from __future__ import annotations

import bisect
import time
from typing import Callable, Sequence

DEFAULT_FPS = 5.0  # pre-extracted frames carry no times: a slide-show pace
MIN_WAIT = 0.01  # seconds: never a busy timer


def frame_times(count: int, time_of: Callable[[int], float | None]) -> list[float]:
    """Start time of every frame in seconds, non-decreasing; DEFAULT_FPS where the source has none."""
    out: list[float] = []
    for i in range(count):
        t = time_of(i)
        if t is None:
            return [i / DEFAULT_FPS for i in range(count)]
        out.append(max(t, out[-1]) if out else t)
    return out


def end_time(times: Sequence[float]) -> float:
    """When the last frame ends: one typical frame after it starts."""
    if not times:
        return 0.0
    if len(times) == 1:
        return times[0] + 1 / DEFAULT_FPS
    return times[-1] + max((times[-1] - times[0]) / (len(times) - 1), MIN_WAIT)


def fmt_time(seconds: float) -> str:
    """mm:ss.ms, e.g. 01:02.345."""
    ms = max(0, round(seconds * 1000))
    m, rest = divmod(ms, 60_000)
    return f"{m:02d}:{rest // 1000:02d}.{rest % 1000:03d}"


class Clock:
    """Playback position over `times`, driven by a monotonic clock (injectable for tests)."""

    def __init__(self, times: Sequence[float], now: Callable[[], float] = time.monotonic) -> None:
        self.times = list(times)
        self.now = now
        self._t0 = 0.0  # wall time at which media time `_base` was shown
        self._base = 0.0
        self.playing = False

    def start(self, frame: int) -> None:
        """Play from `frame` (from the first when `frame` is the last: replay)."""
        if frame >= len(self.times) - 1:
            frame = 0
        self._base = self.times[frame] if self.times else 0.0
        self._t0 = self.now()
        self.playing = True

    def stop(self) -> None:
        self.playing = False

    def position(self) -> float:
        return self._base + (self.now() - self._t0)

    def due(self) -> tuple[int, float | None]:
        """The frame due now and the seconds until the next one (None: the clip has ended, and
        the clock stops)."""
        t = self.position()
        i = max(0, bisect.bisect_right(self.times, t) - 1)
        if i >= len(self.times) - 1:
            if t >= end_time(self.times):
                self.playing = False
                return len(self.times) - 1, None
            return len(self.times) - 1, max(MIN_WAIT, end_time(self.times) - t)
        return i, max(MIN_WAIT, self.times[i + 1] - t)
