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

from scorer import store_studies as studies
from scorer.errors import UserError
from scorer.store_payload import (
    ACT_KINDS,
    check_identity,
    event_uid,
    normalize_ts,
    now_ts,
    ts_from_us,
    validate_payload,
)
from scorer.store_schema import BUSY_TIMEOUT_S, connect
from scorer.store_studies import QueueEntry, Study, StudyItem

__all__ = ["DEFAULT_DB", "Event", "QueueEntry", "Store", "Study", "StudyItem"]

DEFAULT_DB = "memscope.db"
_COLUMNS = "id, uid, ts, t_us, annotator, kind, item_id, mode, run_key, study, payload, target_uid"
# Events that some undo cancels; derived state ignores them.
_LIVE = "NOT EXISTS (SELECT 1 FROM events u WHERE u.kind = 'undo' AND u.target_uid = e.uid)"


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

    def row(self) -> tuple:
        return (self.uid, self.ts, self.t_us, self.annotator, self.kind, self.item_id, self.mode,
                self.run_key, self.study, json.dumps(self.payload, ensure_ascii=False, sort_keys=True),
                self.payload.get("target") if self.kind == "undo" else None)


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


def _event(row: tuple) -> Event:
    id_, uid, ts, _, annotator, kind, item_id, mode, run_key, study, payload, _ = row
    return Event(id_, uid, ts, annotator, kind, item_id, mode, run_key, study, json.loads(payload))


