"""What an upstream prediction row's fields mean: the coercions of its scalars (numbers, text) and
the parsing of its nested fields (rotations, retrieval logs, choices), with the small value types
they parse into.

The model reads a row through these (Prediction's properties, lazily: a row's lists are only parsed
when someone asks), and so do both run readers and the metrics: one definition of each field.
"""

from __future__ import annotations

import json
import math
from dataclasses import dataclass
from typing import Any, Mapping

from scorer.model.labels import OPTION_LETTERS

INVALID = "INVALID"  # the upstream runner's marker for a choice it could not extract
# Choices as shared objects (interning only: values are unchanged, a letter outside is kept as it
# is): a million rows would otherwise hold millions of "A"s.
SHARED_LETTERS = {c: c for c in (*OPTION_LETTERS, INVALID)}  # interned: a million rows share these strings


@dataclass(frozen=True, slots=True)
class Retrieved:
    round_id: str
    rank: int  # 1-based, best first
    score: float | None = None
    recency_age: float | None = None  # rounds between this round and the question


@dataclass(frozen=True, slots=True)
class RotationResult:
    rotation_idx: int
    correct_position: str | None
    choice: str | None
    em: float | None
    pred: str = ""


def num(v: Any) -> float | None:
    """A recorded value as a number: True/False → 1/0, a numeric string → its number (NaN and the
    infinities kept as such; an integer too large for a float → ±inf, as 1e400 reads); None when
    missing or not a number."""
    t = v.__class__
    if t is float:
        return v
    if t is bool:
        return float(v)
    if t is int:
        try:
            return float(v)
        except OverflowError:
            return math.inf if v > 0 else -math.inf
    if v is None:
        return None
    if isinstance(v, str):
        try:
            return float(v)
        except ValueError:
            return None
    if isinstance(v, (int, float)):  # subclasses (a numpy float)
        return float(v)
    return None


def finite_num(v: Any) -> float | None:
    """num(v), but None for NaN and the infinities too: a recorded value to compare with."""
    x = num(v)
    return x if x is not None and math.isfinite(x) else None


JUDGED_TEXTS = ("question", "gt", "pred")  # what a judge is shown of a row


def json_kind(v: Any) -> str:
    """What a JSON value is, as messages name it: "null", "true/false", "a number", "text", "a
    list" or "an object"."""
    if v is None:
        return "null"
    if v.__class__ is bool:
        return "true/false"
    if isinstance(v, (int, float)):
        return "a number"
    if isinstance(v, str):
        return "text"
    return "a list" if isinstance(v, list) else "an object"


def has_gold(gt: Any) -> bool:
    """Whether a row's `gt` is a gold answer to compare with: not null, absent or blank text."""
    return gt is not None and (gt.__class__ is not str or bool(gt.strip()))


def unjudgeable(raw: Mapping[str, Any]) -> str | None:
    """Why a judge cannot be asked about this open row, or None: no gold answer (`gt` null, absent
    or blank; a judge would compare with nothing), or a question, gold or prediction logged as a
    list, an object or true/false. A number is read as its text (LoCoMo has numeric answers); an
    absent prediction is an empty answer."""
    gt = raw.get("gt")
    if not has_gold(gt):
        return f"gt is missing ({'absent' if 'gt' not in raw else 'blank' if gt is not None else 'null'})"
    for name in JUDGED_TEXTS:
        kind = json_kind(raw.get(name))
        if kind in ("true/false", "a list", "an object"):
            return f"{name} logged as {kind}, not text"
    return None


def row_text(v: Any) -> str:
    """A row's text field as both run readers read it: missing → "", text as is, anything else as
    its JSON."""
    if v.__class__ is str:
        return v
    if v is None:
        return ""
    return v if isinstance(v, str) else json.dumps(v, ensure_ascii=False)


# Retrieved's slots, set as its dataclass __init__ sets them (past the frozen __setattr__): a pool
# of a thousand rows holds tens of thousands of entries, built at a third less cost.
_RETRIEVED_SLOTS = tuple(Retrieved.__dict__[f].__set__ for f in ("round_id", "rank", "score", "recency_age"))
_ABSENT = object()


def _explicit_retrieved(raw: Any) -> tuple[Retrieved, ...] | None:
    if not isinstance(raw, list):
        return None
    out: list[Retrieved] = []
    add, new = out.append, object.__new__
    set_id, set_rank, set_score, set_age = _RETRIEVED_SLOTS
    for rank, entry in enumerate(raw, start=1):
        if isinstance(entry, str):
            rid, score, age = entry, None, None
        elif isinstance(entry, dict):
            rid = entry.get("round", _ABSENT)
            if rid is _ABSENT:
                rid = entry.get("round_id")
            if not isinstance(rid, str):
                continue
            score, age = entry.get("score"), entry.get("recency_age")
            score = score if score.__class__ is float else num(score)
            age = age if age.__class__ is float else num(age)
        else:
            continue
        e = new(Retrieved)
        set_id(e, rid)
        set_rank(e, rank)
        set_score(e, score)
        set_age(e, age)
        add(e)
    return tuple(out)


