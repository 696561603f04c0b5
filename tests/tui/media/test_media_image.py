"""tui.media.image and tui.media.source: renderer choice, decode + shrink, half-cell lines, cache,
placeholders for missing / corrupt / refused / remote images. Real PNG files, drawn with Pillow."""

from __future__ import annotations

import os
import subprocess
import sys
import time
from pathlib import Path

import pytest
from PIL import Image

from scorer.model import Media
from tests.paths import REPO
from tui.media import halfcell as hc
from tui.media import image as img
from tui.media.source import MediaError, local_path, remote_text

RED, BLUE = (200, 30, 40), (20, 40, 210)


def halves(path: Path, size=(200, 100)) -> Path:
    """Left half red, right half blue."""
    im = Image.new("RGB", size, RED)
    im.paste(BLUE, (size[0] // 2, 0, size[0], size[1]))
    path.parent.mkdir(parents=True, exist_ok=True)
    im.save(path, "PNG")
    return path


def colours(strip) -> list[tuple]:
    """(fg, bg) per cell of a half-cell strip."""
    out = []
    for seg in strip:
        fg = tuple(seg.style.color.get_truecolor())
        bg = tuple(seg.style.bgcolor.get_truecolor()) if seg.style.bgcolor else None
        out += [(fg, bg)] * len(seg.text)
    return out


@pytest.fixture(autouse=True)
def _halfcell():
    img.prepare("halfcell")
    img.PICTURES.clear()
    yield
    img.PICTURES.clear()


def test_under_pytest_the_renderer_is_halfcell():
    assert img.prepare() == img.HALFCELL
    assert img.graphics_widget_class() is None
    assert "half-cell" in img.status()


def test_fit_keeps_aspect_within_the_box():
    assert img.fit((200, 100), (40, 20)) == (40, 20)
    assert img.fit((200, 100), (40, 40)) == (40, 20)
    assert img.fit((100, 400), (40, 40)) == (10, 40)
    assert img.fit((10, 10), (40, 40), upscale=False) == (10, 10)
    assert img.fit((0, 0), (5, 5)) == (5, 5)  # degenerate sizes never divide by zero
    assert img.box_px((30, 10), img.HALFCELL) == (30, 20)


def test_halfcell_picture_has_the_right_cells_and_colours(tmp_path):
    p = halves(tmp_path / "h.png")
    pic = img.load_picture(p, (40, 10))
    # 200×100 px into a 40×20 px box (two pixels per cell vertically): 40×20 px → 40×10 cells
    assert pic.cells == (40, 10) and pic.source_size == (200, 100) and pic.mode == img.HALFCELL
    assert len(pic.strips) == 10 and all(s.cell_length == 40 for s in pic.strips)
    cells = colours(pic.strips[5])
    assert cells[0] == (RED, RED) and cells[-1] == (BLUE, BLUE)
    assert all(c[0] == "▀" for s in pic.strips for seg in s for c in seg.text)
    # runs of equal cells are merged: a two-colour row is a few segments, not 40
    assert len(list(pic.strips[5])) <= 8  # bicubic blends a few columns at the seam


def test_odd_pixel_rows_leave_the_last_background_empty():
    im = Image.new("RGB", (3, 3), RED)
    strips = hc.halfcell_strips(im)
    assert len(strips) == 2
    assert colours(strips[1]) == [(RED, None)] * 3


def test_transparency_is_composited_not_black(tmp_path):
    p = tmp_path / "t.png"
    Image.new("RGBA", (8, 8), (255, 0, 0, 0)).save(p)
    pic = img.load_picture(p, (8, 4))
    assert colours(pic.strips[0])[0] == (img.BACKGROUND, img.BACKGROUND)


def test_cache_hits_until_the_file_changes(tmp_path):
    p = halves(tmp_path / "h.png")
    a = img.load_picture(p, (40, 10))
    b = img.load_picture(p, (40, 10))
    assert a is b and img.PICTURES.hits == 1 and img.PICTURES.misses == 1
    img.load_picture(p, (20, 5))  # another size is another entry
    assert img.PICTURES.misses == 2
    Image.new("RGB", (200, 100), BLUE).save(p)
    st = p.stat()
    os.utime(p, ns=(st.st_atime_ns, st.st_mtime_ns + 1_000_000_000))
    c = img.load_picture(p, (40, 10))
    assert c is not a and colours(c.strips[0])[0] == (BLUE, BLUE)


def test_lru_evicts_the_oldest():
    lru = img.LRU(2)
    for k in "abc":
        lru.get_or_build(k, lambda k=k: k.upper())
    assert len(lru) == 2
    built = []
    lru.get_or_build("a", lambda: built.append("a") or "A")
    assert built == ["a"]  # "a" had been evicted


def test_big_image_is_shrunk_before_rendering(tmp_path):
    p = tmp_path / "big.jpg"
    Image.new("RGB", (1920, 1080), (90, 120, 150)).save(p, "JPEG")
    t0 = time.perf_counter()
    pic = img.load_picture(p, (120, 38))
    assert pic.cells[0] <= 120 and pic.cells[1] <= 38 and pic.source_size == (1920, 1080)
    assert time.perf_counter() - t0 < 2.0


def test_missing_file_is_a_reason_not_a_crash(tmp_path):
    with pytest.raises(MediaError, match="missing file: .*nope.png"):
        img.load_picture(tmp_path / "nope.png", (10, 5))


def test_corrupt_png_is_a_reason(tmp_path):
    bad = tmp_path / "bad.png"
    bad.write_bytes(b"\x89PNG\r\n\x1a\n" + b"garbage" * 50)
    with pytest.raises(MediaError, match="not a readable image|corrupt image"):
        img.load_picture(bad, (10, 5))


def test_truncated_png_is_a_reason(tmp_path):
    p = halves(tmp_path / "h.png", (300, 300))
    data = p.read_bytes()
    p.write_bytes(data[: len(data) // 2])
    with pytest.raises(MediaError, match="corrupt image|not a readable image"):
        img.load_picture(p, (10, 5))


def test_text_file_named_png_is_a_reason(tmp_path):
    p = tmp_path / "x.png"
    p.write_text("hello")
    with pytest.raises(MediaError, match="not a readable image"):
        img.load_picture(p, (10, 5))


def test_local_path_refuses_outside_root(tmp_path):
    root = tmp_path / "bench"
    root.mkdir()
    outside = halves(tmp_path / "secret.png")
    m = Media("image", "../secret.png", path=outside)
    with pytest.raises(MediaError, match="leaves the benchmark root"):
        local_path(m, root)
    assert local_path(m, root, allow_outside_root=True) == outside
    inside = halves(root / "image" / "a.png")
    assert local_path(Media("image", "image/a.png", path=inside), root) == inside
    # a symlink inside the root that points outside is outside
    link = root / "image" / "link.png"
    link.symlink_to(outside)
    with pytest.raises(MediaError, match="leaves the benchmark root"):
        local_path(Media("image", "image/link.png", path=link), root)


def test_unresolved_and_remote_media_explain_themselves():
    m = Media("image", "image/x.png", problem="media file not found: image/x.png")
    with pytest.raises(MediaError, match="media file not found"):
        local_path(m, None)
    r = Media("image", "https://example.org/a.jpg", url="https://example.org/a.jpg", text="[bold]a dog[/bold]")
    with pytest.raises(MediaError) as e:
        local_path(r, None)
    assert "https://example.org/a.jpg" in str(e.value) and "[bold]a dog[/bold]" in str(e.value)
    assert remote_text(r).startswith("remote image (not fetched)")


ZERO_PTY_PROBE = r"""
import fcntl, os, pty, struct, subprocess, sys, termios
master, slave = pty.openpty()
fcntl.ioctl(slave, termios.TIOCSWINSZ, struct.pack("HHHH", 0, 0, 0, 0))
code = "from tui.media import image; m = image.prepare('auto'); import sys; sys.stderr.write(m + '|' + image.status())"
p = subprocess.run([sys.executable, "-c", code], stdin=slave, stdout=slave, stderr=subprocess.PIPE,
                   timeout=30, env=dict(os.environ))
os.close(slave)
sys.stdout.write(p.stderr.decode())
"""


def test_a_pty_reporting_zero_by_zero_falls_back_to_halfcell():
    """textual-image divides by the reported cell count; prepare() must survive it (DESIGN §9)."""
    out = subprocess.run([sys.executable, "-c", ZERO_PTY_PROBE], capture_output=True, text=True, timeout=60,
                         cwd=REPO, env={**os.environ, "PYTHONPATH": str(REPO)})
    assert out.returncode == 0, out.stderr
    mode, _, status = out.stdout.strip().rpartition("\n")[2].partition("|")
    assert mode == "halfcell", out.stdout
    assert "ZeroDivisionError" in status, status  # the guard caught it, not some other fallback


async def test_a_graphics_protocol_gets_a_shrunk_image_in_textual_images_widget(tmp_path):
    """Sixel (forced, as $MEMSCOPE_IMAGES=sixel does): the picture is shrunk to the widget's pixel box
    and handed to textual-image's widget, sized in cells."""
    from textual.app import App

    from tui.widgets.media_image import MediaImage

    p = tmp_path / "big.png"
    Image.new("RGB", (1920, 1080), (90, 120, 150)).save(p)
    assert img.prepare("sixel") == img.SIXEL
    try:
        cls = img.graphics_widget_class()
        cw, ch = img._RENDERER.cell_px

        class One(App):
            CSS = "MediaImage { width: 40; height: 10; }"

            def compose(self):
                yield MediaImage(Media("image", "big.png", path=p), tmp_path)

        app = One()
        async with app.run_test(size=(60, 20)) as pilot:
            await app.workers.wait_for_complete()
            await pilot.pause()
            w = app.query_one(MediaImage)
            pic = w.picture
            assert pic is not None and pic.mode == img.SIXEL and pic.strips == ()
            assert pic.image.size[0] <= 40 * cw and pic.image.size[1] <= 10 * ch
            assert pic.image.size == img.fit((1920, 1080), (40 * cw, 10 * ch))
            g = w.query_one(cls)
            assert g.image is pic.image and g.size.width == pic.cells[0]
    finally:
        img.prepare("halfcell")


def test_lru_is_bounded_by_weight():
    lru = img.LRU(10, weigh=len)
    lru.get_or_build("a", lambda: "xxxx")
    lru.get_or_build("b", lambda: "xxxx")
    assert len(lru) == 2 and lru.weight == 8
    lru.get_or_build("c", lambda: "xxxx")  # 12 > 10: the oldest goes
    assert len(lru) == 2 and lru.weight == 8
    assert lru.get_or_build("a", lambda: "new") == "new"
    huge = lru.get_or_build("h", lambda: "x" * 50)  # heavier than the whole cache: kept alone
    assert huge == "x" * 50 and len(lru) == 1
