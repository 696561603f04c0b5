"""Text from data made safe for LaTeX (one escaping for tables, captions and figures)."""

from __future__ import annotations

from typing import Any

_SPECIAL = {"\\": r"\textbackslash{}", "&": r"\&", "%": r"\%", "$": r"\$", "#": r"\#", "_": r"\_",
            "{": r"\{", "}": r"\}", "~": r"\textasciitilde{}", "^": r"\textasciicircum{}",
            "Δ": r"$\Delta$", "κ": r"$\kappa$", "α": r"$\alpha$", "−": r"$-$", "–": "--", "—": "---", "≥": r"$\geq$",
            "≤": r"$\leq$", "→": r"$\rightarrow$", "·": r"$\cdot$", "λ": r"$\lambda$", "…": r"\ldots{}",
            "×": r"$\times$", "±": r"$\pm$", "[": "{[}", "]": "{]}"}


# pdflatex (utf8 input, the default OT1 font encoding) typesets ASCII and Latin-1 / Latin Extended-A
# (U+00A0–U+017F) but _NO_GLYPH, and beyond them _TEXT_SYMBOLS (typographic quotes, dashes, bullets,
# currency, ligatures…): each found by compiling it alone. With _SPECIAL, what passes as is.
_NO_GLYPH = frozenset("«»ÐÞðþĄąĐđĘęĦħĮįĸĿŀŉŊŋŦŧŲųſ")
_TEXT_SYMBOLS = frozenset(chr(int(c, 16)) for c in (  # by code point: some look like others (Ω U+2126, not U+03A9)
    "0192 01C4 01C5 01C6 01C7 01C8 01C9 01CA 01CB 01CC 01CD 01CE 01CF 01D0 01D1 01D2 01D3 01D4 01E2 01E3 01E6 01E7 "
    "01E8 01E9 01F0 01F4 01F5 0218 0219 021A 021B 0232 0233 0237 02C6 02C7 02D8 02D9 02DC 02DD 2010 2011 2012 2013 "
    "2014 2015 2016 2018 2019 201C 201D 2020 2021 2022 2026 2030 2031 203B 203D 2044 204E 2052 20A1 20A4 20A6 20A9 "
    "20AB 20AC 20B1 2103 2116 2117 211E 2120 2122 2126 2127 212E 2190 2191 2192 2193 2329 232A 25E6 25EF FB00 FB01 "
    "FB02 FB03 FB04 FB05 FB06").split())


def _typeset(ch: str) -> str:
    if ch in _SPECIAL:
        return _SPECIAL[ch]
    if (ch < "\u0180" and ch not in _NO_GLYPH) or ch in _TEXT_SYMBOLS:
        return ch
    # an emoji, CJK, …: "not set up for use with LaTeX" would stop pdflatex. In braces, as [ and ]
    # are (_SPECIAL): after a row's \\ a bare "[" would be read as its spacing argument
    return f"{{[}}U+{ord(ch):04X}{{]}}"


def esc(text: Any) -> str:
    """Data text made safe for pdflatex: specials escaped, control characters dropped, and a
    character it has no glyph for (an emoji, CJK) written as its code point, [U+1F600] (in the
    source {[}U+1F600{]}: a bracket is never read as an optional argument)."""
    return "".join(_typeset(ch) for ch in str(text) if ch.isprintable())
