"""JSON for the readers: fast parsing (orjson), a file read with one-line errors in the words users
know (the standard library's), and the lenient coercions of benchmark-file values."""

from __future__ import annotations

import json
import os
import re
import stat
from pathlib import Path
from typing import Any

import orjson

from scorer.errors import DataError


# Run files parse about twice as fast with orjson as with the standard library. Raises ValueError
# (orjson.JSONDecodeError) on text that is not JSON, including bare NaN / Infinity.
loads = orjson.loads


class BadJSON(ValueError):
    """Text the standard library cannot read as JSON: `line`/`column` (0 when unknown) and one line
    saying what, in the words users know. Also for what overflows the parser (nesting thousands deep:
    RecursionError) or Python's int-digits limit, which must never escape as a traceback."""

    def __init__(self, line: int, column: int, message: str) -> None:
        super().__init__(message)
        self.line, self.column, self.message = line, column, message

    def location(self, line_no: int | None = None) -> str:
        """`line:column` (the given line number in place of the text's own, for one JSONL line)."""
        line = line_no if line_no is not None else self.line
        if not line:
            return ""
        return f"{line}:{self.column}" if self.column else str(line)


_ORJSON_PLACE = re.compile(r"line (\d+) column (\d+)")
_SURROGATE = re.compile("[\ud800-\udfff]")
_LONG_NUMBER = re.compile(rb"\\d{1000,}")
_SURROGATE_ESCAPE = re.compile(rb"\\u[dD][89a-fA-F]")


def _without_surrogates(value: Any) -> Any:
    """`value` with every lone surrogate (a `\\ud800` escape: text no encoder writes) in its strings
    and keys replaced by U+FFFD, so that data read can always be printed and written as UTF-8."""
    if isinstance(value, str):
        return _SURROGATE.sub("\ufffd", value) if _has_surrogate(value) else value
    if isinstance(value, list):
        return [_without_surrogates(v) for v in value]
    if isinstance(value, dict):
        return {_without_surrogates(k): _without_surrogates(v) for k, v in value.items()}
    return value


def _has_surrogate(text: str) -> bool:
    try:
        text.encode("utf-8")
    except UnicodeEncodeError:
        return True
    return False


def decode_message(err: json.JSONDecodeError, text: str) -> str:
    """The standard library's reason in a whole sentence ("Unterminated string starting at" names
    its place only in the position it gives, which the location already shows), and, when the text
    ends inside a value, what that most often means."""
    msg = err.msg
    if msg.endswith(" at"):
        msg = f"{msg[:-3]} at column {err.colno}"
    msg = msg[:1].lower() + msg[1:]
    if not text[err.pos:].strip() or msg.startswith("unterminated"):
        msg += " — the text ends inside a value: a file cut short, or still being written?"
    return msg


def std_loads(data: bytes, parse_constant: Any = None) -> Any:
    """One JSON text read with the standard library (what orjson refuses: NaN / Infinity, lone
    surrogates, integers beyond 64 bits). Raises BadJSON, never RecursionError or the int-digits
    ValueError; lone surrogates come back as U+FFFD."""
    try:
        text = data.decode("utf-8")
    except UnicodeDecodeError as err:
        line = data.count(b"\n", 0, err.start) + 1
        column = err.start - (data.rfind(b"\n", 0, err.start) + 1) + 1
        raise BadJSON(line, column, "not UTF-8 text") from None
    try:
        value = json.loads(text, parse_constant=parse_constant) if parse_constant else json.loads(text)
    except json.JSONDecodeError as err:
        raise BadJSON(err.lineno, err.colno, f"invalid JSON: {decode_message(err, text)}") from None
    except RecursionError:
        line = column = 0
        try:  # orjson stops at its depth limit (1024) and says where
            orjson.loads(data)
        except orjson.JSONDecodeError as err:
            m = _ORJSON_PLACE.search(str(err))
            line, column = (int(m[1]), int(m[2])) if m else (0, 0)
        raise BadJSON(line, column, "invalid JSON: nested too deeply") from None
    except ValueError as err:  # the int-digits limit (sys.get_int_max_str_digits)
        m = _LONG_NUMBER.search(data)
        start = m.start() if m else -1
        line = data.count(b"\n", 0, start) + 1 if m else 0
        column = start - (data.rfind(b"\n", 0, start) + 1) + 1 if m else 0
        raise BadJSON(line, column, f"invalid JSON: a number too long to read ({str(err).split(':')[0]})") from None
    if _SURROGATE_ESCAPE.search(data):
        value = _without_surrogates(value)
    return value


