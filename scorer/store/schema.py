"""Opening the annotation database safely: recognise our file, refuse anyone else's, migrate forward.

The schema version lives in `PRAGMA user_version`; `PRAGMA application_id` and the `memscope_meta`
table mark the file as ours. MIGRATIONS[i] takes a database from version i to i + 1, inside one
write transaction, so several processes opening a fresh or old file at once migrate it exactly once.
Nothing is written to a file before it is known to be ours (or empty).

Every write to the file is one `immediate` transaction (taken at once, committed or rolled back as a
whole); LIVE is the SQL condition that an event `e` is live, i.e. no undo names it.
"""

from __future__ import annotations

import sqlite3
import time
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from pathlib import Path

from scorer.errors import UserError

APPLICATION_ID = 0x4D454D53  # "MEMS"
SQLITE_HEADER = b"SQLite format 3\x00"
BUSY_TIMEOUT_S = 30.0
# Events that some undo cancels are not live: derived state and study progress ignore them.
LIVE = "NOT EXISTS (SELECT 1 FROM events u WHERE u.kind = 'undo' AND u.target_uid = e.uid)"


@contextmanager
def immediate(conn: sqlite3.Connection) -> Iterator[sqlite3.Connection]:
    """One write transaction, taken at once (BEGIN IMMEDIATE waits out other writers for the busy
    timeout): committed when the block ends, rolled back if it raises."""
    conn.execute("BEGIN IMMEDIATE")
    try:
        yield conn
        conn.execute("COMMIT")
    except BaseException:
        conn.execute("ROLLBACK")
        raise


def _v1(conn: sqlite3.Connection) -> None:
    """Version 1: the append-only event log."""
    conn.execute("CREATE TABLE memscope_meta (key TEXT PRIMARY KEY, value TEXT NOT NULL)")
    conn.execute("INSERT INTO memscope_meta VALUES ('application', 'memscope')")
    conn.execute(
        """CREATE TABLE events (
            id INTEGER PRIMARY KEY AUTOINCREMENT,
            uid TEXT NOT NULL,
            ts TEXT NOT NULL,
            t_us INTEGER NOT NULL,
            annotator TEXT NOT NULL,
            kind TEXT NOT NULL,
            item_id TEXT NOT NULL,
            mode TEXT,
            run_key TEXT,
            study TEXT,
            payload TEXT NOT NULL,
            target_uid TEXT
        )"""
    )
    conn.execute("CREATE UNIQUE INDEX events_uid ON events (uid)")
    conn.execute("CREATE INDEX events_item ON events (kind, item_id)")
    conn.execute("CREATE INDEX events_target ON events (target_uid) WHERE target_uid IS NOT NULL")
    # History is auditable only if nothing rewrites it: the database itself refuses.
    for op in ("UPDATE", "DELETE"):
        conn.execute(
            f"CREATE TRIGGER events_no_{op.lower()} BEFORE {op} ON events "
            "BEGIN SELECT RAISE(ABORT, 'memscope events are append-only'); END"
        )
    conn.execute(f"PRAGMA application_id = {APPLICATION_ID}")


def _v2(conn: sqlite3.Connection) -> None:
    """Version 2: studies (seeded queues), their items, and each annotator's order and blind ids."""
    conn.execute(
        """CREATE TABLE studies (
            name TEXT PRIMARY KEY,
            kind TEXT NOT NULL,
            seed INTEGER NOT NULL,
            params TEXT NOT NULL,
            created TEXT NOT NULL
        )"""
    )
    conn.execute(
        """CREATE TABLE study_items (
            study TEXT NOT NULL REFERENCES studies (name),
            position INTEGER NOT NULL,
            item_id TEXT NOT NULL,
            mode TEXT,
            run_key TEXT,
            stratum TEXT,
            PRIMARY KEY (study, position)
        )"""
    )
    conn.execute(
        """CREATE TABLE study_order (
            study TEXT NOT NULL,
            annotator TEXT NOT NULL,
            position INTEGER NOT NULL,
            item_position INTEGER NOT NULL,
            blind_id TEXT NOT NULL,
            created TEXT NOT NULL,
            PRIMARY KEY (study, annotator, position),
            UNIQUE (study, annotator, item_position),
            FOREIGN KEY (study, item_position) REFERENCES study_items (study, position)
        )"""
    )
    conn.execute("CREATE INDEX events_study ON events (study, annotator, kind)")


MIGRATIONS: tuple[Callable[[sqlite3.Connection], None], ...] = (_v1, _v2)
SCHEMA_VERSION = len(MIGRATIONS)


def migrate(conn: sqlite3.Connection, target: int = SCHEMA_VERSION) -> int:
    """Bring the database up to `target` in one write transaction; returns the version found."""
    with immediate(conn):
        found = conn.execute("PRAGMA user_version").fetchone()[0]
        for version in range(found, target):
            MIGRATIONS[version](conn)
            conn.execute(f"PRAGMA user_version = {version + 1}")
    return found


