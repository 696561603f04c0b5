"""The report in the terminal: rich tables with best cells on orange and second-best on blue.

`table` is the one Table → Rich renderer: the app's Scores screen calls it too, with its own `Look`
(values coloured by size, marks underlined). Every piece of data text goes through rich.text.Text
(never markup) after control characters are made visible, so a method or backbone name cannot style
the screen or send escapes.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any

from rich.console import Console
from rich.table import Table as RichTable
from rich.text import Text

from scorer.report.fmt import cell_text, is_number, mark_of
from scorer.safe_text import plain
from scorer.sections.base import Table
from scorer.sections.registry import title_of

MARK_STYLES = {"best": "bold black on dark_orange", "second": "bold white on blue"}


@dataclass(frozen=True)
class Look:
    """How `table` styles a table; the defaults are the terminal report's."""

    marks: Mapping[str, str] = field(default_factory=lambda: MARK_STYLES)  # the style of a "best" / "second" cell
    colour: Callable[[float], str] | None = None  # a number's style by its value (not the `n` column)
    missing: str = ""  # the text of a missing value
    pad_edge: bool = True
    no_wrap: bool = False


TERMINAL = Look()


def _t(value: Any, style: str = "") -> Text:
    return Text(plain(str(value)), style=style)


def _style(look: Look, column: str, value: Any, mark: str) -> str:
    parts = []
    if look.colour is not None and column != "n" and isinstance(value, float) and value == value:
        parts.append(look.colour(value))
    if mark in look.marks:
        parts.append(look.marks[mark])
    return " ".join(parts)


def table(t: Table, look: Look = TERMINAL) -> RichTable:
    cols = list(t.columns)
    rt = RichTable(title=_t(t.title, "bold"), title_justify="left", caption=_t(t.note, "dim") if t.note else None,
                   caption_justify="left", header_style="bold", pad_edge=look.pad_edge)
    numeric = {c for c in cols if any(is_number(r.get(c)) or isinstance(r.get(c), tuple) for r in t.rows)}
    for c in cols:
        rt.add_column(_t(c), justify="right" if c in numeric else "left", no_wrap=look.no_wrap)
    for r in t.rows:
        if r.get("_rule"):
            rt.add_section()
        rt.add_row(*[_cell(look, c, r) for c in cols])
    return rt


def _cell(look: Look, column: str, row: Mapping[str, Any]) -> Text:
    text = cell_text(column, row.get(column), row)
    if not text and look.missing:
        return Text(look.missing, style="dim")
    return _t(text, _style(look, column, row.get(column), mark_of(row, column)))


def render(sections: Sequence[Any], warnings: Sequence[str], console: Console) -> None:
    for s in sections:
        console.print(_t(title_of(s.name), "bold underline"))
        if s.reason:
            console.print(_t(f"  not available: {s.reason}", "dim"))
            console.print()
            continue
        for t in s.tables:
            console.print(table(t))
            console.print()
        if isinstance(s.data, dict):
            for key, part in sorted(s.data.items()):
                if isinstance(part, dict) and part.get("value", 0) is None:
                    console.print(_t(f"  {key}: not available: {part.get('reason', '')}", "dim"))
    if warnings:
        console.print(_t("Warnings", "bold yellow"))
        for w in warnings:
            console.print(_t(f"  - {w}", "yellow"))