def json_error(line: bytes) -> tuple[str, str]:
    """(column location, message) for a line that failed to parse, in the standard library's words."""
    try:
        std_loads(line)
    except BadJSON as err:
        return (str(err.column) if err.column else ""), err.message
    return "", "invalid JSON"


def stat_or_none(path: Path, follow: bool = True) -> os.stat_result | None:
    """`path`'s status, None when nothing is there; a DataError naming it when it cannot be looked
    at (a name longer than the file system allows, a symlink loop, no permission)."""
    try:
        return os.stat(path) if follow else os.lstat(path)
    except (FileNotFoundError, NotADirectoryError):
        return None
    except OSError as err:
        raise DataError(path, "", f"cannot read: {err.strerror or err}") from None
    except ValueError as err:  # an embedded NUL byte
        raise DataError(path, "", f"cannot read: {err}") from None


# O_NONBLOCK: should the file be swapped for a FIFO after it was looked at, its open does not wait
# for a writer (the FIFO then reads as empty, or fails); it changes nothing for a regular file.
_READ_FLAGS = os.O_RDONLY | getattr(os, "O_CLOEXEC", 0) | getattr(os, "O_BINARY", 0) | getattr(os, "O_NONBLOCK", 0)


def jsonl_lines(data: bytes) -> list[bytes]:
    """A JSON Lines file's lines, numbered from 1 by every reader alike: each ends at \\n, \\r\\n or a
    bare \\r (bytes.splitlines), blank ones included (a reader skips them, keeping the numbers). A
    file written with carriage returns alone had been one line of many rows to some readers."""
    return data.splitlines() if b"\r" in data else data.split(b"\n")


def read_regular(path: Path) -> bytes:
    """A regular file's bytes; a DataError naming the file for anything else (a folder, a FIFO or a
    device, which would block or never end, a symlink loop, a name too long): never read those."""
    try:
        st = os.stat(path)
        if not stat.S_ISREG(st.st_mode):
            raise DataError(path, "", f"not a regular file ({_kind(st.st_mode)})")
        # os-level calls, no file object: five system calls a file instead of nine (thousands of
        # small files are read per report)
        fd = os.open(path, _READ_FLAGS)
        try:
            parts = [os.read(fd, st.st_size + 1)]
            while more := os.read(fd, 1 << 20):  # to the end of the file, should it have grown
                parts.append(more)
        finally:
            os.close(fd)
        return parts[0] if len(parts) == 1 else b"".join(parts)
    except OSError as err:
        raise DataError(path, "", f"cannot read: {err.strerror or err}") from None


def _kind(mode: int) -> str:
    if stat.S_ISDIR(mode):
        return "a folder"
    if stat.S_ISFIFO(mode):
        return "a FIFO"
    if stat.S_ISCHR(mode) or stat.S_ISBLK(mode):
        return "a device"
    if stat.S_ISSOCK(mode):
        return "a socket"
    return "not a file"


def parse_json(path: Path, data: bytes) -> Any:
    """A JSON file's value from its bytes; a DataError naming the file (and line:column)."""
    try:
        return orjson.loads(data)
    except orjson.JSONDecodeError:
        pass  # the standard library says where and what, in the words users know
    try:
        return std_loads(data)
    except BadJSON as err:
        raise DataError(path, err.location(), err.message) from None


def read_json(path: Path) -> Any:
    """A JSON file's value; a DataError naming the file (and line:column) when it cannot be read."""
    return parse_json(path, read_regular(path))


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
