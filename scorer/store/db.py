"""The annotation database (DESIGN §4): one SQLite file that several annotators' processes share.

Every human act is an append-only event; nothing is updated or deleted (triggers enforce it), and an
undo is a new event naming the uid of the event it cancels. Current state is derived: the latest
live (not undone) event per (annotator, kind, item_id, mode, run_key). Every write is its own
committed transaction under WAL with synchronous=FULL, so when a write method returns the event is
on disk: the app may show it as saved.

    with Store("memscope.db") as db:
        ev = db.add("verdict", "ann1", "Task:12", {"verdict": "accept"}, mode="open", run_key="b/m")
        db.undo("ann1", ev.id)
        db.verdicts(study="judge-72")        # plain rows for the scorer
"""

from __future__ import annotations

import json
import sqlite3
import threading
import time
from collections import deque
from collections.abc import Iterable, Iterator, Mapping
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from scorer.errors import UserError
from scorer.store import queues
from scorer.store.payload import (
    ADDITIVE_KINDS,
    ADJUDICATION,
    DERIVED_KINDS,
    PAYLOAD_FIELDS,
    NewEvent,
    build_event,
    normalize_ts,
    now_ts,
)
from scorer.store.queues import STUDY_EVENT, QueueEntry, Study, StudyItem
from scorer.store.schema import BUSY_TIMEOUT_S, LIVE, connect, immediate

DEFAULT_DB = "memscope.db"
_COLUMNS = "id, uid, ts, t_us, annotator, kind, item_id, mode, run_key, study, payload, target_uid"
_INSERT = f"INSERT OR IGNORE INTO events ({_COLUMNS[4:]}) VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?)"
_ROW_KEYS = ("event_id", "uid", "ts", "annotator", "item_id", "mode", "run_key", "study")  # + payload fields


@dataclass(frozen=True, slots=True)
class Event:
    id: int
    uid: str
    ts: str
    annotator: str
    kind: str
    item_id: str
    mode: str | None
    run_key: str | None
    study: str | None
    payload: Mapping[str, Any] = field(default_factory=dict)

    @property
    def target(self) -> str | None:
        """For an undo, the uid of the event it cancels."""
        return self.payload.get("target") if self.kind == "undo" else None

    def record(self) -> dict[str, Any]:
        """The event in the JSONL exchange shape of DESIGN §4."""
        return {"ts": self.ts, "annotator": self.annotator, "kind": self.kind, "item_id": self.item_id,
                "mode": self.mode, "run": self.run_key, "study": self.study, "payload": dict(self.payload)}


def _row(ev: NewEvent) -> tuple:
    """The values of _INSERT for one event."""
    return (ev.uid, ev.ts, ev.t_us, ev.annotator, ev.kind, ev.item_id, ev.mode, ev.run_key, ev.study,
            json.dumps(ev.payload, ensure_ascii=False, sort_keys=True),
            ev.payload.get("target") if ev.kind == "undo" else None)


def _event(row: tuple) -> Event:
    id_, uid, ts, _, annotator, kind, item_id, mode, run_key, study, payload, _ = row
    return Event(id_, uid, ts, annotator, kind, item_id, mode, run_key, study, json.loads(payload))


