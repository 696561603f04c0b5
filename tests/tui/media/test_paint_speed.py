"""What the first picture's speed-ups (issue 15) must not change: what is on screen.

- The half-cell lines are built with numpy and batched objects: checked cell for cell against the
  obvious construction with rich's own `Style`/`Color`/`Segment` (one segment per cell, then
  `Segment.simplify` merging equal neighbours), for photo-like, flat and odd-sized pictures, cold and
  warm caches, and with the caches full.
- A picture box painting a half-cell picture skips Textual's ANSIToTruecolor line filter (the
  identity on truecolour cells, but ~30 ms per photo the first time): the screen exported with the
  filter skipped equals the screen exported through Textual's own filters, for the viewer and for a
  box whose CSS background is an ANSI colour (where the filter is needed and kept).
- The garbage collector paused while a picture is built is always given back as it was.
"""

from __future__ import annotations

import gc
import threading

import numpy as np
import pytest
from PIL import Image
from rich.color import Color
from rich.segment import Segment
from rich.style import Style
from rich.text import Text
from textual.filter import ANSIToTruecolor
from textual.widget import Widget

from scorer.model import Media
from tests.paths import DEMO
from tests.tui.apphelpers import settle
from tui.app import make_app
from tui.media import halfcell as hc
from tui.media import image as img
from tui.media import zoom as zm
from tui.media.audio import NullPlayer
from tui.screens.viewer import ViewerScreen
from tui.widgets.picture import PictureView

pytestmark = pytest.mark.usefixtures("halfcell")


def reference_strips(im: Image.Image) -> list[list[Segment]]:
    """Half-cells the obvious way: '▀' per cell, top pixel as colour, bottom as background (none on
    an odd last row), equal neighbours merged by rich's Segment.simplify."""
    a = np.asarray(im.convert("RGB"))
    rows = []
    for y in range(0, a.shape[0], 2):
        cells = []
        for x in range(a.shape[1]):
            top = Color.from_rgb(*a[y, x].tolist())
            bottom = Color.from_rgb(*a[y + 1, x].tolist()) if y + 1 < a.shape[0] else None
            cells.append(Segment("▀", Style(color=top, bgcolor=bottom)))
        rows.append(list(Segment.simplify(cells)))
    return rows


def pictures():
    rng = np.random.default_rng(7)
    yield rng.integers(0, 256, (68, 120, 3), dtype=np.uint8)  # a photo: every cell its own colours
    yield rng.integers(0, 256, (9, 17, 3), dtype=np.uint8)  # odd height: the last row has no bottom
    yield (rng.integers(0, 3, (12, 40, 3)) * 120).astype(np.uint8)  # a few colours: runs to merge
    yield np.zeros((5, 1, 3), dtype=np.uint8)  # one column, odd
    yield np.full((1, 1, 3), 200, dtype=np.uint8)  # one pixel


@pytest.mark.parametrize("full_caches", [False, True])
def test_halfcell_lines_equal_richs_own_construction(monkeypatch, full_caches):
    if full_caches:  # past the cache's bound: each picture's own styles and colours, the cache unchanged
        monkeypatch.setattr(hc, "_CACHE_MAX", 10)
    for a in pictures():
        im = Image.fromarray(a, "RGB")
        want = reference_strips(im)
        hc._STYLES.clear()
        hc._COLORS.clear()
        for _ in range(2):  # caches cold, then warm
            strips = hc.halfcell_strips(im)
            assert [strip.cell_length for strip in strips] == [a.shape[1]] * len(want)
            got = [list(strip._segments) for strip in strips]
            assert got == want
            for row in got:  # equal is not enough: the same kinds of objects, rich's colour names
                for seg in row:
                    assert type(seg) is Segment and seg.control is None and type(seg.style) is Style
                    for c in (seg.style.color, seg.style.bgcolor):
                        if c is not None:
                            assert type(c) is Color and c.name == Color.from_triplet(c.triplet).name
        if full_caches:
            assert len(hc._STYLES) <= 10 and len(hc._COLORS) <= 10


def test_gc_is_given_back_as_it_was():
    was = gc.isenabled()
    try:
        gc.enable()
        im = Image.fromarray(np.random.default_rng(1).integers(0, 256, (20, 30, 3), dtype=np.uint8), "RGB")
        hc.halfcell_strips(im)
        assert gc.isenabled()
        gc.disable()  # the app's own pause while a screen is built: left to its owner
        hc.halfcell_strips(im)
        assert not gc.isenabled()
        gc.enable()
        inside, release = threading.Event(), threading.Event()

        def hold():
            with hc.gc_paused():
                inside.set()
                release.wait(5)

        t = threading.Thread(target=hold)
        t.start()
        inside.wait(5)
        with hc.gc_paused():  # overlapping pausers: the collector comes back when the last one is done
            assert not gc.isenabled()
        assert not gc.isenabled()
        release.set()
        t.join(5)
        assert gc.isenabled()
    finally:
        (gc.enable if was else gc.disable)()


async def _viewer(tmp_path):
    rng = np.random.default_rng(3)
    p = tmp_path / "photo.png"
    Image.fromarray(rng.integers(0, 256, (300, 400, 3), dtype=np.uint8), "RGB").save(p)
    img.PICTURES.clear()
    zm.SOURCES.clear()
    app = make_app(DEMO, runs=(), db=None, annotator="t", allow_outside_root=True, player=NullPlayer())
    return app, ViewerScreen([Media("image", p.name, path=p)])


@pytest.mark.parametrize("background", [None, "ansi_red"])
async def test_the_viewer_skips_the_truecolour_filter_and_shows_the_same_screen(tmp_path, monkeypatch, background):
    app, v = await _viewer(tmp_path)
    async with app.run_test(size=(100, 30)) as pilot:
        await app.push_screen(v)
        if background:
            v.canvas.styles.background = background  # an ANSI colour: blanks that the filter must convert
        await settle(pilot)
        assert v.canvas.picture is not None and v.canvas.picture.cells[0] > 0
        seen: list[list] = []
        real = PictureView.get_line_filters

        def spy(self):
            filters = real(self)
            if self is v.canvas:
                seen.append(filters)
            return filters

        monkeypatch.setattr(PictureView, "get_line_filters", spy)
        ours = app.export_screenshot()
        assert seen and any(isinstance(f, ANSIToTruecolor) for f in app.get_line_filters())
        skipped = not any(isinstance(f, ANSIToTruecolor) for f in seen[-1])
        assert skipped == (background is None)  # an ANSI background keeps the filter
        monkeypatch.setattr(PictureView, "get_line_filters", Widget.get_line_filters)  # Textual's own
        assert app.export_screenshot() == ours


async def test_a_labelled_or_loading_box_keeps_the_filter(tmp_path):
    app, v = await _viewer(tmp_path)
    async with app.run_test(size=(100, 30)) as pilot:
        await app.push_screen(v)
        await settle(pilot)
        c = v.canvas
        c._bg = c.rich_style  # as while painting
        try:
            assert not any(isinstance(f, ANSIToTruecolor) for f in c.get_line_filters())
            c._label = Text("a label", style="bold red")  # a thumbnail's name line: rich styles of its own
            assert any(isinstance(f, ANSIToTruecolor) for f in c.get_line_filters())
            c._label = None
            c._strips = ()  # "loading …" (dim italic) instead of a picture
            assert any(isinstance(f, ANSIToTruecolor) for f in c.get_line_filters())
        finally:
            c._bg = None
