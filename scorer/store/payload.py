"""Validation of annotation events (DESIGN §4) before they reach the store: the kinds and their
payload shapes, timestamps, identity fields, the secret guard, and the content hash (`uid`) that
makes import idempotent. `build_event` puts them together for one event in the exchange shape.

Every check raises UserError naming the problem; callers that know a file and line prefix it.
Payloads are normalised (label lists sorted and de-duplicated) so that the same act always hashes
to the same uid, whichever file or process it came through.
"""

from __future__ import annotations

import hashlib
import json
import math
import re
from collections.abc import Mapping
from dataclasses import dataclass
from datetime import UTC, datetime, timedelta
from typing import Any

from scorer.errors import UserError
from scorer.metrics.constants import OPTION_LETTERS, VERDICTS
from scorer.model import MODES, X_LABELS, Y_LABELS
from scorer.model.rows import MAX_ROTATION_IDX

DECISION_KINDS = ("label", "verdict", "oracle")  # per (annotator, item, mode, run) the latest live one stands
ADDITIVE_KINDS = ("note", "flag")  # every live one counts
ACT_KINDS = DECISION_KINDS + ADDITIVE_KINDS  # the kinds an annotator acts with
ADJUDICATION = "adjudication"  # a decision on an entry where annotators (or they and the judge) disagree
ADJUDICATED_KINDS = ("label", "verdict", "oracle")  # what an adjudication decides: its payload's "of"
DERIVED_KINDS = (*ACT_KINDS, ADJUDICATION)  # the kinds with a derived current state (Store.current)
KINDS = (*ACT_KINDS, ADJUDICATION, "undo")  # an undo only cancels one act
FLAGS = ("ambiguous", "leakage", "bad_media", "wrong_gold", "wrong_label", "other")
# Every key a payload of each kind may have (the derived-state rows get one column per key).
PAYLOAD_FIELDS = {"label": ("x", "y"), "verdict": ("verdict",), "oracle": ("choice", "rotation", "answer", "seconds"),
                  "note": ("text",), "flag": ("flag", "text"), ADJUDICATION: ("of", "decision", "reason"),
                  "undo": ("target",)}
MAX_TEXT = 20_000
MAX_NAME = 200
_EPOCH = datetime(1970, 1, 1, tzinfo=UTC)

# Payload keys that would carry credentials. Nothing in memscope writes one, but a hand-made JSONL
# file or a careless caller could: the store refuses rather than keep a secret forever.
_SECRET_KEYS = ("apikey", "authorization", "token", "secret", "password", "passwd", "bearer", "credential")
_SECRET_VALUES = (
    re.compile(r"\bsk-[A-Za-z0-9_\-]{16,}"),  # OpenAI-style API keys
    re.compile(r"\bBearer\s+[A-Za-z0-9._~+/\-]{16,}", re.IGNORECASE),
)
_UID_HEX = re.compile(r"^[0-9a-f]{64}$")


def refuse_secrets(obj: Any, where: str) -> None:
    """Raise UserError if `obj` has a credential-like key or value anywhere inside it."""
    if isinstance(obj, Mapping):
        for key, value in obj.items():
            flat = re.sub(r"[^a-z]", "", str(key).lower())
            if any(s in flat for s in _SECRET_KEYS):
                raise UserError(f"{where}: refusing key {str(key)!r}: secrets are never stored")
            refuse_secrets(value, where)
    elif isinstance(obj, (list, tuple)):
        for value in obj:
            refuse_secrets(value, where)
    elif isinstance(obj, str) and any(p.search(obj) for p in _SECRET_VALUES):
        raise UserError(f"{where}: refusing text that looks like an API key or bearer token")


def is_int(value: Any) -> bool:
    """An integer, and not a bool (which Python counts as one)."""
    return isinstance(value, int) and not isinstance(value, bool)


def _name(value: Any, field: str, required: bool) -> str | None:
    if value is None:
        if required:
            raise UserError(f"'{field}' is required")
        return None
    if not isinstance(value, str) or not value.strip():
        raise UserError(f"'{field}' must be a non-empty string, got {value!r}")
    if len(value) > MAX_NAME or any(ord(c) < 32 or ord(c) == 127 for c in value):
        raise UserError(f"'{field}' must be at most {MAX_NAME} characters without control characters")
    return value


def check_identity(annotator: Any, item_id: Any, mode: Any, run_key: Any, study: Any) -> None:
    _name(annotator, "annotator", True)
    _name(item_id, "item_id", True)
    if mode is not None and mode not in MODES:
        raise UserError(f"'mode' must be one of {', '.join(MODES)} or null, got {mode!r}")
    _name(run_key, "run", False)
    _name(study, "study", False)


