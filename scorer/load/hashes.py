"""The sha256 of the files a loaded benchmark and its runs were read from — the one definition, for
the report's inputs record (scorer.scoring.inputs) and for the app, which takes them once at load
(`file_hashes`) so that scoring what it holds in memory reads no file again. Light to import
(hashlib only): the app imports it at start."""

from __future__ import annotations

import hashlib
from collections.abc import Iterable, Mapping
from pathlib import Path

from scorer.model import Benchmark, Run
from scorer.model.run import RUN_FILES


def sha256_file(path: str | Path) -> str:
    h = hashlib.sha256()
    with open(path, "rb") as fh:
        for block in iter(lambda: fh.read(1 << 20), b""):
            h.update(block)
    return h.hexdigest()


def sha256_of(path: str | Path, known: Mapping[str, str] | None = None) -> str:
    """`path`'s sha256: from `known` (str(path) → sha256, taken when the file was loaded) when it is
    there, else from the file on disk."""
    digest = known.get(str(path)) if known else None
    return digest if digest is not None else sha256_file(path)


def dialog_files(bench: Benchmark) -> list[Path]:
    """The dialog files a loaded benchmark was read from, sorted."""
    return sorted({f for t in bench.tasks for f in t.files})


def run_files(folder: Path, known: Mapping[str, str] | None = None) -> list[tuple[str, str]]:
    """(path, sha256) of the files a run folder is read from (the sha256 from `known` where it has it)."""
    out = []
    for name in RUN_FILES:
        p = str(folder / name)
        if known and p in known:
            out.append((p, known[p]))
        elif Path(p).is_file():
            out.append((p, sha256_file(p)))
    return out


def file_hashes(bench: Benchmark, runs: Iterable[Run]) -> dict[str, str]:
    """str(path) → sha256 of every file `bench` and `runs` were read from, hashed now: taken once when
    they are loaded (the app), then given to scorer.scoring.build_context (`hashes`), so that scoring
    the same objects again opens no file and the inputs record is that of what was loaded."""
    out = {str(f): sha256_file(f) for f in dialog_files(bench)}
    for r in runs:
        out.update(run_files(r.folder))
    return out
