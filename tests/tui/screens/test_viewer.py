"""The media viewer (tui/screens/viewer.py), driven with Pilot through the real app: `z` from the
Item, Session and oracle study screens, zoom levels, pan limits, the screen behind unchanged after
escape, `m`, a missing and a corrupt file, and playback of a real GIF and a real MP4 built here
(frames advance with time, stop on pause, keys stay live while playing)."""

from __future__ import annotations

import time
from pathlib import Path

import numpy as np
import pytest
from PIL import Image

from scorer.model import Media
from tests.builders.benchmarks import corrupt_png
from tests.paths import DEMO
from tests.tui.apphelpers import SIZE, screen_text, settle
from tui.app import make_app
from tui.media import image as img
from tui.media import zoom as zm
from tui.media.audio import NullPlayer
from tui.messages import OpenItem
from tui.screens.item import ItemScreen
from tui.screens.viewer import ViewerScreen

pytestmark = pytest.mark.usefixtures("halfcell")

STICKER = ("Collectibles_Shelf_Assistant:3", "mcq")  # its clue: flea_cat_price.png, 320×240
THREE = ("Collectibles_Shelf_Assistant:5", "mcq")  # three clue images


def plain_app():
    return make_app(DEMO, runs=(), db=None, annotator="tester", allow_outside_root=True, player=NullPlayer())


async def open_item(pilot, key) -> ItemScreen:
    pilot.app.post_message(OpenItem([key], key))
    await settle(pilot)
    screen = pilot.app.screen
    assert isinstance(screen, ItemScreen)
    return screen


async def press(pilot, *keys: str) -> None:
    for k in keys:
        await pilot.press(k)
        await settle(pilot)


async def shown(pilot, viewer: ViewerScreen, tries: int = 200) -> None:
    """Until the viewer's picture (or its failure line) for the current view is on screen."""
    for _ in range(tries):
        await settle(pilot)
        c = viewer.canvas
        if (c.picture is not None and c._wanted is None) or viewer.error:
            return
        await pilot.pause(0.02)


async def open_viewer(pilot, media: list[Media], index: int = 0) -> ViewerScreen:
    v = ViewerScreen(media, index)
    await pilot.app.push_screen(v)
    await shown(pilot, v)
    return v


