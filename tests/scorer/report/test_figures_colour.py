"""The demo report's figures are readable by a reader with deuteranopia, and usable in a paper:
PNG at 300 dpi with PDF and SVG beside it; the series colours (read from the SVG files, as drawn)
stay at least MIN_DISTANCE apart in CAM02-UCS after colorspacious's deuteranopia simulation
(Machado et al. 2009, severity 100); heatmaps use viridis or cividis only (checked on the PNG's
pixels), whose lightness still rises monotonically under the simulation, with one colour bar per
figure; no two line series share colour, dash, marker and fill at once."""

from __future__ import annotations

import itertools
import re
from pathlib import Path

import numpy as np
import pytest

from scorer.report import figstyle
from tests.paths import DEMO

pytest.importorskip("matplotlib")
pytestmark = pytest.mark.needs_demo

CVD = {"name": "sRGB1+CVD", "cvd_type": "deuteranomaly", "severity": 100}
MIN_DISTANCE = 12.0  # CAM02-UCS ΔE'; Okabe–Ito's closest pair under deuteranopia is 14.8, tab10's 5.2
_HEX = re.compile(r"(?:fill|stroke):\s*(#[0-9a-fA-F]{6})")


def ucs(rgb: np.ndarray, simulate: bool = True) -> np.ndarray:
    from colorspacious import cspace_convert

    rgb = np.clip(cspace_convert(rgb, CVD, "sRGB1"), 0, 1) if simulate else rgb
    return cspace_convert(rgb, "sRGB1", "CAM02-UCS")


def chromatic(hexes: set[str]) -> list[np.ndarray]:
    """The colours that are not grey, black or white (axes, text, grid and frames are achromatic)."""
    out = []
    for h in sorted(hexes):
        rgb = np.array([int(h[i:i + 2], 16) / 255 for i in (1, 3, 5)])
        if rgb.max() - rgb.min() > 0.08:
            out.append(rgb)
    return out


def min_distance(colours: list[np.ndarray], simulate: bool = True) -> float:
    pts = ucs(np.array(colours), simulate)
    return min(float(np.linalg.norm(a - b)) for a, b in itertools.combinations(pts, 2))


@pytest.fixture
def figures(demo_outputs) -> Path:
    return demo_outputs / "figures"


def test_vector_beside_png_at_300_dpi(figures):
    from PIL import Image

    pngs = sorted(figures.glob("*.png"))
    assert len(pngs) >= 4
    for png in pngs:
        assert png.with_suffix(".pdf").read_bytes().startswith(b"%PDF")
        assert b"<svg" in png.with_suffix(".svg").read_bytes()[:2000]
        with Image.open(png) as im:
            assert round(im.info["dpi"][0]) == figstyle.DPI, png.name
        pdf = png.with_suffix(".pdf").read_bytes()
        assert b"/Type3" not in pdf and b"/FontType 3" not in pdf, f"{png.name}: Type 3 fonts"


def test_series_colours_survive_deuteranopia(figures):
    checked = 0
    for svg in sorted(figures.glob("*.svg")):
        text = svg.read_text()
        bars = text.count(f'id="{figstyle.COLORBAR_GID}"')
        if bars:  # a heatmap: its colours are the colour map's (next test)
            assert bars == 1, f"{svg.name}: {bars} colour bars"
            continue
        colours = chromatic(set(h.lower() for h in _HEX.findall(text)))
        assert len(colours) >= 2, svg.name
        d = min_distance(colours)
        assert d >= MIN_DISTANCE, f"{svg.name}: two series {d:.1f} apart under deuteranopia"
        assert min_distance(colours, simulate=False) >= MIN_DISTANCE
        checked += 1
    assert checked >= 2


def test_heatmaps_use_one_uniform_colour_map(figures):
    import matplotlib
    from PIL import Image
    from scipy.spatial import cKDTree

    for name in ("viridis", "cividis"):  # the maps allowed: lightness monotonic under deuteranopia
        lut = matplotlib.colormaps[name](np.linspace(0, 1, 256))[:, :3]
        assert np.all(np.diff(ucs(lut)[:, 0]) > 0), name
    lut = matplotlib.colormaps[figstyle.HEATMAP_CMAP](np.linspace(0, 1, 256))[:, :3]
    heatmaps = sorted(figures.glob("heatmap_*.png"))
    assert heatmaps
    for png in heatmaps:
        with Image.open(png) as im:
            px = np.asarray(im.convert("RGB"), dtype=float).reshape(-1, 3)[::7] / 255
        coloured = px[px.max(axis=1) - px.min(axis=1) > 0.15]  # not text, axes, background or missing cells
        assert len(coloured) > 1000
        # every coloured pixel is (to anti-aliasing) a colour of the map: nearest LUT entry
        d, _ = cKDTree(lut).query(coloured)
        # all but the anti-aliased edges of the cell text: another map (cividis, plasma) scores ~0 here
        assert (d < 0.02).mean() > 0.9, (png.name, (d < 0.02).mean())
        assert f'id="{figstyle.COLORBAR_GID}"' in png.with_suffix(".svg").read_text()


def test_line_series_never_look_alike(tmp_path):
    """Every line of the Recall@K figure differs from every other in colour, dash, marker or fill,
    even for two identical curves (the demo has some)."""
    from scorer.report.evidence_figures import build_recall_curve
    from scorer.scoring import score

    report = score(DEMO, [DEMO / "runs"], sections=["evidence_curve"])
    with figstyle.style():
        fig = build_recall_curve(report.section("evidence_curve").data)
    for ax in fig.axes:
        lines = ax.get_lines()
        looks = {(ln.get_color(), str(ln.get_linestyle()), ln.get_marker(), str(ln.get_markerfacecolor()),
                  ln.get_linewidth()) for ln in lines}
        assert len(lines) >= 3 and len(looks) == len(lines)
        assert len({str(ln.get_markevery()) for ln in lines}) > 1  # markers at different K
