"""Vectorised nonparametric percentile bootstrap (DESIGN.md §5).

Items are the unit: callers pass one value per item (an MCQ item's rotation-averaged EM, an open
item's judge score), never one per rotation. Defaults: 10,000 resamples, seed 20260430, percentile
95% CI. The resamples are scorer.metrics.resample's draws (index or multiplicity matrices from one
`numpy.random.Generator`, in chunks that never change them), so a result depends only on the data,
the seed and the number of resamples.

Pure functions: no I/O, no printing.
"""

from __future__ import annotations

from collections.abc import Callable, Hashable, Sequence
from dataclasses import dataclass

import numpy as np

from scorer.metrics.constants import DEFAULT_RESAMPLES, DEFAULT_SEED
from scorer.metrics.resample import (
    DEFAULT_CONFIDENCE,
    MAX_CELLS,
    one_blas_thread,
    percentile_ci,
    percentile_rows,
    resample_counts,
    resample_indices,
    transposed,
)


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


def paired_diff_cis(
    pairs: Sequence[tuple],
    clusters: Sequence[Hashable] | np.ndarray | None = None,
    resamples: int = DEFAULT_RESAMPLES,
    seed: int = DEFAULT_SEED,
    confidence: float = DEFAULT_CONFIDENCE,
    max_cells: int = MAX_CELLS,
) -> list[PairedCI]:
    """[paired_diff_ci(a, b, clusters, …) for each pair], equal value for value (==, not
    approximately), on draws shared by every pair with as many units. A pair is (a, b) or
    (a, b, its own clusters); `clusters` is the default of pairs without.

    Where a pair's unit sums are exact in floating point in any order (`exact_sums`: 0/1 metrics,
    judge quarters, …) its resampled means come from one product of the shared multiplicity
    counts with a matrix holding every such pair (one column each) and its percentiles from one
    sort of all of them; any other pair is computed by paired_diff_ci itself, so no result
    depends on a summation order."""
    _check_common(resamples, confidence)
    out: list[PairedCI | None] = [None] * len(pairs)
    # n_units → [(pair index, a, b, unit sums, unit sizes or None, n_clusters)]
    groups: dict[int, list[tuple]] = {}
    for j, pair in enumerate(pairs):
        a, b, cl = pair if len(pair) == 3 else (*pair, clusters)
        xa, xb = _as_values(a, "a"), _as_values(b, "b")
        if xa.shape != xb.shape:
            raise ValueError(f"paired inputs differ in length: {xa.size} vs {xb.size}")
        if xa.size == 0:
            out[j] = paired_diff_ci(xa, xb, cl, resamples, seed, confidence, max_cells)
            continue
        codes, n_units = _cluster_codes(cl, xa.size)
        sums = xa - xb
        sizes = None
        if codes is not None:
            sums, sizes = np.bincount(codes, weights=sums, minlength=n_units), np.bincount(codes, minlength=n_units)
        if isinstance(seed, (int, np.integer)) and exact_sums(sums, n_units):
            groups.setdefault(n_units, []).append((j, xa, xb, sums, sizes, None if codes is None else n_units))
        else:
            out[j] = paired_diff_ci(xa, xb, cl, resamples, seed, confidence, max_cells)
    for n_units, members in groups.items():
        sums = np.column_stack([m[3] for m in members])
        sizes = None
        if any(m[4] is not None for m in members):
            sizes = np.column_stack([np.ones(n_units) if m[4] is None else m[4].astype(float) for m in members])
        dist = resampled_unit_means(sums, sizes, resamples, int(seed), max_cells)
        if not np.isfinite(dist).all():  # cannot happen with finite sums; paired_diff_ci drops those
            for j, xa, xb, *_ in members:
                out[j] = paired_diff_ci(xa, xb, pairs[j][2] if len(pairs[j]) == 3 else clusters,
                                        resamples, seed, confidence, max_cells)
            continue
        low, high = percentile_rows(dist, confidence)
        for row, (j, xa, xb, _, _, n_clusters) in enumerate(members):
            out[j] = PairedCI(float((xa - xb).mean()), float(low[row]), float(high[row]), int(xa.size), resamples,
                              seed, confidence, n_clusters, None, 0, mean_a=float(xa.mean()), mean_b=float(xb.mean()))
    return out  # type: ignore[return-value]


def exact_sums(values: np.ndarray, n_units: int, max_shift: int = 8) -> bool:
    """Whether every weighted sum Σ w_i·values_i with non-negative integer weights totalling at
    most `n_units` is exact in float64, whatever the order of summation: the values are multiples
    of one power of two 2^−s (s ≤ max_shift) and n_units·max|v|·2^s < 2^53."""
    v = np.asarray(values, dtype=float)
    if v.size == 0:
        return True
    if not np.isfinite(v).all():
        return False
    top = float(np.abs(v).max())
    for shift in range(max_shift + 1):
        scaled = v * float(2 ** shift)  # exact: a power of two
        if np.array_equal(scaled, np.rint(scaled)):
            return n_units * top * 2.0 ** shift < 2.0 ** 53
    return False


def resampled_unit_means(
    sums: np.ndarray,
    sizes: np.ndarray | None,
    resamples: int,
    seed: int,
    max_cells: int = MAX_CELLS,
) -> np.ndarray:
    """(columns, resamples): each column's resampled mean Σ w·sums / Σ w·sizes (sizes None: every
    unit one item, the mean Σ w·sums / n_units; else one column of sizes per column of sums) on
    the shared multiplicity counts of (n_units, resamples, seed). Equal to the index-draw means of
    `_resampled_means` where the sums are exact (`exact_sums`); otherwise within floating-point
    summation order."""
    n_units = sums.shape[0]
    parts = []
    with one_blas_thread():
        for w in resample_counts(n_units, resamples, seed, max(1, max_cells * n_units // (n_units + sums.shape[1])),
                                 dtype=float):
            with np.errstate(invalid="ignore", divide="ignore"):
                parts.append((w @ sums) / n_units if sizes is None else (w @ sums) / (w @ sizes))
    return transposed(parts)


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
