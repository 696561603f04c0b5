"""What an act in the annotation store says, in words: the one description the saved line, the undo
line and an entry's trace all use (so `u` names exactly the act it cancels). No Textual here.

    act_text("flag", {"flag": "ambiguous", "text": "two readings"})  → 'flag ambiguous — “two readings”'
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from tui.text import shown

KIND_NAMES = {"label": "labels", "verdict": "verdict", "oracle": "oracle answer", "note": "note", "flag": "flag"}


def labels_pair(x, y) -> str:
    return f"{'+'.join(sorted(x)) or '—'} · {'+'.join(sorted(y)) or '—'}"


def payload_text(kind: str, payload: Mapping[str, Any]) -> str:
    """The act's content without its kind: 'X2 · Y1', 'accept', 'B (rotation 2)', '“text”'."""
    if kind == "label":
        return labels_pair(payload.get("x", ()), payload.get("y", ()))
    if kind == "verdict":
        return str(payload.get("verdict", ""))
    if kind == "oracle":
        if payload.get("choice") is not None:
            return f"{payload['choice']} (rotation {int(payload.get('rotation') or 0) + 1})"
        return f"“{shown(str(payload.get('answer') or ''))}”"
    if kind == "note":
        return f"“{shown(str(payload.get('text', '')))}”"
    if kind == "flag":
        out = str(payload.get("flag", ""))
        if payload.get("text"):
            out += f" — “{shown(str(payload['text']))}”"
        return out
    return ", ".join(f"{k} {shown(str(v))}" for k, v in payload.items())


def act_text(kind: str, payload: Mapping[str, Any]) -> str:
    """'labels X2 · Y1', 'verdict accept', 'oracle answer B (rotation 2)', 'note “…”', 'flag ambiguous'."""
    return f"{KIND_NAMES.get(kind, kind)} {payload_text(kind, payload)}"
