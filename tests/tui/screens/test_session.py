"""The Session screen, driven with Pilot through the real app (make_app) on the shipped demo and on
small benchmarks broken one way each: rounds, video frames, play/stop, the no-device line, missing /
corrupt / refused media, and text from the data shown literally."""

from __future__ import annotations

import io
import json
import shutil
import wave
from pathlib import Path

import pytest
from PIL import Image
from textual.widgets import Sparkline

from scorer.model import Media
from tests.paths import DEMO
from tests.tui.apphelpers import SIZE, pictures_done, screen_text, settle
from tui.app import make_app
from tui.media.audio import NO_DEVICE, NO_PORTAUDIO, NullPlayer, SoundDevicePlayer
from tui.screens.session import SessionScreen
from tui.widgets.media_audio import MediaAudio
from tui.widgets.media_image import MediaImage
from tui.widgets.media_video import MediaVideo
from tui.widgets.picture import PictureView

pytestmark = pytest.mark.usefixtures("halfcell")

OMNI = "Omni_Family_Moments"


async def open_session(pilot, task: str, round_id: str | None, item=None) -> SessionScreen:
    screen = SessionScreen(task, round_id, item=item)
    await pilot.app.push_screen(screen)
    await settle(pilot)
    assert pilot.app.screen is screen
    return screen


async def press(pilot, *keys: str) -> None:
    for k in keys:
        await pilot.press(k)
        await settle(pilot)


def head(screen: SessionScreen) -> str:
    return str(screen.query_one("#session-head").render())


def session_app(player=None):
    """The demo without runs, its audio played by `player` (a silent NullPlayer by default)."""
    return make_app(DEMO, runs=(), db=None, annotator="tester", player=player or NullPlayer())


# ---------------------------------------------------------------- the demo


@pytest.mark.needs_demo
async def test_rounds_step_in_order_across_sessions():
    app = session_app()
    async with app.run_test(size=SIZE) as pilot:
        s = await open_session(pilot, OMNI, "D1:1")
        assert "round D1:1 (1/4 in session, 1/16 in task)" in head(s)
        assert "The kids each painted a mug" in screen_text(app)
        await press(pilot, "n")
        assert "round D1:2 (2/4" in head(s) and "Theo chose the one on the left" in screen_text(app)
        await press(pilot, "right_curly_bracket")  # }: the next session
        assert "session D2 · 2024-06-08 · round D2:1" in head(s)
        await press(pilot, "p")
        assert "round D1:4" in head(s)
        await press(pilot, "left_curly_bracket")  # {: to the start of this session
        assert "round D1:1" in head(s)
        await press(pilot, "p")  # nothing before the first round
        assert "round D1:1" in head(s)
        await pilot.click("#session-rounds", offset=(4, 8))  # lines: D1, D1:1…D1:4, D2, D2:1, D2:2, D2:3
        await settle(pilot)
        assert "round D2:3" in head(s)
        await press(pilot, "escape")  # back to where we came from
        assert not isinstance(app.screen, SessionScreen)


@pytest.mark.needs_demo
async def test_video_frames_step_with_the_counter():
    app = session_app()
    async with app.run_test(size=SIZE) as pilot:
        s = await open_session(pilot, OMNI, "D1:3")
        video = s.query_one(MediaVideo)
        view = video.query_one(PictureView)
        assert video.count == 21 and "frame 1/21" in screen_text(app)
        await press(pilot, "m")  # the key that picks which video ←/→ act on
        assert app.focused is video
        first = view.picture.strips
        await press(pilot, "right", "right")
        assert "frame 3/21" in screen_text(app)
        assert view.picture.strips != first  # the ball moved
        await press(pilot, "left")
        assert "frame 2/21" in screen_text(app)
        await press(pilot, "left", "left")  # clamped at the first frame
        assert "frame 1/21" in screen_text(app)
        assert view.picture.strips == first
        for _ in range(15):  # held →: the counter follows every step, the picture the last one
            video.step(1)
        await settle(pilot)
        assert "frame 16/21" in screen_text(app) and view.picture.strips != first
        assert view._shown[0] == video.source.key(15)


@pytest.mark.needs_demo
async def test_audio_plays_and_stops_with_one_key():
    player = NullPlayer()
    app = session_app(player)
    async with app.run_test(size=SIZE) as pilot:
        s = await open_session(pilot, OMNI, "D1:4")
        audio = s.query_one(MediaAudio)
        assert audio.clip is not None and audio.clip.duration == pytest.approx(0.8)
        assert "0:00.8" in screen_text(app) and "■ stopped" in screen_text(app)
        assert max(s.query_one(Sparkline).data) > 0.3  # the waveform's peaks
        await press(pilot, "space")
        assert player.played == [DEMO / "audio" / OMNI / "mia_swim_before.wav"]
        assert "▶ playing" in screen_text(app)
        await press(pilot, "space")
        assert player.stops == 1 and "■ stopped" in screen_text(app)
        await press(pilot, "space", "n")  # leaving the round stops the clip
        assert player.stops == 2


