"""The reference every app bench takes in its own run: the wall time of a fixed pure-Python loop, which
says how busy the machine was (a figure divided by it compares across runs)."""

from __future__ import annotations

import time


def calibration_ms() -> float:
    """Wall time of a fixed pure-Python loop, in ms (compare runs by this)."""
    t0 = time.perf_counter()
    total = 0
    for i in range(2_000_000):
        total += i & 7
    return round((time.perf_counter() - t0) * 1000, 1)
