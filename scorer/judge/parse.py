"""Reading a judge's reply: the first JSON object anywhere in the text with a "score" (and,
ideally, a "reasoning"), else a `score: x` line; a score off the allowed levels is rejected.

Models wrap their JSON in prose or ``` fences, put the score in quotes, or drop the JSON
altogether; all of that is accepted. What is not accepted is a score that is not one of the levels
(0.3 on a five-level scale, 7 out of 10): that row fails with the reason rather than being rounded
into a score the judge never gave.
"""

from __future__ import annotations

import json
import math
import re
from dataclasses import dataclass

_DECODER = json.JSONDecoder()
_SCORE_LINE = re.compile(r"""["']?\bscore\b["']?\s*[:=]\s*["']?\s*(-?\d+(?:\.\d+)?|-?\.\d+)""", re.IGNORECASE)
MAX_REASONING = 2000  # characters kept: a runaway reply must not bloat every output row
MAX_SCAN = 50_000  # characters searched for JSON: bounds the work on a runaway reply


class ReplyError(ValueError):
    """The reply holds no usable score; the message says why (it is recorded for the row)."""


@dataclass(frozen=True)
class Verdict:
    score: float
    reasoning: str


def _number(v) -> float | None:
    if isinstance(v, bool):
        return None
    if isinstance(v, (int, float)):
        return float(v)
    if isinstance(v, str):
        try:
            return float(v.strip())
        except ValueError:
            return None
    return None


def on_level(value: float, levels: tuple[float, ...]) -> float | None:
    """The level `value` is (to float noise), or None."""
    if not math.isfinite(value):
        return None
    for lev in levels:
        if abs(value - lev) < 1e-9:
            return lev
    return None


def _json_objects(text: str):
    """Every JSON object that parses starting at some `{` in the text, in order of their start."""
    start = text.find("{")
    while start != -1:
        try:
            obj, _ = _DECODER.raw_decode(text, start)
        except ValueError:
            start = text.find("{", start + 1)
            continue
        if isinstance(obj, dict):
            yield obj
        start = text.find("{", start + 1)  # nested objects too: {"result": {"score": 1}}


def _clip(text: str) -> str:
    text = text.strip()
    return text if len(text) <= MAX_REASONING else text[: MAX_REASONING - 1] + "…"


def parse_reply(text: str | None, levels: tuple[float, ...], json_only: bool = False) -> Verdict:
    """`json_only`: accept only a whole JSON object, for a reply cut short (finish_reason "length"),
    where a `score: 0` line may be the first digit of 0.75."""
    if not text or not text.strip():
        raise ReplyError("empty reply")
    allowed = ", ".join(f"{v:g}" for v in levels)
    text = text[:MAX_SCAN]
    for obj in _json_objects(text):
        key = next((k for k in obj if isinstance(k, str) and k.strip().lower() == "score"), None)
        if key is None:
            continue
        value = _number(obj[key])
        if value is None:
            raise ReplyError(f"score {obj[key]!r} is not a number")
        level = on_level(value, levels)
        if level is None:
            raise ReplyError(f"score {value:g} is not one of the levels ({allowed})")
        reasoning = next((obj[k] for k in obj if isinstance(k, str) and k.strip().lower() in ("reasoning", "reason", "rationale")), "")
        return Verdict(level, _clip(reasoning if isinstance(reasoning, str) else json.dumps(reasoning)))
    m = None if json_only else _SCORE_LINE.search(text)
    if m is None:
        raise ReplyError("no JSON object with a score and no `score:` line in the reply")
    value = float(m.group(1))
    level = on_level(value, levels)
    if level is None:
        raise ReplyError(f"score {value:g} is not one of the levels ({allowed})")
    return Verdict(level, _clip(text))
