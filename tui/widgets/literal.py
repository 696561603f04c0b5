"""Data text as a literal Textual Content (tab titles, labels): the Textual side of tui/text.py, which
stays free of Textual (its Rich Text helpers are used by the plain-Python modules too)."""

from __future__ import annotations

from textual.content import Content

from tui.text import shown


def label(value: object) -> Content:
    """A literal Content (tab titles, labels): never parsed as markup; control characters, bidi
    controls and zero-width characters made visible (tui.text.shown)."""
    return Content(shown("" if value is None else str(value), one_line=True))