class Store:
    """One open annotation database. Thread-safe for writes; cheap to open per process."""

    def __init__(self, path: str | Path = DEFAULT_DB, create: bool = True, timeout: float = BUSY_TIMEOUT_S):
        self.path = Path(path)
        fresh = not (self.path.is_file() and self.path.stat().st_size > 0)
        self._conn = connect(self.path, create=create, timeout=timeout)
        self.created = fresh  # this open made the file (writers say "created DB …" once)
        self._lock = threading.RLock()
        self.write_seconds: deque[float] = deque(maxlen=10_000)  # wall time of each committed write

    # -- life cycle ----------------------------------------------------------------------------------
    def close(self) -> None:
        with self._lock:
            self._conn.close()

    def __enter__(self) -> Store:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()

    @property
    def schema_version(self) -> int:
        return self._conn.execute("PRAGMA user_version").fetchone()[0]

    def _sql(self, sql: str, params: Any = ()) -> list[tuple]:
        with self._lock:
            try:
                return self._conn.execute(sql, params).fetchall()
            except sqlite3.DatabaseError as err:
                raise UserError(f"{self.path}: cannot read the annotation database ({err})") from None

    # -- writing -------------------------------------------------------------------------------------
    def add(self, kind: str, annotator: str, item_id: str, payload: Mapping[str, Any], *,
            mode: str | None = None, run_key: str | None = None, study: str | None = None,
            ts: str | None = None) -> Event:
        """Append one act and commit it (durably) before returning it. UserError if invalid."""
        if kind == "undo":
            raise UserError("an undo names the event it cancels: use Store.undo")
        return self._append({"ts": ts, "annotator": annotator, "kind": kind, "item_id": item_id,
                             "mode": mode, "run": run_key, "study": study, "payload": payload})

    def label(self, annotator: str, item_id: str, x: Iterable[str], y: Iterable[str], **kw: Any) -> Event:
        return self.add("label", annotator, item_id, {"x": list(x), "y": list(y)}, **kw)

    def verdict(self, annotator: str, item_id: str, mode: str, run_key: str, verdict: str, **kw: Any) -> Event:
        return self.add("verdict", annotator, item_id, {"verdict": verdict}, mode=mode, run_key=run_key, **kw)

    def note(self, annotator: str, item_id: str, text: str, **kw: Any) -> Event:
        return self.add("note", annotator, item_id, {"text": text}, **kw)

    def flag(self, annotator: str, item_id: str, flag: str, text: str | None = None, **kw: Any) -> Event:
        payload = {"flag": flag} if text is None else {"flag": flag, "text": text}
        return self.add("flag", annotator, item_id, payload, **kw)

    def undo(self, annotator: str, event_id: int | str) -> Event:
        """Cancel one act (by id or uid) with a new `undo` event; earlier state shows again."""
        target = self.event(event_id)
        if target.kind == "undo":
            raise UserError(f"event {target.id} is itself an undo; act again instead of undoing it")
        if self._sql("SELECT 1 FROM events WHERE kind = 'undo' AND target_uid = ?", (target.uid,)):
            raise UserError(f"event {target.id} is already undone")
        return self._append({"ts": None, "annotator": annotator, "kind": "undo", "item_id": target.item_id,
                             "mode": target.mode, "run": target.run_key, "study": target.study,
                             "payload": {"target": target.uid}})

    def last_act(self, annotator: str, study: str | None = None) -> Event | None:
        """The annotator's latest live act (what "undo last" cancels), or None."""
        rows = self._sql(
            f"SELECT {_COLUMNS} FROM events e WHERE annotator = ? AND kind != 'undo' "
            f"AND (? IS NULL OR study = ?) AND {LIVE} ORDER BY t_us DESC, id DESC LIMIT 1",
            (annotator, study, study))
        return _event(rows[0]) if rows else None

    def _append(self, record: dict) -> Event:
        started = time.perf_counter()
        t_us = normalize_ts(record["ts"])[1] if record["ts"] is not None else now_ts()[1]
        ev = build_event(record, t_us)  # validate before taking the write lock
        with self._lock:
            try:
                with immediate(self._conn) as conn:
                    # Two distinct acts with identical content in the same microsecond would share a
                    # uid; the later one moves on by a microsecond rather than vanish.
                    for _ in range(1000):
                        cur = conn.execute(_INSERT, _row(ev))
                        if cur.rowcount == 1:
                            break
                        t_us += 1
                        ev = build_event(record, t_us)
            except sqlite3.OperationalError as err:
                raise UserError(f"{self.path}: could not save the annotation ({err})") from None
        self.write_seconds.append(time.perf_counter() - started)
        return Event(cur.lastrowid, ev.uid, ev.ts, ev.annotator, ev.kind, ev.item_id, ev.mode,
                     ev.run_key, ev.study, ev.payload)

    def insert_many(self, events: list[tuple[str, NewEvent]]) -> tuple[int, int]:
        """Store validated events (each with a `where` for messages) in one transaction: all or none.
        Returns (added, skipped); an event whose uid is already present is skipped."""
        added = 0
        with self._lock:
            try:
                with immediate(self._conn) as conn:
                    for where, ev in events:
                        if ev.kind == "undo" and not conn.execute(
                                "SELECT 1 FROM events WHERE uid = ?", (ev.payload["target"],)).fetchone():
                            raise UserError(f"{where}: undo of an event that is neither in the database "
                                            "nor earlier in the file")
                        added += conn.execute(_INSERT, _row(ev)).rowcount
            except sqlite3.OperationalError as err:
                raise UserError(f"{self.path}: import failed, nothing was added ({err})") from None
        return added, len(events) - added

    # -- reading -------------------------------------------------------------------------------------
    def event(self, event_id: int | str) -> Event:
        col = "uid" if isinstance(event_id, str) else "id"
        rows = self._sql(f"SELECT {_COLUMNS} FROM events WHERE {col} = ?", (event_id,))
        if not rows:
            raise UserError(f"no event {event_id!r} in {self.path}")
        return _event(rows[0])

    def events(self, study: str | None = None, kinds: Iterable[str] | None = None,
               annotator: str | None = None, live_only: bool = False) -> Iterator[Event]:
        """Events in insertion order (every undo after its target), optionally filtered."""
        kinds = tuple(kinds) if kinds is not None else None
        sql = f"SELECT {_COLUMNS} FROM events e WHERE (? IS NULL OR study = ?) AND (? IS NULL OR annotator = ?)"
        params: list[Any] = [study, study, annotator, annotator]
        if kinds is not None:
            sql += f" AND kind IN ({', '.join('?' * len(kinds))})" if kinds else " AND 0"
            params += kinds
        if live_only:
            sql += f" AND kind != 'undo' AND {LIVE}"
        for row in self._sql(sql + " ORDER BY id", params):
            yield _event(row)

    def count(self) -> int:
        return self._sql("SELECT COUNT(*) FROM events")[0][0]

    def current(self, kind: str, study: str | None = None, annotator: str | None = None) -> list[dict]:
        """Derived state of `kind` as flat rows: for label, verdict and oracle the latest live event
        per (annotator, item_id, mode, run_key), for adjudication per (annotator, item_id, mode,
        run_key, of) (`decision` a dict); for note and flag every live event (they add up).
        Payload fields become columns; `run_key` is the run, `event_id` the deciding event."""
        if kind not in DERIVED_KINDS:
            raise UserError(f"no derived state for kind {kind!r} (expected one of {', '.join(DERIVED_KINDS)})")
        live = (f"SELECT * FROM events e WHERE kind = :kind AND (:study IS NULL OR study = :study) "
                f"AND (:ann IS NULL OR annotator = :ann) AND {LIVE}")
        if kind in ADDITIVE_KINDS:
            sql = f"SELECT {_COLUMNS} FROM ({live}) ORDER BY t_us, id"
        else:
            # an adjudication of labels and one of oracle answers on the same entry both stand
            of = ", json_extract(payload, '$.of')" if kind == ADJUDICATION else ""
            sql = (f"SELECT {_COLUMNS} FROM (SELECT *, ROW_NUMBER() OVER (PARTITION BY annotator, item_id, "
                   f"mode, run_key{of} ORDER BY t_us DESC, id DESC) AS rn FROM ({live})) WHERE rn = 1 "
                   "ORDER BY item_id, mode, run_key, annotator")
        out = []
        for row in self._sql(sql, {"kind": kind, "study": study, "ann": annotator}):
            ev = _event(row)
            head = (ev.id, ev.uid, ev.ts, ev.annotator, ev.item_id, ev.mode, ev.run_key, ev.study)
            out.append({**dict(zip(_ROW_KEYS, head)), **ev.payload})
        return out

    def labels(self, study: str | None = None) -> list[dict]:
        """Rows {annotator, item_id, mode, study, x: [...], y: [...], …}."""
        return self.current("label", study)

    def verdicts(self, study: str | None = None) -> list[dict]:
        """Rows {annotator, item_id, mode, run_key, study, verdict, …}."""
        return self.current("verdict", study)

    def oracle_answers(self, study: str | None = None) -> list[dict]:
        """Rows {annotator, item_id, mode, run_key, study, choice, rotation, answer, seconds, …};
        absent payload fields are None."""
        rows = self.current("oracle", study)
        for r in rows:
            for key in PAYLOAD_FIELDS["oracle"]:
                r.setdefault(key, None)
        return rows

    def frame(self, kind: str, study: str | None = None):
        """`current(kind, study)` as a pandas DataFrame (columns present even when empty)."""
        import pandas as pd  # lazily: ~0.5 s to import, and only the scorer asks for frames (not the app)

        rows = self.oracle_answers(study) if kind == "oracle" else self.current(kind, study)
        return pd.DataFrame(rows, columns=[*_ROW_KEYS, *PAYLOAD_FIELDS[kind]])

    def annotators(self) -> list[str]:
        return [r[0] for r in self._sql("SELECT DISTINCT annotator FROM events ORDER BY annotator")]

    # -- studies -------------------------------------------------------------------------------------
    def create_study(self, name: str, kind: str, seed: int, params: Mapping[str, Any] | None,
                     entries: Iterable[Any]) -> Study:
        """Store a study. `entries` are (item_id, mode, run_key, stratum) tuples or mappings, in the
        builder's order; they become study positions 1..n."""
        with self._lock:
            return queues.create_study(self._conn, name, kind, seed, params, entries)

    def study(self, name: str) -> Study:
        with self._lock:
            return queues.get_study(self._conn, name)

    def studies(self) -> list[Study]:
        with self._lock:
            return queues.list_studies(self._conn)

    def study_items(self, name: str) -> list[StudyItem]:
        """The study's entries in the builder's order (not any annotator's)."""
        with self._lock:
            return queues.study_items(self._conn, name)

    def annotator_queue(self, study: str, annotator: str) -> list[QueueEntry]:
        """The annotator's shuffled queue (from seed + annotator name), recorded on first request;
        each entry says whether the annotator has already done it, so a session can resume."""
        with self._lock:
            return queues.annotator_queue(self._conn, study, annotator)

    def progress(self, study: str) -> list[dict[str, Any]]:
        with self._lock:
            return queues.progress(self._conn, study)

    def reveal(self, study: str, annotator: str | None = None) -> list[dict[str, Any]]:
        with self._lock:
            return queues.reveal(self._conn, study, annotator)

    def study_answers(self, name: str, reveal: bool = False) -> list[dict[str, Any]]:
        """One row per answered queue entry (the annotator's current answer) and per live note or
        flag on a study entry, in (annotator, position) order; the run only with `reveal`
        (queues.answer_rows)."""
        study = self.study(name)
        acts = self.current(STUDY_EVENT[study.kind], study=name)
        remarks = [row for kind in ADDITIVE_KINDS for row in self.current(kind, study=name)]
        return queues.answer_rows(study, self.reveal(name), acts, remarks, reveal)