def _has_output_device() -> bool:
    try:
        import sounddevice as sd
        sd.check_output_settings()
        return True
    except Exception:
        return False


@pytest.mark.needs_demo
async def test_no_audio_device_is_one_line_and_the_app_keeps_working():
    """The real sounddevice player (CI: libportaudio2 installed, no device)."""
    if _has_output_device():
        pytest.skip("this machine has an audio output device")
    app = session_app(SoundDevicePlayer())
    async with app.run_test(size=SIZE) as pilot:
        s = await open_session(pilot, OMNI, "D1:4")
        await press(pilot, "space")
        audio = s.query_one(MediaAudio)
        assert audio.message is not None and "\n" not in audio.message
        assert audio.message.startswith((NO_PORTAUDIO, NO_DEVICE))
        assert audio.message.endswith(f"audio/{OMNI}/mia_swim_before.wav")  # the clip, under the root
        line = next(x for x in screen_text(app).splitlines() if "no audio:" in x)
        assert "mia_swim_before.wav" in line  # said on one screen line, path included
        assert not audio.playing and max(s.query_one(Sparkline).data) > 0.3  # waveform still shown
        await press(pilot, "n")
        assert "round D2:1" in head(s)


@pytest.mark.needs_demo
async def test_opened_at_a_clue_marks_the_chain_and_g_returns():
    app = session_app()
    async with app.run_test(size=SIZE) as pilot:
        item = app.state.bench.item(f"{OMNI}:7", "mcq")  # Y3: clues D2:1, D3:1, latest D5:2
        s = await open_session(pilot, OMNI, "D3:1", item=item)
        assert "⟲ stale clue of item 7 (mcq)" in head(s)
        assert s.marks == {"D2:1": "⟲", "D3:1": "⟲", "D5:2": "★"}
        text = screen_text(app)
        assert "D5:2 ★" in text and "D2:1 ⟲" in text
        await press(pilot, "n", "n")
        assert "round D3:3" in head(s)
        await press(pilot, "g")
        assert "round D3:1" in head(s)


@pytest.mark.needs_demo
async def test_unknown_round_opens_the_first_with_a_warning():
    app = session_app()
    async with app.run_test(size=SIZE) as pilot:
        s = await open_session(pilot, OMNI, "D99:1")
        assert "round D1:1" in head(s)
        assert any("D99:1" in str(n.message) for n in app._notifications)


@pytest.mark.needs_demo
def test_session_snapshot_image_round(snap_compare):
    async def run_before(pilot):
        await open_session(pilot, OMNI, "D1:1")

    assert snap_compare(session_app(), terminal_size=SIZE, run_before=run_before)


@pytest.mark.needs_demo
def test_session_snapshot_video_round(snap_compare):
    async def run_before(pilot):
        await open_session(pilot, OMNI, "D1:3")
        await press(pilot, "right", "right")

    assert snap_compare(session_app(), terminal_size=SIZE, run_before=run_before)


# ---------------------------------------------------------------- broken benchmarks


TASK = "Mini_Task"


def mini(tmp_path: Path, turns: list[dict], files=None) -> Path:
    """A one-session benchmark with `turns` as rounds D1:1, D1:2, …; `files` = {relative path: bytes or
    PIL image}, written under the root."""
    root = tmp_path / "bench"
    for rel, content in (files or {}).items():
        p = root / rel
        p.parent.mkdir(parents=True, exist_ok=True)
        if isinstance(content, Image.Image):
            content.save(p)
        else:
            p.write_bytes(content)
    rounds = [{"round": f"D1:{k}", **t} for k, t in enumerate(turns, start=1)]
    d = {"multi_session_dialogues": [{"session_id": "D1", "date": "2024-01-01", "dialogues": rounds}],
         "human-annotated QAs": [{"point": [["X1"], ["Y1"]], "question": "q?", "answer": "a",
                                  "session_id": ["D1"], "clue": ["D1:1"]}]}
    (root / "dialog").mkdir(parents=True, exist_ok=True)
    (root / "dialog" / f"{TASK}.json").write_text(json.dumps(d), encoding="utf-8")
    return root


def wav_bytes() -> bytes:
    buf = io.BytesIO()
    with wave.open(buf, "wb") as w:
        w.setnchannels(1)
        w.setsampwidth(2)
        w.setframerate(8000)
        w.writeframes(b"\x00\x40" * 4000)
    return buf.getvalue()


