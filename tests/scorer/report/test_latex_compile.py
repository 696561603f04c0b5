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
