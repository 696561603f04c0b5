"""Images for the terminal: which renderer, decode + shrink, pictures (their half-cell lines:
tui.media.halfcell), and an LRU cache.

Renderer (DESIGN §9): textual-image picks Sixel → Kitty → half-cell by querying the terminal, which
only works before `App.run()` and only on a real terminal; its Kitty renderer writes to the real
stdout even under `run_test()`, and Sixel renders blank in SVG snapshots. So the choice is ours:
`prepare()` (called by the app's launcher before `run()`) asks textual-image only when stdout is a
terminal and we are not under pytest; everything else — tests, pipes, a failed probe, a caller that
never prepared — gets our own half-cell renderer. Its lines (Strips) are built in the worker thread,
so painting costs the UI thread nothing.

Everything here is thread-safe and meant to run in a Textual thread worker; nothing here touches a
widget. Errors become MediaError with a one-line reason for the placeholder.
"""

from __future__ import annotations

import logging
import math
import os
import sys
import threading
from collections import OrderedDict
from dataclasses import dataclass
from pathlib import Path
from typing import Any, Callable, Hashable

from PIL import Image, UnidentifiedImageError
from textual.strip import Strip

from tui.media.halfcell import halfcell_strips
from tui.media.source import MediaError, media_key

HALFCELL, SIXEL, KITTY = "halfcell", "sixel", "kitty"
BACKGROUND = (24, 24, 24)  # what transparent pixels are composited onto (close to the dark theme)
ENV = "MEMSCOPE_IMAGES"  # "halfcell" forces the fallback, "auto" asks the terminal even when unsure


@dataclass
class _Renderer:
    mode: str = HALFCELL
    cell_px: tuple[int, int] = (10, 20)  # one cell in pixels (graphics protocols only)
    widget_class: Any = None  # textual-image widget class for Sixel/Kitty
    reason: str = "not prepared: half-cell"


_RENDERER = _Renderer()


def _may_probe() -> bool:
    out = sys.__stdout__
    return bool(out) and out.isatty() and "pytest" not in sys.modules


def prepare(force: str | None = None) -> str:
    """Choose the image renderer once, before `App.run()`. Returns the mode chosen.

    `force` (or $MEMSCOPE_IMAGES) = "halfcell" | "auto" | "sixel" | "kitty"; the last two skip the
    protocol query, for terminals that support a protocol but do not answer it (some multiplexers).
    Never raises: a terminal that cannot be probed (a pty reporting 0×0 makes textual-image divide
    by zero) falls back to half-cell.
    """
    global _RENDERER
    want = (force or os.environ.get(ENV, "")).strip().lower()
    if want in (SIXEL, KITTY):
        return _force_protocol(want)
    if want == HALFCELL or (want != "auto" and not _may_probe()):
        _RENDERER = _Renderer(reason="half-cell (not a terminal, or under test)" if want != HALFCELL
                              else f"half-cell ({ENV}=halfcell)")
        return _RENDERER.mode
    # textual-image logs a warning to stderr when the terminal ignores its queries; our status says it.
    logging.getLogger("textual_image").setLevel(logging.ERROR)
    try:
        import textual_image.widget as tiw  # probes the terminal at import
        from textual_image._terminal import get_cell_size
        from textual_image.renderable import Image as Auto
        from textual_image.renderable.sixel import Image as SixelR
        from textual_image.renderable.tgp import Image as TGPR

        cw, ch = get_cell_size()
    except Exception as exc:  # ZeroDivisionError on a 0×0 pty, TerminalError, OSError, …
        _RENDERER = _Renderer(reason=f"half-cell (terminal probe failed: {type(exc).__name__})")
        return _RENDERER.mode
    if Auto is SixelR:
        _RENDERER = _Renderer(SIXEL, (cw, ch), tiw.Image, f"sixel (cell {cw}×{ch} px)")
    elif Auto is TGPR:
        _RENDERER = _Renderer(KITTY, (cw, ch), tiw.TGPImage, f"kitty (cell {cw}×{ch} px)")
    else:
        _RENDERER = _Renderer(reason="half-cell (terminal has no graphics protocol)")
    return _RENDERER.mode


