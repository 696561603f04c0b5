"""Embedding cache on disk: SQLite keyed by (model, sha256 of the text), float32 vectors as blobs.

A second run over the same benchmark finds every text here and never loads the model. One cache may
be used from several threads (the app builds its search index in one worker thread and runs each
query in another): the connection is shared, each use holds the cache's lock.
"""

from __future__ import annotations

import hashlib
import os
import sqlite3
import threading
from pathlib import Path
from typing import Iterable, Sequence

import numpy as np

from scorer.errors import UserError


def default_cache_path() -> Path:
    base = os.environ.get("XDG_CACHE_HOME") or str(Path.home() / ".cache")
    return Path(base) / "memscope" / "embeddings.sqlite"


def text_key(text: str) -> str:
    return hashlib.sha256(text.encode("utf-8")).hexdigest()


class EmbeddingCache:
    def __init__(self, path: str | Path) -> None:
        self.path = Path(path)
        self.lock = threading.Lock()
        try:
            self.path.parent.mkdir(parents=True, exist_ok=True)
            self.db = sqlite3.connect(self.path, timeout=30, check_same_thread=False)
            self.db.execute("PRAGMA journal_mode=WAL")
            self.db.execute(
                "CREATE TABLE IF NOT EXISTS embeddings ("
                " model TEXT NOT NULL, key TEXT NOT NULL, dim INTEGER NOT NULL, vec BLOB NOT NULL,"
                " PRIMARY KEY (model, key))"
            )
            self.db.commit()
        except sqlite3.DatabaseError as err:
            raise UserError(f"{self.path}: not a usable embedding cache ({err})") from None
        except OSError as err:
            raise UserError(f"{self.path}: cannot create the embedding cache ({err.strerror or err})") from None

    def get_many(self, model: str, keys: Sequence[str]) -> dict[str, np.ndarray]:
        found: dict[str, np.ndarray] = {}
        unique = list(dict.fromkeys(keys))
        for start in range(0, len(unique), 900):  # SQLite's bound-parameter limit
            chunk = unique[start:start + 900]
            q = f"SELECT key, dim, vec FROM embeddings WHERE model = ? AND key IN ({','.join('?' * len(chunk))})"
            with self.lock:
                rows = self.db.execute(q, [model, *chunk]).fetchall()
            for key, dim, blob in rows:
                vec = np.frombuffer(blob, dtype=np.float32)
                if vec.shape[0] == dim:
                    found[key] = vec
        return found

    def put_many(self, model: str, items: Iterable[tuple[str, np.ndarray]]) -> None:
        rows = [(model, k, int(v.shape[0]), np.asarray(v, dtype=np.float32).tobytes()) for k, v in items]
        with self.lock, self.db:
            self.db.executemany("INSERT OR REPLACE INTO embeddings VALUES (?, ?, ?, ?)", rows)

    def put_rows(self, model: str, keys: Sequence[str], vecs: np.ndarray) -> None:
        """keys[i] → vecs[i] (a 2-D float32 array), in one transaction."""
        vecs = np.ascontiguousarray(vecs, dtype=np.float32)
        dim = int(vecs.shape[1])
        rows = [(model, k, dim, v.tobytes()) for k, v in zip(keys, vecs)]
        with self.lock, self.db:
            self.db.executemany("INSERT OR REPLACE INTO embeddings VALUES (?, ?, ?, ?)", rows)

    def count(self, model: str | None = None) -> int:
        with self.lock:
            if model is None:
                return self.db.execute("SELECT COUNT(*) FROM embeddings").fetchone()[0]
            return self.db.execute("SELECT COUNT(*) FROM embeddings WHERE model = ?", (model,)).fetchone()[0]

    def close(self) -> None:
        with self.lock:
            self.db.close()
