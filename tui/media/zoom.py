"""The media viewer's geometry and magnification: zoom levels, the visible region of the source, pan
limits, and the picture of that region resampled from the full-resolution source.

Zoom is in display pixels per source pixel: in half-cell mode a display pixel is one column wide and
half a row high (about square), with a graphics protocol it is one screen pixel. "fit" is the scale
that shows the whole source in the box (up or down). Magnification resamples from the decoded source
(nearest-neighbour from 2× on, so the edges of small printed text stay sharp), never from a picture
already shrunk for a thumbnail.

No Textual here but the Strip type the half-cell renderer builds; thread-safe, for thread workers.
"""

from __future__ import annotations

import math
from dataclasses import dataclass
from pathlib import Path
from typing import Hashable

from PIL import Image

from tui.media import image as img
from tui.media.halfcell import halfcell_strips
from tui.media.source import MediaError, media_key

FIT = "fit"
LEVELS = (1, 2, 4, 8)  # the fixed magnifications, in display pixels per source pixel
NEAREST_FROM = 2  # from this zoom up, nearest-neighbour: sharp text edges
PAN_STEP = 0.25  # an arrow key moves the view by this share of the visible region


def fit_scale(src: tuple[int, int], box: tuple[int, int]) -> float:
    """The scale that shows all of `src` (width, height px) inside `box` (display px)."""
    return min(box[0] / max(1, src[0]), box[1] / max(1, src[1]))


def scale_of(zoom: str | int, src: tuple[int, int], box: tuple[int, int]) -> float:
    return fit_scale(src, box) if zoom == FIT else float(zoom)


def step_zoom(zoom: str | int, delta: int, src: tuple[int, int], box: tuple[int, int]) -> str | int:
    """The next level up (`delta` > 0) or down from `zoom`, over fit and 1×, 2×, 4×, 8× in scale
    order; the same level at either end."""
    f = fit_scale(src, box)
    levels: list[str | int] = sorted([FIT, *[z for z in LEVELS if not math.isclose(z, f)]],
                                     key=lambda z: scale_of(z, src, box))
    if zoom not in levels:  # a fixed level equal to fit: it stands for fit
        zoom = FIT
    k = levels.index(zoom) + (1 if delta > 0 else -1)
    return levels[max(0, min(k, len(levels) - 1))]


@dataclass(frozen=True)
class View:
    """What the viewer shows: `zoom` and the top-left source pixel of the visible region."""

    zoom: str | int = FIT
    x: int = 0
    y: int = 0


@dataclass(frozen=True)
class Region:
    """The visible part of the source (pixels, right/bottom exclusive) and the display size it gets."""

    x0: int
    y0: int
    x1: int
    y1: int
    out: tuple[int, int]  # display pixels the region is resampled to
    scale: float

    @property
    def size(self) -> tuple[int, int]:
        return self.x1 - self.x0, self.y1 - self.y0


def visible(view: View, src: tuple[int, int], box: tuple[int, int]) -> tuple[int, int]:
    """How many source pixels (width, height) fit in the box at the view's zoom (at most the source)."""
    s = scale_of(view.zoom, src, box)
    return (max(1, min(src[0], math.floor(box[0] / s + 1e-9))),
            max(1, min(src[1], math.floor(box[1] / s + 1e-9))))


def clamp(view: View, src: tuple[int, int], box: tuple[int, int]) -> View:
    """`view` with its origin kept inside the pan limits: the region never leaves the source."""
    vw, vh = visible(view, src, box)
    x = max(0, min(view.x, src[0] - vw))
    y = max(0, min(view.y, src[1] - vh))
    return view if (x, y) == (view.x, view.y) else View(view.zoom, x, y)


def pan(view: View, dx: int, dy: int, src: tuple[int, int], box: tuple[int, int]) -> View:
    """Move by `dx`/`dy` steps of PAN_STEP of the visible region (at least one source pixel), clamped."""
    vw, vh = visible(view, src, box)
    sx, sy = max(1, round(vw * PAN_STEP)), max(1, round(vh * PAN_STEP))
    return clamp(View(view.zoom, view.x + dx * sx, view.y + dy * sy), src, box)


def can_pan(view: View, src: tuple[int, int], box: tuple[int, int]) -> tuple[bool, bool]:
    """Whether there is anything to pan to horizontally and vertically."""
    vw, vh = visible(view, src, box)
    return vw < src[0], vh < src[1]


def rezoom(view: View, zoom: str | int, src: tuple[int, int], box: tuple[int, int]) -> View:
    """`view` at another zoom, keeping the centre of the visible region where it was."""
    vw, vh = visible(view, src, box)
    cx, cy = view.x + vw / 2, view.y + vh / 2
    nw, nh = visible(View(zoom), src, box)
    return clamp(View(zoom, round(cx - nw / 2), round(cy - nh / 2)), src, box)


def region(view: View, src: tuple[int, int], box: tuple[int, int]) -> Region:
    view = clamp(view, src, box)
    vw, vh = visible(view, src, box)
    s = scale_of(view.zoom, src, box)
    out = (max(1, min(box[0], round(vw * s))), max(1, min(box[1], round(vh * s))))
    return Region(view.x, view.y, view.x + vw, view.y + vh, out, s)