def _force_protocol(want: str) -> str:
    global _RENDERER
    logging.getLogger("textual_image").setLevel(logging.ERROR)
    try:
        import textual_image.widget as tiw
        from textual_image._terminal import get_cell_size

        cw, ch = get_cell_size()
    except Exception as exc:
        _RENDERER = _Renderer(reason=f"half-cell ({want} asked for, terminal probe failed: {type(exc).__name__})")
        return _RENDERER.mode
    cls = tiw.SixelImage if want == SIXEL else tiw.TGPImage
    _RENDERER = _Renderer(want, (cw, ch), cls, f"{want} ({ENV}={want}, cell {cw}×{ch} px)")
    return _RENDERER.mode


def mode() -> str:
    return _RENDERER.mode


def status() -> str:
    """One line for the help screen: which renderer and why."""
    return f"images: {_RENDERER.reason}"


def cell_px() -> tuple[int, int]:
    """One terminal cell in pixels (meaningful with a graphics protocol only)."""
    return _RENDERER.cell_px


def graphics_widget_class() -> Any:
    """The textual-image widget class for Sixel/Kitty, or None in half-cell mode."""
    return _RENDERER.widget_class


# ---------------------------------------------------------------- geometry


def fit(src: tuple[int, int], box: tuple[int, int], upscale: bool = True) -> tuple[int, int]:
    """`src` scaled to fit in `box`, aspect kept, at least 1×1."""
    sw, sh = max(1, src[0]), max(1, src[1])
    s = min(box[0] / sw, box[1] / sh)
    if not upscale:
        s = min(s, 1.0)
    return max(1, round(sw * s)), max(1, round(sh * s))


def box_px(cells: tuple[int, int], mode_: str | None = None) -> tuple[int, int]:
    """The pixel box a widget of `cells` (width, height) offers to an image."""
    m = mode_ or _RENDERER.mode
    if m == HALFCELL:
        return cells[0], cells[1] * 2  # two pixels per cell, stacked: ▀ fg over bg
    cw, ch = _RENDERER.cell_px
    return cells[0] * cw, cells[1] * ch


# ---------------------------------------------------------------- decode


def decode(path: Path, box: tuple[int, int] | None) -> tuple[Image.Image, tuple[int, int]]:
    """Read `path` shrunk to fit `box` pixels (None: at full resolution), as RGB, and its original
    size. MediaError with the reason otherwise."""
    try:
        with Image.open(path) as im:
            src = im.size
            if box is None:
                return flatten(im), src
            # JPEG can decode straight at 1/2, 1/4, 1/8 scale: most of the win for big photos.
            im.draft("RGB", (box[0] * 2, box[1] * 2))
            im.load()
            return to_fit(im, box), src
    except FileNotFoundError:
        raise MediaError(f"missing file: {path}") from None
    except IsADirectoryError:
        raise MediaError(f"not an image (a folder): {path}") from None
    except UnidentifiedImageError:
        raise MediaError(f"not a readable image (corrupt or unknown format): {path}") from None
    except Image.DecompressionBombError:
        raise MediaError(f"image too large to decode safely: {path}") from None
    except (OSError, SyntaxError, ValueError, EOFError) as exc:  # truncated / broken chunks
        raise MediaError(f"corrupt image: {path} ({exc})") from None


def decode_full(path: Path) -> tuple[Image.Image, tuple[int, int]]:
    """`path` at full resolution, RGB (the media viewer magnifies from it)."""
    return decode(path, None)


def flatten(im: Image.Image) -> Image.Image:
    """`im` as RGB, transparency composited onto BACKGROUND (a new image: `im` may be closed)."""
    if im.mode in ("RGBA", "LA", "PA") or (im.mode == "P" and "transparency" in im.info):
        rgba = im.convert("RGBA")
        bg = Image.new("RGBA", rgba.size, BACKGROUND + (255,))
        return Image.alpha_composite(bg, rgba).convert("RGB")
    rgb = im.convert("RGB")
    return rgb.copy() if rgb is im else rgb


def to_fit(im: Image.Image, box: tuple[int, int]) -> Image.Image:
    """An RGB copy of `im` fitted to `box`; transparency composited onto BACKGROUND."""
    if im.mode in ("RGBA", "LA", "PA") or (im.mode == "P" and "transparency" in im.info):
        rgba = im.convert("RGBA")
        bg = Image.new("RGBA", rgba.size, BACKGROUND + (255,))
        im = Image.alpha_composite(bg, rgba)
    rgb = im.convert("RGB")
    w, h = fit(rgb.size, box)
    if (w, h) == rgb.size:
        return rgb.copy() if rgb is im else rgb
    if w >= rgb.size[0]:  # upscaling tiny images: keep pixels crisp
        return rgb.resize((w, h), Image.Resampling.NEAREST)
    return rgb.resize((w, h), Image.Resampling.BICUBIC, reducing_gap=2.0)


