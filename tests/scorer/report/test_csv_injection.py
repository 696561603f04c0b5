"""CSV cells carry no control characters and no spreadsheet formulas (OWASP: a text cell starting with
=, +, -, @, tab or CR gets a leading single quote); numbers written as numbers, negative ones included,
stay numbers. Every CSV writer: the report tables and `study export`."""

from __future__ import annotations

import csv
import io
from pathlib import Path

import pytest

from scorer.cli import main as cli_main
from scorer.report.csvfiles import table_csv
from scorer.safe_text import csv_cell
from scorer.sections.base import Table
from scorer.store import Store
from tests.paths import DEMO

HOSTILE = ["=HYPERLINK(\"http://evil.example\",\"x\")", "+1+1", "-2+3", "@SUM(A1)", "\tTAB", "\rCR",
           "=cmd|' /C calc'!A0", "ok\x1b]0;pwned\x07", "clear\x1b[2J", "two\nlines"]
FORMULA = ("=", "+", "-", "@", "\t", "\r")


def _cells_are_safe(cells: list[str]) -> None:
    for c in cells:
        assert not any(ord(ch) < 0x20 or 0x7f <= ord(ch) <= 0x9f for ch in c), repr(c)
        assert not c.startswith(FORMULA), repr(c)


@pytest.mark.parametrize("text", HOSTILE)
def test_csv_cell_quotes_formulas_and_shows_controls(text: str) -> None:
    cell = csv_cell(text)
    _cells_are_safe([cell])
    if text.startswith(FORMULA):
        assert cell.startswith("'")


def test_report_table_text_cells_are_defused_and_numbers_stay_numbers() -> None:
    rows = [{"method": t, "score": -0.25, "n": -3} for t in HOSTILE]
    text = table_csv(Table(name="t", title="T", rows=rows, columns=["method", "score", "n"]))
    table = list(csv.reader(io.StringIO(text)))
    assert len(table) == len(HOSTILE) + 1  # one line per row: no raw newline inside a cell
    body = table[1:]
    _cells_are_safe([r[0] for r in body])
    assert [r[0] for r in body][0] == "'=HYPERLINK(\"http://evil.example\",\"x\")"
    assert all(r[1] == "-0.25" and r[2] == "-3" for r in body)  # negative numbers untouched


def test_study_export_csv_cells_are_defused(tmp_path: Path, capsys) -> None:
    db = tmp_path / "s.db"
    assert cli_main(["study", "new", "--kind", "labels", "--per-cell", "1", "--name", "lab", "--db", str(db),
                     str(DEMO)]) == 0
    with Store(db) as store:
        q = store.annotator_queue("lab", "@ann")[0]
        for text in HOSTILE:
            store.note("@ann", q.item_id, text, mode=q.mode, study="lab")
    out = tmp_path / "a.csv"
    assert cli_main(["study", "export", "--db", str(db), "--name", "lab", "--out", str(out)]) == 0
    with open(out, newline="", encoding="utf-8") as fh:
        table = list(csv.DictReader(fh))
    assert len(table) == len(HOSTILE)
    for r in table:
        _cells_are_safe(list(r.values()))
        assert r["annotator"] == "'@ann"
    assert {r["text"] for r in table} >= {"'=cmd|' /C calc'!A0", "ok\\x1b]0;pwned\\x07"}
