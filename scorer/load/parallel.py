"""Read parts of a job in this process and forked workers that claim them from a shared counter.

The lean reader's folders come in parts of about equal bytes; whoever is free takes the next part,
so no process waits while parts are left. The work (a function of one part) and the parts are set
before forking and inherited by the workers, never pickled; only each part's result travels back.
"""

from __future__ import annotations

import multiprocessing
from concurrent.futures import ProcessPoolExecutor
from collections.abc import Callable, Sequence
from typing import Any

_STATE: dict[str, Any] = {}  # work, parts and the shared counter, set before forking


def _claim() -> int | None:
    """The next unread part's index, from a counter every process shares; None when none is left."""
    counter = _STATE["next"]
    with counter.get_lock():
        i = counter.value
        if i >= len(_STATE["parts"]):
            return None
        counter.value = i + 1
    return i


def _claim_and_read(_: int) -> tuple[int, Any] | None:
    """Worker: read the next unread part (None when none is left). One part per task, so that each
    part's result travels back while the workers read on, not all at the end."""
    i = _claim()
    if i is None:
        return None
    return i, _STATE["work"](_STATE["parts"][i])


def read_parts(parts: Sequence[Sequence[Any]], n_processes: int, work: Callable[[Sequence[Any]], Any],
               progress: Callable[[int, int], None] | None = None, total: int = 0,
               meanwhile: Callable[[], Any] | None = None) -> list[Any]:
    """[work(part) for part in parts], in order. This process and `n_processes` − 1 forked workers
    claim parts from a shared counter; this process first runs `meanwhile` (if given) and reads
    what is left by then. `progress(done, total)` counts the items of the parts this process has
    read. A worker that dies leaves its
    parts to be read here; `work` reports its own errors in its result (an exception in a
    worker loses that part, which is then read again here, where it is raised)."""
    counter = multiprocessing.get_context("fork").Value("i", 0)
    _STATE.update(work=work, parts=parts, next=counter)
    results: dict[int, Any] = {}
    done = 0
    try:
        with ProcessPoolExecutor(n_processes - 1, mp_context=multiprocessing.get_context("fork")) as pool:
            # One task per part (a task claims the next part, or returns None when none is left):
            # each result is sent, and unpickled by the pool's thread here, while the others read on.
            futures = [pool.submit(_claim_and_read, k) for k in range(len(parts))]
            if meanwhile is not None:
                meanwhile()
            while (i := _claim()) is not None:
                results[i] = work(parts[i])
                done += len(parts[i])
                if progress:
                    progress(done, total)
            for fut in futures:
                try:
                    got = fut.result()
                except Exception:  # noqa: BLE001 — a broken pool: its parts are read below
                    continue
                if got is not None:
                    results[got[0]] = got[1]
        for i, part in enumerate(parts):
            if i not in results:
                results[i] = work(part)
    finally:
        _STATE.clear()
    if progress:
        progress(total, total)
    return [results[i] for i in range(len(parts))]
