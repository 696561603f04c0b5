"""Heatmaps (the `plot` extra): LLM-Judge and EM per (Y, X) cell for representative methods of
each backbone (the caption-proof pairs present, else the four best by Avg. judge), each cell
annotated with its value and n; one viridis scale and one colour bar per figure. PNG (300 dpi),
PDF and SVG (scorer.report.figstyle). Uses matplotlib's object API (no pyplot state)."""

from __future__ import annotations

from collections.abc import Sequence
from pathlib import Path
from typing import Any

from scorer.errors import UserError
from scorer.report import figstyle
from scorer.model import X_LABELS, Y_LABELS
from scorer.names import CAPTION_PROOF_PAIRS
from scorer.report.fmt import file_stem
from scorer.sections.methods import METRIC_TITLES

MISSING = "PNG output needs matplotlib: pip install 'memscope[plot]' (or drop png from --format)"
MAX_METHODS = 4


def available() -> bool:
    try:
        import matplotlib  # noqa: F401
    except ImportError:
        return False
    return True


def representative(rows: list[dict], limit: int = MAX_METHODS) -> list[str]:
    """Methods to draw: the caption-proof pairs present (T then V), else the best by Avg. judge."""
    displays = {r["method"]: r.get("display") or r["method"] for r in rows}
    by_display = {d: m for m, d in displays.items()}
    out = []
    for t, v in CAPTION_PROOF_PAIRS:
        if t in by_display and v in by_display:
            out += [by_display[t], by_display[v]]
    if not out:
        macro = [r for r in rows if r["agg"] == "macro" and r["metric"] in ("judge", "em")]
        macro.sort(key=lambda r: (r["metric"] != "judge", -(r["value"] or 0), r["method"]))
        for r in macro:
            if r["method"] not in out:
                out.append(r["method"])
    return out[:limit]


def build_heatmaps(backbone: str, rows: list[dict]):
    """The heatmap Figure of one backbone (methods × metrics panels, one shared colour bar), or None."""
    methods = representative(rows)
    metrics = [m for m in ("judge", "em") if any(r["metric"] == m for r in rows)]
    if not methods or not metrics:
        return None
    cells = {(r["method"], r["metric"], r["y"], r["x"]): r for r in rows if r["agg"] == "cell"}
    ys = [y for y in Y_LABELS if any(k[2] == y for k in cells)]
    xs = [x for x in X_LABELS if any(k[3] == x for k in cells)]
    if not ys or not xs:
        return None
    # drawn at the 5.5 in block's width: a two-column figure* only enlarges it
    fig = figstyle.figure(figstyle.WIDE_IN, 0.55 + (0.36 * len(ys) + 0.42) * len(methods))
    axes = fig.subplots(len(methods), len(metrics), squeeze=False, sharex=True, sharey=True)
    display = {r["method"]: r.get("display") or r["method"] for r in rows}
    cmap = figstyle.heatmap_cmap()
    im = None
    for i, m in enumerate(methods):
        for j, metric in enumerate(metrics):
            ax = axes[i][j]
            grid = [[(cells.get((m, metric, y, x)) or {}).get("value") for x in xs] for y in ys]
            values = [[float("nan") if v is None else v for v in row] for row in grid]
            im = ax.imshow(values, vmin=0, vmax=1, cmap=cmap, aspect="auto")
            for yi, y in enumerate(ys):
                for xi, x in enumerate(xs):
                    r = cells.get((m, metric, y, x))
                    if r is None or r["value"] is None:
                        continue
                    colour = "white" if r["value"] < 0.6 else "black"
                    ax.text(xi, yi, f"{r['value']:.2f}\nn={r['n']}", ha="center", va="center", linespacing=1.0,
                            fontsize=figstyle.SMALL_PT, color=colour)
            ax.set_xticks(range(len(xs)), xs)
            ax.set_yticks(range(len(ys)), ys)
            ax.set_title(_plain(f"{display.get(m, m)} · {METRIC_TITLES[metric]}"))
    bar = fig.colorbar(im, ax=axes, shrink=min(1.0, 2.2 / len(methods) + 0.3), pad=0.02, label="score")
    bar.ax.set_gid(figstyle.COLORBAR_GID)
    fig.suptitle(_plain(backbone))
    return fig


def heatmaps(backbone: str, rows: list[dict], path: Path) -> list[Path]:
    with figstyle.style():
        fig = build_heatmaps(backbone, rows)
        return figstyle.save(fig, path) if fig is not None else []


def _plain(text: str) -> str:
    """Data text drawn literally: matplotlib treats `$…$` as mathtext, so escape dollars."""
    return str(text).replace("$", r"\$")


def write(sections: Sequence[Any], folder: Path) -> list[Path]:
    if not available():
        raise UserError(MISSING)
    matrix = next((s for s in sections if s.name == "matrix" and not s.reason), None)
    if matrix is None:
        return []
    folder.mkdir(parents=True, exist_ok=True)
    out = []
    for backbone in sorted({r["backbone"] for r in matrix.data}):
        rows = [r for r in matrix.data if r["backbone"] == backbone]
        out += heatmaps(backbone, rows, folder / f"heatmap_{file_stem(backbone)}.png")
    return out
