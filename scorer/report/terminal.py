"""The report in the terminal: rich tables with best cells on orange and second-best on blue.

Every piece of data text goes through rich.text.Text (never markup) after control characters are
made visible, so a method or backbone name cannot style the screen or send escapes.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

from rich.console import Console
from rich.table import Table as RichTable
from rich.text import Text

from scorer.report.fmt import cell_text, is_number, mark_of, title_of
from scorer.safe_text import plain
from scorer.sections.base import Table

MARK_STYLES = {"best": "bold black on dark_orange", "second": "bold white on blue"}


def _t(value: Any, style: str = "") -> Text:
    return Text(plain(str(value)), style=style)


def table(t: Table) -> RichTable:
    cols = list(t.columns)
    rt = RichTable(title=_t(t.title, "bold"), title_justify="left", caption=_t(t.note, "dim") if t.note else None,
                   caption_justify="left", header_style="bold")
    numeric = {c for c in cols if any(is_number(r.get(c)) or isinstance(r.get(c), tuple) for r in t.rows)}
    for c in cols:
        rt.add_column(_t(c), justify="right" if c in numeric else "left")
    for r in t.rows:
        if r.get("_rule"):
            rt.add_section()
        rt.add_row(*[_t(cell_text(c, r.get(c), r), MARK_STYLES.get(mark_of(r, c), "")) for c in cols])
    return rt


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
