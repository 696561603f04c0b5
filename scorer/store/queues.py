"""Studies inside the annotation database: a named, seeded list of (item, mode, run) entries, and per
annotator a shuffled order with blind ids, fixed the first time that annotator asks for the queue
(and, in an oracle study, which rotation of an item's options the annotator sees); after the study,
its answers as rows for export.

Used through `Store` (db.py); the functions that read or write take its open connection.
"""

from __future__ import annotations

import hashlib
import json
import random
import sqlite3
from collections.abc import Iterable, Mapping
from dataclasses import dataclass, field
from typing import Any

from scorer.errors import UserError
from scorer.model import MODES
from scorer.store.payload import ADJUDICATION, DECISION_KINDS, check_identity, is_int, now_ts, refuse_secrets
from scorer.store.schema import LIVE, immediate

STUDY_KINDS = ("agreement", "oracle", "labels", "adjudicate")
# The event kind that completes one queue entry of each study kind.
STUDY_EVENT = {"agreement": "verdict", "oracle": "oracle", "labels": "label", "adjudicate": ADJUDICATION}


@dataclass(frozen=True, slots=True)
class Study:
    name: str
    kind: str
    seed: int
    params: Mapping[str, Any] = field(default_factory=dict)
    created: str = ""
    n_items: int = 0


@dataclass(frozen=True, slots=True)
class StudyItem:
    position: int  # 1-based position in the study as built (the builder's order)
    item_id: str
    mode: str | None
    run_key: str | None
    stratum: str | None


@dataclass(frozen=True, slots=True)
class QueueEntry:
    """One entry of an annotator's queue. Show `blind_id`, never `run_key`, in blind studies."""

    position: int  # 1-based position in this annotator's order
    blind_id: str
    item: StudyItem
    done: bool

    @property
    def item_id(self) -> str:
        return self.item.item_id

    @property
    def mode(self) -> str | None:
        return self.item.mode

    @property
    def run_key(self) -> str | None:
        return self.item.run_key


def _entry(e: Any, i: int) -> tuple[str, str | None, str | None, str | None]:
    if isinstance(e, Mapping):
        vals = (e.get("item_id"), e.get("mode"), e.get("run_key", e.get("run")), e.get("stratum"))
    elif isinstance(e, (tuple, list)) and 1 <= len(e) <= 4:
        vals = tuple(e) + (None,) * (4 - len(e))
    else:
        raise UserError(f"study entry {i}: expected (item_id, mode, run_key, stratum), got {e!r}")
    item_id, mode, run_key, stratum = vals
    try:
        check_identity("-", item_id, mode, run_key, None)
    except UserError as err:
        raise UserError(f"study entry {i}: {err}") from None
    if stratum is not None and not isinstance(stratum, str):
        raise UserError(f"study entry {i}: 'stratum' must be a string, got {stratum!r}")
    return item_id, mode, run_key, stratum


def create_study(conn: sqlite3.Connection, name: str, kind: str, seed: int,
                 params: Mapping[str, Any] | None, entries: Iterable[Any]) -> Study:
    try:
        check_identity("-", "-", None, None, name)
    except UserError as err:
        raise UserError(f"study name: {err}") from None
    if kind not in STUDY_KINDS:
        raise UserError(f"study kind must be one of {', '.join(STUDY_KINDS)}, got {kind!r}")
    if not is_int(seed):
        raise UserError(f"study seed must be an integer, got {seed!r}")
    params = dict(params or {})
    refuse_secrets(params, "study params")
    try:
        params_json = json.dumps(params, sort_keys=True, ensure_ascii=False, allow_nan=False)
    except (TypeError, ValueError) as err:
        raise UserError(f"study params must be plain JSON: {err}") from None
    rows = [_entry(e, i) for i, e in enumerate(entries, 1)]
    if not rows:
        raise UserError(f"study {name!r} has no entries")
    seen: set[tuple] = set()
    for i, (item_id, mode, run_key, _) in enumerate(rows, 1):
        if (item_id, mode, run_key) in seen:
            raise UserError(f"study entry {i}: ({item_id}, {mode}, {run_key}) is listed twice")
        seen.add((item_id, mode, run_key))
        if kind == "agreement" and (run_key is None or mode is None):
            raise UserError(f"study entry {i}: an agreement study needs a mode and a run for every entry")
        if kind == "oracle" and mode not in MODES:
            raise UserError(f"study entry {i}: an oracle study needs a mode for every entry")
    created, _ = now_ts()
    with immediate(conn):
        if conn.execute("SELECT 1 FROM studies WHERE name = ?", (name,)).fetchone():
            raise UserError(f"a study named {name!r} already exists in this database")
        conn.execute("INSERT INTO studies VALUES (?, ?, ?, ?, ?)", (name, kind, seed, params_json, created))
        conn.executemany("INSERT INTO study_items VALUES (?, ?, ?, ?, ?, ?)",
                         [(name, i, *r) for i, r in enumerate(rows, 1)])
    return Study(name, kind, seed, params, created, len(rows))


