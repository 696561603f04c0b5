"""How a report table is cut to fit a paper: the width it will take, and the splits that keep every
table at 6 pt or more in a two-column 10 pt article (3.4 in columns, 7 in `table*`) and in a
one-column 5.5 in text block.

Tables are set in \\footnotesize (8 pt in a 10 pt article); `\\memscopefit` (the preamble) may shrink
one to the line but never below MIN_SCALE (6 pt). So a table must fit NARROW (a column) or WIDE (the
5.5 in block, the narrowest `table*`) at that scale, which is what `plan` makes sure of, estimating
widths from Computer Modern's advance widths (rounded up: an estimate that errs wide splits a table
that would have fitted, never the other way round). In order:
1. one table per backbone when a `Backbone` column holds several (`split_by`);
2. a column that holds one value in every row is dropped, and the caption says the value;
3. columns beyond the width are split into parts, each repeating the leading label columns;
4. rows beyond MAX_ROWS are split into parts (a table never runs taller than the page).
Pure: no LaTeX is written here (scorer.report.latex does that).
"""

from __future__ import annotations

import math
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any

FONT_PT = 8.0  # \footnotesize in a 10 pt article
MIN_PT = 6.0
MIN_SCALE = MIN_PT / FONT_PT
TABCOLSEP_PT = 3.0
NARROW_PT = 3.3 * 72.27  # a column of a two-column paper (3.3–3.5 in), in TeX points
WIDE_PT = 5.5 * 72.27  # the one-column block; a two-column `table*` is wider (≈ 7 in)
SAFETY = 0.94  # the estimate's margin
MAX_ROWS = 36  # rows per part: 36 × 9.5 pt + header and caption < 0.8 × a 9 in text height
HEADER_LINE = 14  # characters per header line before it wraps at a space
WRAP_PT = 150.0  # a text column wider than this (at 8 pt) wraps into a paragraph column this wide

# advance widths of Computer Modern Roman in em (cmr10 metrics, rounded up)
_EM = {**{c: 0.5 for c in "0123456789"}, **{c: 0.53 for c in "abcdeghknopqrsuvxyz"},
       **{c: 0.3 for c in "fijlrt"}, "m": 0.84, "w": 0.73, " ": 0.34, ".": 0.28, ",": 0.28, ":": 0.28,
       ";": 0.28, "'": 0.28, "(": 0.39, ")": 0.39, "[": 0.28, "]": 0.28, "-": 0.34, "+": 0.78, "=": 0.78,
       "/": 0.5, "%": 0.84, "@": 0.78, "–": 0.5, "—": 1.0, "−": 0.78, "Δ": 0.84, "κ": 0.6, "α": 0.65,
       "≥": 0.78, "≤": 0.78, "→": 1.0, "·": 0.28, "…": 1.0, "×": 0.78, "±": 0.78, "|": 0.28, "_": 0.5}


def text_pt(text: str, pt: float = FONT_PT) -> float:
    """Estimated width of `text` set at `pt` points (upper case and unknown characters: 0.75 em)."""
    return sum(_EM.get(ch, 0.75) for ch in text) * pt


def header_lines(text: str, limit: int = HEADER_LINE) -> list[str]:
    """A header wrapped at spaces into lines of about `limit` characters (a word is never cut)."""
    lines: list[str] = []
    for word in str(text).split(" "):
        if lines and len(lines[-1]) + 1 + len(word) <= limit:
            lines[-1] += " " + word
        else:
            lines.append(word)
    return lines or [""]


def column_pt(header: str, cells: Sequence[str]) -> float:
    widths = [text_pt(line) for line in header_lines(header)] + [text_pt(c) for c in cells]
    return max(widths, default=0.0) + 2 * TABCOLSEP_PT


@dataclass
class Part:
    """One float of a split table: its columns, rows, and what the caption must add."""

    columns: list[str]
    rows: list[Mapping[str, Any]]
    width_pt: float
    dropped: list[tuple[str, str]] = field(default_factory=list)  # (column, the one value it held)
    group: str = ""  # e.g. "gpt-5.4-mini" when split by backbone
    column_part: tuple[int, int] = (1, 1)  # (i, of k)
    row_part: tuple[int, int, int, int] = (0, 0, 0, 0)  # (first row, last row, of n, split?) 1-based
    wrap: dict[str, float] = field(default_factory=dict)  # text columns set as paragraphs this wide (pt)

    @property
    def wide(self) -> bool:
        """Needs the page's width (`table*`): it does not fit a column at the smallest scale."""
        return self.width_pt * MIN_SCALE > NARROW_PT * SAFETY


