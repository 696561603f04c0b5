"""Half-cell lines: an image as one Strip per pair of pixel rows ('▀', the top pixel as colour and
the bottom one as background), the renderer for any terminal without a graphics protocol (DESIGN §9;
tui.media.image chooses). Built in a worker thread for the whole picture at once, with numpy; the
colours and styles cached, bounded. Thread-safe; nothing here touches a widget.
"""

from __future__ import annotations

import gc
import threading
from contextlib import contextmanager
from itertools import repeat

import numpy as np
from PIL import Image
from rich.color import Color, ColorType
from rich.color_triplet import ColorTriplet
from rich.segment import Segment
from rich.style import Style
from textual.strip import Strip

_STYLES: dict[int, Style] = {}  # top << 25 | bottom, each packed 0xRRGGBB (bottom 0x1FFFFFF: none) → style
_COLORS: dict[int, Color] = {}
_CACHE_MAX = 65536  # each: bounded, photos have many colours
_HEX = np.frombuffer(b"0123456789abcdef", dtype=np.uint8)
_new = tuple.__new__  # Color and ColorTriplet are NamedTuples: their __new__ without the Python wrapper


def _make_colors(rgbs: list[int]) -> list[Color]:
    """Truecolor Colors of packed 0xRRGGBB values, equal to `Color.from_rgb`'s (name "#rrggbb",
    TRUECOLOR, the triplet), built for a whole picture at once: the names in one numpy pass, the
    tuples without NamedTuple's Python-level constructor (a fitted photo has ~10k colours)."""
    v = np.asarray(rgbs, dtype=np.int64)
    chars = np.empty((len(rgbs), 7), dtype=np.uint8)
    chars[:, 0] = ord("#")
    for k in range(6):
        chars[:, 1 + k] = _HEX[(v >> (20 - 4 * k)) & 15]
    names = chars.view("S7").ravel().astype("U7").tolist()
    triplets = map(_new, repeat(ColorTriplet), np.stack([v >> 16, (v >> 8) & 255, v & 255], axis=1).tolist())
    return list(map(_new, repeat(Color), zip(names, repeat(ColorType.TRUECOLOR), repeat(None), triplets)))


_GC_LOCK = threading.Lock()
_gc_pausers = 0  # threads inside gc_paused() now
_gc_ours = False  # whether the first of them disabled the collector (and the last must enable it)


@contextmanager
def gc_paused():
    """No cyclic garbage collection while a picture's objects are made: a fitted photo is ~25k small
    tracked objects (colours, styles, segments), which trigger dozens of young collections, each
    walking all the survivors again (up to ~30 ms measured for one 120×37 picture); made with the collector off, they
    cost one young collection when it is back on. The collector is process-wide: the first of
    overlapping pausers turns it off only if it was on, the last turns it back on, and one already off
    (the app's own pause while a screen is built) is left to its owner."""
    global _gc_pausers, _gc_ours
    with _GC_LOCK:
        _gc_pausers += 1
        if _gc_pausers == 1:
            _gc_ours = gc.isenabled()
            if _gc_ours:
                gc.disable()
    try:
        yield
    finally:
        with _GC_LOCK:
            _gc_pausers -= 1
            if _gc_pausers == 0 and _gc_ours:
                _gc_ours = False
                gc.enable()


def halfcell_strips(img: Image.Image) -> list[Strip]:
    """`img` as half-cell lines (see _halfcell_strips), made with the garbage collector paused."""
    with gc_paused():
        return _halfcell_strips(img)


def _halfcell_strips(img: Image.Image) -> list[Strip]:
    """One Strip per pair of pixel rows: '▀' with the top pixel as colour and the bottom as background.

    Runs of identical cells are merged into one segment, which keeps flat areas cheap to paint. The
    whole picture is worked out with numpy first: each cell packed into one integer (top colour,
    bottom colour or none), where runs start and how long they are; the styles the cache lacks (and
    the colours they need) are then made in one batch, and the segments in one C-level pass (map,
    zip: no loop of ours per cell). A 1920×1080 photo fitted to 120×37 cells, every cell its own colours,
    is ~4,000 segments and ~8,000 colours.
    """
    a = np.asarray(img.convert("RGB"), dtype=np.uint8)
    h, w = a.shape[0], a.shape[1]
    packed = (a[..., 0].astype(np.int64) << 16) | (a[..., 1].astype(np.int64) << 8) | a[..., 2]
    if h % 2:  # the last line has a top pixel only: no background
        packed = np.concatenate([packed, np.full((1, w), _NONE, dtype=np.int64)])
    pair = (packed[0::2] << 25) | packed[1::2]  # one number per cell: (top, bottom) → style key
    change = np.ones(pair.shape, dtype=bool)
    change[:, 1:] = pair[:, 1:] != pair[:, :-1]  # a run starts where a cell differs from its left
    rows, cols = np.nonzero(change)  # row by row, left to right
    ends = np.empty_like(cols)
    ends[:-1] = cols[1:]
    ends[np.flatnonzero(rows[1:] != rows[:-1])] = w  # a row's last run reaches its right edge
    ends[-1] = w
    keys = pair[rows, cols].tolist()
    styles = _styles_for(np.unique(pair[rows, cols]))
    bars = _bars(w)
    segments = list(map(_new, repeat(Segment), zip(map(bars.__getitem__, (ends - cols).tolist()),
                                                   map(styles.__getitem__, keys), repeat(None))))
    bounds = np.concatenate([[0], np.cumsum(np.bincount(rows, minlength=pair.shape[0]))]).tolist()
    return [Strip(segments[i:j], w) for i, j in zip(bounds, bounds[1:])]


_NONE = 0x1FFFFFF  # no bottom pixel: not a 24-bit colour
_BARS: list[str] = [""]


def _bars(n: int) -> list[str]:
    """'▀' × 0 … n, shared (a run of k cells is one segment of k of them)."""
    while len(_BARS) <= n:
        _BARS.append("▀" * len(_BARS))
    return _BARS


def _styles_for(keys: np.ndarray) -> dict[int, Style]:
    """The style of each packed (top << 25 | bottom) key, `Style.from_color(top, bottom or None)`:
    the cache's, and those it lacks made here (with the colours they need) and added to it while it
    has room (else this picture's own: the cache stays bounded)."""
    styles = _STYLES
    missing = [k for k in keys.tolist() if k not in styles]
    if not missing:
        return styles
    m = np.asarray(missing, dtype=np.int64)
    tops, bottoms = m >> 25, m & _NONE
    colors = _COLORS
    need = [c for c in np.unique(np.concatenate([tops, bottoms[bottoms != _NONE]])).tolist() if c not in colors]
    if need:
        made = _make_colors(need)
        if len(colors) + len(made) <= _CACHE_MAX:
            colors.update(zip(need, made))
        else:
            colors = {**colors, **dict(zip(need, made))}
    get = colors.get  # _NONE → None: no background
    made_styles = list(map(Style.from_color, map(get, tops.tolist()), map(get, bottoms.tolist())))
    if len(styles) + len(made_styles) <= _CACHE_MAX:
        styles.update(zip(missing, made_styles))
        return styles
    return {**styles, **dict(zip(missing, made_styles))}


def warm() -> None:
    """Build the lines of a tiny picture once (tui.preload, after the first screen): numpy's and
    rich's first-use costs on this path, 10–20 ms measured, are then not paid by the first picture a
    user opens. It leaves its few colours and styles in the caches (removing them could race with a
    picture being built in another worker)."""
    halfcell_strips(Image.frombytes("RGB", (4, 3), bytes(range(36))))
