"""The viewer's geometry and magnification (tui/media/zoom.py), against hand-computed cases and the
source pixels themselves: zoom levels in scale order, the visible region, pan limits, re-centring on
a zoom step, and nearest-neighbour magnification from the full-resolution file."""

from __future__ import annotations

import numpy as np
from PIL import Image

from tests.builders.benchmarks import corrupt_png
from tui.media import image as img
from tui.media import zoom as zm
from tui.media.source import MediaError

SRC = (320, 240)
BOX = (120, 74)  # a 120×37-cell canvas in half-cell mode


def test_fit_scale_and_levels_in_scale_order():
    assert zm.fit_scale(SRC, BOX) == min(120 / 320, 74 / 240)  # 0.3083…: the height limits
    ups = []
    z = zm.FIT
    for _ in range(6):
        z = zm.step_zoom(z, 1, SRC, BOX)
        ups.append(z)
    assert ups == [1, 2, 4, 8, 8, 8]  # stops at 8×
    assert zm.step_zoom(1, -1, SRC, BOX) == zm.FIT
    assert zm.step_zoom(zm.FIT, -1, SRC, BOX) == zm.FIT
    # a tiny source fits at 3.7×: fit sits between 2× and 4×
    tiny = (32, 20)
    assert zm.fit_scale(tiny, BOX) == 74 / 20  # min(120/32, 74/20): the height limits
    assert zm.step_zoom(zm.FIT, 1, tiny, BOX) == 4
    assert zm.step_zoom(zm.FIT, -1, tiny, BOX) == 2
    assert zm.step_zoom(2, 1, tiny, BOX) == zm.FIT


def test_visible_region_by_hand():
    # 4×: floor(120/4) × floor(74/4) = 30 × 18 source pixels, shown as 120 × 72 display pixels
    r = zm.region(zm.View(4, 100, 50), SRC, BOX)
    assert (r.x0, r.y0, r.x1, r.y1, r.out) == (100, 50, 130, 68, (120, 72))
    # fit: the whole source, at 0.3083×: 99 × 74 display pixels
    r = zm.region(zm.View(), SRC, BOX)
    assert (r.x0, r.y0, r.x1, r.y1) == (0, 0, 320, 240) and r.out == (99, 74)


def test_pan_limits():
    v = zm.View(8)  # 15 × 9 source pixels visible
    assert zm.visible(v, SRC, BOX) == (15, 9)
    for _ in range(200):
        v = zm.pan(v, 1, 1, SRC, BOX)
    assert (v.x, v.y) == (320 - 15, 240 - 9)  # the right and bottom edges, not beyond
    for _ in range(200):
        v = zm.pan(v, -1, -1, SRC, BOX)
    assert (v.x, v.y) == (0, 0)
    # one step: a quarter of the visible region (15 × 0.25 → 4 px, 9 × 0.25 → 2 px)
    assert zm.pan(zm.View(8), 1, 1, SRC, BOX) == zm.View(8, 4, 2)
    # at fit there is nothing to pan to
    assert zm.can_pan(zm.View(), SRC, BOX) == (False, False)
    assert zm.pan(zm.View(), 1, 1, SRC, BOX) == zm.View()


def test_rezoom_keeps_the_centre():
    v = zm.rezoom(zm.View(), 1, SRC, BOX)  # 120 × 74 visible around (160, 120)
    assert (v.x, v.y) == (100, 83)
    v4 = zm.rezoom(v, 4, SRC, BOX)  # 30 × 18 around the same centre (160, 120)
    assert (v4.x, v4.y) == (145, 111)


def test_magnification_is_nearest_neighbour_from_the_source():
    rng = np.random.default_rng(7)
    a = rng.integers(0, 256, size=(40, 50, 3), dtype=np.uint8)
    source = Image.fromarray(a, "RGB")
    reg = zm.region(zm.View(8, 10, 5), source.size, BOX)
    out = np.asarray(zm.resample(source, reg))
    assert out.shape == (72, 120, 3)  # 9 rows × 15 columns of source pixels, 8× each
    for y in range(0, 72, 7):
        for x in range(0, 120, 11):
            assert (out[y, x] == a[5 + y // 8, 10 + x // 8]).all()


def test_zoomed_picture_half_cells_match_the_source(halfcell):
    a = np.zeros((20, 30, 3), dtype=np.uint8)
    a[:, :, 0] = np.arange(30, dtype=np.uint8)[None, :] * 8  # red encodes x
    a[:, :, 1] = np.arange(20, dtype=np.uint8)[:, None] * 12  # green encodes y
    source = Image.fromarray(a, "RGB")
    img.PICTURES.clear()
    pic = zm.zoomed_picture(source, ("t", 1), zm.View(4, 3, 2), (40, 10))  # box 40 × 20 → 10 × 5 source px
    assert pic.cells == (40, 10) and len(pic.strips) == 10
    for row in (0, 3, 9):
        cells = [(seg.style.color.triplet, seg.style.bgcolor.triplet) for seg in pic.strips[row]._segments
                 for _ in seg.text]
        assert len(cells) == 40
        for col in (0, 5, 39):
            top, bottom = cells[col]
            assert (top.red, top.green) == (8 * (3 + col // 4), 12 * (2 + (2 * row) // 4))
            assert (bottom.red, bottom.green) == (8 * (3 + col // 4), 12 * (2 + (2 * row + 1) // 4))


def test_load_source_cached_and_errors_are_one_line(tmp_path):
    p = tmp_path / "a.png"
    Image.new("RGBA", (64, 48), (255, 0, 0, 0)).save(p)
    zm.SOURCES.clear()
    k1, s1 = zm.load_source(p)
    k2, s2 = zm.load_source(p)
    assert s1 is s2 and zm.SOURCES.hits == 1 and s1.size == (64, 48) and s1.mode == "RGB"
    assert s1.getpixel((0, 0)) == img.BACKGROUND  # transparency on the app's background
    for bad, words in ((tmp_path / "missing.png", "missing file"), (corrupt_png(tmp_path / "bad.png"), "corrupt")):
        try:
            zm.load_source(bad)
        except MediaError as exc:
            assert words in str(exc) and str(bad) in str(exc) and "\n" not in str(exc)
        else:
            raise AssertionError("no MediaError")
