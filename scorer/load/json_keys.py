"""Keys that appear twice in one JSON object. Every JSON reader memscope uses (orjson, msgspec, the
standard library) keeps the last of them without a word, so a dialog file whose QA list is repeated
empty loses its items, and a prediction row with two `judge` keys is scored by the second: this finds
them, for `memscope validate` (the standard library's parser, several times slower than the readers':
only there, never while scoring).

Pure functions over the text: no file is opened here.
"""

from __future__ import annotations

import json
import re
from collections.abc import Iterator
from typing import Any

import orjson

from scorer.load.jsonio import jsonl_lines


class _Repeated(dict):
    """An object that held a key more than once: its value as the readers see it (last one wins),
    and the keys repeated, in the order first repeated."""

    __slots__ = ("repeated",)


def _as_read(key: str) -> str:
    """The key as the readers hold it: a lone surrogate (`\\ud800`, which orjson refuses) comes back
    from their fallback parser as U+FFFD (scorer.load.jsonio.std_loads), so two keys that differ
    only there are one key to them."""
    if key.isascii():
        return key
    return key.encode("utf-16", "surrogatepass").decode("utf-16", "replace")


def _object(pairs: list[tuple[str, Any]], found: list[bool]) -> dict:
    d = dict(pairs)
    keys = d if all(k.isascii() for k in d) else {_as_read(k) for k in d}
    if len(keys) == len(pairs):
        return d
    out = _Repeated(d)
    seen: set[str] = set()
    out.repeated = []
    for k, _ in pairs:
        k = _as_read(k)
        if k in seen and k not in out.repeated:
            out.repeated.append(k)
        seen.add(k)
    found[0] = True
    return out


def _where(path: str, key: str) -> str:
    return f"{path}.{key}" if path else key


def _walk(value: Any, path: str) -> Iterator[tuple[str, str]]:
    if isinstance(value, dict):
        for key in getattr(value, "repeated", ()):
            yield path, key
        for k, v in value.items():
            if isinstance(v, (dict, list)):
                yield from _walk(v, _where(path, k))
    elif isinstance(value, list):
        for i, v in enumerate(value):
            if isinstance(v, (dict, list)):
                yield from _walk(v, f"{path}[{i}]")


def repeated_keys(text: bytes | str) -> list[tuple[str, str]]:
    """(where, key) for every object of the JSON text that holds `key` more than once; `where` is
    the object's path (`qa[3]`, `rotations[0]`; "" for the outermost object). Text that is not JSON
    gives none (the readers name it)."""
    found = [False]
    try:
        value = json.loads(text, object_pairs_hook=lambda pairs: _object(pairs, found))
    except (ValueError, RecursionError):
        return []
    return list(_walk(value, "")) if found[0] else []


# A key's closing quote and its colon (and, inside a string, an escaped quote before a colon).
_KEY_END = re.compile(rb'"\s*:')
_SPACED_END = re.compile(rb'"\s+:')
# Escapes that write a quote, a colon or white space as \u00XX: a line with one is checked in full.
_ESCAPED = re.compile(rb"\\u00(?:22|3[aA]|2[0]|0[9aAdD])")


def _may_repeat(line: bytes) -> bool:
    """False only where the line's object holds no key twice: it was read (orjson) and written back
    compactly, and the text has no more key ends than what was written (a dropped repeat leaves one
    fewer; text inside strings is written back with the same escaped quotes). Lines orjson does not
    read (NaN, a number too large), or with escapes that could hide a key end, are checked in full."""
    if _ESCAPED.search(line):
        return True
    try:
        again = orjson.dumps(orjson.loads(line))
    except (orjson.JSONDecodeError, TypeError):
        return True
    # orjson writes no white space between tokens: its key ends are `":` exactly (counted in C); the
    # line's are too unless it spaces a colon from its key
    ends = len(_KEY_END.findall(line)) if _SPACED_END.search(line) else line.count(b'":')
    return ends > again.count(b'":')


def repeated_keys_by_line(text: bytes) -> list[tuple[int, str, str]]:
    """repeated_keys of each line of a JSON Lines text: (1-based line number, where, key). Each line
    is first told clean at C speed where it can be (_may_repeat: the same findings, tested; five times
    faster at MemEye scale than the standard parser on every line)."""
    out = []
    for n, line in enumerate(jsonl_lines(text), start=1):  # numbered as the run readers number them
        if line.strip() and _may_repeat(line):
            out += [(n, where, key) for where, key in repeated_keys(line)]
    return out


def repeated_text(where: str, key: str, outer: str = "the file's outermost object") -> str:
    """One finding's message: which key, in which object, and what the readers do with it."""
    place = f"in {where}" if where else f"in {outer}"
    return (f"key {key!r} appears more than once {place}: every JSON reader keeps the last one and drops "
            "the others without a word — keep one")
