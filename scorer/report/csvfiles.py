"""One CSV file per report table (`<section>__<table>.csv`), and its long form beside it
(`long/<section>__<table>.csv`, scorer.report.csvlong). The wide one is deterministic: fixed rounding, "\\n"
line ends, intervals split into `<column> low` / `<column> high`, marks in `<column> mark` columns,
a value's own n in `<column> n` where it differs from the row's. Text cells go through
scorer.safe_text.csv_cell: no control characters, no spreadsheet formulas."""

from __future__ import annotations

import csv
import io
from collections.abc import Sequence
from pathlib import Path
from typing import Any

from scorer.report.fmt import file_stem, is_number
from scorer.safe_text import csv_cell
from scorer.sections.base import Table

DECIMALS = 6


def _value(v: Any) -> Any:
    if v is None:
        return ""
    if isinstance(v, bool):
        return "true" if v else "false"
    if isinstance(v, float):  # numpy's floats too: written as plain numbers, not np.float64(…)
        if v != v:
            return ""
        r = round(float(v), DECIMALS)
        return repr(0.0 if r == 0 else r)
    return v


def table_csv(t: Table) -> str:
    cols: list[tuple[str, str]] = []  # (header, source)
    marked = {c for r in t.rows for c in (r.get("_marks") or {})}
    own_n = {c for r in t.rows for c in (r.get("_n") or {})}
    for c in t.columns:
        if any(isinstance(r.get(c), tuple) for r in t.rows):
            cols += [(f"{c} low", c), (f"{c} high", c)]
        else:
            cols.append((c, c))
        if c in own_n:
            cols.append((f"{c} n", c))
        if c in marked:
            cols.append((f"{c} mark", c))
    buf = io.StringIO()
    w = csv.writer(buf, lineterminator="\n")
    w.writerow([csv_cell(h) for h, _ in cols])
    for r in t.rows:
        out = []
        for header, src in cols:
            v = r.get(src)
            if header.endswith(" low") and isinstance(v, tuple):
                out.append(_value(v[0]))
            elif header.endswith(" high") and isinstance(v, tuple):
                out.append(_value(v[1]))
            elif header == f"{src} mark":
                out.append(csv_cell((r.get("_marks") or {}).get(src, "")))
            elif header == f"{src} n":
                out.append(_value((r.get("_n") or {}).get(src)))
            else:
                # text cells only: numbers (a negative one included) are written as numbers
                out.append(_value(v) if (is_number(v) or v is None or isinstance(v, bool)) else csv_cell(str(v)))
        w.writerow(out)
    return buf.getvalue()


def write(sections: Sequence[Any], folder: Path) -> list[Path]:
    """The wide CSV of every table, and its long twin under long/ (scorer.report.csvlong)."""
    from scorer.report import csvlong

    folder.mkdir(parents=True, exist_ok=True)
    (folder / "long").mkdir(exist_ok=True)
    backbones = csvlong.backbones_of(sections)
    paths = []
    for s in sections:
        if s.reason:
            continue
        for t in s.tables:
            p = folder / f"{file_stem(s.name, t.name)}.csv"
            p.write_text(table_csv(t), encoding="utf-8", newline="")
            long = folder / "long" / p.name
            long.write_text(csvlong.table_long(s, t, backbones), encoding="utf-8", newline="")
            paths += [p, long]
    return paths
