"""A case card's LaTeX compiles with pdflatex whatever the data's text: an emoji, CJK or a character
the default font encoding has no glyph for is written as its code point ([U+1F600]) instead of
stopping pdflatex ("Unicode character … not set up for use with LaTeX"); case.md keeps the text as
it is. Skipped where pdflatex is not installed (.ci/run installs it)."""

from __future__ import annotations

import json
import shutil
import subprocess
from pathlib import Path

import pytest

from tests.paths import DEMO
from tui.casecard import export_case
from tui.state import load_state

pytestmark = [pytest.mark.skipif(shutil.which("pdflatex") is None, reason="pdflatex not installed"),
              pytest.mark.needs_demo]

ODD = "Was it 😀 or 记忆 « ð » — café, Łódź, naïve?"


def test_a_card_with_emoji_and_cjk_compiles(tmp_path: Path) -> None:
    bench = tmp_path / "demo"
    shutil.copytree(DEMO, bench)
    dialog = bench / "dialog" / "Collectibles_Shelf_Assistant.json"
    data = json.loads(dialog.read_text())
    data["human-annotated QAs"][0]["question"] = ODD
    dialog.write_text(json.dumps(data, ensure_ascii=False))
    st = load_state(bench, [bench / "runs"], exports_dir=tmp_path / "exports")
    item = st.bench.item("Collectibles_Shelf_Assistant:1", "mcq")
    assert item.question == ODD
    md_path, tex_path, *_ = export_case(st, item)
    tex = tex_path.read_text(encoding="utf-8")
    assert all(f"{{[}}U+{cp}{{]}}" in tex for cp in ("1F600", "8BB0", "5FC6", "00AB", "00F0"))
    assert "% characters pdflatex has no glyph for (emoji, CJK, …) are written as [U+XXXX]" in tex
    assert "café, Łódź, naïve?" in tex  # what pdflatex can typeset stays as it is
    assert ODD in md_path.read_text(encoding="utf-8")
    doc = tex_path.parent / "doc.tex"
    doc.write_text("\\documentclass{article}\\usepackage{graphicx,xcolor}\\begin{document}\n"
                   f"\\input{{{tex_path.name}}}\n\\end{{document}}\n", encoding="utf-8")
    run = subprocess.run(["pdflatex", "-interaction=nonstopmode", "-halt-on-error", doc.name], cwd=doc.parent,
                         capture_output=True, text=True, errors="replace", timeout=300)
    log = (doc.parent / "doc.log").read_text(errors="replace")
    assert run.returncode == 0, log[-3000:]
    assert "not set up for use with LaTeX" not in log and "Undefined control sequence" not in log