class Store:
    """One open annotation database. Thread-safe for writes; cheap to open per process."""

    def __init__(self, path: str | Path = DEFAULT_DB, create: bool = True, timeout: float = BUSY_TIMEOUT_S):
        self.path = Path(path)
        self._conn = connect(self.path, create=create, timeout=timeout)
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
            f"AND (? IS NULL OR study = ?) AND {_LIVE} ORDER BY t_us DESC, id DESC LIMIT 1",
            (annotator, study, study))
        return _event(rows[0]) if rows else None

    def _append(self, record: dict) -> Event:
        started = time.perf_counter()
        t_us = normalize_ts(record["ts"])[1] if record["ts"] is not None else now_ts()[1]
        ev = build_event(record, t_us)  # validate before taking the write lock
        with self._lock:
            conn = self._conn
            try:
                conn.execute("BEGIN IMMEDIATE")
                try:
                    # Two distinct acts with identical content in the same microsecond would share a
                    # uid; the later one moves on by a microsecond rather than vanish.
                    for _ in range(1000):
                        cur = conn.execute(f"INSERT OR IGNORE INTO events ({_COLUMNS[4:]}) "
                                           "VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?)", ev.row())
                        if cur.rowcount == 1:
                            break
                        t_us += 1
                        ev = build_event(record, t_us)
                    conn.execute("COMMIT")
                except BaseException:
                    conn.execute("ROLLBACK")
                    raise
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
            conn = self._conn
            conn.execute("BEGIN IMMEDIATE")
            try:
                for where, ev in events:
                    if ev.kind == "undo" and not conn.execute(
                            "SELECT 1 FROM events WHERE uid = ?", (ev.payload["target"],)).fetchone():
                        raise UserError(f"{where}: undo of an event that is neither in the database "
                                        "nor earlier in the file")
                    cur = conn.execute(f"INSERT OR IGNORE INTO events ({_COLUMNS[4:]}) "
                                       "VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?)", ev.row())
                    added += cur.rowcount
                conn.execute("COMMIT")
            except sqlite3.OperationalError as err:
                conn.execute("ROLLBACK")
                raise UserError(f"{self.path}: import failed, nothing was added ({err})") from None
            except BaseException:
                conn.execute("ROLLBACK")
                raise
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
            sql += f" AND kind != 'undo' AND {_LIVE}"
        for row in self._sql(sql + " ORDER BY id", params):
            yield _event(row)

    def count(self) -> int:
        return self._sql("SELECT COUNT(*) FROM events")[0][0]

    def current(self, kind: str, study: str | None = None, annotator: str | None = None) -> list[dict]:
        """Derived state of `kind` as flat rows: for label, verdict and oracle the latest live event
        per (annotator, item_id, mode, run_key); for note and flag every live event (they add up).
        Payload fields become columns; `run_key` is the run, `event_id` the deciding event."""
        if kind not in ACT_KINDS:
            raise UserError(f"no derived state for kind {kind!r} (expected one of {', '.join(ACT_KINDS)})")
        live = (f"SELECT * FROM events e WHERE kind = :kind AND (:study IS NULL OR study = :study) "
                f"AND (:ann IS NULL OR annotator = :ann) AND {_LIVE}")
        if kind in ("note", "flag"):
            sql = f"SELECT {_COLUMNS} FROM ({live}) ORDER BY t_us, id"
        else:
            sql = (f"SELECT {_COLUMNS} FROM (SELECT *, ROW_NUMBER() OVER (PARTITION BY annotator, item_id, "
                   f"mode, run_key ORDER BY t_us DESC, id DESC) AS rn FROM ({live})) WHERE rn = 1 "
                   "ORDER BY item_id, mode, run_key, annotator")
        out = []
        for row in self._sql(sql, {"kind": kind, "study": study, "ann": annotator}):
            ev = _event(row)
            out.append({"event_id": ev.id, "uid": ev.uid, "ts": ev.ts, "annotator": ev.annotator, "item_id": ev.item_id,
                        "mode": ev.mode, "run_key": ev.run_key, "study": ev.study, **ev.payload})
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
            for key in ("choice", "rotation", "answer", "seconds"):
                r.setdefault(key, None)
        return rows

    def frame(self, kind: str, study: str | None = None):
        """`current(kind, study)` as a pandas DataFrame (columns present even when empty)."""
        import pandas as pd

        rows = self.oracle_answers(study) if kind == "oracle" else self.current(kind, study)
        cols = ["event_id", "uid", "ts", "annotator", "item_id", "mode", "run_key", "study"]
        extra = {"label": ["x", "y"], "verdict": ["verdict"], "oracle": ["choice", "rotation", "answer", "seconds"],
                 "note": ["text"], "flag": ["flag", "text"]}[kind]
        return pd.DataFrame(rows, columns=cols + extra)

    def annotators(self) -> list[str]:
        return [r[0] for r in self._sql("SELECT DISTINCT annotator FROM events ORDER BY annotator")]

    # -- studies -------------------------------------------------------------------------------------
    def create_study(self, name: str, kind: str, seed: int, params: Mapping[str, Any] | None,
                     entries: Iterable[Any]) -> Study:
        """Store a study. `entries` are (item_id, mode, run_key, stratum) tuples or mappings, in the
        builder's order; they become study positions 1..n."""
        with self._lock:
            return studies.create_study(self._conn, name, kind, seed, params, entries)

    def study(self, name: str) -> Study:
        with self._lock:
            return studies.get_study(self._conn, name)

    def studies(self) -> list[Study]:
        with self._lock:
            return studies.list_studies(self._conn)

    def study_items(self, name: str) -> list[StudyItem]:
        with self._lock:
            return studies.study_items(self._conn, name)

    def annotator_queue(self, study: str, annotator: str) -> list[QueueEntry]:
        """The annotator's shuffled queue (from seed + annotator name), recorded on first request;
        each entry says whether the annotator has already done it, so a session can resume."""
        with self._lock:
            return studies.annotator_queue(self._conn, study, annotator)

    def progress(self, study: str) -> list[dict[str, Any]]:
        with self._lock:
            return studies.progress(self._conn, study)

    def reveal(self, study: str, annotator: str | None = None) -> list[dict[str, Any]]:
        with self._lock:
            return studies.reveal(self._conn, study, annotator)
