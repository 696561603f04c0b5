"""JSON for the readers: fast parsing (orjson), a file read with one-line errors in the words users
know (the standard library's), and the lenient coercions of benchmark-file values."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import orjson

from scorer.errors import DataError


# Run files parse about twice as fast with orjson as with the standard library. Raises ValueError
# (orjson.JSONDecodeError) on text that is not JSON, including bare NaN / Infinity.
loads = orjson.loads


def json_error(line: bytes) -> tuple[str, str]:
    """(column location, message) for a line that failed to parse, in the standard library's words."""
    try:
        json.loads(line)
    except json.JSONDecodeError as err:
        return str(err.colno), f"invalid JSON: {err.msg}"
    except UnicodeDecodeError:
        return "", "not UTF-8 text"
    return "", "invalid JSON"


def read_json(path: Path) -> Any:
    """A JSON file's value; a DataError naming the file (and line:column) when it cannot be read."""
    try:
        data = path.read_bytes()
    except OSError as err:
        raise DataError(path, "", f"cannot read: {err.strerror or err}") from None
    try:
        return orjson.loads(data)
    except orjson.JSONDecodeError:
        pass  # the standard library says where and what, in the words users know
    try:
        return json.loads(data.decode("utf-8"))
    except UnicodeDecodeError as err:
        raise DataError(path, f"byte {err.start}", "not UTF-8 text") from None
    except json.JSONDecodeError as err:
        raise DataError(path, f"{err.lineno}:{err.colno}", f"invalid JSON: {err.msg}") from None


def as_list(value: Any) -> list:
    """A benchmark field that may hold one value or several, as a list (None → [])."""
    if value is None:
        return []
    if isinstance(value, (list, tuple)):
        return list(value)
    return [value]


def as_text(value: Any) -> str:
    """A benchmark field as text: numbers and booleans as Python writes them, other values as their
    JSON. (A prediction row's text fields read differently: scorer.model.rows.row_text.)"""
    if value is None:
        return ""
    if isinstance(value, str):
        return value
    if isinstance(value, (int, float, bool)):
        return str(value)
    return json.dumps(value, ensure_ascii=False)
