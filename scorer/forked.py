"""Run independent pieces of work in forked worker processes, results in input order.

The score report's sections are independent once the context is built, and the machine this runs
on has two cores or more; forking shares the (large, read-only) context with the workers without
copying or pickling it, and only each result travels back. Where fork is unavailable, where one
worker is asked for, or where a piece fails in its worker for any reason, that piece is computed
again in the calling process, so an error surfaces exactly as it would without workers.

MEMSCOPE_SECTION_WORKERS=N sets the number of workers (1 turns this off).
"""

from __future__ import annotations

import gc
import mmap
import multiprocessing
import os
import pickle
import threading
from collections.abc import Callable, Iterator, Sequence
from contextlib import contextmanager
from typing import Any


@contextmanager
def gc_paused() -> Iterator[None]:
    """Loading builds hundreds of thousands of acyclic objects; the cyclic collector would rescan
    them over and over (it more than doubles the load time), so it waits until we are done, and the
    loaded objects are then moved out of its reach (gc.freeze): re-enabled, its first collection
    would otherwise walk all of them at once. They are still freed by reference counting. (Frozen
    objects are also left alone by a forked child's collector, whose pages then stay shared.)"""
    was_enabled = gc.isenabled()
    gc.disable()
    try:
        yield
    finally:
        gc.freeze()
        if was_enabled:
            gc.enable()


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


def _one_blas_thread():
    """numpy's BLAS starts one thread per core in every process: with a worker per core, those
    threads fight over the cores (measured: a section took twice as long in a worker). The limit
    holds while the returned object lives."""
    from threadpoolctl import threadpool_limits

    return threadpool_limits(limits=1)


def load_result(path: str) -> Any:
    """The result a forked process pickled into the file at `path` (fork_child), unpickled from a
    read-only mapping of the file: read from the page cache where it lies, not first copied whole
    into fresh memory (megabytes a result at MemEye scale, every page of that copy a page fault:
    10 interleaved pairs at MemEye scale, wall −0.075 s, CPU −0.12 s)."""
    with open(path, "rb") as fh:
        size = os.fstat(fh.fileno()).st_size
        if not size:  # never written empty: the error an empty pickle gives
            return pickle.loads(b"")
        with mmap.mmap(fh.fileno(), size, access=mmap.ACCESS_READ) as view:
            return pickle.loads(view)


def claim_from(queues: Sequence[tuple[Any, Sequence[int]]]) -> int | None:
    """The next unclaimed item of the first queue that has one ((shared counter, item order) pairs,
    shared by every process forked from here); None when all are taken."""
    for counter, order in queues:
        with counter.get_lock():
            k = counter.value
            if k < len(order):
                counter.value = k + 1
                return order[k]
    return None


def _left(queue: tuple[Any, Sequence[int]]) -> bool:
    counter, order = queue
    with counter.get_lock():
        return counter.value < len(order)


def fork_child(queues: Sequence[tuple[Any, Sequence[int]]], func: Callable[[Any], Any], items: Sequence[Any],
               folder: str, one_blas_thread: bool = True) -> int:
    """Fork a process that computes the items it claims from `queues`, each result pickled into
    `folder`/<index>.pkl (a file, not a pipe: nothing waits for the parent to read); its pid.
    `one_blas_thread`: limit numpy's BLAS to one thread there (work that uses none skips it)."""
    pid = os.fork()
    if pid:
        return pid
    code = 0
    try:  # the child: never returns into the caller's code
        limits = _one_blas_thread() if one_blas_thread else None  # noqa: F841 — kept for the child's whole life
        while (i := claim_from(queues)) is not None:
            try:
                result = func(items[i])
            except Exception:  # noqa: BLE001 — recomputed by the parent, which raises it properly
                continue
            tmp = os.path.join(folder, f"{i}.tmp")
            try:
                with open(tmp, "wb") as fh:  # pickled straight into the file: no copy of it in memory
                    pickle.dump(result, fh, protocol=pickle.HIGHEST_PROTOCOL)
            except Exception:  # noqa: BLE001 — a result that does not pickle: recomputed by the parent
                continue
            os.rename(tmp, os.path.join(folder, f"{i}.pkl"))
    except BaseException:  # noqa: BLE001 — interrupted or killed: what it did not write is recomputed
        code = 1
    finally:
        os._exit(code)


