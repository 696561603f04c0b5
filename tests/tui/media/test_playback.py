"""Playback timing (tui/media/playback.py) on a clock the test moves: the frame due, the wait for the
next, skipping frames a slow decoder missed, the end, and mm:ss.ms."""

from __future__ import annotations

from tui.media.playback import DEFAULT_FPS, Clock, end_time, fmt_time, frame_times


class FakeNow:
    """A settable clock (the thing under test is the arithmetic, not time.monotonic)."""

    def __init__(self) -> None:
        self.t = 100.0

    def __call__(self) -> float:
        return self.t


def test_frame_times_from_the_source_or_default_fps():
    assert frame_times(3, lambda i: [0.0, 0.04, 0.08][i]) == [0.0, 0.04, 0.08]
    assert frame_times(3, lambda i: None) == [0.0, 1 / DEFAULT_FPS, 2 / DEFAULT_FPS]
    assert frame_times(3, lambda i: [0.0, 0.1, 0.05][i]) == [0.0, 0.1, 0.1]  # never backwards


def test_clock_due_frames_waits_skips_and_ends():
    now = FakeNow()
    c = Clock([0.0, 0.1, 0.2, 0.5], now)  # end: 0.5 + mean step 0.5/3
    c.start(0)
    assert c.due() == (0, 0.1)
    now.t += 0.15
    i, wait = c.due()
    assert i == 1 and abs(wait - 0.05) < 1e-9
    now.t += 0.3  # 0.45: a slow decoder missed frame 2, which is skipped, not queued
    i, wait = c.due()
    assert i == 2 and abs(wait - 0.05) < 1e-9
    now.t += 0.1  # 0.55: the last frame, until 0.6667
    i, wait = c.due()
    assert i == 3 and abs(wait - (end_time(c.times) - 0.55)) < 1e-9 and c.playing
    now.t += 0.2
    assert c.due() == (3, None) and not c.playing


def test_clock_from_a_frame_and_replay_from_the_end():
    now = FakeNow()
    c = Clock([0.0, 0.1, 0.2, 0.3], now)
    c.start(2)
    assert c.due()[0] == 2
    c.start(3)  # started on the last frame: from the first
    assert c.due()[0] == 0


def test_fmt_time():
    assert fmt_time(0) == "00:00.000"
    assert fmt_time(62.3456) == "01:02.346"
    assert fmt_time(3599.9994) == "59:59.999"