async def test_broken_media_are_placeholders_with_their_reasons(tmp_path):
    """Missing, vanished, corrupt and outside-the-root media: a reason each, keys keep working."""
    secret = tmp_path / "secret.png"
    Image.new("RGB", (20, 20), "red").save(secret)
    shutil.copy(secret, tmp_path / "secret.wav")
    red = Image.new("RGB", (20, 20), "red")
    root = mini(tmp_path, [
        {"user": "missing", "input_image": ["image/gone.png", "image/later.png", "image/ok.png"]},
        {"user": "corrupt png", "input_image": ["image/bad.png"]},
        {"user": "corrupt wav", "input_audio": ["audio/bad.wav"]},
        {"user": "sneaky", "input_image": ["../../secret.png"], "input_audio": ["../../secret.wav"]},
    ], {"image/later.png": red, "image/ok.png": red,
        "image/bad.png": b"\x89PNG\r\n\x1a\n" + b"\x00garbage" * 40,
        "audio/bad.wav": b"RIFF\x24\x00\x00\x00WAVEfmt \x10\x00\x00\x00" + b"\xff" * 8})
    player = NullPlayer()
    app = make_app(root, runs=(), db=None, annotator="tester", player=player)
    (root / "image" / "later.png").unlink()  # vanishes after loading: the widget's own reason
    async with app.run_test(size=SIZE) as pilot:
        s = await open_session(pilot, TASK, "D1:1")
        text = screen_text(app)
        assert "media file not found: image/gone.png" in text  # the loader's reason
        assert "missing file:" in text and "later.png" in text
        images = list(s.query(MediaImage))
        await pictures_done(pilot, images)
        assert [w.picture is not None for w in images] == [False, False, True]

        await press(pilot, "n")
        w = s.query_one(MediaImage)
        await pictures_done(pilot, [w])
        assert w.picture is None and "bad.png" in w.error
        assert "not a readable image" in screen_text(app) or "corrupt image" in screen_text(app)
        await press(pilot, "space", "right")  # nothing to play or step: nothing happens, nothing breaks

        await press(pilot, "n")
        a = s.query_one(MediaAudio)
        assert a.clip is None and "bad.wav" in a.error and "corrupt" in screen_text(app)
        await press(pilot, "space")
        assert player.played == []

        await press(pilot, "n")
        assert screen_text(app).count("path leaves the benchmark root") == 2
        assert s.query_one(MediaImage).picture is None and s.query_one(MediaAudio).clip is None


async def test_a_media_path_outside_the_root_is_refused_by_the_widget(tmp_path):
    """Second line of defence: a Media built by something other than the loader."""
    root = mini(tmp_path, [{"user": "x"}])
    secret = tmp_path / "secret.png"
    Image.new("RGB", (20, 20), "red").save(secret)
    app = make_app(root, runs=(), db=None, annotator="tester")
    async with app.run_test(size=SIZE) as pilot:
        w = MediaImage(Media("image", "x.png", path=secret), root)
        await app.screen.mount(w)
        await settle(pilot)
        assert w.picture is None and w.error.startswith("refused: path leaves the benchmark root")


INJECT = "[bold red]boom[/] [link=https://evil.example]x[/link] \x1b[31mRED\x1b]8;;http://e\x07"


async def test_markup_and_escapes_in_the_data_are_shown_literally(tmp_path):
    root = mini(tmp_path, [{"user": "U " + INJECT, "assistant": "A [i]not italic[/i]",
                            "input_image": ["image/[b]p[i].png", "https://example.org/[b]r[/b].jpg"],
                            "image_caption": ["C [b]cap[/b]", "R [u]remote[/u]"],
                            "input_audio": ["audio/a.wav"], "audio_transcript": ["T [blink]t[/blink]"]}],
                {"image/[b]p[i].png": Image.new("RGB", (20, 20), "blue"), "audio/a.wav": wav_bytes()})
    app = make_app(root, runs=(), db=None, annotator="tester", player=NullPlayer())
    async with app.run_test(size=SIZE) as pilot:
        s = await open_session(pilot, TASK, "D1:1")
        text = screen_text(app)
        assert "U [bold red]boom[/] [link=https://evil.example]x[/link] \\x1b[31mRED\\x1b]8;;http://e\\x07" in text
        assert "A [i]not italic[/i]" in text
        assert "C [b]cap[/b]" in text and "T [blink]t[/blink]" in text
        assert "[b]p[i].png" in text  # the image's name, literal
        # a remote image is never fetched: its URL and caption, as typed
        assert "remote image (not fetched): https://example.org/[b]r[/b].jpg" in text
        assert text.count("R [u]remote[/u]") == 2  # in the caption line and in the placeholder
        assert "\x1b" not in text and "\x07" not in text
        image = s.query(MediaImage)[0]
        await pictures_done(pilot, [image])
        assert image.picture is not None  # an odd file name is still a real file
        assert s.query_one(MediaAudio).clip is not None


@pytest.mark.needs_demo
async def test_keys_faster_than_rounds_mount_end_on_the_last_round():
    """Held keys coalesce: the screen ends on the position the keys reached, its media mounted once."""
    app = session_app()
    async with app.run_test(size=SIZE) as pilot:
        s = await open_session(pilot, OMNI, "D1:1")
        for _ in range(12):  # no waiting between them
            s.action_round(1)
        await settle(pilot)
        assert s.pos == 12 and f"round {s.current.round_id}" in head(s)
        shown = s.query("MediaImage, MediaVideo, MediaAudio")
        assert len(shown) == len(s.current.media)