# ---------------------------------------------------------------- pictures + cache


@dataclass(frozen=True)
class Picture:
    """An image ready for a widget: `strips` in half-cell mode, `image` (shrunk) for Sixel/Kitty."""

    cells: tuple[int, int]  # width, height in terminal cells
    source_size: tuple[int, int]
    mode: str
    strips: tuple[Strip, ...] = ()
    image: Image.Image | None = None


def picture(img: Image.Image, cells: tuple[int, int], source_size: tuple[int, int] | None = None,
            mode_: str | None = None) -> Picture:
    """Fit an already-decoded image into `cells` and prepare it for the current renderer."""
    m = mode_ or _RENDERER.mode
    src = source_size or img.size
    fitted = to_fit(img, box_px(cells, m))
    w, h = fitted.size
    if m == HALFCELL:
        return Picture((w, math.ceil(h / 2)), src, m, tuple(halfcell_strips(fitted)))
    cw, ch = _RENDERER.cell_px
    return Picture((math.ceil(w / cw), math.ceil(h / ch)), src, m, image=fitted)


class LRU:
    """A small thread-safe LRU bounded by total weight (default: one per entry).

    Values are built outside the lock; a second thread asking for a key being built waits for that
    build instead of repeating it (the viewer starts decoding a file before its picture is asked
    for). A build that fails is not cached: the waiter then builds, and fails, itself.
    """

    def __init__(self, capacity: int, weigh: Callable[[Any], int] = lambda v: 1) -> None:
        self.capacity = capacity
        self.weigh = weigh
        self._d: OrderedDict[Hashable, tuple[Any, int]] = OrderedDict()
        self._lock = threading.Lock()
        self._building: dict[Hashable, threading.Event] = {}
        self.weight = 0
        self.hits = self.misses = 0

    def get_or_build(self, key: Hashable, build: Callable[[], Any]) -> Any:
        while True:
            with self._lock:
                if key in self._d:
                    self._d.move_to_end(key)
                    self.hits += 1
                    return self._d[key][0]
                pending = self._building.get(key)
                if pending is None:
                    self.misses += 1
                    done = self._building[key] = threading.Event()
                    break
            pending.wait()  # another thread builds it: its value (or, if it failed, our own try)
        try:
            value = build()
            w = max(1, int(self.weigh(value)))
            with self._lock:
                old = self._d.pop(key, None)
                if old is not None:
                    self.weight -= old[1]
                self._d[key] = (value, w)
                self.weight += w
                while self.weight > self.capacity and len(self._d) > 1:
                    _, (_, ow) = self._d.popitem(last=False)
                    self.weight -= ow
        finally:
            with self._lock:
                self._building.pop(key, None)
            done.set()
        return value

    def building(self, key: Hashable) -> bool:
        """Whether `key` is being built right now (by another thread)."""
        with self._lock:
            return key in self._building

    def peek(self, key: Hashable) -> Any:
        """The value cached under `key`, or None (no build, no hit counted)."""
        with self._lock:
            entry = self._d.get(key)
            return None if entry is None else entry[0]

    def clear(self) -> None:
        with self._lock:
            self._d.clear()
            self.weight = 0
            self.hits = self.misses = 0

    def __len__(self) -> int:
        return len(self._d)


# Weighed in cells (an upper bound on a half-cell picture's segments): 200k cells is ~40 full
# 120×40 pictures or ~2000 16×6 thumbnails, tens of MB at most.
PICTURES = LRU(200_000, weigh=lambda p: p.cells[0] * p.cells[1])


def load_picture(path: Path, cells: tuple[int, int]) -> Picture:
    """Decode + shrink + render `path` for a widget of `cells`, through the cache keyed by
    (path, mtime, file size, cells, renderer). MediaError with the reason when it cannot be shown."""
    fkey = media_key(path)
    m = _RENDERER.mode

    def build() -> Picture:
        img, src = decode(path, box_px(cells, m))
        return picture(img, cells, src, m)

    try:
        return PICTURES.get_or_build((fkey, cells, m), build)
    except MediaError:
        raise
    except Exception as exc:  # never let one bad file take the screen down
        raise MediaError(f"cannot show {path}: {type(exc).__name__}: {exc}") from None