# A helper forked once the other processes are done costs this process about 30 ms at MemEye scale
# (the fork of a large process, the pages either side then writes copied, its exit waited for):
# worth it while the items left take longer than that, as the last one this process computed did.
# (At MemEye scale the items left then are the MOSAIC sections, absent there and done in a moment:
# 12 interleaved pairs without that helper, wall −0.08 s, CPU −0.10 s.)
LATE_HELPER_S = 0.05


def fork_staged(func: Callable[[Any], Any], items: Sequence[Any], workers: int, first: Sequence[int],
                later: Sequence[int], stage: Callable[[], Any] | None = None) -> list[Any]:
    """[func(x) for x in items] by this process and `workers` − 1 forked ones, where the items in
    `later` need `stage()` to have run (shared data it computes in this process) and those in
    `first` do not: the forked processes start on `first` at once while this process runs `stage`;
    this process then takes `later` items, then what is left of `first`, and forks helpers (which
    inherit what `stage` computed) when every `first` item is taken once `stage` is done, or when
    the others run out of work while `later` items wait and the last item this process computed
    took LATE_HELPER_S or more (the next ones are likely to be worth a fork). Each
    list is in the order to take items (longest first). Results come back in input order; only
    the forked processes' results are pickled. An item that fails or whose process dies is
    computed again here, in input order, so an error surfaces as it would without workers."""
    n = len(items)
    if sorted([*first, *later]) != list(range(n)):
        raise ValueError("first and later must split the items' indices")
    if workers <= 1 or n <= 1 or not can_fork():
        if stage is not None:
            stage()
        return [func(x) for x in items]
    import shutil
    import signal
    import tempfile
    import time

    from threadpoolctl import threadpool_limits

    mp = multiprocessing.get_context("fork")
    now, after = (mp.Value("i", 0), list(first)), (mp.Value("i", 0), list(later))
    results: dict[int, Any] = {}
    running: set[int] = set()
    folder = tempfile.mkdtemp(prefix="memscope-sections-")

    def spawn(queues: Sequence[tuple[Any, Sequence[int]]]) -> None:
        gc.freeze()  # the children's collector leaves the parent's objects (and their pages) alone
        try:
            for _ in range(workers - 1):
                running.add(fork_child(queues, func, items, folder))
        except OSError:  # cannot fork (resources): this process computes what is left
            pass

    def reap() -> None:
        for pid in list(running):
            if os.waitpid(pid, os.WNOHANG)[0]:
                running.discard(pid)

    finished = False  # every item claimed and every forked process waited for
    try:
        if first:
            spawn([now])
        if stage is not None:
            stage()
        if len(later) > 1 and not _left(now):
            # The shared data is ready and every `first` item is taken: helpers for the `later`
            # items now, beside the processes finishing theirs (a few more processes than cores for
            # a moment, rather than a tail run by one). While `first` items wait, the processes on
            # them have work and this one takes `later`: a process forked now would only share the
            # cores, and every page either side writes would be copied once more (measured at
            # MemEye scale: 12 interleaved pairs, CPU −0.10 s, wall −0.04 s).
            spawn([after, now])
        last = float("inf")  # seconds the item this process computed last took
        with threadpool_limits(limits=1):  # one BLAS thread each, as in the forked processes
            while (i := claim_from([after, now])) is not None:
                reap()
                if not running and _left(after) and last >= LATE_HELPER_S:
                    spawn([after, now])  # the others are done: helpers for what waits
                started = time.perf_counter()
                try:
                    results[i] = func(items[i])
                except Exception:  # noqa: BLE001 — computed again below, in input order
                    pass
                last = time.perf_counter() - started
            for pid in list(running):
                os.waitpid(pid, 0)
                running.discard(pid)
        finished = True
    finally:
        for pid in running:  # interrupted: stop the forked processes
            try:
                os.kill(pid, signal.SIGTERM)
                os.waitpid(pid, 0)
            except OSError:
                pass
        # What was frozen stays frozen (as gc_paused leaves what the readers loaded): thawed,
        # the next collection would walk every row and record read so far at once (0.18 s at MemEye
        # scale, measured after the results' unpickling). Frozen objects are still freed by
        # reference counting.
        try:
            if finished:  # (interrupted: the error goes up as it is, no result is read)
                with gc_paused():  # the results are kept: not walked by the collector as they are built
                    for name in os.listdir(folder):
                        if name.endswith(".pkl") and int(name[:-4]) not in results:
                            results[int(name[:-4])] = load_result(os.path.join(folder, name))
        finally:
            shutil.rmtree(folder, ignore_errors=True)
    return [results[i] if i in results else func(items[i]) for i in range(n)]