def _keys(payload: Mapping, kind: str, required: tuple[str, ...], optional: tuple[str, ...] = ()) -> None:
    for key in payload:
        if key not in required and key not in optional:
            allowed = ", ".join(required + optional)
            raise UserError(f"{kind} payload: unknown key {key!r} (allowed: {allowed})")
    for key in required:
        if key not in payload:
            raise UserError(f"{kind} payload: missing key {key!r}")


def _text(value: Any, kind: str, key: str, allow_empty: bool = False) -> str:
    if not isinstance(value, str) or (not allow_empty and not value.strip()):
        raise UserError(f"{kind} payload: {key!r} must be a non-empty string")
    if len(value) > MAX_TEXT:
        raise UserError(f"{kind} payload: {key!r} is longer than {MAX_TEXT} characters")
    return value


def _labels(value: Any, allowed: tuple[str, ...], key: str) -> list[str]:
    if not isinstance(value, list) or not value:
        raise UserError(f"label payload: {key!r} must be a non-empty list such as [{allowed[0]!r}]")
    bad = [v for v in value if v not in allowed]
    if bad:
        raise UserError(f"label payload: {key!r} has {bad[0]!r}; allowed: {', '.join(allowed)}")
    return sorted(set(value))


def validate_payload(kind: Any, payload: Any, mode: str | None, run_key: str | None) -> dict:
    """The normalised payload of a valid event of `kind`; UserError naming the problem otherwise."""
    if kind not in KINDS:
        raise UserError(f"unknown event kind {kind!r} (expected one of {', '.join(KINDS)})")
    if not isinstance(payload, Mapping):
        raise UserError(f"{kind} payload must be a JSON object, got {type(payload).__name__}")
    refuse_secrets(payload, f"{kind} payload")
    if kind == "label":
        _keys(payload, kind, ("x", "y"))
        return {"x": _labels(payload["x"], X_LABELS, "x"), "y": _labels(payload["y"], Y_LABELS, "y")}
    if kind == "verdict":
        _keys(payload, kind, ("verdict",))
        if payload["verdict"] not in VERDICTS:
            raise UserError(f"verdict payload: 'verdict' must be one of {', '.join(VERDICTS)}, "
                            f"got {payload['verdict']!r}")
        if mode is None or run_key is None:
            raise UserError("a verdict is on one prediction: 'mode' and 'run' are required")
        return {"verdict": payload["verdict"]}
    if kind == "oracle":
        return _oracle(payload, mode)
    if kind == "note":
        _keys(payload, kind, ("text",))
        return {"text": _text(payload["text"], kind, "text")}
    if kind == "flag":
        _keys(payload, kind, ("flag",), ("text",))
        if payload["flag"] not in FLAGS:
            raise UserError(f"flag payload: 'flag' must be one of {', '.join(FLAGS)}, got {payload['flag']!r}")
        out = {"flag": payload["flag"]}
        if payload.get("text") is not None:
            out["text"] = _text(payload["text"], kind, "text", allow_empty=True)
        return out
    if kind == ADJUDICATION:
        return _adjudication(payload, mode, run_key)
    _keys(payload, kind, ("target",))
    if not isinstance(payload["target"], str) or not _UID_HEX.match(payload["target"]):
        raise UserError("undo payload: 'target' must be the uid (64 hex digits) of the event it cancels")
    return {"target": payload["target"]}


def _adjudication(payload: Mapping, mode: str | None, run_key: str | None) -> dict:
    """{"of": kind, "decision": <a valid payload of that kind>, "reason": text} (DESIGN §4); the
    reason may be empty, and is "" when absent."""
    _keys(payload, ADJUDICATION, ("of", "decision"), ("reason",))
    of = payload["of"]
    if of not in ADJUDICATED_KINDS:
        raise UserError(f"adjudication payload: 'of' must be one of {', '.join(ADJUDICATED_KINDS)}, got {of!r}")
    try:
        decision = validate_payload(of, payload["decision"], mode, run_key)
    except UserError as err:
        raise UserError(f"adjudication payload: 'decision': {err}") from None
    reason = payload.get("reason")
    reason = "" if reason is None else _text(reason, ADJUDICATION, "reason", allow_empty=True)
    return {"of": of, "decision": decision, "reason": reason}


MAX_ANSWER_SECONDS = 366 * 24 * 3600  # the time on one item: more cannot be one sitting (the app measures it)


def _short(v: Any) -> str:
    """A bad value as a message shows it: its repr, cut short (a 10**30 or a long string stays one line)."""
    text = repr(v)
    return text if len(text) <= 40 else text[:37] + "..."