def _study_row(row: tuple) -> Study:
    name, kind, seed, params, created, n = row
    return Study(name, kind, seed, json.loads(params), created, n)


_STUDY_SQL = ("SELECT s.name, s.kind, s.seed, s.params, s.created, "
              "(SELECT COUNT(*) FROM study_items i WHERE i.study = s.name) FROM studies s")


def get_study(conn: sqlite3.Connection, name: str) -> Study:
    row = conn.execute(_STUDY_SQL + " WHERE s.name = ?", (name,)).fetchone()
    if row is None:
        known = [r[0] for r in conn.execute("SELECT name FROM studies ORDER BY name")]
        raise UserError(f"no study named {name!r} (studies: {', '.join(known) or 'none'})")
    return _study_row(row)


def list_studies(conn: sqlite3.Connection) -> list[Study]:
    return [_study_row(r) for r in conn.execute(_STUDY_SQL + " ORDER BY s.created, s.name")]


def study_items(conn: sqlite3.Connection, name: str) -> list[StudyItem]:
    """The study's entries in the builder's order (positions 1..n)."""
    get_study(conn, name)
    rows = conn.execute("SELECT position, item_id, mode, run_key, stratum FROM study_items WHERE study = ? "
                        "ORDER BY position", (name,))
    return [StudyItem(*r) for r in rows]


def shuffled_positions(seed: int, annotator: str, n: int) -> list[int]:
    """The annotator's order of study positions 1..n: a function of seed and annotator name only."""
    order = list(range(1, n + 1))
    # A str seed is hashed with SHA-512 by `random`, so this is stable across runs and platforms.
    random.Random(f"{seed}\x1f{annotator}").shuffle(order)
    return order


def blind_id(study: str, seed: int, item_position: int) -> str:
    """An opaque id for a study entry that reveals nothing of its method or place in the study."""
    digest = hashlib.sha256(f"{study}\x1f{seed}\x1f{item_position}".encode()).hexdigest()
    return "b" + digest[:9]


def oracle_rotation(seed: int, annotator: str, item_id: str, n_rotations: int) -> int:
    """Which rotation of an item's options an annotator sees in an oracle study: fixed by seed,
    annotator and item, so a resumed session shows the same one, and annotators see different ones."""
    if n_rotations <= 1:
        return 0
    return random.Random(f"memscope-oracle\x1f{seed}\x1f{annotator}\x1f{item_id}").randrange(n_rotations)


# Done = this annotator has a live (not undone) event of the study's kind, in this study, for the entry.
_DONE_SQL = f"""EXISTS (SELECT 1 FROM events e
    WHERE e.study = o.study AND e.annotator = o.annotator AND e.kind = :kind
      AND e.item_id = si.item_id AND e.mode IS si.mode AND e.run_key IS si.run_key AND {LIVE})"""


def annotator_queue(conn: sqlite3.Connection, name: str, annotator: str) -> list[QueueEntry]:
    check_identity(annotator, "-", None, None, name)
    study = get_study(conn, name)
    have = conn.execute("SELECT 1 FROM study_order WHERE study = ? AND annotator = ? LIMIT 1",
                        (name, annotator)).fetchone()
    if not have:
        order = shuffled_positions(study.seed, annotator, study.n_items)
        created, _ = now_ts()
        with immediate(conn):
            # Another process of the same annotator may have recorded the order meanwhile: keep its.
            conn.executemany(
                "INSERT OR IGNORE INTO study_order VALUES (?, ?, ?, ?, ?, ?)",
                [(name, annotator, pos, item_pos, blind_id(name, study.seed, item_pos), created)
                 for pos, item_pos in enumerate(order, 1)],
            )
    rows = conn.execute(
        f"""SELECT o.position, o.blind_id, si.position, si.item_id, si.mode, si.run_key, si.stratum,
                   {_DONE_SQL}
            FROM study_order o JOIN study_items si ON si.study = o.study AND si.position = o.item_position
            WHERE o.study = :study AND o.annotator = :annotator ORDER BY o.position""",
        {"kind": STUDY_EVENT[study.kind], "study": name, "annotator": annotator},
    )
    return [QueueEntry(pos, blind, StudyItem(ipos, item_id, mode, run_key, stratum), bool(done))
            for pos, blind, ipos, item_id, mode, run_key, stratum, done in rows]


