"""Text from data made safe for LaTeX (one escaping for tables, captions and figures)."""

from __future__ import annotations

from typing import Any

_SPECIAL = {"\\": r"\textbackslash{}", "&": r"\&", "%": r"\%", "$": r"\$", "#": r"\#", "_": r"\_",
            "{": r"\{", "}": r"\}", "~": r"\textasciitilde{}", "^": r"\textasciicircum{}",
            "Δ": r"$\Delta$", "κ": r"$\kappa$", "α": r"$\alpha$", "−": r"$-$", "–": "--", "—": "---", "≥": r"$\geq$",
            "≤": r"$\leq$", "→": r"$\rightarrow$", "·": r"$\cdot$", "λ": r"$\lambda$", "…": r"\ldots{}",
            "×": r"$\times$", "±": r"$\pm$"}


# pdflatex (utf8 input, the default OT1 font encoding) typesets ASCII and Latin-1 / Latin Extended-A
# (U+00A0–U+017F) but these of them (found by compiling each one): with _SPECIAL, what passes as is.
_NO_GLYPH = frozenset("«»ÐÞðþĄąĐđĘęĦħĮįĸĿŀŉŊŋŦŧŲųſ")


def _typeset(ch: str) -> str:
    if ch in _SPECIAL:
        return _SPECIAL[ch]
    if ch < "\u0180" and ch not in _NO_GLYPH:
        return ch
    return f"[U+{ord(ch):04X}]"  # an emoji, CJK, …: "not set up for use with LaTeX" would stop pdflatex


def esc(text: Any) -> str:
    """Data text made safe for pdflatex: specials escaped, control characters dropped, and a
    character it has no glyph for (an emoji, CJK) written as its code point, [U+1F600]."""
    return "".join(_typeset(ch) for ch in str(text) if ch.isprintable())
