"""report.json (DESIGN §6): deterministic JSON — sorted keys, floats rounded to a fixed number of
decimals, NaN/inf as null, no timestamps — so the same inputs give byte-identical files."""

from __future__ import annotations

import json
import math
from collections.abc import Mapping
from pathlib import Path
from typing import Any

import numpy as np

from scorer.safe_text import path_text

DECIMALS = 6
_INF = float("inf")


def plain(v: Any, decimals: int = DECIMALS) -> Any:
    """A JSON-ready copy: numpy scalars unwrapped, floats rounded, tuples as lists, NaN → None."""
    t = v.__class__
    if t is str or v is None:  # the common cases first: reports hold hundreds of thousands of values
        return v
    if t is float:
        if v != v or v in (_INF, -_INF):
            return None
        r = round(v, decimals)
        return 0.0 if r == 0 else r
    if t is dict:
        out = {}
        for k, x in v.items():  # a report is mostly flat rows: their scalars inline, no call each
            c = x.__class__
            if c is str or x is None or c is int or c is bool:
                out[k if k.__class__ is str else str(k)] = x
            elif c is float and x == x and x not in (_INF, -_INF):
                r = round(x, decimals)
                out[k if k.__class__ is str else str(k)] = 0.0 if r == 0 else r
            else:
                out[k if k.__class__ is str else str(k)] = plain(x, decimals)
        return out
    if t is list:
        return [plain(x, decimals) for x in v]
    if isinstance(v, (bool, np.bool_)):
        return bool(v)
    if isinstance(v, (int, np.integer)):
        return int(v)
    if isinstance(v, (float, np.floating)):
        f = float(v)
        if math.isnan(f) or math.isinf(f):
            return None
        r = round(f, decimals)
        return 0.0 if r == 0 else r  # never "-0.0"
    if isinstance(v, Mapping):
        return {str(k): plain(x, decimals) for k, x in v.items()}
    if isinstance(v, (list, tuple)):
        return [plain(x, decimals) for x in v]
    if v is None or isinstance(v, str):
        return v
    try:
        import pandas as pd

        if v is pd.NA:
            return None
    except ImportError:  # pragma: no cover
        pass
    return str(v)


def dumps(data: Any, decimals: int = DECIMALS, texts: Mapping[str, bytes] | None = None) -> str:
    """Sorted keys, two-space indent, UTF-8 text; orjson (a core dependency) writes it in C, the
    standard library's indented encoder being pure Python and slow on large reports. `texts`: keys
    of `data` (a dict) whose value is already encoded, as section_text encodes it (a report's
    sections, encoded where they were built); the file is the same byte for byte (tested)."""
    return encoded(data, decimals, texts).decode()


def encoded(data: Any, decimals: int = DECIMALS, texts: Mapping[str, bytes] | None = None) -> bytes:
    """dumps' text, as UTF-8 bytes (what report.json holds)."""
    try:
        from orjson import Fragment
    except ImportError:  # pragma: no cover
        value = plain(data, decimals)
        return (json.dumps(value, sort_keys=True, ensure_ascii=False, indent=2, allow_nan=False) + "\n").encode()
    if texts and decimals == DECIMALS and isinstance(data, dict):
        value = plain({k: v for k, v in data.items() if k not in texts}, decimals)
        value.update({k: Fragment(t) for k, t in texts.items() if k in data})
    else:
        value = plain(data, decimals)
    return _orjson(value) + b"\n"


def section_text(data: Any) -> bytes:
    """`data` as report.json holds it under a top-level key (a section's data): its JSON text at
    that depth, for dumps' `texts`. A forked worker that built a section encodes it there, while the
    others are built, rather than the writer after all of them (a tenth of a second at MemEye scale,
    most of it rounding every number)."""
    # At depth one every line but the first is indented two more spaces; JSON text holds a line
    # break only between values (one inside a string is written escaped), so this is exact.
    return _orjson(plain(data)).replace(b"\n", b"\n  ")


def _orjson(value: Any) -> bytes:
    import orjson

    try:
        return orjson.dumps(value, option=orjson.OPT_SORT_KEYS | orjson.OPT_INDENT_2)
    except TypeError:  # text no encoder can write (a file name that is not UTF-8): shown escaped
        return orjson.dumps(_encodable(value), option=orjson.OPT_SORT_KEYS | orjson.OPT_INDENT_2)


def _encodable(v: Any) -> Any:
    """`v` with every string made writable as UTF-8 (scorer.safe_text.path_text); only called when
    a report holds such text, so the common path pays nothing."""
    if isinstance(v, str):
        return path_text(v)
    if isinstance(v, dict):
        return {path_text(k) if isinstance(k, str) else k: _encodable(x) for k, x in v.items()}
    if isinstance(v, list):
        return [_encodable(x) for x in v]
    return v


def write(data: Any, path: Path, texts: Mapping[str, bytes] | None = None) -> Path:
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_bytes(encoded(data, texts=texts))
    return path
