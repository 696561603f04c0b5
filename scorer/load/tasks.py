"""Which benchmark task a run folder is about (DESIGN §3).

The MemEye runner names a run's task as its task YAML does (`home_renovation_interior_design`),
which need not be the dialog file's name (`Home_Renovation_Interior_Design.json`). The file it ran
on is exact, so a run's task is resolved from, in order:
1. the stem of `metrics.json` `dialog_json` (or the config's `dataset.dialog_json`), `_Open` removed;
2. the task name the run gives (metrics `task_name`, config `task.name`) as written;
3. that name matched ignoring case and separators (` `, `_`, `-`), reported as a note.
A run that none of these resolves keeps the name it gives (the join then reports it unknown).
"""

from __future__ import annotations

import re
from collections.abc import Collection, Mapping
from typing import Any

OPEN_SUFFIX = "_Open"
_SEPARATORS = re.compile(r"[\s_\-]+")


def _stem(path: Any) -> str | None:
    if not isinstance(path, str) or not path.strip():
        return None
    name = re.split(r"[\\/]", path.strip())[-1]
    return name[:-5] if name.lower().endswith(".json") else name or None


def dialog_stems(config: Mapping[str, Any], metrics: Mapping[str, Any]) -> list[str]:
    """The dialog file stems a run names, most authoritative first."""
    dataset = config.get("dataset")
    task = config.get("task")
    paths = [metrics.get("dialog_json"),
             dataset.get("dialog_json") if isinstance(dataset, Mapping) else None,
             (task.get("dataset") or {}).get("dialog_json")
             if isinstance(task, Mapping) and isinstance(task.get("dataset"), Mapping) else None]
    return list(dict.fromkeys(s for s in map(_stem, paths) if s))


def loose_key(name: str) -> str:
    """A task name with case, separators and the open-mirror suffix ignored."""
    key = _SEPARATORS.sub("", name.lower())
    return key[:-4] if key.endswith("open") and len(key) > 4 else key


def resolve_task(given: str, config: Mapping[str, Any], metrics: Mapping[str, Any],
                 known: Collection[str]) -> tuple[str, str | None]:
    """(task, note): the benchmark task the run is about, and a note when it was matched loosely."""
    if not known:
        return given, None
    for stem in dialog_stems(config, metrics):
        for candidate in (stem, stem.removesuffix(OPEN_SUFFIX)):
            if candidate in known:
                return candidate, None
    if given in known:
        return given, None
    by_key: dict[str, list[str]] = {}
    for name in known:
        by_key.setdefault(loose_key(name), []).append(name)
    for candidate in [given, *dialog_stems(config, metrics)]:
        hits = by_key.get(loose_key(candidate)) if candidate else None
        if hits and len(hits) == 1:
            return hits[0], (f"run's task {candidate!r} matched to benchmark task {hits[0]!r} "
                             "(case and separators ignored)")
    return given, None
