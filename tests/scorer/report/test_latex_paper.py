"""The demo's LaTeX tables and figures dropped into a paper: a two-column 10 pt article (7 in text,
3.375 in columns) and a one-column 5.5 in text block. Every table and figure file the report writes
is \\input, the paper is compiled with pdflatex, and the PDF's text is read back with pdfminer.six:
no character of any table or figure (figure text included: pdfminer reads into the included PDFs)
may be smaller than 6 pt, no float may be wider than its line or taller than the page, and the
log may hold no overfull box and no table memscope could not fit. The smallest size found in each
layout is printed (run with -s to see it).

Skipped where pdflatex is not installed (.ci/run installs it)."""

from __future__ import annotations

import re
import shutil
import subprocess
from pathlib import Path

import pytest

from scorer.cli import main
from tests.paths import DEMO

pytestmark = [pytest.mark.skipif(shutil.which("pdflatex") is None, reason="pdflatex not installed"),
              pytest.mark.needs_demo]

MIN_PT = 6.0
BP_TO_PT = 72.27 / 72  # PDF sizes are in big points, TeX's in points
LAYOUTS = {
    "two-column 10 pt": (r"\documentclass[10pt,twocolumn]{article}"
                         r"\usepackage[letterpaper,textwidth=7in,textheight=9in,columnsep=0.25in]{geometry}"),
    "one-column 5.5 in": (r"\documentclass[10pt]{article}"
                          r"\usepackage[letterpaper,textwidth=5.5in,textheight=9in]{geometry}"),
}
TEXT_WIDTH_BP = {"two-column 10 pt": 7 * 72, "one-column 5.5 in": 5.5 * 72}
TEXT_HEIGHT_BP = 9 * 72


@pytest.fixture
def report(demo_outputs) -> Path:
    return demo_outputs


def inputs_of(out: Path) -> list[str]:
    tables = sorted(f"tables/{p.stem}" for p in (out / "tables").glob("*.tex"))
    figures = sorted(f"figures/{p.stem}" for p in (out / "figures").glob("*.tex"))
    assert len(tables) >= 35 and len(figures) >= 4, (tables, figures)
    return tables + figures


def paper(out: Path, name: str, preamble: str, inputs: list[str]) -> Path:
    body = []
    for i, name_ in enumerate(inputs):  # a marker before each input tells which pages are whose
        body += [rf"\noindent MEASURE{i}MARK\par", rf"\input{{{name_}}}", r"\clearpage"]
    tex = "\n".join([preamble, r"\input{memscope-preamble}", r"\extrafloats{500}", r"\begin{document}",
                     *body, r"\end{document}"]) + "\n"
    p = out / f"paper-{name.split()[0]}.tex"
    p.write_text(tex)
    return p


def compile_pdf(tex: Path) -> str:
    run = subprocess.run(["pdflatex", "-interaction=nonstopmode", "-halt-on-error", tex.name], cwd=tex.parent,
                         capture_output=True, text=True, errors="replace", timeout=300)
    log = tex.with_suffix(".log").read_text(errors="replace")
    assert run.returncode == 0, log[-3000:]
    return log


def _pages(pdf: Path):
    """Per page: [(effective size in bp, character)] and the layout tree, from pdfminer.six. The size
    is the font size times the vertical scale of the text matrix (Tm · CTM, the included figures'
    scaling and any \\resizebox included), so rotated text is measured right too."""
    import math

    from pdfminer.converter import PDFPageAggregator
    from pdfminer.pdfinterp import PDFPageInterpreter, PDFResourceManager
    from pdfminer.pdfpage import PDFPage

    class Sizes(PDFPageAggregator):
        def render_char(self, matrix, font, fontsize, scaling, rise, cid, ncs, graphicstate):
            _, _, c, d, _, _ = matrix
            try:
                text = font.to_unichr(cid)
            except Exception:  # noqa: BLE001 - a glyph without a Unicode mapping still has a size
                text = "?"
            self.sizes.append((fontsize * math.hypot(c, d), text))
            return super().render_char(matrix, font, fontsize, scaling, rise, cid, ncs, graphicstate)

    rm = PDFResourceManager()
    device = Sizes(rm, laparams=None)  # characters and figures only: no layout analysis (slow)
    interp = PDFPageInterpreter(rm, device)
    with open(pdf, "rb") as fh:
        for page in PDFPage.get_pages(fh):
            device.sizes = []
            interp.process_page(page)
            yield device.sizes, device.get_result()


