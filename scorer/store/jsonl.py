"""JSONL exchange of annotation events (DESIGN §4): one event per line, in the shape
{"ts", "annotator", "kind", "item_id", "mode", "run", "study", "payload"}.

Import validates the whole file first and then stores it in one transaction (a bad line adds
nothing); an event already present (same content uid) is skipped, so importing a file twice, or
merging files that overlap, never duplicates an act.
"""

from __future__ import annotations

import json
from dataclasses import dataclass
from pathlib import Path
from typing import IO

from scorer.errors import DataError, UserError
from scorer.load.jsonio import BadJSON, read_regular, std_loads
from scorer.store.db import Store
from scorer.store.payload import NewEvent, build_event

FIELDS = ("ts", "annotator", "kind", "item_id", "mode", "run", "study", "payload")
REQUIRED = ("ts", "annotator", "kind", "item_id", "payload")


@dataclass(frozen=True, slots=True)
class ImportResult:
    file: str
    lines: int  # events read
    added: int
    skipped: int  # already present


def parse_jsonl(path: str | Path) -> list[tuple[str, NewEvent]]:
    """Every event of a JSONL file, validated, with its `file:line`; DataError at the first bad line."""
    path = Path(path)
    data = read_regular(path)  # a folder, FIFO or device is an error, never read
    out: list[tuple[str, NewEvent]] = []
    for line_no, raw in enumerate(data.split(b"\n"), 1):
        if not raw.strip():
            continue
        out.append((f"{path}:{line_no}", _parse_line(path, line_no, raw)))
    return out


def _parse_line(path: Path, line_no: int, line: bytes) -> NewEvent:
    where = str(line_no)
    try:
        record = std_loads(line)  # lone surrogates come back as U+FFFD (they cannot be stored)
    except BadJSON as err:
        raise DataError(path, where, f"{err.message} (column {err.column})" if err.column else err.message) from None
    if not isinstance(record, dict):
        raise DataError(path, where, "expected one JSON object per line")
    unknown = [k for k in record if k not in FIELDS]
    if unknown:
        raise DataError(path, where, f"unknown field {unknown[0]!r} (fields: {', '.join(FIELDS)})")
    missing = [k for k in REQUIRED if k not in record]
    if missing:
        raise DataError(path, where, f"missing field {missing[0]!r}")
    try:
        return build_event(record)
    except UserError as err:
        raise DataError(path, where, str(err)) from None


def import_jsonl(store: Store, path: str | Path) -> ImportResult:
    events = parse_jsonl(path)
    added, skipped = store.insert_many(events)
    return ImportResult(str(path), len(events), added, skipped)


def write_jsonl(store: Store, out: IO[str], study: str | None = None) -> int:
    """Write every event (undos after their targets) as JSONL; returns the number written."""
    n = 0
    for ev in store.events(study=study):
        out.write(json.dumps(ev.record(), ensure_ascii=False) + "\n")
        n += 1
    return n

