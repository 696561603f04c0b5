"""Run independent pieces of work in forked worker processes, results in input order.

The score report's sections are independent once the context is built, and the machine this runs
on has two cores or more; forking shares the (large, read-only) context with the workers without
copying or pickling it, and only each result travels back. Where fork is unavailable, where one
worker is asked for, or where a piece fails in its worker for any reason, that piece is computed
again in the calling process, so an error surfaces exactly as it would without workers.

MEMSCOPE_SECTION_WORKERS=N sets the number of workers (1 turns this off).
"""

from __future__ import annotations

import multiprocessing
import os
import pickle
import threading
from concurrent.futures import ProcessPoolExecutor, as_completed
from collections.abc import Callable, Sequence
from typing import Any

_TASK: dict[str, Any] = {}  # the function and items, set before forking and inherited by workers


def can_fork() -> bool:
    """Fork only where the platform has it and this process runs one thread: a child forked from a
    threaded process (the app scores in a worker thread) can deadlock on a lock another thread held."""
    return "fork" in multiprocessing.get_all_start_methods() and threading.active_count() == 1


def worker_count(n_items: int, default: int | None = None, env: str = "MEMSCOPE_SECTION_WORKERS") -> int:
    """Workers to use for `n_items` pieces: the environment variable if set, else `default` (else
    one per CPU, at most 4); never more than the pieces, 1 where forking is unavailable or unsafe."""
    if not can_fork():
        return 1
    value = os.environ.get(env)
    if value is not None:
        wanted = int(value) if value.isdigit() else 1
    else:
        wanted = default if default is not None else min(os.cpu_count() or 1, 4)
    return max(1, min(wanted, n_items))


def _one_blas_thread() -> None:
    # numpy's BLAS starts one thread per core in every process: with a worker per core, those
    # threads fight over the cores (measured: a section took twice as long in a worker).
    from threadpoolctl import threadpool_limits

    _TASK["limits"] = threadpool_limits(limits=1)


def _run_one(i: int) -> tuple[int, bytes | None]:
    try:
        return i, pickle.dumps(_TASK["func"](_TASK["items"][i]), protocol=pickle.HIGHEST_PROTOCOL)
    except BaseException:  # noqa: BLE001 — recomputed by the parent, which raises it properly
        return i, None


def fork_map(func: Callable[[Any], Any], items: Sequence[Any], workers: int,
             order: Sequence[int] | None = None) -> list[Any]:
    """[func(x) for x in items], computed by `workers` forked processes (in `order`: put the
    longest pieces first so that the last to finish is short)."""
    if workers <= 1 or len(items) <= 1:
        return [func(x) for x in items]
    results: list[Any] = [None] * len(items)
    done = [False] * len(items)
    _TASK.update(func=func, items=items)
    try:
        # concurrent.futures rather than multiprocessing.Pool: a worker that dies (killed, out of
        # memory) breaks the pool with an error instead of leaving its result waited for forever.
        with ProcessPoolExecutor(workers, mp_context=multiprocessing.get_context("fork"),
                                 initializer=_one_blas_thread) as pool:
            futures = [pool.submit(_run_one, i) for i in (order or range(len(items)))]
            for fut in as_completed(futures):
                try:
                    i, blob = fut.result()
                except Exception:  # noqa: BLE001 — a broken pool: the parent computes what is left
                    continue
                if blob is not None:
                    results[i], done[i] = pickle.loads(blob), True
    except Exception:  # noqa: BLE001 — cannot fork (resources): the parent computes everything
        pass
    finally:
        _TASK.clear()
    for i, ok in enumerate(done):
        if not ok:
            results[i] = func(items[i])
    return results
