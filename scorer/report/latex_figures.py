"""The report's figures in LaTeX: figures/<name>.tex beside each PDF (or PNG), a float at the line's
width with its caption and label, never taller than 80% of the page (scorer.report.latex writes the
tables and report.tex)."""

from __future__ import annotations

import re
from collections.abc import Sequence
from pathlib import Path

from scorer.report.fmt import file_stem
from scorer.report.latex_text import esc

FIGURE_CAPTIONS = {
    "heatmap": ("LLM-Judge and EM per (Y, X) cell on \\texttt{<name>} for representative methods; each cell "
                "shows its value and $n$ (items). One colour scale (viridis, 0--1) for every panel; grey = no items."),
    "recall_at_k": ("Any-Clue, Coverage and Full-Clue Recall@K for K = 1--50, one line per run group "
                    "(method, backbone, mode; $n$ = items); lines differ in colour (Okabe--Ito), marker and dash."),
    "abstention_tradeoff": ("Answer score on answerable items against the correct-abstention rate on unanswerable "
                            "ones, one panel per mode; colour = method, marker = backbone; marker area grows with "
                            "the false-abstention rate."),
    "mosaic_ladder": "MOSAIC ladder: score per condition, with the paired drops between rungs (95\\% CI).",
    "mosaic_sweep": "MOSAIC budget sweep: score, chain delivered and required-fact coverage against the delivery budget.",
}
_MEDIABOX = re.compile(rb"/MediaBox\s*\[\s*([-\d.]+)\s+([-\d.]+)\s+([-\d.]+)\s+([-\d.]+)\s*\]")


def pdf_size_in(path: Path) -> tuple[float, float] | None:
    """(width, height) in inches of a PDF's first MediaBox, or None."""
    try:
        m = _MEDIABOX.search(path.read_bytes()[:200_000])
    except OSError:
        return None
    if m is None:
        return None
    x0, y0, x1, y1 = (float(v) for v in m.groups())
    return (x1 - x0) / 72, (y1 - y0) / 72


def figure_caption(stem: str) -> str:
    for key, text in FIGURE_CAPTIONS.items():
        if stem == key or stem.startswith(key + "_"):
            name = stem[len(key) + 1:] if stem.startswith(key + "_") else ""
            return text.replace("<name>", esc(name))
    return esc(stem.replace("_", " "))


def figure_float(graphic: str, stem: str, width_in: float | None) -> str:
    """A figure float: a graphic up to 3.5 in wide goes in a column (`figure`), a wider one spans the
    page (`figure*`); either way at the line's width and never taller than 80% of the page."""
    wide = width_in is None or width_in > 3.5
    env = "figure*" if wide else "figure"
    return "\n".join([
        rf"\begin{{{env}}}[!htbp]", r"\centering",
        rf"\includegraphics[width=\linewidth,height=0.8\textheight,keepaspectratio]{{{graphic}}}",
        rf"\caption{{{figure_caption(stem)}}}", rf"\label{{fig:memscope-{file_stem(stem)}}}", rf"\end{{{env}}}"]) + "\n"


def write_figures(figures: Sequence[Path], folder: Path) -> list[Path]:
    """figures/<stem>.tex for each figure: its PDF where one was written beside the PNG."""
    by_stem: dict[str, dict[str, Path]] = {}
    for fig in figures:
        by_stem.setdefault(fig.stem, {})[fig.suffix.lower()] = fig
    out = []
    for stem, files in by_stem.items():
        chosen = files.get(".pdf") or files.get(".png")
        if chosen is None:
            continue
        rel = chosen.relative_to(folder).as_posix() if chosen.is_relative_to(folder) else chosen.name
        size = pdf_size_in(chosen) if chosen.suffix.lower() == ".pdf" else None
        target = chosen.with_suffix(".tex")
        target.write_text(figure_float(rel, stem, size[0] if size else None), encoding="utf-8", newline="")
        out.append(target)
    return out