def progress(conn: sqlite3.Connection, name: str) -> list[dict[str, Any]]:
    """Per annotator who has a queue: {annotator, done, total}."""
    study = get_study(conn, name)
    rows = conn.execute(
        f"""SELECT o.annotator, SUM({_DONE_SQL}), COUNT(*)
            FROM study_order o JOIN study_items si ON si.study = o.study AND si.position = o.item_position
            WHERE o.study = :study GROUP BY o.annotator ORDER BY o.annotator""",
        {"kind": STUDY_EVENT[study.kind], "study": name},
    )
    return [{"annotator": a, "done": int(d or 0), "total": int(t)} for a, d, t in rows]


def reveal(conn: sqlite3.Connection, name: str, annotator: str | None = None) -> list[dict[str, Any]]:
    """The blinding map, for after the study: one row per (annotator, position) with the real run."""
    get_study(conn, name)
    sql = """SELECT o.annotator, o.position, o.blind_id, si.position, si.item_id, si.mode, si.run_key, si.stratum
             FROM study_order o JOIN study_items si ON si.study = o.study AND si.position = o.item_position
             WHERE o.study = ? AND (? IS NULL OR o.annotator = ?) ORDER BY o.annotator, o.position"""
    keys = ("annotator", "position", "blind_id", "item_position", "item_id", "mode", "run_key", "stratum")
    return [dict(zip(keys, r)) for r in conn.execute(sql, (name, annotator, annotator))]


# -- a study's answers, for export ---------------------------------------------------------------------
EXPORT_FIELDS = ("study", "kind", "annotator", "position", "blind_id", "item_id", "mode", "stratum",
                 "answer", "rotation", "seconds", "x", "y", "flag", "text", "ts", "event_id")
REVEAL_FIELDS = ("run", "item_position")
_KIND_ORDER = {**dict.fromkeys(DECISION_KINDS, 0), ADJUDICATION: 0, "note": 1, "flag": 2}  # an entry's answer first


def answer_rows(study: Study, order: list[dict[str, Any]], acts: list[dict[str, Any]],
                remarks: list[dict[str, Any]], reveal: bool = False) -> list[dict[str, Any]]:
    """Export rows (EXPORT_FIELDS, + REVEAL_FIELDS with `reveal`) of a study, from its blinding map
    (`reveal` rows), the current acts of its kind and its live notes and flags (derived-state rows),
    in (annotator, position) order. Without `reveal` the run stays hidden: rows carry the blind id
    only. `x`/`y` are label lists joined with "+" (e.g. "X2+X3"). An adjudication's row carries its
    decision in the answer columns and its reason in `text`."""
    where = {(r["annotator"], r["item_id"], r["mode"], r["run_key"]): r for r in order}
    tagged = ([(STUDY_EVENT[study.kind], ev) for ev in acts]
              + [("flag" if "flag" in ev else "note", ev) for ev in remarks])
    rows = []
    for kind, ev in tagged:
        pos = where.get((ev["annotator"], ev["item_id"], ev["mode"], ev["run_key"]))
        if kind == ADJUDICATION:
            ev = {**ev, **(ev.get("decision") or {}), "text": ev.get("reason")}
        row = {
            "study": study.name, "kind": kind, "annotator": ev["annotator"],
            "position": pos["position"] if pos else None, "blind_id": pos["blind_id"] if pos else None,
            "item_id": ev["item_id"], "mode": ev["mode"], "stratum": pos["stratum"] if pos else None,
            "answer": ev.get("verdict") or ev.get("choice") or ev.get("answer"),
            "rotation": ev.get("rotation"), "seconds": ev.get("seconds"),
            "x": "+".join(ev["x"]) if ev.get("x") else None, "y": "+".join(ev["y"]) if ev.get("y") else None,
            "flag": ev.get("flag"), "text": ev.get("text"), "ts": ev["ts"], "event_id": ev["event_id"],
        }
        if reveal:
            row["run"] = ev["run_key"]
            row["item_position"] = pos["item_position"] if pos else None
        rows.append(row)
    rows.sort(key=lambda r: (r["annotator"], r["position"] if r["position"] is not None else 1 << 30,
                             _KIND_ORDER[r["kind"]], r["event_id"]))
    return rows
