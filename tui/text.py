"""Turning text from data into things Textual can show literally.

Every string that comes from a benchmark, a run or the annotation store goes through here: control
characters (ESC, OSC, C1) are made visible by scorer.safe_text.plain, bidi controls and zero-width
characters as ⟨U+202E⟩ (`shown`), and the result is a
rich.text.Text, which Textual never parses as markup (tab titles and labels take a Textual Content:
tui/widgets/literal.py). Never pass data strings to a widget as `str`: Static, DataTable cells and
tab titles would read "[bold]" as markup.

No Textual here (Rich only): it sits with the plain-Python modules at the bottom of the app's layers.
"""

from __future__ import annotations

import re

from rich.text import Text

from scorer.safe_text import plain

# Bidi embeddings/overrides/isolates and zero-width characters: invisible, yet they reorder or hide
# what is shown (a "Trojan Source" answer). The app shows them as ⟨U+202E⟩.
_HIDDEN = re.compile("[\u202a-\u202e\u2066-\u2069\u200b-\u200d\u2060\ufeff]")


def shown(text: str, one_line: bool = True) -> str:
    """The app's one safe-text function: `text` with control characters (scorer.safe_text.plain),
    bidi controls and zero-width characters made visible."""
    return _HIDDEN.sub(lambda m: f"⟨U+{ord(m.group()):04X}⟩", plain(text, one_line=one_line))


def safe(value: object, style: str = "", one_line: bool = False) -> Text:
    """`value` as literal Text (None → empty)."""
    s = "" if value is None else value if isinstance(value, str) else str(value)
    return Text(shown(s, one_line=one_line), style=style)


def cell(value: object, style: str = "", width: int | None = None) -> Text:
    """A one-line literal table cell, cut to `width` characters with an ellipsis."""
    s = shown("" if value is None else str(value), one_line=True)
    if width is not None and len(s) > width:
        s = s[: max(0, width - 1)] + "…"
    return Text(s, style=style, no_wrap=True, overflow="ellipsis")


def same_text(a: object, b: object) -> bool:
    """Whether two Texts show exactly the same (rich's == ignores the base style and options)."""
    return (isinstance(a, Text) and isinstance(b, Text) and a.plain == b.plain and a.spans == b.spans
            and a.style == b.style and (a.justify, a.overflow, a.no_wrap) == (b.justify, b.overflow, b.no_wrap))


def fmt_score(v: float | None) -> str:
    return "—" if v is None else f"{v:.2f}"
