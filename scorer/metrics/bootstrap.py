"""Vectorised nonparametric percentile bootstrap (DESIGN.md §5).

Items are the unit: callers pass one value per item (an MCQ item's rotation-averaged EM, an open
item's judge score), never one per rotation. Defaults: 10,000 resamples, seed 20260430, percentile
95% CI. Resamples are drawn as an index matrix from one `numpy.random.Generator`, in chunks bounded
by `MAX_CELLS` so memory stays flat however many items there are; the chunking never changes the
draws (the generator's stream is the same whether taken in one call or several), so a result
depends only on the data, the seed and the number of resamples.

Pure functions: no I/O, no printing.
"""

from __future__ import annotations

from collections import OrderedDict
from collections.abc import Callable, Hashable, Iterator, Sequence
from dataclasses import dataclass

import numpy as np

DEFAULT_SEED = 20260430
DEFAULT_RESAMPLES = 10_000
DEFAULT_CONFIDENCE = 0.95
# Cells of the resample index matrix held at once (int64): 4M cells = 32 MB per chunk.
MAX_CELLS = 4_000_000


@dataclass(frozen=True)
class BootstrapCI:
    """A point estimate with its percentile bootstrap CI. `n` counts items (units of resampling
    unless `n_clusters` is set, in which case clusters were resampled). Values are None, with
    `undefined_reason`, when there is nothing to estimate."""

    estimate: float | None
    ci_low: float | None
    ci_high: float | None
    n: int
    resamples: int
    seed: int
    confidence: float = DEFAULT_CONFIDENCE
    n_clusters: int | None = None
    undefined_reason: str | None = None
    dropped: int = 0  # resamples on which the statistic was undefined (NaN), left out of the CI


@dataclass(frozen=True)
class PairedCI(BootstrapCI):
    """A paired difference mean(a − b) with its CI, and both sides' means for the report."""

    mean_a: float | None = None
    mean_b: float | None = None


@dataclass(frozen=True)
class TwoSampleCI(BootstrapCI):
    """mean(a) − mean(b) for two independent groups (each resampled within itself)."""

    n_b: int = 0
    mean_a: float | None = None
    mean_b: float | None = None


@dataclass(frozen=True)
class WinTieLoss:
    """Per-item paired comparison: a wins where a > b + tol, loses where a < b − tol."""

    wins: int
    ties: int
    losses: int
    n: int


# ---------------------------------------------------------------------------------------------
# Resampling primitives


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
) -> Iterator[np.ndarray]:
    """Yield (rows, n_units) multiplicity matrices (int64 unless `dtype` says otherwise): how
    often each unit was drawn, from the same draws as `resample_indices`. With an integer seed
    the draws depend only on (n_units, resamples, seed), so a report's many CIs over the same
    number of items share one drawing (kept in a small LRU, see `_counts_cache`); the values are
    the same either way (tested)."""
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
        yield cached[start:start + step].astype(dtype)


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


def percentile_ci(distribution: np.ndarray, confidence: float = DEFAULT_CONFIDENCE) -> tuple[float, float]:
    """Percentile interval (linear interpolation, as numpy's and scipy's default quantile)."""
    low, high = percentile_rows(np.asarray(distribution, dtype=float)[None, :], confidence)
    return float(low[0]), float(high[0])


def percentile_rows(dist: np.ndarray, confidence: float = DEFAULT_CONFIDENCE) -> tuple[np.ndarray, np.ndarray]:
    """Each row's percentile interval, as numpy.quantile(row, [α/2, 1 − α/2]) with its default
    linear interpolation (equal to 1e-12, tested). Rows are sorted rather than partitioned: numpy's
    vectorised sort is four times faster than its selection on 10,000-sample rows (measured)."""
    if not 0 < confidence < 1:
        raise ValueError(f"confidence must be in (0, 1), got {confidence}")
    rows = np.sort(np.asarray(dist, dtype=float), axis=1)
    n = rows.shape[1]
    alpha = (1 - confidence) / 2
    out = []
    for q in (alpha, 1 - alpha):
        pos = q * (n - 1)
        lo = int(np.floor(pos))
        hi = min(lo + 1, n - 1)
        frac = pos - lo
        a, b = rows[:, lo], rows[:, hi]
        out.append(a + (b - a) * frac if frac < 0.5 else b - (b - a) * (1 - frac))  # numpy's two-sided lerp
    return out[0], out[1]


def _check_common(resamples: int, confidence: float) -> None:
    if resamples < 1:
        raise ValueError(f"resamples must be >= 1, got {resamples}")
    if not 0 < confidence < 1:
        raise ValueError(f"confidence must be in (0, 1), got {confidence}")


