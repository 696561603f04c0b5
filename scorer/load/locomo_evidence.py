"""Normalising LoCoMo `evidence` strings to round ids of one conversation.

Upstream evidence is mostly clean (`"D1:3"`), but some strings hold several ids (`"D8:6; D9:17"`,
`"D9:1 D4:4"`), zero padding (`"D30:05"`), lower case, or stray characters (`"D:11:26"`). A form is
rewritten only when the rewritten id names a round that exists in the conversation (that is what
makes it unambiguous); anything else is returned as unresolved with the reason, never dropped.
"""

from __future__ import annotations

import re
from dataclasses import dataclass, field
from typing import Any, Iterable

_SEPARATORS = re.compile(r"[;,\s/&|+]+")
_COLON = re.compile(r"\s*:\s*")
_ID = re.compile(r"([Dd]):?(\d+):(\d+)")
_STRAY_ENDS = "\"'`()[]{}.<>"


@dataclass(frozen=True, slots=True)
class Note:
    """What happened to one raw evidence string (or one bad token of it)."""

    raw: str
    ids: tuple[str, ...]
    reason: str
    unresolved: bool = False


@dataclass
class Resolution:
    clue: tuple[str, ...] = ()
    notes: list[Note] = field(default_factory=list)
    strings: int = 0  # raw evidence strings seen
    exact: int = 0  # strings that were already a round id
    normalised_strings: int = 0  # strings rewritten into one or more existing ids
    normalised_ids: int = 0  # ids obtained by rewriting
    duplicates: int = 0  # ids listed more than once (kept once)

    @property
    def unresolved(self) -> list[Note]:
        return [n for n in self.notes if n.unresolved]

    @property
    def unresolved_count(self) -> int:
        return len(self.unresolved)


class EvidenceResolver:
    def __init__(self, round_session: dict[str, str], session_order: Iterable[str]) -> None:
        self.round_session = round_session
        self.session_rank = {s: i for i, s in enumerate(session_order)}
        self.session_size: dict[str, int] = {}
        for s in round_session.values():
            self.session_size[s] = self.session_size.get(s, 0) + 1

    def sessions_of(self, clue: Iterable[str]) -> list[str]:
        """The distinct sessions of the clue rounds, in chronological order."""
        found = {self.round_session[c] for c in clue if c in self.round_session}
        return sorted(found, key=lambda s: self.session_rank.get(s, len(self.session_rank)))

    def _token(self, token: str) -> tuple[str | None, list[str]]:
        """(existing round id or None, reasons: what was rewritten, or why it failed)."""
        if token in self.round_session:
            return token, []
        core = token.strip(_STRAY_ENDS)
        m = _ID.fullmatch(core)
        if not m:
            return None, ["not a dialog id"]
        rid = f"D{int(m.group(2))}:{int(m.group(3))}"
        reasons = []
        if m.group(1) == "d":
            reasons.append("lower-case")
        if any(len(g) > 1 and g.startswith("0") for g in (m.group(2), m.group(3))):
            reasons.append("zero-padded")
        if core != token or core[1] == ":":
            reasons.append("stray characters")
        if rid in self.round_session:
            return rid, reasons
        session = f"D{int(m.group(2))}"
        if session not in self.session_size:
            return None, [f"no session {session} in this conversation"]
        size = self.session_size[session]
        return None, [f"no round {rid} (session {session} has {size} turn{'' if size == 1 else 's'})"]

    def resolve(self, evidence: Any) -> Resolution:
        res = Resolution()
        clue: list[str] = []

        def add(rid: str, raw: str) -> None:
            if rid in clue:
                res.duplicates += 1
                res.notes.append(Note(raw, (rid,), "duplicate of an earlier evidence id; kept once"))
            else:
                clue.append(rid)

        for raw in _flatten(evidence):
            res.strings += 1
            if not isinstance(raw, str):
                res.notes.append(Note(repr(raw), (), f"not a string ({type(raw).__name__})", True))
                continue
            if raw in self.round_session:
                res.exact += 1
                add(raw, raw)
                continue
            text = _COLON.sub(":", raw.strip())
            tokens = [t for t in _SEPARATORS.split(text) if t]
            if not tokens:
                res.notes.append(Note(raw, (), "empty evidence string", True))
                continue
            good: list[str] = []
            reasons: list[str] = ["several ids in one string"] if len(tokens) > 1 else []
            if text != raw and "stray characters" not in reasons and len(tokens) == 1:
                reasons.append("stray characters")
            for tok in tokens:
                rid, why = self._token(tok)
                if rid is None:
                    shown = raw if len(tokens) == 1 else f"{raw} (token {tok!r})"
                    res.notes.append(Note(shown, (), why[0], True))
                    continue
                good.append(rid)
                reasons += [w for w in why if w not in reasons]
            if good:
                res.normalised_strings += 1
                res.normalised_ids += len(good)
                res.notes.append(Note(raw, tuple(good), ", ".join(reasons) or "rewritten"))
                for rid in good:
                    add(rid, raw)
        res.clue = tuple(clue)
        return res


def _flatten(evidence: Any) -> list[Any]:
    if evidence is None:
        return []
    if isinstance(evidence, (list, tuple)):
        out: list[Any] = []
        for e in evidence:
            out += _flatten(e) if isinstance(e, (list, tuple)) else [e]
        return out
    return [evidence]
