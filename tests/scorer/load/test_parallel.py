"""scorer.load.parallel.read_parts: parts read by this process and forked workers, results in
order, whatever the workers do."""

from __future__ import annotations

import glob
import os
import tempfile
import time

import pytest

from scorer.forked import can_fork
from scorer.load.parallel import read_parts

pytestmark = pytest.mark.skipif(not can_fork(), reason="needs fork")

PARENT = os.getpid()


def _square_all(part):
    time.sleep(0.02)  # long enough for a worker to start and claim some parts
    return [(x * x, os.getpid()) for x in part]


def _left_behind():
    return set(glob.glob(os.path.join(tempfile.gettempdir(), "memscope-read-*")))


def test_results_come_back_in_order_read_by_several_processes():
    before = _left_behind()
    parts = [list(range(k * 10, k * 10 + 10)) for k in range(12)]
    called = []
    got = read_parts(parts, 2, _square_all, meanwhile=lambda: called.append(os.getpid()))
    assert [[v for v, _ in part] for part in got] == [[x * x for x in p] for p in parts]
    assert called == [PARENT]  # once, here
    readers = {pid for part in got for _, pid in part}
    assert PARENT in readers and len(readers) == 2  # the worker read some parts, this process others
    assert _left_behind() == before  # the results' folder is gone


def test_a_worker_that_dies_leaves_its_parts_to_this_process():
    def die_in_worker(part):
        if os.getpid() != PARENT:
            os._exit(3)  # killed mid-part: nothing written
        return sum(part)

    parts = [[k, k + 1] for k in range(8)]
    seen = []
    got = read_parts(parts, 3, die_in_worker, progress=lambda done, total: seen.append((done, total)), total=16)
    assert got == [sum(p) for p in parts]
    assert seen[-1] == (16, 16) and [d for d, _ in seen] == sorted(d for d, _ in seen)


def test_an_exception_in_a_worker_is_raised_here_as_this_process_raises_it():
    def fail_on_three(part):
        if 3 in part:
            raise ValueError(f"bad part {part}")
        return part

    with pytest.raises(ValueError, match=r"bad part \[3\]"):
        read_parts([[k] for k in range(6)], 2, fail_on_three)


def _big_part(part):
    import numpy as np

    time.sleep(0.05)  # long enough that a worker claims some parts
    return [(x, os.getpid(), np.full(200_000, float(x)), [f"row {x}:{i}" for i in range(5_000)]) for x in part]


def test_large_part_results_come_back_whole():
    """Each part's result (megabytes here, as at MemEye scale) is read back through a mapping of
    the file its worker wrote (scorer.forked.load_result) and equals the part read here."""
    import numpy as np

    before = _left_behind()
    parts = [[k] for k in range(8)]
    got = read_parts(parts, 2, _big_part)
    assert {pid for part in got for _, pid, _, _ in part} - {PARENT}  # a worker read some
    for part, res in zip(parts, got):
        (x, _, values, names), = res
        assert x == part[0] and np.array_equal(values, np.full(200_000, float(x)))
        assert names == [f"row {x}:{i}" for i in range(5_000)]
    assert _left_behind() == before