def resample(source: Image.Image, reg: Region) -> Image.Image:
    """The region of `source` (RGB) resampled to its display size."""
    whole = (reg.x0, reg.y0, reg.x1, reg.y1) == (0, 0, *source.size)
    crop = source if whole else source.crop((reg.x0, reg.y0, reg.x1, reg.y1))  # (no copy of all of it)
    if crop.size == reg.out:
        return crop
    if reg.scale >= NEAREST_FROM or (reg.out[0] >= crop.size[0] and reg.scale >= 1):
        return crop.resize(reg.out, Image.Resampling.NEAREST)
    return crop.resize(reg.out, Image.Resampling.BICUBIC, reducing_gap=2.0)


def zoomed_picture(source: Image.Image, key: Hashable, view: View, cells: tuple[int, int]) -> img.Picture:
    """The picture of `view` of `source` for a box of `cells`, through the app's picture cache."""
    m = img.mode()
    box = img.box_px(cells, m)
    reg = region(view, source.size, box)

    def build() -> img.Picture:
        return exact_picture(resample(source, reg), source.size, m)

    return img.PICTURES.get_or_build(("zoom", key, (reg.x0, reg.y0, reg.x1, reg.y1), reg.out, cells, m), build)


def exact_picture(im: Image.Image, source_size: tuple[int, int], m: str) -> img.Picture:
    """`im` drawn pixel for pixel (already at display size: no refitting)."""
    w, h = im.size
    if m == img.HALFCELL:
        return img.Picture((w, math.ceil(h / 2)), source_size, m, tuple(halfcell_strips(im)))
    cw, ch = img.cell_px()
    return img.Picture((math.ceil(w / cw), math.ceil(h / ch)), source_size, m, image=im)


# ---------------------------------------------------------------- full-resolution sources

# Weighed in pixels: ~48 MP, 23 1920×1080 frames or stills (3 bytes a pixel: ~144 MB at most); thumbnails
# of non-JPEG images leave their full decode here too (thumbnail_picture), for the viewer.
SOURCES = img.LRU(48_000_000, weigh=lambda im: im.size[0] * im.size[1])


def fit_picture(path: Path, cells: tuple[int, int]) -> img.Picture:
    """The whole of `path` fitted to `cells`. A JPEG not yet decoded at full resolution is decoded at
    1/2–1/8 scale for it, so the viewer's first picture does not wait for the full decode that
    magnification needs (the viewer fetches that next, in the background). Any other format cannot be
    decoded smaller: it is decoded once, at full resolution, into the source cache (or a decode under
    way, a thumbnail's, is waited for), and fitted from there, as zoom steps later magnify from it."""
    fkey = media_key(path)
    skey = ("src",) + fkey
    if SOURCES.peek(skey) is None and not SOURCES.building(skey) and reduces(path):
        m = img.mode()

        def build() -> img.Picture:
            fitted, size = img.decode(path, img.box_px(cells, m))
            return exact_picture(fitted, size, m)

        try:
            return img.PICTURES.get_or_build(("fit", fkey, cells, m), build)
        except MediaError:
            raise
        except Exception as exc:
            raise MediaError(f"cannot show {path}: {type(exc).__name__}: {exc}") from None
    key, source = load_source(path)
    return zoomed_picture(source, key, View(), cells)


def thumbnail_picture(path: Path, cells: tuple[int, int]) -> img.Picture:
    """`path` fitted to `cells` for a thumbnail (MediaImage), pixel for pixel as `img.load_picture`
    draws it. A JPEG takes its reduced decode there, as before. Any other format is decoded at full
    resolution anyway: that decode goes into the source cache (the one `load_source` fills), so `z`
    on the thumbnail opens the viewer without decoding the file a second time. SOURCES stays bounded
    by its weight (48 MP, ~144 MB of RGB at most, the least recently used dropped first)."""
    m = img.mode()
    fkey = media_key(path)
    pkey = (fkey, cells, m)  # load_picture's key: one cache entry whichever path made it
    if img.PICTURES.peek(pkey) is not None or reduces(path):
        return img.load_picture(path, cells)

    def build() -> img.Picture:
        _, source = load_source(path)
        return img.picture(source, cells, source.size, m)

    try:
        return img.PICTURES.get_or_build(pkey, build)
    except MediaError:
        raise
    except Exception as exc:  # never let one bad file take the screen down
        raise MediaError(f"cannot show {path}: {type(exc).__name__}: {exc}") from None


def reduces(path: Path) -> bool:
    """Whether `path` can be decoded at a reduced scale (JPEG's draft mode), from its header only.
    False for anything that cannot be opened: the full decode then says why."""
    try:
        with Image.open(path) as im:
            return type(im).draft is not Image.Image.draft  # only JPEG (and MPO) implement it
    except Exception:
        return False


def load_source(path: Path) -> tuple[Hashable, Image.Image]:
    """The file at `path` decoded at full resolution (RGB, transparency on the app's background),
    through the source cache; its cache key. MediaError with the reason when it cannot be read."""
    fkey = media_key(path)

    def build() -> Image.Image:
        full, _ = img.decode_full(path)
        return full

    try:
        return ("src",) + fkey, SOURCES.get_or_build(("src",) + fkey, build)
    except MediaError:
        raise
    except Exception as exc:  # never let one bad file take the screen down
        raise MediaError(f"cannot show {path}: {type(exc).__name__}: {exc}") from None