def _upstream_log(runtime: Any) -> tuple[list, dict[str, float]] | None:
    """Upstream semantic-RAG logs (`method_runtime`): seed_round_ids in rank order, and the scores
    top_candidates gives (for the top max(5, top_k)); None when the row logged none."""
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
    return seeds, scores


def upstream_ranking(runtime: Any) -> tuple[list[str], list[float | None]] | None:
    """The upstream log as two lists: the seeds' round ids (text entries only) and each one's score."""
    log = _upstream_log(runtime)
    if log is None:
        return None
    seeds, scores = log
    ids = [r for r in seeds if isinstance(r, str)]
    return ids, [scores.get(r) for r in ids]


def _upstream_retrieved(runtime: Any) -> tuple[Retrieved, ...] | None:
    log = _upstream_log(runtime)
    if log is None:
        return None
    seeds, scores = log
    return tuple(Retrieved(r, i, scores.get(r)) for i, r in enumerate(seeds, start=1) if isinstance(r, str))


def retrieved_of(row: Mapping[str, Any]) -> tuple[Retrieved, ...] | None:
    """Ranked retrieval, best first, from our `retrieved` or upstream's `method_runtime` logs; None
    when the row logged none."""
    found = _explicit_retrieved(row.get("retrieved"))
    return found if found is not None else _upstream_retrieved(row.get("method_runtime"))


def history_source_of(row: Mapping[str, Any]) -> str | None:
    """How the run built the reader's history: the row's `history_source`, else its
    `method_runtime.history_source` (text only)."""
    hs = row.get("history_source")
    if hs is None:
        runtime = row.get("method_runtime")
        hs = runtime.get("history_source") if type(runtime) is dict else None
    return hs if type(hs) is str else None


def delivered_of(row: Mapping[str, Any], history_source: str | None) -> tuple[str, ...] | None:
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


def rotations_of(row: Mapping[str, Any]) -> tuple[RotationResult, ...]:
    """The `rotations` list's entries that are objects, as logged (in the order logged)."""
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


def letter_or_none(choice: Any) -> str | None:
    """A logged rotation choice: its text, or None (unlogged: counts as wrong) when it is not text —
    a list, an object, a number (`memscope validate` says so)."""
    return choice if choice.__class__ is str else None


MAX_ROTATION_IDX = 64  # a rotation_idx from 0 up to this (exclusive) is a place; past the item's it is not scored


def placeable(idx: list[Any]) -> bool:
    """Whether a row's logged rotation_idx values place each choice at its rotation: distinct whole
    numbers in [0, MAX_ROTATION_IDX). Otherwise the choices are read in the order logged."""
    return all(i.__class__ is int and 0 <= i < MAX_ROTATION_IDX for i in idx) and len(set(idx)) == len(idx)


# What rotation_oddity finds in a row's `rotations` list (bits; `memscope score` warns of each).
LOGGED_ORDER = 1  # rotation_idx repeated or not a whole number: choices read in the order logged
NON_TEXT_CHOICE = 2  # a `choice` that is a list, an object or a number: that rotation read as unlogged


def rotation_oddity(idx: list[Any], choices: list[Any]) -> int:
    """The LOGGED_ORDER / NON_TEXT_CHOICE bits of a rotations list (its rotation_idx and choice
    values, None where an entry lacks one); 0 when choices_of_row reads it as logged."""
    odd = 0 if idx == list(range(len(idx))) or placeable(idx) else LOGGED_ORDER
    if any(c is not None and c.__class__ is not str for c in choices):
        odd |= NON_TEXT_CHOICE
    return odd


def row_rotation_oddity(row: Mapping[str, Any]) -> int:
    """rotation_oddity of a row read as a dict (0 without a `rotations` list)."""
    rots = row.get("rotations")
    if rots.__class__ is not list or not rots:
        return 0
    dicts = [r if isinstance(r, dict) else {} for r in rots]
    return rotation_oddity([r.get("rotation_idx") for r in dicts], [r.get("choice") for r in dicts])


def choices_of_row(row: Mapping[str, Any], mode: str) -> tuple | None:
    """Per-rotation choices from an upstream row: the `rotations` list's `choice`s, each at its
    rotation; a legacy MCQ row's single `choice`; None for open rows and rows that logged no choice."""
    if mode != "mcq":
        return None
    rots = row.get("rotations")
    if rots.__class__ is list and rots:
        try:  # the usual case, rotations logged in order: one pass
            if [r["rotation_idx"] for r in rots] == list(range(len(rots))):
                return tuple([SHARED_LETTERS.get(c, c) if (c := r.get("choice")).__class__ is str else None for r in rots])
        except (TypeError, KeyError):
            pass
        dicts = [r if isinstance(r, dict) else {} for r in rots]
        idx = [r.get("rotation_idx") for r in dicts]
        if placeable(idx):
            # Place each choice at its rotation: a runner may log rotations out of order.
            out: list[Any] = [None] * (max(idx) + 1)
            for i, r in zip(idx, dicts):
                out[i] = letter_or_none(r.get("choice"))
            return tuple(out)
        return tuple(letter_or_none(r.get("choice")) for r in dicts)
    c = row.get("choice")
    return (c,) if isinstance(c, str) else None
