"""Write a score report in the chosen formats into one folder:
report.md, csv/<section>__<table>.csv (+ its long form in csv/long/), report.json, report.tex
(+ memscope-preamble.tex, tables/, figures/<name>.tex), figures/<name>.png with .pdf and .svg."""

from __future__ import annotations

from pathlib import Path
from typing import Sequence

from scorer.errors import UserError
from scorer.report import csvfiles, jsonfile, latex, markdown


def write_report(report, out: Path, formats: Sequence[str], decimals: int | None = None) -> list[Path]:
    """Every requested format; returns the files written. PNG first, so LaTeX can include them."""
    out = Path(out)
    if out.exists() and not out.is_dir():
        raise UserError(f"{out}: --out must be a folder")
    out.mkdir(parents=True, exist_ok=True)
    data = report.json_data()
    warnings = data["warnings"]
    written: list[Path] = []
    figures: list[Path] = []
    if "png" in formats:  # matplotlib, imported only for figures (start-up speed)
        from scorer.report import figures as fig

        figures = fig.write(report.sections, out / "figures")
        from scorer.report import evidence_figures

        figures += evidence_figures.write(report.sections, out / "figures")
        from scorer.report import mosaic_figures

        figures += mosaic_figures.write(report.sections, out / "figures")
        written += figures
    if "md" in formats:
        p = out / "report.md"
        p.write_text(markdown.render(data, report.sections, warnings), encoding="utf-8", newline="")
        written.append(p)
    if "csv" in formats:
        written += csvfiles.write(report.sections, out / "csv")
    if "json" in formats:
        written.append(jsonfile.write(data, out / "report.json", getattr(report, "texts", None)))
    if "tex" in formats:
        written += latex.write(report.sections, out, figures, *(() if decimals is None else (decimals,)))
    return written
