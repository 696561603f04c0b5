"""The LaTeX a user pastes into a paper compiles: the demo's full report (every section, with
annotations and a --compare pair) through pdflatex, with no error, no undefined macro and no table
running past the line. Skipped where pdflatex is not installed (.ci/run installs it)."""

from __future__ import annotations

import re
import shutil
import subprocess

import pytest

from scorer.cli import main
from tests.paths import DEMO

pytestmark = [pytest.mark.skipif(shutil.which("pdflatex") is None, reason="pdflatex not installed"),
              pytest.mark.needs_demo]


def test_demo_report_compiles_cleanly(tmp_path):
    db = tmp_path / "a.db"
    assert main(["annotations", "import", str(DEMO / "annotations.jsonl"), "--db", str(db)]) == 0
    out = tmp_path / "r"
    assert main(["score", str(DEMO), "--runs", str(DEMO / "runs"), "--db", str(db), "--compare", "SRAG(V):FC(V)",
                 "--resamples", "300", "--out", str(out), "--format", "tex,png"]) == 0
    run = subprocess.run(["pdflatex", "-interaction=nonstopmode", "-halt-on-error", "report.tex"], cwd=out,
                         capture_output=True, text=True, errors="replace", timeout=300)
    log = (out / "report.log").read_text(errors="replace")
    assert run.returncode == 0, log[-3000:]
    assert (out / "report.pdf").stat().st_size > 10_000
    assert "Undefined control sequence" not in log and "LaTeX Warning: Reference" not in log
    overfull = re.findall(r"\(\./tables/([^\s()]+)|(Overfull \\hbox)", log)
    current, wide = None, []
    for table, flag in overfull:
        current = table or current
        if flag:
            wide.append(current)
    assert not wide, f"tables wider than the line: {wide}"
    inputs = re.findall(r"\\input\{(tables/[^}]+)\}", (out / "report.tex").read_text())
    assert len(inputs) >= 20 and all((out / f"{name}.tex").exists() for name in inputs)
    assert "\\includegraphics" in (out / "report.tex").read_text()


def test_every_character_esc_passes_through_compiles(tmp_path):
    """esc keeps U+00A0–U+017F but the characters the default OT1 encoding has no glyph for, and the
    typographic symbols pdflatex sets (quotes, dashes, €…), and writes the rest, emoji and CJK as
    [U+XXXX]: a document of all of them compiles."""
    from scorer.report.latex_text import esc

    from scorer.report.latex_text import _TEXT_SYMBOLS

    text = ("".join(chr(c) for c in range(0x20, 0x7F)) + "".join(chr(c) for c in range(0xA0, 0x180))
            + "".join(sorted(_TEXT_SYMBOLS)) + "😀记忆")
    escaped = esc(text)
    assert "{[}U+1F600{]}{[}U+8BB0{]}{[}U+5FC6{]}" in escaped and "é" in escaped and "{[}U+00F0{]}" in escaped
    (tmp_path / "t.tex").write_text("\\documentclass{article}\\begin{document}\n" + escaped + "\n\\end{document}\n",
                                    encoding="utf-8")
    run = subprocess.run(["pdflatex", "-interaction=nonstopmode", "-halt-on-error", "t.tex"], cwd=tmp_path,
                         capture_output=True, text=True, errors="replace", timeout=120)
    assert run.returncode == 0, (tmp_path / "t.log").read_text(errors="replace")[-2000:]


def test_table_rows_that_begin_with_a_bracket_or_cjk_compile(tmp_path):
    """A row's first cell right after the previous row's \\\\: a method named "[v2] rag", "[2pt]rag"
    or beginning with CJK ("{[}U+8BB0{]}…") must not be read as the row's spacing argument."""
    from scorer.report.latex import PREAMBLE, generic_parts
    from scorer.sections.base import Table

    names = ["mem0", "[v2] rag", "[2pt]rag", "记忆Agent", "😀 memory", "don’t “quote” — €5"]
    t = Table(name="t", title="Scores [n] 记忆", rows=[{"Method": m, "EM": 0.1 * i} for i, m in enumerate(names)],
              columns=["Method", "EM"])
    body = "\n".join(latex for _, latex in generic_parts(t))
    assert "{[}v2{]} rag" in body and "{[}2pt{]}rag" in body and "{[}U+8BB0{]}{[}U+5FC6{]}Agent" in body
    assert "don’t “quote” — €5".replace("—", "---") in body  # typographic marks pdflatex sets stay
    (tmp_path / "memscope-preamble.tex").write_text(PREAMBLE, encoding="utf-8")
    (tmp_path / "t.tex").write_text("\\documentclass{article}\\input{memscope-preamble}\\begin{document}\n"
                                    + body + "\n\\end{document}\n", encoding="utf-8")
    run = subprocess.run(["pdflatex", "-interaction=nonstopmode", "-halt-on-error", "t.tex"], cwd=tmp_path,
                         capture_output=True, text=True, errors="replace", timeout=120)
    assert run.returncode == 0, (tmp_path / "t.log").read_text(errors="replace")[-2000:]
