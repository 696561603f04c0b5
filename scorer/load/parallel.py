"""Read parts of a job in this process and forked workers that claim them from a shared counter.

The lean reader's folders come in parts of about equal bytes; whoever is free takes the next part,
so no process waits while parts are left. The work (a function of one part) and the parts are set
before forking and inherited by the workers, never pickled. Each worker writes each part's result
to a file of its own (scorer.forked.fork_child) and claims the next at once: nothing it does waits
for this process, which may be busy (importing the section modules, reading its own parts); the
results are picked up here between parts and at the end.
"""

from __future__ import annotations

import multiprocessing
import os
import shutil
import signal
import tempfile
from collections.abc import Callable, Sequence
from typing import Any

from scorer.forked import claim_from, fork_child, load_result


def _pick_up(folder: str, results: dict[int, Any]) -> None:
    """The results the workers have written so far (each file is renamed into place when whole)."""
    for name in os.listdir(folder):
        if name.endswith(".pkl"):
            path = os.path.join(folder, name)
            results[int(name[:-4])] = load_result(path)
            os.unlink(path)


def read_parts(parts: Sequence[Sequence[Any]], n_processes: int, work: Callable[[Sequence[Any]], Any],
               progress: Callable[[int, int], None] | None = None, total: int = 0,
               meanwhile: Callable[[], Any] | None = None) -> list[Any]:
    """[work(part) for part in parts], in order. This process and `n_processes` − 1 forked workers
    claim parts from a shared counter; this process first runs `meanwhile` (if given) and reads
    what is left by then. `progress(done, total)` counts the items of the parts this process has
    read. A worker that dies leaves its parts to be read here; `work` reports its own errors in its
    result (an exception in a worker loses that part, which is then read again here, where it is
    raised)."""
    queue = (multiprocessing.get_context("fork").Value("i", 0), list(range(len(parts))))
    folder = tempfile.mkdtemp(prefix="memscope-read-")
    running: set[int] = set()
    results: dict[int, Any] = {}
    done = 0
    try:
        for _ in range(n_processes - 1):
            try:
                running.add(fork_child([queue], work, parts, folder, one_blas_thread=False))
            except OSError:  # cannot fork (resources): this process reads what is left
                break
        if meanwhile is not None:
            meanwhile()
        while (i := claim_from([queue])) is not None:
            results[i] = work(parts[i])
            done += len(parts[i])
            if progress:
                progress(done, total)
            _pick_up(folder, results)
        for pid in list(running):
            os.waitpid(pid, 0)
            running.discard(pid)
        _pick_up(folder, results)
    finally:
        for pid in running:  # interrupted: stop the workers
            try:
                os.kill(pid, signal.SIGTERM)
                os.waitpid(pid, 0)
            except OSError:
                pass
        shutil.rmtree(folder, ignore_errors=True)
    for i, part in enumerate(parts):
        if i not in results:
            results[i] = work(part)
    if progress:
        progress(total, total)
    return [results[i] for i in range(len(parts))]
