"""The audio widget's position marker and seeking, in a real Textual app with a real 20-second WAV
written here (long enough that a loaded machine stretching the pauses cannot reach its end) and the
silent NullPlayer (a real player that keeps time, makes no sound): the marker moves while playing,
←/→-style seeks move by a second and play on from there, pause keeps the place."""

from __future__ import annotations

import time
import wave

import numpy as np
from textual.app import App, ComposeResult

from scorer.model import Media
from tui.media.audio import NullPlayer
from tui.widgets.media_audio import MediaAudio


def wav20(path) -> None:
    t = np.arange(20 * 8000) / 8000
    with wave.open(str(path), "wb") as w:
        w.setnchannels(1)
        w.setsampwidth(2)
        w.setframerate(8000)
        w.writeframes((np.sin(2 * np.pi * 440 * t) * 12000).astype("<i2").tobytes())


class One(App):
    def __init__(self, media, player) -> None:
        super().__init__()
        self.media, self.player = media, player

    def compose(self) -> ComposeResult:
        yield MediaAudio(self.media, None, player=self.player)


async def until(pilot, cond, limit=3.0) -> None:
    end = time.monotonic() + limit
    while not cond() and time.monotonic() < end:
        await pilot.pause(0.02)
    assert cond()


def marker_col(w: MediaAudio) -> int:
    return str(w.query_one(".audio-marker").content).find("▲")


async def test_marker_follows_playback_and_seeks_by_a_second(tmp_path):
    wav20(tmp_path / "a.wav")
    player = NullPlayer()
    app = One(Media("audio", "a.wav", path=tmp_path / "a.wav"), player)
    async with app.run_test(size=(80, 12)) as pilot:
        w = app.query_one(MediaAudio)
        await until(pilot, lambda: w.clip is not None)
        assert w.clip.duration == 20.0 and marker_col(w) == -1  # stopped at the start: no marker
        # Upper bounds from the time that really passed (a loaded machine stretches a 0.6 s pause):
        # playing cannot have got further than the clock since play was pressed.
        pressed = time.monotonic()
        w.toggle()
        await until(pilot, lambda: w.playing)
        await pilot.pause(0.6)
        first = marker_col(w)
        assert 0 <= first and 0.4 < w.position() <= time.monotonic() - pressed
        w.seek(1.0)  # on by a second: playing on from there
        seeked = time.monotonic() - pressed
        await until(pilot, lambda: len(player.starts) == 2 and w.playing)
        assert 1.4 < player.starts[1] <= seeked + 1.0 and marker_col(w) > first
        w.toggle()  # pause: the place is kept
        await until(pilot, lambda: not w.playing)
        kept = w.position()
        await pilot.pause(0.3)
        assert w.position() == kept and "/ 0:20.0" in str(w.query_one(".audio-title").content)
        w.seek(-5.0)  # clamped at the start
        assert w.position() == 0.0
        w.toggle()
        await until(pilot, lambda: w.playing)
        assert player.starts[-1] == 0.0