def _oracle(payload: Mapping, mode: str | None) -> dict:
    if "choice" in payload:
        _keys(payload, "oracle", ("choice", "rotation"), ("seconds",))
        if not isinstance(payload["choice"], str) or payload["choice"] not in OPTION_LETTERS:
            raise UserError(f"oracle payload: 'choice' must be one letter "
                            f"{OPTION_LETTERS[0]}–{OPTION_LETTERS[-1]}, got {payload['choice']!r}")
        rot = payload["rotation"]
        if not is_int(rot) or not 0 <= rot < MAX_ROTATION_IDX:
            raise UserError(f"oracle payload: 'rotation' must be an integer from 0 to {MAX_ROTATION_IDX - 1}, "
                            f"got {_short(rot)}")
        if mode == "open":
            raise UserError("oracle payload: a 'choice' answers an MCQ item, but mode is 'open'")
        out: dict[str, Any] = {"choice": payload["choice"], "rotation": rot}
    elif "answer" in payload:
        _keys(payload, "oracle", ("answer",), ("seconds",))
        if mode == "mcq":
            raise UserError("oracle payload: an MCQ item is answered with 'choice' and 'rotation'")
        out = {"answer": _text(payload["answer"], "oracle", "answer")}
    else:
        raise UserError('oracle payload: expected {"choice": "B", "rotation": 0} or {"answer": "..."}')
    if mode is None:
        raise UserError("an oracle answer is on one item form: 'mode' is required")
    if "seconds" in payload and payload["seconds"] is not None:
        s = payload["seconds"]
        if (isinstance(s, bool) or not isinstance(s, (int, float)) or not math.isfinite(s)
                or not 0 <= s <= MAX_ANSWER_SECONDS):
            raise UserError(f"oracle payload: 'seconds' must be a number from 0 to {MAX_ANSWER_SECONDS:,} "
                            f"(a year), got {_short(s)}")
        out["seconds"] = s
    return out


def format_ts(dt: datetime) -> str:
    dt = dt.astimezone(UTC)
    frac = f".{dt.microsecond:06d}" if dt.microsecond else ""
    # not strftime("%Y"): glibc writes year 1 as "1", which is no ISO 8601 time and never reads back
    return f"{dt.year:04d}-{dt.month:02d}-{dt.day:02d}T{dt.hour:02d}:{dt.minute:02d}:{dt.second:02d}{frac}Z"


def normalize_ts(value: Any) -> tuple[str, int]:
    """(canonical UTC string, microseconds since the epoch) of an ISO 8601 time; naive means UTC."""
    if not isinstance(value, str):
        raise UserError(f"'ts' must be an ISO 8601 time string, got {value!r}")
    try:
        dt = datetime.fromisoformat(value.strip())
    except ValueError:
        raise UserError(f"'ts' is not an ISO 8601 time: {value!r}") from None
    if dt.tzinfo is None:
        dt = dt.replace(tzinfo=UTC)
    try:  # 9999-12-31T23:59:59-01:00 is past the calendar's end in UTC
        dt = dt.astimezone(UTC)
    except OverflowError:
        raise UserError(f"'ts' is outside the years 1–9999 in UTC: {value!r}") from None
    return format_ts(dt), (dt - _EPOCH) // timedelta(microseconds=1)


def now_ts() -> tuple[str, int]:
    return normalize_ts(format_ts(datetime.now(UTC)))


def ts_from_us(t_us: int) -> str:
    """The stored time back as a string; a value no calendar date holds (a damaged or hand-edited
    store) is refused with one line rather than an OverflowError."""
    try:
        return format_ts(_EPOCH + timedelta(microseconds=t_us))
    except (OverflowError, TypeError):
        raise UserError(f"the database holds a time no calendar date has: {t_us!r} µs since 1970") from None


def event_uid(record: Mapping[str, Any]) -> str:
    """Content hash of an event in its exported shape: the same act always has the same uid."""
    canonical = json.dumps(record, sort_keys=True, ensure_ascii=False, separators=(",", ":"))
    return hashlib.sha256(canonical.encode("utf-8")).hexdigest()


@dataclass(frozen=True, slots=True)
class NewEvent:
    """A validated event not yet stored (what import and add build)."""

    uid: str
    ts: str
    t_us: int
    annotator: str
    kind: str
    item_id: str
    mode: str | None
    run_key: str | None
    study: str | None
    payload: dict


def build_event(record: Mapping[str, Any], t_us: int | None = None) -> NewEvent:
    """Validate one event in the exchange shape (ts, annotator, kind, item_id, mode, run, study,
    payload) and compute its uid. UserError names the problem."""
    mode, run_key, study = record.get("mode"), record.get("run"), record.get("study")
    check_identity(record.get("annotator"), record.get("item_id"), mode, run_key, study)
    kind = record.get("kind")
    payload = validate_payload(kind, record.get("payload"), mode, run_key)
    ts, us = (ts_from_us(t_us), t_us) if t_us is not None else normalize_ts(record.get("ts"))
    shape = {"ts": ts, "annotator": record["annotator"], "kind": kind, "item_id": record["item_id"],
             "mode": mode, "run": run_key, "study": study, "payload": payload}
    return NewEvent(event_uid(shape), ts, us, record["annotator"], kind, record["item_id"], mode,
                    run_key, study, payload)
