"""The judgment cache: SQLite in WAL mode, one row per judged prompt, committed as each arrives.

Key: sha256 of (model, public base URL, prompt sha256, levels, question, gold, prediction, and the
temperature when it is not the default 0), each
part length-prefixed so that no two different tuples can run together into the same text. A hit
makes no request. Because every result is committed on arrival, Ctrl-C, a crash or SIGKILL loses at
most the requests still in flight, and a rerun picks up where the last one stopped. Only successful
judgments are stored: a failed row is asked again next time. The key is never stored (nor is the
API key: nothing here ever sees it).
"""

from __future__ import annotations

import hashlib
import os
import sqlite3
import time
from dataclasses import dataclass
from pathlib import Path
from typing import Iterable, Sequence

from scorer.errors import UserError

SCHEMA = """
CREATE TABLE IF NOT EXISTS judgments (
    key TEXT PRIMARY KEY,
    model TEXT NOT NULL,
    base_url TEXT NOT NULL,
    prompt_sha256 TEXT NOT NULL,
    score REAL NOT NULL,
    reasoning TEXT NOT NULL,
    prompt_tokens INTEGER NOT NULL DEFAULT 0,
    completion_tokens INTEGER NOT NULL DEFAULT 0,
    created REAL NOT NULL
) WITHOUT ROWID
"""
_CHUNK = 2000  # keys per SELECT … IN (…): under SQLite's variable limit (32,766 since 3.32)


def default_cache_path() -> Path:
    root = os.environ.get("XDG_CACHE_HOME") or str(Path.home() / ".cache")
    return Path(root) / "memscope" / "judge.sqlite"


def _framed(*parts: str) -> bytes:
    # length-prefixed, so ("ab", "c") and ("a", "bc") differ; cheaper than JSON for 40,000 keys
    return "".join(f"{len(p)}:{p}" for p in parts).encode("utf-8", "surrogatepass")


class KeyMaker:
    """make_key with the judge's part (model, URL, prompt, levels) hashed once, not per row."""

    def __init__(self, model: str, base_url: str, prompt_sha256: str, levels: Sequence[float],
                 temperature: float | None = 0.0) -> None:
        parts = [model, base_url, prompt_sha256, ",".join(repr(float(v)) for v in levels)]
        if temperature != 0:  # a judgment at another temperature is another judgment (0: the keys of old)
            parts.append(f"temperature={'default' if temperature is None else repr(float(temperature))}")
        self._base = hashlib.sha256(_framed(*parts))

    def __call__(self, question: str, gold: str, prediction: str) -> str:
        h = self._base.copy()
        h.update(_framed(question, gold, prediction))
        return h.hexdigest()


def make_key(model: str, base_url: str, prompt_sha256: str, levels: Sequence[float],
             question: str, gold: str, prediction: str, temperature: float | None = 0.0) -> str:
    return KeyMaker(model, base_url, prompt_sha256, levels, temperature)(question, gold, prediction)


@dataclass(frozen=True)
class Cached:
    score: float
    reasoning: str
    prompt_tokens: int
    completion_tokens: int


_SQLITE_HEADER = b"SQLite format 3\x00"


def _check_existing(path: Path) -> None:
    """An existing --cache FILE must be a judge cache (or an SQLite file with no tables yet):
    never turn someone's empty, one-byte or other file into a cache."""
    if not os.path.lexists(path):
        return
    if path.is_dir():
        raise UserError(f"{path}: is a folder, not a judge cache file")
    if not path.is_file():
        raise UserError(f"{path}: not a regular file; refusing to use it as the judge cache")
    try:
        with open(path, "rb") as fh:
            head = fh.read(100)
    except OSError as err:
        raise UserError(f"{path}: cannot read the judge cache: {err.strerror or err}") from None
    if len(head) < 100 or not head.startswith(_SQLITE_HEADER):
        raise UserError(f"{path}: exists and is not a judge cache (not an SQLite file); "
                        "refusing to overwrite it: give another --cache FILE")
    try:
        db = sqlite3.connect(f"{path.resolve().as_uri()}?mode=ro", uri=True, timeout=30)
        try:
            tables = {r[0] for r in db.execute(
                "SELECT name FROM sqlite_master WHERE type = 'table' AND name NOT LIKE 'sqlite_%'")}
        finally:
            db.close()
    except sqlite3.Error as err:
        raise UserError(f"{path}: cannot use as the judge cache: {err}") from None
    if tables and "judgments" not in tables:
        raise UserError(f"{path}: an SQLite database of another program, not a judge cache; "
                        "refusing to change it: give another --cache FILE")


