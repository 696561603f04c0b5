"""Making text from data safe to print: terminal escapes and control characters shown, not obeyed.

Rich markup is a separate concern: renderers pass data as rich.text.Text (never as markup strings).
"""

from __future__ import annotations

import re

# C0 controls except tab/newline, DEL, and C1 controls (0x80–0x9f, which include the 8-bit CSI/OSC);
# and lone surrogates (U+D800–U+DFFF: a file name that is not UTF-8, as os.fsdecode gives it, or a
# `\ud800` escape), which no encoder can write.
_CONTROL = re.compile(r"[\x00-\x08\x0b-\x1f\x7f-\x9f\ud800-\udfff]")
_CONTROL_ONE_LINE = re.compile(r"[\x00-\x1f\x7f-\x9f\ud800-\udfff]")


def _visible(m: re.Match[str]) -> str:
    ch = m.group()
    if ch == "\n":
        return "\\n"
    if ch == "\t":
        return "\\t"
    if "\ud800" <= ch <= "\udfff":
        return f"\\u{ord(ch):04x}"
    return f"\\x{ord(ch):02x}"


def plain(text: str, one_line: bool = True) -> str:
    """`text` with every control character (ESC included) replaced by a visible `\\xNN` form, and
    every lone surrogate by `\\udNNN`: safe to print and to encode as UTF-8."""
    pattern = _CONTROL_ONE_LINE if one_line else _CONTROL
    return pattern.sub(_visible, text)


# Cells a spreadsheet would read as a formula (OWASP "CSV injection"): a text cell starting with one of
# these gets a leading single quote. Numbers written as numbers are not text cells and stay as they are.
_FORMULA_START = ("=", "+", "-", "@", "\t", "\r")


def csv_cell(value: object) -> object:
    """A CSV cell safe to open in a spreadsheet: text has its control characters made visible (plain,
    one line) and a formula-like start quoted with `'`; any other value (a number, None) unchanged."""
    if not isinstance(value, str):
        return value
    s = plain(value, one_line=True)
    return "'" + s if value.startswith(_FORMULA_START) or s.startswith(_FORMULA_START) else s


def path_text(path: object) -> str:
    """A file path as text any encoder can write: bytes that are not UTF-8 (which Python reads as
    lone surrogates) shown as `\\xNN`, any other lone surrogate as `\\udNNN`; a UTF-8 path as is."""
    s = str(path)
    try:
        raw = s.encode("utf-8", "surrogateescape")
    except UnicodeEncodeError:
        return s.encode("utf-8", "backslashreplace").decode("utf-8")
    return raw.decode("utf-8", "backslashreplace")