def measure(pdf: Path, inputs: list[str]) -> tuple[dict[str, float], list[tuple[str, float, float]]]:
    """Smallest character size (TeX pt) per input, and (input, width, height) of each figure (bp)."""
    from pdfminer.layout import LTContainer, LTFigure

    smallest: dict[str, float] = {}
    graphics: list[tuple[str, float, float]] = []
    current = None

    def figures(obj, out):
        if isinstance(obj, LTFigure):
            out.append(obj)
        elif isinstance(obj, LTContainer):
            for child in obj:
                figures(child, out)

    for sizes, layout in _pages(pdf):
        text = "".join(t for _, t in sizes)
        marks = re.findall(r"MEASURE(\d+)MARK", text)
        if marks:
            current = inputs[int(marks[-1])]
        if current is None:
            continue
        # the marker line is \\normalsize: never the smallest text, so it is not told apart
        drawn = [size * BP_TO_PT for size, t in sizes if t.strip()]
        if drawn:
            smallest[current] = min(smallest.get(current, 99.0), min(drawn))
        figs: list = []
        figures(layout, figs)
        graphics += [(current, f.width, f.height) for f in figs if f.width > 20 and f.height > 20]
    return smallest, graphics


@pytest.mark.parametrize("layout", list(LAYOUTS))
def test_every_table_and_figure_is_6pt_or_more_in_a_paper(report, layout, capsys):
    inputs = inputs_of(report)
    tex = paper(report, layout, LAYOUTS[layout], inputs)
    log = compile_pdf(tex)
    assert "Overfull \\hbox" not in log, re.findall(r"Overfull \\hbox.*", log)[:5]
    assert "Package memscope Warning" not in log
    assert "Undefined control sequence" not in log
    smallest, graphics = measure(tex.with_suffix(".pdf"), inputs)
    assert set(smallest) == set(inputs), set(inputs) - set(smallest)
    worst = sorted(smallest.items(), key=lambda kv: kv[1])
    with capsys.disabled():
        print(f"\n{layout}: smallest effective font size {worst[0][1]:.2f} pt ({worst[0][0]}); "
              f"next {', '.join(f'{n} {v:.2f}' for n, v in worst[1:4])}; figures from "
              f"{min(v for n, v in worst if n.startswith('figures/')):.2f} pt")
    small = [(n, round(v, 2)) for n, v in worst if v < MIN_PT - 0.01]
    assert not small, f"{layout}: text below {MIN_PT} pt: {small}"
    # figures: sized to the line, never taller than the page
    assert {g[0] for g in graphics} >= {n for n in inputs if n.startswith("figures/")}
    for name, w, h in graphics:
        assert w <= TEXT_WIDTH_BP[layout] + 1 and h <= 0.8 * TEXT_HEIGHT_BP + 1, (layout, name, w, h)


def test_best_and_second_differ_without_colour(report):
    pre = (report / "memscope-preamble.tex").read_text()
    best = re.search(r"\\providecommand\{\\bestcell\}\[1\]\{(.*)\}", pre).group(1)
    second = re.search(r"\\providecommand\{\\secondcell\}\[1\]\{(.*)\}", pre).group(1)
    assert r"\textbf{#1}" in best and r"\underline{#1}" in second and r"\cellcolor" in best + second
    main_tex = (report / "tables" / "matrix__main_gpt-5.4-mini.tex").read_text()
    assert "Best in bold (orange fill), second underlined (blue fill)." in main_tex
    for p in (report / "tables").glob("*.tex"):  # every table with marks says which is which
        text = p.read_text()
        for float_ in re.split(r"\\end\{table\*?\}", text)[:-1]:
            if r"\bestcell{" in float_ or r"\secondcell{" in float_:
                assert "Best in bold" in float_, p.name


