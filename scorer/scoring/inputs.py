"""What a report records about its inputs (DESIGN §5: file paths, content hashes, options, versions),
so that every table can be reproduced: the `inputs` block of report.json, less the row counts and
checks, which the context adds as it scores. The files are hashed by scorer.load.hashes (where the
app takes them once at load)."""

from __future__ import annotations

import hashlib
import os
import platform
from collections.abc import Iterable, Mapping, Sequence
from functools import cache
from pathlib import Path
from typing import Any

from scorer import __version__
from scorer.load.hashes import dialog_files, sha256_of
from scorer.model import Benchmark
from scorer.safe_text import path_text
from scorer.sections.base import ScoreOptions


def digest_of(files: Sequence[Mapping[str, str]]) -> str:
    """One sha256 over a list of {path, sha256}: changes when any file or name changes."""
    h = hashlib.sha256()
    for f in files:
        h.update(f"{f['path']}\t{f['sha256']}\n".encode())
    return h.hexdigest()


def _rel(path: str | Path, base: Path) -> str:
    # abspath, not resolve(): no file-system calls for each of thousands of run files
    try:
        return path_text(Path(os.path.abspath(path)).relative_to(os.path.abspath(base)).as_posix())
    except ValueError:
        return path_text(Path(path).as_posix())


def _bases(bases: Iterable[str | Path]) -> list[tuple[str, str]]:
    """Each base as (its absolute path without a trailing separator, the path as given in POSIX
    form): what _rel_to_any compares and writes, worked out once per record, not once per file."""
    return [(os.path.abspath(b).rstrip(os.sep), Path(b).as_posix()) for b in bases]


def _rel_to_any(path: str, bases: Sequence[tuple[str, str]]) -> str:
    """`path` as the first base that holds it (as given) joined with its path below that base;
    string work only (thousands of run files: Path objects cost a tenth of a second here)."""
    p = os.path.abspath(path)
    for root, given in bases:
        if p == root:
            return path_text(given)
        if p.startswith(root + os.sep):
            return path_text(given.rstrip("/") + "/" + p[len(root) + 1:].replace(os.sep, "/"))
    return path_text(Path(path).as_posix())


def benchmark_record(bench: Benchmark, path: str | Path, hashes: Mapping[str, str] | None = None) -> dict[str, Any]:
    """The benchmark as given (`path`), with every dialog file's sha256 (from `hashes` where it has
    it) and one digest over them."""
    files = [{"path": _rel(f, bench.root), "sha256": sha256_of(f, hashes)} for f in dialog_files(bench)]
    return {"path": Path(path).as_posix(), "files": files, "digest": digest_of(files)}


def runs_record(paths: Sequence[str | Path], files: Iterable[tuple[str, str]], folders: int,
                reader: str) -> dict[str, Any]:
    """The run paths as given, the run folders' files (path below the path given, sha256), one
    digest over them, and which reader read them ("full": with the raw rows; "lean": columns only)."""
    bases = _bases(paths)
    listed = [{"path": _rel_to_any(p, bases), "sha256": h} for p, h in sorted(files)]
    return {"paths": [Path(p).as_posix() for p in paths], "folders": folders, "files": listed,
            "reader": reader, "digest": digest_of(listed)}


def options_record(options: ScoreOptions, judge_scale: str | None) -> dict[str, Any]:
    return {
        "seed": options.seed, "resamples": options.resamples, "k": options.k, "judge_levels": options.judge_levels,
        "compare": [list(p) for p in options.compare], "clustered": options.clustered, "study": options.study,
        "rotations": options.rotations, "judge_scale": judge_scale,
        "mark_all": options.mark_all,  # best/second marked among reference baselines too
        "recompute_text_metrics": options.recompute_text_metrics,
        "extra": {str(k): v for k, v in (options.extra or {}).items()},  # section options (stage pairs, …)
    }


def versions() -> dict[str, str]:
    """memscope's, Python's and the metric libraries' versions (a copy of what the process found
    the first time: looked up once, while the runs are read where they are read in workers)."""
    return dict(_versions())


@cache
def _versions() -> dict[str, str]:
    from importlib.metadata import PackageNotFoundError, version  # only when a report is built

    out = {"memscope": __version__, "python": platform.python_version()}
    for dist in ("numpy", "pandas", "nltk", "krippendorff"):
        try:
            out[dist] = version(dist)  # metadata only: importing nltk would cost seconds
        except PackageNotFoundError:  # pragma: no cover
            pass
    return out
