"""Parsing the nested parts of an upstream prediction row: rotations and retrieval logs.

Called lazily from Prediction's properties, so a row's lists are only parsed when someone asks.
"""

from __future__ import annotations

import json
from typing import Any

from scorer.model import Retrieved, RotationResult

try:  # orjson parses run files about twice as fast; the standard library is the fallback
    import orjson

    def loads(data: bytes | str) -> Any:
        return orjson.loads(data)

except ImportError:  # pragma: no cover - orjson is a core dependency

    def loads(data: bytes | str) -> Any:
        return json.loads(data)


def json_error(line: bytes) -> tuple[str, str]:
    """(column location, message) for a line that failed to parse, in the standard library's words."""
    try:
        json.loads(line)
    except json.JSONDecodeError as err:
        return str(err.colno), f"invalid JSON: {err.msg}"
    except UnicodeDecodeError:
        return "", "not UTF-8 text"
    return "", "invalid JSON"


def num(v: Any) -> float | None:
    if isinstance(v, bool):
        return float(v)
    if isinstance(v, (int, float)):
        return float(v)
    if isinstance(v, str):
        try:
            return float(v)
        except ValueError:
            return None
    return None


def _explicit_retrieved(raw: Any) -> tuple[Retrieved, ...] | None:
    if not isinstance(raw, list):
        return None
    out = []
    for rank, entry in enumerate(raw, start=1):
        if isinstance(entry, str):
            out.append(Retrieved(entry, rank))
        elif isinstance(entry, dict):
            rid = entry.get("round", entry.get("round_id"))
            if isinstance(rid, str):
                out.append(Retrieved(rid, rank, num(entry.get("score")), num(entry.get("recency_age"))))
    return tuple(out)


def _upstream_retrieved(runtime: Any) -> tuple[Retrieved, ...] | None:
    """Upstream semantic-RAG logs: seed_round_ids in rank order; top_candidates scores for the top 5."""
    if not isinstance(runtime, dict):
        return None
    seeds = runtime.get("seed_round_ids")
    if not isinstance(seeds, list):
        return None
    scores: dict[str, float] = {}
    for c in runtime.get("top_candidates") or []:
        if isinstance(c, dict):
            rid = c.get("round_id", c.get("round"))
            s = num(c.get("score"))
            if isinstance(rid, str) and s is not None:
                scores[rid] = s
    return tuple(Retrieved(r, i, scores.get(r)) for i, r in enumerate(seeds, start=1) if isinstance(r, str))


def retrieved_of(row: Any) -> tuple[Retrieved, ...] | None:
    found = _explicit_retrieved(row.get("retrieved"))
    return found if found is not None else _upstream_retrieved(row.get("method_runtime"))


def delivered_of(row: Any, history_source: str | None) -> tuple[str, ...] | None:
    """The round ids placed in the reader's request, from (first that is there): our `delivered`;
    upstream semantic-RAG `method_runtime.selected_round_ids`; upstream `context_round_ids` (every
    run of the MemEye runner logs it: for full-context runs, every round in the history); for a
    clue-only run, its clue rounds. An empty `context_round_ids` is unknown, not "nothing": the
    runner logs [] for agentic methods, whose history it never sees."""
    raw = row.get("delivered")
    runtime = row.get("method_runtime")
    if raw is None and isinstance(runtime, dict) and isinstance(runtime.get("selected_round_ids"), list):
        raw = runtime["selected_round_ids"]
    if raw is None and isinstance(row.get("context_round_ids"), list) and row["context_round_ids"]:
        raw = row["context_round_ids"]
    if raw is None and history_source == "clue_only" and isinstance(row.get("clue_rounds"), list):
        raw = row["clue_rounds"]  # the oracle: the gold clue rounds are what it delivered
    return tuple(d for d in raw if isinstance(d, str)) if isinstance(raw, list) else None


def rotations_of(row: Any) -> tuple[RotationResult, ...]:
    raw = row.get("rotations")
    if not isinstance(raw, list):
        return ()
    out = []
    for i, r in enumerate(raw):
        if not isinstance(r, dict):
            continue
        idx = r.get("rotation_idx", i)
        choice = r.get("choice")
        pos = r.get("correct_position")
        pred = r.get("pred")
        out.append(RotationResult(
            rotation_idx=idx if isinstance(idx, int) else i,
            correct_position=pos if isinstance(pos, str) else None,
            choice=choice if isinstance(choice, str) and choice else None,
            em=num(r.get("em")),
            pred=pred if isinstance(pred, str) else "",
        ))
    return tuple(out)


def has_retrieval_log(row: Any) -> bool:
    runtime = row.get("method_runtime")
    return isinstance(row.get("retrieved"), list) or (
        isinstance(runtime, dict) and isinstance(runtime.get("seed_round_ids"), list))
