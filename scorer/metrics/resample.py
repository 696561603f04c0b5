"""The bootstrap's draws (DESIGN.md §5): resample index and multiplicity matrices from one
`numpy.random.Generator`, in chunks bounded by `MAX_CELLS` so memory stays flat however many items
there are; the multiplicity matrices a report's many CIs share; and percentile intervals.

The chunking never changes the draws (the generator's stream is the same whether taken in one call
or several), so a result depends only on the data, the seed and the number of resamples. The
confidence intervals built on them are scorer.metrics.bootstrap's.

Pure functions: no I/O, no printing.
"""

from __future__ import annotations

from collections import OrderedDict
from collections.abc import Iterator, Sequence
from contextlib import contextmanager
from time import perf_counter

import numpy as np

from scorer.metrics.constants import DEFAULT_RESAMPLES, DEFAULT_SEED

DEFAULT_CONFIDENCE = 0.95
# Cells of the resample index matrix held at once (int64): 4M cells = 32 MB per chunk.
MAX_CELLS = 4_000_000


def chunk_rows(n_units: int, resamples: int, max_cells: int = MAX_CELLS) -> int:
    """Resamples per chunk so that chunk × n_units stays within `max_cells`."""
    return max(1, min(resamples, max_cells // max(1, n_units)))


def resample_indices(
    n_units: int,
    resamples: int = DEFAULT_RESAMPLES,
    seed: int | np.random.Generator = DEFAULT_SEED,
    max_cells: int = MAX_CELLS,
) -> Iterator[np.ndarray]:
    """Yield (rows, n_units) int64 index matrices, `resamples` rows in all, drawn with replacement.

    Row r of the concatenation is the same whatever `max_cells` is (tested)."""
    if n_units < 1:
        raise ValueError("cannot resample from zero units")
    rng = seed if isinstance(seed, np.random.Generator) else np.random.default_rng(seed)
    step = chunk_rows(n_units, resamples, max_cells)
    done = 0
    while done < resamples:
        rows = min(step, resamples - done)
        yield rng.integers(0, n_units, size=(rows, n_units))
        done += rows


def resample_counts(
    n_units: int,
    resamples: int = DEFAULT_RESAMPLES,
    seed: int | np.random.Generator = DEFAULT_SEED,
    max_cells: int = MAX_CELLS,
    dtype: type = np.int64,
    buffer: np.ndarray | None = None,
) -> Iterator[np.ndarray]:
    """Yield (rows, n_units) multiplicity matrices (int64 unless `dtype` says otherwise): how
    often each unit was drawn, from the same draws as `resample_indices`. With an integer seed
    the draws depend only on (n_units, resamples, seed), so a report's many CIs over the same
    number of items share one drawing (kept in a small LRU, see `_counts_cache`); the values are
    the same either way (tested). `buffer`, a 1-D array of `dtype` with room for one chunk: the
    cached counts are copied into it and each matrix yielded is a view of it, valid until the next
    (no allocation per chunk)."""
    if n_units < 1:
        raise ValueError("cannot resample from zero units")
    cached = _cached_counts(n_units, resamples, seed) if isinstance(seed, (int, np.integer)) else None
    step = chunk_rows(n_units, resamples, max_cells)
    if cached is None:
        rng = seed if isinstance(seed, np.random.Generator) else np.random.default_rng(seed)
        for start in range(0, resamples, step):
            yield _draw_counts(n_units, min(step, resamples - start), rng, dtype)
        return
    for start in range(0, resamples, step):
        part = cached[start:start + step]
        if buffer is None or buffer.dtype != np.dtype(dtype) or buffer.size < part.size:
            yield part.astype(dtype)
        else:
            view = buffer[:part.size].reshape(part.shape)
            np.copyto(view, part)
            yield view


# Rows drawn and counted at a time: the bincount's bins (8 bytes each) then stay in the CPU cache,
# which makes counting four times faster than one bincount over the whole chunk (measured).
COUNT_BLOCK_CELLS = 1 << 16


def _draw_counts(n_units: int, rows: int, rng: np.random.Generator, dtype) -> np.ndarray:
    """`rows` resamples' multiplicities, drawn from `rng` exactly as resample_indices draws them
    (rng.integers(0, n_units, (r, n_units)) in order: the stream does not depend on the block size)."""
    out = np.empty((rows, n_units), dtype)
    step = max(1, COUNT_BLOCK_CELLS // n_units)
    offset = (np.arange(min(step, rows), dtype=np.int64) * n_units)[:, None]
    for start in range(0, rows, step):
        r = min(step, rows - start)
        idx = rng.integers(0, n_units, size=(r, n_units))
        idx += offset[:r]
        out[start:start + r] = np.bincount(idx.ravel(), minlength=r * n_units).reshape(r, n_units)
    return out


# Drawn multiplicity matrices by (n_units, resamples, seed), most recently used last. Counts are
# small integers, stored as uint8/uint16 (a count never exceeds n_units); the cache holds at most
# COUNTS_CACHE_BYTES and a matrix larger than a quarter of that is not kept.
COUNTS_CACHE_BYTES = 96 * 2**20
_counts_cache: OrderedDict[tuple[int, int, int], np.ndarray] = OrderedDict()


def _cached_counts(n_units: int, resamples: int, seed: int) -> np.ndarray | None:
    if resamples < 1:
        return None
    dtype = np.uint8 if n_units <= 255 else np.uint16 if n_units <= 65_535 else None
    if dtype is None or n_units * resamples * np.dtype(dtype).itemsize > COUNTS_CACHE_BYTES // 4:
        return None
    key = (int(n_units), int(resamples), int(seed))
    hit = _counts_cache.get(key)
    if hit is not None:
        _counts_cache.move_to_end(key)
        return hit
    full = _draw_counts(n_units, resamples, np.random.default_rng(int(seed)), dtype)
    full.setflags(write=False)
    _counts_cache[key] = full
    while sum(m.nbytes for m in _counts_cache.values()) > COUNTS_CACHE_BYTES:
        _counts_cache.popitem(last=False)
    return full


def resample_code_counts(
    codes: Sequence[int] | np.ndarray,
    n_codes: int,
    resamples: int = DEFAULT_RESAMPLES,
    seed: int = DEFAULT_SEED,
    max_cells: int = MAX_CELLS,
) -> Iterator[np.ndarray]:
    """Yield (rows, n_codes) float matrices: per resample, how many of the drawn units carry each
    code (`codes[i]` in 0 … n_codes − 1 for unit i, e.g. a contingency cell), from the same draws
    as resample_indices / resample_counts. Where the shared multiplicity matrix is cached, it is
    one product with the codes' one-hot matrix; otherwise the index draws are counted directly
    (one bincount per chunk, no units × codes product): exact small integers either way."""
    codes = np.asarray(codes, dtype=np.int64)
    n = int(codes.size)
    if n < 1:
        raise ValueError("cannot resample from zero units")
    if isinstance(seed, (int, np.integer)) and _cached_counts(n, resamples, int(seed)) is not None:
        onehot = np.zeros((n, n_codes))
        onehot[np.arange(n), codes] = 1.0
        # each chunk also holds a (rows, n_codes) result: budget for both
        for w in resample_counts(n, resamples, seed, max(1, max_cells * n // (n + n_codes)), dtype=float):
            yield w @ onehot
        return
    for idx in resample_indices(n, resamples, seed, max(1, max_cells // 2)):  # idx and its codes
        rows = idx.shape[0]
        drawn = codes[idx]
        drawn += (np.arange(rows, dtype=np.int64) * n_codes)[:, None]
        yield np.bincount(drawn.ravel(), minlength=rows * n_codes).reshape(rows, n_codes).astype(float)


_BLAS: list = []  # the process's threadpoolctl controller, made once (inspecting the libraries takes ms)


@contextmanager
def one_blas_thread() -> Iterator[None]:
    """Run the enclosed matrix products on one BLAS thread. A product's values depend on the thread
    count with some BLAS builds (OpenBLAS 0.3.31 sums in another order on two threads: results
    differ in the 14th digit, measured), so every product the scorer makes runs on one thread, in
    this process and in forked section workers (scorer.forked) alike: a report's values do not
    depend on the machine's cores. It is also faster here: a second BLAS thread spin-waits between
    products of a few milliseconds, which on two shared cores doubled the CPU time of a report's
    bootstrap (measured, issue 19)."""
    if not _BLAS:
        from threadpoolctl import ThreadpoolController

        _BLAS.append(ThreadpoolController())
    with _BLAS[0].limit(limits=1, user_api="blas"):
        yield


# Rows of a chunk copied at a time by `transposed`: a block of every column then stays in the CPU
# cache, which halves the time of numpy's own strided transpose copy (measured, issue 19).
TRANSPOSE_BLOCK_ROWS = 1024


def transposed(parts: Sequence[np.ndarray]) -> np.ndarray:
    """The (columns, rows) C-contiguous transpose of the chunks `parts` (each (rows_i, columns))
    stacked in order: np.ascontiguousarray(np.concatenate(parts).T), the same values (a copy), in
    cache-sized blocks."""
    cols = parts[0].shape[1]
    out = np.empty((cols, sum(p.shape[0] for p in parts)), dtype=np.result_type(*parts))
    start = 0
    for p in parts:
        transpose_into(p, out, start)
        start += p.shape[0]
    return out


def transpose_into(part: np.ndarray, out: np.ndarray, start: int) -> None:
    """out[:, start:start + rows] = part.T for a (rows, columns) chunk, in cache-sized blocks (what
    `transposed` does chunk by chunk, into an array the caller owns and reuses)."""
    for i in range(0, part.shape[0], TRANSPOSE_BLOCK_ROWS):
        block = part[i:i + TRANSPOSE_BLOCK_ROWS]
        out[:, start + i:start + i + block.shape[0]] = block.T


def percentile_ci(distribution: np.ndarray, confidence: float = DEFAULT_CONFIDENCE) -> tuple[float, float]:
    """Percentile interval (linear interpolation, as numpy's and scipy's default quantile)."""
    low, high = percentile_rows(np.asarray(distribution, dtype=float)[None, :], confidence)
    return float(low[0]), float(high[0])


def percentile_rows(dist: np.ndarray, confidence: float = DEFAULT_CONFIDENCE,
                    in_place: bool = False) -> tuple[np.ndarray, np.ndarray]:
    """Each row's percentile interval, as numpy.quantile(row, [α/2, 1 − α/2]) with its default
    linear interpolation (equal to 1e-12, tested). Each row is partitioned at the four order
    statistics the two quantiles interpolate between (`place_order_statistics`) — the same values
    a sort puts there, in a fraction of a sort's time. `in_place`: partition `dist` itself (a
    C-contiguous float64 array the caller no longer needs in its order), not a copy of it: the
    same values, without a second array as large."""
    if not 0 < confidence < 1:
        raise ValueError(f"confidence must be in (0, 1), got {confidence}")
    n = np.shape(dist)[-1]
    alpha = (1 - confidence) / 2
    spots = []  # (lower order statistic, upper one, fraction between them) of each quantile
    for q in (alpha, 1 - alpha):
        pos = q * (n - 1)
        lo = int(np.floor(pos))
        spots.append((lo, min(lo + 1, n - 1), pos - lo))
    kth = sorted({k for lo, hi, _ in spots for k in (lo, hi)})
    if in_place and isinstance(dist, np.ndarray) and dist.dtype == np.float64 and dist.flags.c_contiguous:
        rows = dist
    else:
        rows = np.array(dist, dtype=float, order="C")  # a copy, partitioned here
    place_order_statistics(rows, kth)
    out = []
    for lo, hi, frac in spots:
        a, b = rows[:, lo], rows[:, hi]
        out.append(a + (b - a) * frac if frac < 0.5 else b - (b - a) * (1 - frac))  # numpy's two-sided lerp
    return out[0], out[1]


def place_order_statistics(rows: np.ndarray, kth: Sequence[int]) -> None:
    """Partition each row of the 2-D array `rows` in place so that column k holds the row's k-th
    smallest value (numpy's sort order: NaN last) for every k in `kth` (ascending, distinct), as
    rows.partition(kth, axis=1) does, by whichever of two ways is faster on this CPU (the values
    placed are the same either way, tested): one multi-k partition, or one partition at each k in
    turn (`_partition_each_k`). numpy 2.4 partitions at one k in SIMD code (x86-simd-sort) and at
    several in plain introselect, and which wins depends on the CPU: for 608 rows of 10,000 one k
    at a time took 24 ms against 61 ms in one call on an Intel AVX-512 machine, but 152 ms against
    75 ms on an AMD EPYC (Zen 4, whose AVX-512 compress instructions are slow), measured, issue 19.
    The first call with enough rows times both ways on a few of its rows (`_faster_way`) and the
    process keeps the answer; calls before it make the one multi-k partition."""
    kth = list(kth)
    if not kth or rows.shape[0] == 0:
        return
    if len(kth) == 1:
        rows.partition(kth[0], axis=1)
        return
    done = 0
    if not _WAY and rows.shape[0] >= 2 * PROBE_ROWS and rows.shape[1] >= PROBE_MIN_COLUMNS:
        _WAY.append(_faster_way(rows[:2 * PROBE_ROWS], kth))
        done = 2 * PROBE_ROWS
    rest = rows[done:]
    if _WAY and _WAY[0] == "each":
        _partition_each_k(rest, kth)
    else:
        rest.partition(kth, axis=1)


# place_order_statistics's probe: rows partitioned each way, and the row length below which it
# does not probe (short rows take microseconds either way and would time noise).
PROBE_ROWS = 4
PROBE_MIN_COLUMNS = 2_000
_WAY: list[str] = []  # "each" or "once", decided by the process's first probe


def _faster_way(rows: np.ndarray, kth: list[int]) -> str:
    """Partition the first PROBE_ROWS rows one k at a time and the next as many in one multi-k
    call, timing each: "each" or "once", whichever took less."""
    t0 = perf_counter()
    _partition_each_k(rows[:PROBE_ROWS], kth)
    t1 = perf_counter()
    rows[PROBE_ROWS:].partition(kth, axis=1)
    t2 = perf_counter()
    return "each" if t1 - t0 < t2 - t1 else "once"


def _partition_each_k(rows: np.ndarray, kth: list[int]) -> None:
    """rows.partition(kth, axis=1)'s values at kth, by one single-k partition at each k in turn, of
    the part of the rows right of the previous k (everything there is at least as large, so the
    k-th of the row is the (k − previous − 1)-th of that part)."""
    start = 0
    for k in kth:
        rows[:, start:].partition(k - start, axis=1)
        start = k + 1