def split_by(rows: Sequence[Mapping[str, Any]], columns: Sequence[str], key: str = "Backbone") -> list[tuple[str, list]]:
    """Rows grouped by the `key` column's value (first-seen order), when it holds several values."""
    col = next((c for c in columns if c.lower() == key.lower()), None)
    if col is None:
        return [("", list(rows))]
    groups: dict[str, list] = {}
    for r in rows:
        groups.setdefault(str(r.get(col) if r.get(col) is not None else ""), []).append(r)
    return list(groups.items()) if len(groups) > 1 else [("", list(rows))]


def constant_columns(columns: Sequence[str], rows: Sequence[Mapping[str, Any]],
                     text: Callable[[str, Mapping], str]) -> list[tuple[str, str]]:
    """Columns showing one value in every row (never the first column, never with marks or own n)."""
    if len(rows) < 2:
        return []
    out = []
    for c in columns[1:]:
        values = {text(c, r) for r in rows}
        marked = any((r.get("_marks") or {}).get(c) or (r.get("_n") or {}).get(c) is not None for r in rows)
        if len(values) == 1 and not marked:
            out.append((c, values.pop()))
    if len(out) >= len(columns) - 1:  # keep at least one column besides the first
        out = out[:-1]
    return out


def _label_columns(columns: Sequence[str], rows: Sequence[Mapping[str, Any]], numeric: set[str]) -> list[str]:
    """The leading text columns that name a row (repeated in every column part), at most three."""
    out = []
    for c in columns:
        if c in numeric or len(out) == 3:
            break
        out.append(c)
    return out or list(columns[:1])


def _column_groups(columns: Sequence[str], rows: Sequence[Mapping[str, Any]]) -> list[list[str]]:
    """Value columns that belong together: an interval column stays with the value before it."""
    groups: list[list[str]] = []
    for c in columns:
        is_interval = any(isinstance(r.get(c), tuple) for r in rows)
        if is_interval and groups:
            groups[-1].append(c)
        else:
            groups.append([c])
    return groups


def plan(columns: Sequence[str], rows: Sequence[Mapping[str, Any]], text: Callable[[str, Mapping], str],
         numeric: set[str], budget_pt: float = WIDE_PT) -> list[Part]:
    """The parts one table (or one backbone's share of it) is set as."""
    dropped = constant_columns(columns, rows, text)
    gone = {c for c, _ in dropped}
    cols = [c for c in columns if c not in gone]
    width = {c: column_pt(c, [text(c, r) for r in rows]) for c in cols}
    limit = budget_pt * SAFETY / MIN_SCALE  # natural width that still fits at the smallest scale
    wrap = {c: WRAP_PT for c in cols if c not in numeric and width[c] > WRAP_PT + 2 * TABCOLSEP_PT}
    if sum(width.values()) > limit:  # long text wraps rather than the table shrinking below 6 pt
        width.update({c: w + 2 * TABCOLSEP_PT for c, w in wrap.items()})
    else:
        wrap = {}
    col_sets: list[list[str]]
    if sum(width.values()) <= limit:
        col_sets = [cols]
    else:
        labels = _label_columns(cols, rows, numeric)
        room = limit - sum(width[c] for c in labels)
        col_sets, current, used = [], [], 0.0
        for group in _column_groups([c for c in cols if c not in labels], rows):
            w = sum(width[c] for c in group)
            if current and used + w > room:
                col_sets.append(labels + current)
                current, used = [], 0.0
            current += group
            used += w
        if current:
            col_sets.append(labels + current)
    parts = []
    n_rows = len(rows)
    chunks = max(1, math.ceil(n_rows / MAX_ROWS))
    per = math.ceil(n_rows / chunks) if n_rows else 0
    for ci, cs in enumerate(col_sets, 1):
        for k in range(chunks):
            sub = list(rows[k * per:(k + 1) * per]) if n_rows else []
            if sub and sub[0].get("_rule"):
                sub[0] = {kk: v for kk, v in sub[0].items() if kk != "_rule"}
            parts.append(Part(cs, sub, sum(width[c] for c in cs), list(dropped),
                              column_part=(ci, len(col_sets)), wrap={c: w for c, w in wrap.items() if c in cs},
                              row_part=(k * per + 1, min((k + 1) * per, n_rows), n_rows, int(chunks > 1))))
    return parts