class JudgeCache:
    def __init__(self, path: str | Path) -> None:
        self.path = Path(path)
        _check_existing(self.path)
        try:
            self.path.parent.mkdir(parents=True, exist_ok=True)
            self._db = sqlite3.connect(self.path, timeout=30)
            self._db.execute("PRAGMA journal_mode=WAL")
            # NORMAL in WAL mode: a commit survives the process being killed; only a power cut
            # may lose the last few, and a rerun asks for those again.
            self._db.execute("PRAGMA synchronous=NORMAL")
            self._db.execute("PRAGMA cache_size=-65536")  # 64 MB: a big re-score reads much of the file
            self._db.execute(SCHEMA)
            self._db.commit()
        except sqlite3.DatabaseError as err:
            raise UserError(f"{self.path}: cannot use as the judge cache: {err}") from None
        except OSError as err:
            raise UserError(f"{self.path}: cannot create the judge cache: {err.strerror or err}") from None

    def __enter__(self) -> "JudgeCache":
        return self

    def __exit__(self, *exc) -> None:
        self.close()

    def close(self) -> None:
        self._db.close()

    def get_many(self, keys: Iterable[str], judge: tuple[str, str, str] | None = None) -> dict[str, Cached]:
        """The cached judgments among `keys`. `judge` = (model, base URL, prompt sha256) allows a
        single filtered pass over the table when the keys are a large share of it (a full re-score
        from the cache), which is 2–3× faster than probing key by key."""
        want = set(keys)
        found: dict[str, Cached] = {}
        if judge is not None and len(want) >= 1000 and 4 * len(want) >= self.count():
            rows = self._db.execute(
                "SELECT key, score, reasoning, prompt_tokens, completion_tokens FROM judgments "
                "WHERE model = ? AND base_url = ? AND prompt_sha256 = ?", judge)
            for key, score, reasoning, pt, ct in rows:
                if key in want:
                    found[key] = Cached(score, reasoning, pt, ct)
            return found
        ordered = sorted(want)  # in key order the B-tree is walked, not jumped about
        for i in range(0, len(ordered), _CHUNK):
            chunk = ordered[i:i + _CHUNK]
            marks = ",".join("?" * len(chunk))
            rows = self._db.execute(
                f"SELECT key, score, reasoning, prompt_tokens, completion_tokens FROM judgments WHERE key IN ({marks})",
                chunk)
            for key, score, reasoning, pt, ct in rows:
                found[key] = Cached(score, reasoning, pt, ct)
        return found

    def put(self, key: str, model: str, base_url: str, prompt_sha256: str, score: float, reasoning: str,
            prompt_tokens: int = 0, completion_tokens: int = 0) -> None:
        self._db.execute(
            "INSERT OR REPLACE INTO judgments VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?)",
            (key, model, base_url, prompt_sha256, float(score), reasoning, int(prompt_tokens),
             int(completion_tokens), time.time()))
        self._db.commit()  # one transaction per result: nothing judged is lost on a crash

    def put_many(self, rows: Iterable[tuple]) -> None:
        """(key, model, base_url, prompt_sha256, score, reasoning, prompt_tokens, completion_tokens)
        in one transaction: for seeding and tests, not for live results."""
        now = time.time()
        with self._db:
            self._db.executemany("INSERT OR REPLACE INTO judgments VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?)",
                                 [(*r, now) for r in rows])

    def count(self) -> int:
        return int(self._db.execute("SELECT COUNT(*) FROM judgments").fetchone()[0])