@pytest.mark.needs_demo
async def test_z_on_the_item_opens_the_clue_image_and_zoom_levels_step():
    img.PICTURES.clear()
    app = plain_app()
    async with app.run_test(size=SIZE) as pilot:
        await open_item(pilot, STICKER)
        await press(pilot, "z")
        v = app.screen
        assert isinstance(v, ViewerScreen)
        await shown(pilot, v)
        assert v.current.name == "flea_cat_price" and v.size_px == (320, 240)
        text = screen_text(app)
        assert "flea_cat_price.png" in text and "320×240 px" in text and "zoom fit" in text
        seen = []
        for _ in range(5):
            await press(pilot, "plus")
            await shown(pilot, v)
            seen.append(v.view.zoom)
        assert seen == [1, 2, 4, 8, 8]
        box = v.box()
        reg = zm.region(v.view, (320, 240), box)
        assert reg.size == (box[0] // 8, box[1] // 8)
        assert f"zoom 8× · showing x {reg.x0}–{reg.x1}, y {reg.y0}–{reg.y1}" in screen_text(app)
        # the picture on screen is the source magnified: its cells are the file's pixels, 8 columns each
        source = np.asarray(Image.open(v.current.path).convert("RGB"))
        strip = v.canvas.picture.strips[3]
        colours = [seg.style.color.triplet for seg in strip._segments for _ in seg.text]
        for col in (0, 17, 63):
            assert tuple(colours[col]) == tuple(source[reg.y0 + 6 // 8, reg.x0 + col // 8])
        await press(pilot, "minus")
        assert v.view.zoom == 4
        await press(pilot, "0")
        assert v.view == zm.View()


@pytest.mark.needs_demo
async def test_pan_stops_at_the_edges():
    app = plain_app()
    async with app.run_test(size=SIZE) as pilot:
        await open_item(pilot, STICKER)
        await press(pilot, "z", "plus", "plus", "plus")  # 4×
        v = app.screen
        await shown(pilot, v)
        w, h = zm.visible(v.view, (320, 240), v.box())
        for _ in range(80):  # more than enough steps of a quarter view
            await pilot.press("right", "down")
        await shown(pilot, v)
        assert (v.view.x, v.view.y) == (320 - w, 240 - h)
        assert f"showing x {320 - w}–320, y {240 - h}–240" in screen_text(app)
        for _ in range(80):  # more than enough steps of a quarter view
            await pilot.press("left", "up")
        await shown(pilot, v)
        assert (v.view.x, v.view.y) == (0, 0)


@pytest.mark.needs_demo
async def test_escape_returns_to_the_same_screen_and_state():
    app = plain_app()
    async with app.run_test(size=SIZE) as pilot:
        item = await open_item(pilot, THREE)
        for _ in range(4):
            if item.query_one("#chain").cursor == 1:
                break
            await press(pilot, "c")  # until the second clue is highlighted
        cursor = item.query_one("#chain").cursor
        assert cursor == 1
        tab = item.query_one("#runs").active
        await press(pilot, "z")
        v = app.screen
        await shown(pilot, v)
        names = [m.name for m in v.media]
        assert names == ["flea_cat_price", "antique_cat_price", "antique_twin"]
        assert v.current.name == names[1]  # the highlighted clue's image
        await press(pilot, "m")
        await shown(pilot, v)
        assert v.current.name == names[2] and v.view == zm.View()
        await press(pilot, "plus", "escape")
        assert app.screen is item  # the same screen object, not rebuilt
        assert item.query_one("#chain").cursor == cursor and item.query_one("#runs").active == tab
        assert item.key == THREE


async def test_missing_and_corrupt_files_are_one_line(tmp_path):
    bad = corrupt_png(tmp_path / "bad.png")
    media = [Media("image", "gone.png", path=tmp_path / "gone.png"), Media("image", "bad.png", path=bad)]
    app = plain_app()
    async with app.run_test(size=SIZE) as pilot:
        v = await open_viewer(pilot, media)
        assert v.error and "missing file" in v.error
        assert "missing file:" in screen_text(app) and "unavailable" in screen_text(app)
        await press(pilot, "plus", "right", "space", "0")  # nothing to zoom: no crash
        await press(pilot, "m")
        await shown(pilot, v)
        assert v.error and v.error.startswith("corrupt image: ") and "bad.png" in v.error
        assert "corrupt image: " in screen_text(app)
        assert app.is_running and app.screen is v


async def test_z_in_the_oracle_study_and_in_session():
    pytest.importorskip("av")
    from tui.screens.session import SessionScreen

    app = plain_app()
    async with app.run_test(size=SIZE) as pilot:
        s = SessionScreen("Omni_Family_Moments", "D1:3")
        await app.push_screen(s)
        await settle(pilot)
        await press(pilot, "z")
        v = app.screen
        assert isinstance(v, ViewerScreen) and v.current.kind == "video"
        await shown(pilot, v)
        assert v.source is not None and "frame 1/21" in screen_text(app)
        await press(pilot, "escape")
        assert app.screen is s


# ---------------------------------------------------------------- playback


def gif(path: Path, n: int = 30, ms: int = 60) -> Path:
    frames = [Image.new("RGB", (40, 30), (8 * k, 255 - 8 * k, 80)) for k in range(n)]
    frames[0].save(path, save_all=True, append_images=frames[1:], duration=ms, loop=0)
    return path


def mp4(path: Path, n: int = 20, fps: int = 10) -> Path:
    import av

    with av.open(str(path), "w") as c:
        s = c.add_stream("mpeg4", rate=fps)
        s.width, s.height, s.pix_fmt = 64, 48, "yuv420p"
        for k in range(n):
            a = np.full((48, 64, 3), (12 * k, 100, 255 - 12 * k), dtype=np.uint8)
            for pkt in s.encode(av.VideoFrame.from_ndarray(a, format="rgb24")):
                c.mux(pkt)
        for pkt in s.encode():
            c.mux(pkt)
    return path


async def wait_real(pilot, seconds: float) -> None:
    end = time.monotonic() + seconds
    while time.monotonic() < end:
        await pilot.pause(0.02)


async def test_gif_plays_at_its_rate_and_stops_on_pause(tmp_path):
    app = plain_app()
    async with app.run_test(size=SIZE) as pilot:
        v = await open_viewer(pilot, [Media("image", "a.gif", path=gif(tmp_path / "a.gif"))])
        for _ in range(50):
            if v.source is not None:
                break
            await pilot.pause(0.02)
        assert v.source is not None and v.source.count == 30 and v.times[:3] == [0.0, 0.06, 0.12]
        assert "frame 1/30 · 00:00.000 / 00:01.800 · ⏸ paused" in screen_text(app)
        t0 = time.monotonic()
        await pilot.press("space")
        await wait_real(pilot, 0.35)
        f = v.frame
        due = (time.monotonic() - t0) / 0.06
        assert v.playing and 2 <= f <= due + 1  # it advances with time, never ahead of the clock
        # keys stay live while it plays: a zoom step is handled at once and playback goes on
        t1 = time.monotonic()
        await pilot.press("plus")
        assert v.view.zoom != zm.FIT and time.monotonic() - t1 < 0.5
        await pilot.press("space")  # pause
        await settle(pilot)
        paused = v.frame
        assert not v.playing and paused > f
        await wait_real(pilot, 0.3)
        assert v.frame == paused and "⏸ paused" in screen_text(app)
        assert f"frame {paused + 1}/30" in screen_text(app)
        await press(pilot, "comma")  # steps back while paused
        assert v.frame == paused - 1


async def test_mp4_plays_by_its_timestamps(tmp_path):
    pytest.importorskip("av")
    app = plain_app()
    async with app.run_test(size=SIZE) as pilot:
        v = await open_viewer(pilot, [Media("video", "c.mp4", path=mp4(tmp_path / "c.mp4"))])
        for _ in range(100):
            if v.source is not None:
                break
            await pilot.pause(0.02)
        assert v.source.count == 20 and abs(v.times[5] - 0.5) < 1e-6  # 10 fps, from the pts
        await press(pilot, "right")  # at fit there is nothing to pan: → steps a frame
        assert v.frame == 1 and "frame 2/20 · 00:00.100" in screen_text(app)
        await pilot.press("space")
        await wait_real(pilot, 0.45)
        assert v.playing and 3 <= v.frame <= 7
        await wait_real(pilot, 2.0)  # past the end: stops on the last frame
        await settle(pilot)
        assert not v.playing and v.frame == 19
        assert "frame 20/20 · 00:01.900 / 00:02.000 · ⏸ paused" in screen_text(app)


@pytest.mark.needs_demo
async def test_session_video_plays_and_pauses():
    from tui.screens.session import SessionScreen
    from tui.widgets.media_video import MediaVideo

    app = plain_app()
    async with app.run_test(size=SIZE) as pilot:
        s = SessionScreen("Omni_Family_Moments", "D1:3")
        await app.push_screen(s)
        await settle(pilot)
        video = s.query_one(MediaVideo)
        await press(pilot, "m")  # the video focused: space acts on it
        await pilot.press("space")
        await wait_real(pilot, 0.7)
        assert video.playing and video.index >= 2
        await pilot.press("space")
        await settle(pilot)
        at = video.index
        await wait_real(pilot, 0.4)
        assert not video.playing and video.index == at
        assert f"frame {at + 1}/21" in screen_text(app)


# ---------------------------------------------------------------- snapshot


@pytest.mark.needs_demo
def test_viewer_snapshot_sticker_at_4x(snap_compare):
    """The demo's price sticker at 4×, panned onto its text: "EUR 1" fills the 120×40 screen."""
    img.PICTURES.clear()

    async def run_before(pilot):
        await open_item(pilot, STICKER)
        await press(pilot, "z", "plus", "plus", "plus")
        v = pilot.app.screen
        await shown(pilot, v)
        v._set_view(zm.View(4, 177, 148))  # the sticker's top-left corner (what → and ↓ reach)
        await shown(pilot, v)

    assert snap_compare(plain_app(), terminal_size=SIZE, run_before=run_before)


# ---------------------------------------------------------------- no second decode


async def test_z_on_a_drawn_png_thumbnail_decodes_nothing_again(tmp_path, monkeypatch):
    """The Item screen's thumbnail of a 1920×1080 PNG has decoded it at full resolution (PNG cannot
    be decoded smaller): `z` then shows the viewer's first picture from that decode, reading the
    file no second time (every decode of the app counted, through image.decode)."""
    from tests.builders.benchmarks import MINI_TASK, write_mini_bench
    from tui.widgets.media_image import MediaImage

    root = write_mini_bench(tmp_path / "b")
    tag = root / "image" / MINI_TASK / "tag.png"
    rng = np.random.default_rng(3)
    Image.fromarray(rng.integers(0, 256, (1080, 1920, 3), dtype=np.uint8), "RGB").save(tag)
    img.PICTURES.clear()
    zm.SOURCES.clear()
    decoded: list[str] = []
    real = img.decode

    def counting(path, box):
        decoded.append(Path(path).name)
        return real(path, box)

    monkeypatch.setattr(img, "decode", counting)
    app = make_app(root, runs=(), db=None, annotator="t", player=NullPlayer())
    async with app.run_test(size=SIZE) as pilot:
        item = await open_item(pilot, (f"{MINI_TASK}:2", "mcq"))
        thumb = next(w for w in item.query(MediaImage) if w.path == tag)
        for _ in range(300):
            if thumb.picture is not None:
                break
            await pilot.pause(0.01)
        assert thumb.picture is not None and decoded == ["tag.png"]
        await press(pilot, "z")
        v = app.screen
        assert isinstance(v, ViewerScreen)
        await shown(pilot, v)
        assert v.size_px == (1920, 1080) and v.canvas.picture.source_size == (1920, 1080)
        assert decoded == ["tag.png"]  # nothing decoded for the viewer