def _inspect(conn: sqlite3.Connection) -> tuple[int, int, list[str], bool]:
    app_id = conn.execute("PRAGMA application_id").fetchone()[0]
    version = conn.execute("PRAGMA user_version").fetchone()[0]
    tables = [r[0] for r in conn.execute(
        "SELECT name FROM sqlite_master WHERE type = 'table' AND name NOT LIKE 'sqlite_%' ORDER BY name")]
    marked = False
    if "memscope_meta" in tables:
        row = conn.execute("SELECT value FROM memscope_meta WHERE key = 'application'").fetchone()
        marked = bool(row and row[0] == "memscope")
    return app_id, version, tables, marked


def _set_wal(conn: sqlite3.Connection, path: Path) -> None:
    # Switching to WAL needs a moment of exclusive access; on a file that other processes are
    # opening at the same time it can report busy without waiting, so retry for the busy timeout.
    deadline = time.monotonic() + BUSY_TIMEOUT_S
    while True:
        try:
            mode = conn.execute("PRAGMA journal_mode = WAL").fetchone()[0]
            break
        except sqlite3.OperationalError as err:
            if "locked" not in str(err) and "busy" not in str(err) or time.monotonic() > deadline:
                raise
            time.sleep(0.01)
    if str(mode).lower() != "wal":
        raise UserError(f"{path}: cannot switch the annotation database to WAL mode (got {mode!r})")


def _check_integrity(conn: sqlite3.Connection, path: Path) -> None:
    """Refuse a store whose header is intact but whose pages are damaged: SQLite would accept new
    events into it ("1 added") that could not be read back. quick_check is O(pages), no index rebuild."""
    rows = conn.execute("PRAGMA quick_check(1)").fetchall()
    if not rows or rows[0][0] != "ok":
        detail = " ".join(str(rows[0][0]).split())[:200] if rows else "no answer"
        raise UserError(f"{path}: damaged annotation database (integrity check: {detail}); "
                        "restore it from a backup, nothing was written")


def connect(path: str | Path, create: bool = True, timeout: float = BUSY_TIMEOUT_S) -> sqlite3.Connection:
    """An open, migrated connection (autocommit; WAL; synchronous=FULL; busy timeout), or UserError."""
    path = Path(path)
    if path.is_dir():
        raise UserError(f"{path}: is a folder, not an annotation database file")
    existed = path.is_file() and path.stat().st_size > 0
    if not path.exists():
        if not create:
            raise UserError(f"{path}: no such annotation database (nothing was created; check the path)")
        if not path.parent.is_dir():
            raise UserError(f"{path}: cannot create the database: folder {path.parent} does not exist")
    else:
        try:
            with open(path, "rb") as fh:
                head = fh.read(len(SQLITE_HEADER))
        except OSError as err:
            raise UserError(f"{path}: cannot read: {err.strerror or err}") from None
        if head and head != SQLITE_HEADER:
            raise UserError(f"{path}: not a memscope annotation database (not an SQLite file)")
    try:
        conn = sqlite3.connect(str(path), timeout=timeout, isolation_level=None, check_same_thread=False)
    except sqlite3.Error as err:
        raise UserError(f"{path}: cannot open the annotation database: {err}") from None
    try:
        conn.execute(f"PRAGMA busy_timeout = {int(timeout * 1000)}")
        app_id, version, tables, marked = _inspect(conn)
        ours = app_id == APPLICATION_ID or marked
        if not ours and (tables or app_id != 0 or version != 0):
            shown = ", ".join(tables[:5]) + (", …" if len(tables) > 5 else "")
            raise UserError(f"{path}: an SQLite database of another program (tables: {shown or 'none'}), "
                            "not a memscope annotation database")
        if version > SCHEMA_VERSION:
            raise UserError(f"{path}: annotation database schema version {version} is newer than this "
                            f"memscope supports ({SCHEMA_VERSION}); upgrade memscope")
        if create and existed:
            _check_integrity(conn, path)  # before anything is written: an event must read back
        _set_wal(conn, path)
        conn.execute("PRAGMA synchronous = FULL")
        conn.execute("PRAGMA foreign_keys = ON")
        if version < SCHEMA_VERSION:
            migrate(conn)
        return conn
    except UserError:
        conn.close()
        raise
    except sqlite3.OperationalError as err:  # read-only file or folder, locked for too long, …
        conn.close()
        raise UserError(f"{path}: cannot use the annotation database ({err})") from None
    except sqlite3.DatabaseError as err:
        conn.close()
        raise UserError(f"{path}: damaged or unreadable annotation database ({err})") from None