def test_split_tables_say_what_they_dropped(report):
    """A table of several backbones is one file per backbone; a column holding one value is named in
    the caption with its value; numbers have 3 decimals (--decimals)."""
    tables = report / "tables"
    assert (tables / "evidence__evidence_by_task__gpt-5.4-mini.tex").exists()
    assert not (tables / "evidence__evidence_by_task.tex").exists()
    text = (tables / "evidence__evidence_by_task__gpt-5.4-mini.tex").read_text()
    assert "qwen3-vl-8b" not in text
    assert r"The same in every row (column not shown): Backbone = gpt-5.4-mini" in text
    assert re.search(r"& 0\.\d{3} &", text) and not re.search(r"\d\.\d{4}", text)


def test_decimals_option(tmp_path):
    out = tmp_path / "r"
    assert main(["score", str(DEMO), "--runs", str(DEMO / "runs"), "--sections", "matrix", "--resamples", "50",
                 "--out", str(out), "--format", "tex", "--decimals", "2"]) == 0
    text = (out / "tables" / "matrix__main_gpt-5.4-mini.tex").read_text()
    assert re.search(r"& 0\.\d\d &", text) and not re.search(r"\d\.\d{3}", text)
    assert main(["score", str(DEMO), "--runs", str(DEMO / "runs"), "--out", str(out), "--decimals", "9"]) == 2


def test_wide_and_long_tables_are_split_to_fit(tmp_path):
    """Beyond the demo: a matrix of 18 methods with long names, and a table of 2 backbones × 50 rows
    × 14 value columns with intervals, come out as several floats that each fit at 6 pt or more."""
    from scorer.report.latex import PREAMBLE, generic_parts, main_matrix
    from scorer.sections.base import Table

    rows = []
    for i in range(18):
        fam = "text" if i < 9 else "multimodal"
        for metric in ("em", "judge"):
            for y in ("Y1", "Y2", "Y3"):
                for x in ("X1", "X2", "X3", "X4"):
                    rows.append({"backbone": "bb", "method": f"m{i}", "display": f"LongMethodName-{i:02d} ({fam})",
                                 "family": fam, "metric": metric, "agg": "cell", "y": y, "x": x,
                                 "value": (i * 7 % 10) / 10 + 0.0123, "n": 10 + i % 3, "mark": "best" if i == 3 else ""})
            rows.append({"backbone": "bb", "method": f"m{i}", "display": f"LongMethodName-{i:02d} ({fam})",
                         "family": fam, "metric": metric, "agg": "macro", "y": "all", "x": "all", "value": 0.5, "n": 30})
    matrix = main_matrix("bb", rows)
    assert matrix.count(r"\begin{table") >= 2 and "Methods, part 1 of" in matrix
    cols = ["Method", "Backbone", "Mode"] + [f"Measure number {j}" for j in range(10)] + ["Δ gap", "Δ gap 95% CI"]
    trows = [{"Method": f"method-{i}", "Backbone": b, "Mode": "open", **{f"Measure number {j}": 0.5 + j / 100 + i / 1000 for j in range(10)},
              "Δ gap": -0.25 + i / 100, "Δ gap 95% CI": (-0.5 + i / 100, 0.125 + i / 100)} for b in ("bb-one", "bb-two") for i in range(50)]
    parts = generic_parts(Table("wide", "A wide and long table", trows, cols, note="A note."))
    assert [g for g, _ in parts] == ["bb-one", "bb-two"]
    assert all("Columns, part 2 of" in tex and "Rows 26--50 of 50" in tex for _, tex in parts)
    assert all("Mode = open" in tex for _, tex in parts)  # the one-value column is dropped and named
    (tmp_path / "memscope-preamble.tex").write_text(PREAMBLE)
    (tmp_path / "tables").mkdir()
    inputs = []
    for name, tex in [("matrix", matrix)] + [(f"wide_{g}", tex) for g, tex in parts]:
        (tmp_path / "tables" / f"{name}.tex").write_text(tex)
        inputs.append(f"tables/{name}")
    for layout, preamble in LAYOUTS.items():
        tex = paper(tmp_path, layout, preamble, inputs)
        log = compile_pdf(tex)
        assert "Overfull \\hbox" not in log and "Package memscope Warning" not in log, layout
        smallest, _ = measure(tex.with_suffix(".pdf"), inputs)
        assert set(smallest) == set(inputs) and min(smallest.values()) >= MIN_PT - 0.01, (layout, smallest)
