"""The look of every report figure, defined once: colour-blind-safe colours, markers and dashes that
tell series apart without colour, sizes that stay legible in a paper, and how a figure is saved.

- Lines and points: Okabe & Ito (2008), ordered so that the first colours are the farthest apart
  under deuteranopia (min. CAM02-UCS distance over all seven: 14.8); black is kept for axes and
  text, and yellow, faint on white, comes last.
- Heatmaps: viridis (lightness rises monotonically, under every common colour-vision deficiency).
- Sizes: a figure is drawn at the width it is printed at (COLUMN_IN for a column of a two-column
  paper, WIDE_IN for the 5.5 in block, which a two-column `figure*` only enlarges), text at 7 pt
  or more, so no text in a paper comes out below 6 pt.
- Files: PNG at 300 dpi, and PDF and SVG beside it (TrueType fonts in the PDF: no Type 3, which
  some publishers refuse), with no timestamps, so that a rerun writes the same bytes.
"""

from __future__ import annotations

from contextlib import contextmanager
from pathlib import Path

OKABE_ITO = {"blue": "#0072B2", "orange": "#E69F00", "green": "#009E73", "sky": "#56B4E9",
             "vermillion": "#D55E00", "purple": "#CC79A7", "yellow": "#F0E442"}
SERIES_COLOURS = tuple(OKABE_ITO.values())
MARKERS = ("o", "s", "^", "D", "v", "P", "X", "*")
LINESTYLES = ("-", "--", ":", "-.", (0, (5, 1, 1, 1, 1, 1)), (0, (1, 3)))
HEATMAP_CMAP = "viridis"
MISSING_CELL = "#d9d9d9"  # a heatmap cell with no items

COLUMN_IN = 3.3
WIDE_IN = 5.5
FONT_PT = 8.0
SMALL_PT = 7.0  # legends, cell annotations: the smallest text drawn
DPI = 300
COLORBAR_GID = "memscope-colorbar"  # marks the colour bar in the SVG (one per figure)

RC = {"font.size": FONT_PT, "axes.titlesize": FONT_PT, "axes.labelsize": FONT_PT, "xtick.labelsize": SMALL_PT,
      "ytick.labelsize": SMALL_PT, "legend.fontsize": SMALL_PT, "legend.title_fontsize": SMALL_PT,
      "figure.titlesize": FONT_PT + 1, "lines.linewidth": 1.3, "lines.markersize": 4.5,
      "pdf.fonttype": 42, "ps.fonttype": 42, "svg.fonttype": "path", "svg.hashsalt": "memscope",
      "axes.prop_cycle": None}


def colour(i: int) -> str:
    return SERIES_COLOURS[i % len(SERIES_COLOURS)]


def marker(i: int) -> str:
    return MARKERS[i % len(MARKERS)]


def linestyle(i: int):
    return LINESTYLES[i % len(LINESTYLES)]


def rc() -> dict:
    from cycler import cycler

    return {**RC, "axes.prop_cycle": cycler(color=list(SERIES_COLOURS))}


@contextmanager
def style():
    """memscope's style for everything drawn and saved inside (matplotlib reads it as artists are made)."""
    import matplotlib

    with matplotlib.rc_context(rc()):
        yield


def figure(width_in: float, height_in: float):
    """A Figure on the Agg canvas (no pyplot state), constrained layout. Draw inside `style()`."""
    from matplotlib.backends.backend_agg import FigureCanvasAgg
    from matplotlib.figure import Figure

    fig = Figure(figsize=(width_in, height_in), dpi=100, layout="constrained")
    FigureCanvasAgg(fig)
    return fig


def heatmap_cmap():
    import matplotlib

    return matplotlib.colormaps[HEATMAP_CMAP].with_extremes(bad=MISSING_CELL)


def save(fig, png: Path) -> list[Path]:
    """PNG (300 dpi), PDF and SVG of one figure, side by side; returns the three paths, PNG first."""
    import matplotlib

    paths = [png, png.with_suffix(".pdf"), png.with_suffix(".svg")]
    meta = {".png": {"Software": None}, ".pdf": {"Creator": None, "Producer": None, "CreationDate": None},
            ".svg": {"Date": None, "Creator": None}}
    with matplotlib.rc_context(rc()):
        fig.canvas.draw()  # the constrained layout, once: not again for each of the three files
        fig.set_layout_engine("none")
        for p in paths:
            fig.savefig(p, format=p.suffix[1:], dpi=DPI, metadata=meta[p.suffix])
    return paths
