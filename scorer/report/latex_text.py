"""Text from data made safe for LaTeX (one escaping for tables, captions and figures)."""

from __future__ import annotations

from typing import Any

_SPECIAL = {"\\": r"\textbackslash{}", "&": r"\&", "%": r"\%", "$": r"\$", "#": r"\#", "_": r"\_",
            "{": r"\{", "}": r"\}", "~": r"\textasciitilde{}", "^": r"\textasciicircum{}",
            "Δ": r"$\Delta$", "κ": r"$\kappa$", "α": r"$\alpha$", "−": r"$-$", "–": "--", "—": "---", "≥": r"$\geq$",
            "≤": r"$\leq$", "→": r"$\rightarrow$", "·": r"$\cdot$", "λ": r"$\lambda$", "…": r"\ldots{}",
            "×": r"$\times$", "±": r"$\pm$"}


def esc(text: Any) -> str:
    """Data text made safe for LaTeX: specials escaped, control characters dropped."""
    return "".join(_SPECIAL.get(ch, ch) for ch in str(text) if ch.isprintable())