def bootstrap_indices(
    statistic: Callable[[np.ndarray], np.ndarray],
    n: int,
    resamples: int = DEFAULT_RESAMPLES,
    seed: int = DEFAULT_SEED,
    confidence: float = DEFAULT_CONFIDENCE,
    max_cells: int = MAX_CELLS,
) -> BootstrapCI:
    """Generic percentile bootstrap: `statistic(idx)` maps an (rows, n) index matrix to `rows`
    values (NaN marks a resample where the statistic is undefined; those are dropped). The point
    estimate is `statistic` on the identity row."""
    _check_common(resamples, confidence)
    if n < 1:
        return BootstrapCI(None, None, None, 0, resamples, seed, confidence, undefined_reason="no items")
    estimate = float(np.asarray(statistic(np.arange(n)[None, :]), dtype=float)[0])
    dist = np.concatenate(
        [np.asarray(statistic(idx), dtype=float) for idx in resample_indices(n, resamples, seed, max_cells)]
    )
    return _finish(estimate, dist, n, resamples, seed, confidence)


def bootstrap_weights(
    statistic: Callable[[np.ndarray], np.ndarray],
    n: int,
    clusters: Sequence[Hashable] | np.ndarray | None = None,
    resamples: int = DEFAULT_RESAMPLES,
    seed: int = DEFAULT_SEED,
    confidence: float = DEFAULT_CONFIDENCE,
    max_cells: int = MAX_CELLS,
) -> BootstrapCI:
    """Generic (optionally clustered) bootstrap on item weights: `statistic(w)` maps an (rows, n)
    matrix of item multiplicities to `rows` values. With `clusters` (one label per item), clusters
    are drawn with replacement and every item of a drawn cluster gets that cluster's multiplicity."""
    _check_common(resamples, confidence)
    if n < 1:
        return BootstrapCI(None, None, None, 0, resamples, seed, confidence, undefined_reason="no items")
    codes, n_units = _cluster_codes(clusters, n)
    estimate = float(np.asarray(statistic(np.ones((1, n))), dtype=float)[0])
    parts = []
    # Item weight rows are n wide although only n_units are drawn: size chunks by the wider one.
    budget = max(1, max_cells * n_units // max(n, 1))
    for w in resample_counts(n_units, resamples, seed, budget):
        parts.append(np.asarray(statistic(w if codes is None else w[:, codes]), dtype=float))
    return _finish(estimate, np.concatenate(parts), n, resamples, seed, confidence,
                   n_clusters=None if codes is None else n_units)


# ---------------------------------------------------------------------------------------------
# Means and differences


def mean_ci(
    values: Sequence[float] | np.ndarray,
    clusters: Sequence[Hashable] | np.ndarray | None = None,
    resamples: int = DEFAULT_RESAMPLES,
    seed: int = DEFAULT_SEED,
    confidence: float = DEFAULT_CONFIDENCE,
    max_cells: int = MAX_CELLS,
) -> BootstrapCI:
    """Mean of per-item values with a percentile CI; with `clusters`, resample clusters (e.g.
    persona/conversation) and take the mean over all items of the drawn clusters."""
    _check_common(resamples, confidence)
    x = _as_values(values, "values")
    return _mean_of_units(x, clusters, resamples, seed, confidence, max_cells)


def paired_diff_ci(
    a: Sequence[float] | np.ndarray,
    b: Sequence[float] | np.ndarray,
    clusters: Sequence[Hashable] | np.ndarray | None = None,
    resamples: int = DEFAULT_RESAMPLES,
    seed: int = DEFAULT_SEED,
    confidence: float = DEFAULT_CONFIDENCE,
    max_cells: int = MAX_CELLS,
) -> PairedCI:
    """mean(a − b) over items scored by both sides; each resample uses the same item (or cluster)
    indices for a and b, which is the same as resampling the per-item differences."""
    _check_common(resamples, confidence)
    xa, xb = _as_values(a, "a"), _as_values(b, "b")
    if xa.shape != xb.shape:
        raise ValueError(f"paired inputs differ in length: {xa.size} vs {xb.size}")
    res = _mean_of_units(xa - xb, clusters, resamples, seed, confidence, max_cells)
    means = (float(xa.mean()), float(xb.mean())) if xa.size else (None, None)
    return PairedCI(**_fields(res), mean_a=means[0], mean_b=means[1])


def two_sample_diff_ci(
    a: Sequence[float] | np.ndarray,
    b: Sequence[float] | np.ndarray,
    resamples: int = DEFAULT_RESAMPLES,
    seed: int = DEFAULT_SEED,
    confidence: float = DEFAULT_CONFIDENCE,
    max_cells: int = MAX_CELLS,
) -> TwoSampleCI:
    """mean(a) − mean(b) for disjoint item groups (e.g. Y3 vs Y1 items), each resampled within
    itself from its own stream spawned from `seed`."""
    _check_common(resamples, confidence)
    xa, xb = _as_values(a, "a"), _as_values(b, "b")
    if xa.size == 0 or xb.size == 0:
        return TwoSampleCI(None, None, None, int(xa.size), resamples, seed, confidence,
                           undefined_reason="a group has no items", n_b=int(xb.size))
    ga, gb = np.random.SeedSequence(seed).spawn(2)
    ma = _resampled_means(xa, np.ones(xa.size), resamples, np.random.default_rng(ga), max_cells)
    mb = _resampled_means(xb, np.ones(xb.size), resamples, np.random.default_rng(gb), max_cells)
    mean_a, mean_b = float(xa.mean()), float(xb.mean())
    res = _finish(mean_a - mean_b, ma - mb, int(xa.size), resamples, seed, confidence)
    return TwoSampleCI(**_fields(res), n_b=int(xb.size), mean_a=mean_a, mean_b=mean_b)


def win_tie_loss(a: Sequence[float] | np.ndarray, b: Sequence[float] | np.ndarray, tol: float = 1e-9) -> WinTieLoss:
    """Count items where a beats, ties or loses to b (paired per-item scores)."""
    xa, xb = _as_values(a, "a"), _as_values(b, "b")
    if xa.shape != xb.shape:
        raise ValueError(f"paired inputs differ in length: {xa.size} vs {xb.size}")
    d = xa - xb
    wins, losses = int((d > tol).sum()), int((d < -tol).sum())
    return WinTieLoss(wins, int(d.size) - wins - losses, losses, int(d.size))


# ---------------------------------------------------------------------------------------------
# Internals


def _as_values(values: Sequence[float] | np.ndarray, name: str) -> np.ndarray:
    x = np.asarray(values, dtype=float)
    if x.ndim != 1:
        raise ValueError(f"{name} must be one value per item (1-D), got shape {x.shape}")
    if not np.isfinite(x).all():
        raise ValueError(f"{name} contains NaN or infinite values; drop unscored items first")
    return x


def _cluster_codes(clusters, n: int) -> tuple[np.ndarray | None, int]:
    if clusters is None:
        return None, n
    labels = list(clusters)
    if len(labels) != n:
        raise ValueError(f"clusters has {len(labels)} labels for {n} items")
    index: dict = {}
    codes = np.fromiter((index.setdefault(c, len(index)) for c in labels), dtype=np.int64, count=n)
    return codes, len(index)


def _mean_of_units(x, clusters, resamples, seed, confidence, max_cells) -> BootstrapCI:
    n = int(x.size)
    if n == 0:
        return BootstrapCI(None, None, None, 0, resamples, seed, confidence, undefined_reason="no items")
    codes, n_units = _cluster_codes(clusters, n)
    if codes is None:
        sums, sizes = x, np.ones(n)
    else:
        # Unequal cluster sizes: a resample's mean is Σ drawn cluster sums / Σ drawn cluster sizes.
        sums, sizes = np.bincount(codes, weights=x, minlength=n_units), np.bincount(codes, minlength=n_units)
    dist = _resampled_means(sums, sizes.astype(float), resamples, np.random.default_rng(seed), max_cells)
    return _finish(float(x.mean()), dist, n, resamples, seed, confidence,
                   n_clusters=None if codes is None else n_units)


def _resampled_means(sums: np.ndarray, sizes: np.ndarray, resamples: int, rng, max_cells) -> np.ndarray:
    out = []
    equal = bool(np.all(sizes == 1))
    for idx in resample_indices(sums.size, resamples, rng, max_cells):
        if equal:
            out.append(sums[idx].mean(axis=1))
        else:
            out.append(sums[idx].sum(axis=1) / sizes[idx].sum(axis=1))
    return np.concatenate(out)


def _finish(estimate, dist, n, resamples, seed, confidence, n_clusters=None) -> BootstrapCI:
    ok = dist[np.isfinite(dist)]
    dropped = int(dist.size - ok.size)
    if not np.isfinite(estimate):
        return BootstrapCI(None, None, None, n, resamples, seed, confidence, n_clusters,
                           "the statistic is undefined on the sample", dropped)
    if ok.size == 0:
        return BootstrapCI(estimate, None, None, n, resamples, seed, confidence, n_clusters,
                           "the statistic is undefined on every resample", dropped)
    low, high = percentile_ci(ok, confidence)
    return BootstrapCI(estimate, low, high, n, resamples, seed, confidence, n_clusters, None, dropped)


def _fields(res: BootstrapCI) -> dict:
    return {f: getattr(res, f) for f in BootstrapCI.__dataclass_fields__}
