"""Formatting shared by the renderers: how a table cell value becomes text.

Table rows (scorer.sections.base.Table) hold raw values: numbers, strings, None, or a (low, high)
tuple for an interval. Columns whose name starts with "Δ" are signed. Optional row keys: `_marks`
{column: "best"|"second"}, `_n` {column: n} (a value whose n differs from the row's), `_rule`
(a rule before the row).
"""

from __future__ import annotations

import math
import re
from collections.abc import Mapping
from typing import Any

DECIMALS = 4
LATEX_DECIMALS = 3  # `memscope score --decimals`: the LaTeX tables' places (compact for a paper)


def is_number(v: Any) -> bool:
    return isinstance(v, (int, float)) and not isinstance(v, bool)


def number(v: Any, signed: bool = False, decimals: int = DECIMALS) -> str:
    if v is None or (isinstance(v, float) and math.isnan(v)):
        return ""
    if isinstance(v, bool):
        return "yes" if v else "no"
    if isinstance(v, int):
        return f"{v:+d}" if signed else str(v)
    if isinstance(v, float):
        r = round(v, decimals)
        if r == 0:
            r = 0.0  # no "-0.0000"
        return f"{r:+.{decimals}f}" if signed else f"{r:.{decimals}f}"
    return str(v)


def cell_text(column: str, value: Any, row: Mapping | None = None, decimals: int = DECIMALS) -> str:
    """The text of one cell (without marks); an interval is "[low, high]"; n appended when `_n` says."""
    signed = column.startswith("Δ")
    if isinstance(value, tuple) and len(value) == 2:
        if value[0] is None and value[1] is None:
            return ""
        text = f"[{number(value[0], signed, decimals)}, {number(value[1], signed, decimals)}]"
    else:
        text = number(value, signed, decimals) if (is_number(value) or value is None) else str(value)
    if row is not None:
        n = (row.get("_n") or {}).get(column)
        if n is not None and text:
            text += f" (n={n})"
    return text


def mark_of(row: Mapping, column: str) -> str:
    return (row.get("_marks") or {}).get(column, "")


_SAFE = re.compile(r"[^A-Za-z0-9._-]+")


def file_stem(*parts: str) -> str:
    """A file-name-safe stem from data text (backbone names etc.): never a path."""
    stem = "__".join(_SAFE.sub("-", p).strip("-.") or "x" for p in parts)
    return stem[:150]
