"""The viewer's first picture (issue 15: < 150 ms for a 1920×1080 source), kept exact while made
faster: a PNG (no reduced decoding) is decoded once, when the viewer is requested, into the source
cache that zoom steps magnify from; its fitted picture is pixel for pixel Pillow's own BICUBIC fit of
the file, as before; the half-cell colours are made in one batch and equal rich's; the cache lets a
second thread wait for a build under way instead of repeating it."""

from __future__ import annotations

import threading
import time

import numpy as np
import pytest
from PIL import Image
from rich.color import Color
from rich.segment import Segment
from rich.style import Style

from tests.builders.benchmarks import corrupt_png
from tui.media import halfcell as hc
from tui.media import image as img
from tui.media import zoom as zm
from tui.media.source import MediaError

pytestmark = pytest.mark.usefixtures("halfcell")

CELLS = (120, 37)  # the viewer's canvas at 120×40: box 120×74 display pixels


def photo(path, size=(1920, 1080), fmt=None):
    """Photo-like: gradients, noise (every cell its own colour) and a little text-sized detail."""
    rng = np.random.default_rng(15)
    y, x = np.mgrid[0:size[1], 0:size[0]]
    a = np.stack([x * 255 // (size[0] - 1), y * 255 // (size[1] - 1), (x + y) * 255 // (size[0] + size[1])], -1)
    a = np.clip(a + rng.integers(-24, 25, size=a.shape), 0, 255).astype(np.uint8)
    a[500:510, 900:1000] = 255
    Image.fromarray(a, "RGB").save(path, **({"quality": 90} if fmt == "jpg" else {}))
    return path


def cells_of(pic: img.Picture) -> np.ndarray:
    """The picture's half-cells back as pixels: (rows × 2, columns, 3), -1 where a last row is empty."""
    rows = []
    for strip in pic.strips:
        top, bottom = [], []
        for seg in strip._segments:
            for _ in seg.text:
                assert seg.text[0] == "▀"
                top.append(tuple(seg.style.color.triplet))
                bottom.append(tuple(seg.style.bgcolor.triplet) if seg.style.bgcolor else (-1, -1, -1))
        rows += [top, bottom]
    return np.array(rows)


def test_png_first_picture_is_pillows_bicubic_fit_pixel_for_pixel(tmp_path):
    p = photo(tmp_path / "photo.png")
    img.PICTURES.clear()
    zm.SOURCES.clear()
    pic = zm.fit_picture(p, CELLS)
    # the reference: Pillow alone, as the viewer fitted a PNG before (to_fit: BICUBIC, reducing_gap=2)
    want = np.asarray(Image.open(p).convert("RGB").resize((120, 68), Image.Resampling.BICUBIC, reducing_gap=2.0))
    assert pic.cells == (120, 34) and pic.source_size == (1920, 1080)
    got = cells_of(pic)
    assert got.shape == want.shape and (got == want).all()  # identical, not merely close
    # and decoded once, at full resolution, into the cache the zoom steps use
    assert zm.SOURCES.misses == 1 and len(zm.SOURCES) == 1
    key, source = zm.load_source(p)
    assert source.size == (1920, 1080) and zm.SOURCES.misses == 1 and zm.SOURCES.hits == 1


def test_png_magnified_from_the_same_decode_stays_nearest_neighbour(tmp_path):
    p = photo(tmp_path / "photo.png")
    zm.SOURCES.clear()
    zm.fit_picture(p, CELLS)
    key, source = zm.load_source(p)
    a = np.asarray(source)
    for zoom in (2, 4, 8):
        view = zm.View(zoom, 880, 480)
        reg = zm.region(view, source.size, img.box_px(CELLS))
        got = cells_of(zm.zoomed_picture(source, key, view, CELLS))
        want = np.repeat(np.repeat(a[reg.y0:reg.y1, reg.x0:reg.x1], zoom, 0), zoom, 1)  # each pixel a z×z block
        assert want.shape[1] == 120 and got.shape == want.shape and (got == want).all()
    assert zm.SOURCES.misses == 1  # no second decode


def test_jpeg_first_picture_still_takes_the_reduced_decode(tmp_path):
    p = photo(tmp_path / "photo.jpg", fmt="jpg")
    img.PICTURES.clear()
    zm.SOURCES.clear()
    assert zm.reduces(p) and not zm.reduces(photo(tmp_path / "photo.png"))
    pic = zm.fit_picture(p, CELLS)
    assert pic.cells == (120, 34) and pic.source_size == (1920, 1080)
    assert len(zm.SOURCES) == 0  # no full decode for the first picture


def test_a_broken_or_missing_file_says_why(tmp_path):
    bad = corrupt_png(tmp_path / "bad.png")
    zm.SOURCES.clear()
    with pytest.raises(MediaError, match="corrupt"):
        zm.fit_picture(bad, CELLS)
    with pytest.raises(MediaError, match="missing"):
        zm.fit_picture(tmp_path / "missing.png", CELLS)


def test_cache_waits_for_a_build_under_way_and_does_not_keep_a_failure():
    lru = img.LRU(10)
    calls, started = [], threading.Event()

    def slow():
        calls.append(1)
        started.set()
        time.sleep(0.2)
        return "built"

    results = []
    t = threading.Thread(target=lambda: results.append(lru.get_or_build("k", slow)))
    t.start()
    started.wait(5)
    assert lru.building("k")
    assert lru.get_or_build("k", slow) == "built"  # waited for the other thread's build
    t.join(5)
    assert results == ["built"] and len(calls) == 1 and not lru.building("k")

    def fails():
        calls.append(2)
        raise ValueError("broken")

    for _ in range(2):  # a failure is not cached: each asker tries (and fails) again
        with pytest.raises(ValueError):
            lru.get_or_build("bad", fails)
    assert calls.count(2) == 2 and not lru.building("bad") and lru.peek("bad") is None


def test_batch_colours_and_styles_equal_richs():
    rgbs = [0x000000, 0xFFFFFF, 0x0A0B0C, 0x123456, 0xFF0001]
    for c, rgb in zip(hc._make_colors(rgbs), rgbs):
        ref = Color.from_rgb(rgb >> 16, (rgb >> 8) & 255, rgb & 255)
        assert c == ref and c.name == ref.name and type(c) is Color and c.get_truecolor() == ref.get_truecolor()
    im = Image.fromarray(np.array([[[1, 2, 3], [1, 2, 3], [9, 9, 9]], [[4, 5, 6], [4, 5, 6], [7, 7, 7]],
                                   [[0, 0, 255], [0, 0, 255], [0, 0, 255]]], dtype=np.uint8), "RGB")
    hc._STYLES.clear()
    hc._COLORS.clear()
    strips = hc.halfcell_strips(im)
    want = [[Segment("▀▀", Style(color="#010203", bgcolor="#040506")), Segment("▀", Style(color="#090909", bgcolor="#070707"))],
            [Segment("▀▀▀", Style(color="#0000ff"))]]
    assert [list(s._segments) for s in strips] == want
    assert [type(seg) for seg in strips[0]._segments] == [Segment, Segment]


async def test_the_viewer_decodes_once_it_is_up_and_only_once(tmp_path):
    from scorer.model import Media
    from tests.paths import DEMO
    from tests.tui.apphelpers import settle
    from tui.app import make_app
    from tui.media.audio import NullPlayer
    from tui.screens.viewer import ViewerScreen

    p = photo(tmp_path / "photo.png")
    img.PICTURES.clear()
    zm.SOURCES.clear()
    app = make_app(DEMO, runs=(), db=None, annotator="t", allow_outside_root=True, player=NullPlayer())
    async with app.run_test(size=(120, 40)) as pilot:
        v = ViewerScreen([Media("image", p.name, path=p)])
        key = ("src",) + zm.media_key(p)
        await pilot.pause(0.05)
        # not beside the push: Pillow takes the GIL back between a PNG's chunks (slower, measured)
        assert zm.SOURCES.peek(key) is None and not zm.SOURCES.building(key)
        await app.push_screen(v)
        for _ in range(500):
            if v.canvas.picture is not None and v.canvas._wanted is None:
                break
            await pilot.pause(0.01)
        await settle(pilot)
        assert v.size_px == (1920, 1080) and v.canvas.picture.cells == (120, 34)
        assert zm.SOURCES.peek(key) is not None
        assert zm.SOURCES.misses == 1  # the viewer's picture and its prefetch: one decode between them


def test_png_thumbnail_is_load_pictures_pixels_and_leaves_the_source_for_the_viewer(tmp_path):
    p = photo(tmp_path / "photo.png")
    img.PICTURES.clear()
    zm.SOURCES.clear()
    want = cells_of(img.load_picture(p, (19, 6)))  # the thumbnail as drawn before: its own decode
    img.PICTURES.clear()
    thumb = zm.thumbnail_picture(p, (19, 6))
    assert thumb.source_size == (1920, 1080) and (cells_of(thumb) == want).all()
    assert zm.SOURCES.misses == 1 and zm.SOURCES.peek(("src",) + zm.media_key(p)).size == (1920, 1080)
    zm.fit_picture(p, CELLS)  # the viewer's first picture: from that decode
    assert zm.SOURCES.misses == 1 and zm.SOURCES.hits == 1
    jpg = photo(tmp_path / "photo.jpg", fmt="jpg")  # a JPEG's thumbnail keeps its reduced decode
    img.PICTURES.clear()
    want = cells_of(img.load_picture(jpg, (19, 6)))
    img.PICTURES.clear()
    assert (cells_of(zm.thumbnail_picture(jpg, (19, 6))) == want).all() and len(zm.SOURCES) == 1
