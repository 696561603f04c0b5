"""Making text from data safe to print: terminal escapes and control characters shown, not obeyed.

Rich markup is a separate concern: renderers pass data as rich.text.Text (never as markup strings).
"""

from __future__ import annotations

import re

# C0 controls except tab/newline, DEL, and C1 controls (0x80–0x9f, which include the 8-bit CSI/OSC).
_CONTROL = re.compile(r"[\x00-\x08\x0b-\x1f\x7f-\x9f]")
_CONTROL_ONE_LINE = re.compile(r"[\x00-\x1f\x7f-\x9f]")


def _visible(m: re.Match[str]) -> str:
    ch = m.group()
    if ch == "\n":
        return "\\n"
    if ch == "\t":
        return "\\t"
    return f"\\x{ord(ch):02x}"


def plain(text: str, one_line: bool = True) -> str:
    """`text` with every control character (ESC included) replaced by a visible `\\xNN` form."""
    pattern = _CONTROL_ONE_LINE if one_line else _CONTROL
    return pattern.sub(_visible, text)
