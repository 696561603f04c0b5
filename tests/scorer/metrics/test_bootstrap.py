"""Percentile bootstrap: hand cases, scipy.stats.bootstrap on the same data, paired and clustered
variants against slow per-resample references, chunking, and properties."""

from __future__ import annotations

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from scipy import stats

from scorer.metrics.bootstrap import (
    DEFAULT_RESAMPLES,
    DEFAULT_SEED,
    bootstrap_indices,
    bootstrap_weights,
    mean_ci,
    paired_diff_ci,
    two_sample_diff_ci,
    win_tie_loss,
)
from scorer.metrics.resample import percentile_ci, resample_counts, resample_indices


def judge_like(seed: int, n: int = 371) -> np.ndarray:
    """Per-item scores on the judge scale {0, .25, .5, .75, 1}, MemEye-sized by default."""
    return np.random.default_rng(seed).choice([0, 0.25, 0.5, 0.75, 1.0], n, p=[0.4, 0.1, 0.1, 0.1, 0.3])


def scipy_ci(data, statistic, paired=False, seed=DEFAULT_SEED, resamples=DEFAULT_RESAMPLES):
    res = stats.bootstrap(data, statistic, paired=paired, vectorized=True, n_resamples=resamples,
                          method="percentile", rng=np.random.default_rng(seed))
    return float(res.confidence_interval.low), float(res.confidence_interval.high)


# --- Hand cases ----------------------------------------------------------------------------------


def test_two_items_by_hand():
    # Values [0, 1]: a resample's mean is 0, 0.5 or 1 with probabilities 1/4, 1/2, 1/4, so with
    # 10,000 resamples the 2.5th percentile is 0 and the 97.5th is 1; the estimate is 0.5.
    r = mean_ci([0.0, 1.0])
    assert (r.estimate, r.ci_low, r.ci_high) == (0.5, 0.0, 1.0)
    assert (r.n, r.resamples, r.seed, r.confidence, r.n_clusters) == (2, 10_000, 20260430, 0.95, None)


def test_constant_values_give_a_point_interval():
    r = mean_ci([0.75] * 5)
    assert r.estimate == r.ci_low == r.ci_high == 0.75


def test_win_tie_loss_by_hand():
    # a − b = [+.25, 0, −1, +.5, 0]: two wins, two ties, one loss.
    w = win_tie_loss([1, 0.5, 0, 0.75, 0.25], [0.75, 0.5, 1, 0.25, 0.25])
    assert (w.wins, w.ties, w.losses, w.n) == (2, 2, 1, 5)


def test_bad_input():
    with pytest.raises(ValueError, match="NaN"):
        mean_ci([0.5, float("nan")])
    with pytest.raises(ValueError, match="differ in length"):
        paired_diff_ci([1, 2], [1])
    with pytest.raises(ValueError, match="1-D"):
        mean_ci([[1, 2], [3, 4]])
    with pytest.raises(ValueError, match="resamples"):
        mean_ci([1, 2], resamples=0)
    with pytest.raises(ValueError, match="clusters"):
        mean_ci([1, 2], clusters=["a"])
    empty = mean_ci([])
    assert empty.estimate is None and empty.n == 0 and empty.undefined_reason == "no items"


# --- scipy.stats.bootstrap on the same data ------------------------------------------------------


def test_mean_ci_matches_scipy():
    x = judge_like(1)
    ours = mean_ci(x)
    # Same seed: scipy draws the same index matrix, so the interval is the same.
    assert (ours.ci_low, ours.ci_high) == pytest.approx(scipy_ci((x,), np.mean), abs=1e-12)
    # Another seed: Monte Carlo error only, well inside ±0.005 at 10,000 resamples.
    low, high = scipy_ci((x,), np.mean, seed=99)
    assert abs(ours.ci_low - low) < 0.005 and abs(ours.ci_high - high) < 0.005
    assert ours.estimate == pytest.approx(x.mean())


def test_paired_diff_matches_scipy():
    a, b = judge_like(2), judge_like(3)
    diff = lambda x, y, axis=-1: np.mean(x - y, axis=axis)
    ours = paired_diff_ci(a, b)
    assert (ours.ci_low, ours.ci_high) == pytest.approx(scipy_ci((a, b), diff, paired=True), abs=1e-12)
    low, high = scipy_ci((a, b), diff, paired=True, seed=7)
    assert abs(ours.ci_low - low) < 0.005 and abs(ours.ci_high - high) < 0.005
    assert (ours.mean_a, ours.mean_b) == (pytest.approx(a.mean()), pytest.approx(b.mean()))


def test_generic_statistic_matches_scipy():
    x = np.random.default_rng(4).normal(size=101)
    ours = bootstrap_indices(lambda idx: np.median(x[idx], axis=1), x.size)
    assert (ours.ci_low, ours.ci_high) == pytest.approx(scipy_ci((x,), np.median), abs=1e-12)
    assert ours.estimate == pytest.approx(np.median(x))


def test_two_sample_matches_scipy():
    a, b = judge_like(5, 60), judge_like(6, 113)
    diff = lambda x, y, axis=-1: np.mean(x, axis=axis) - np.mean(y, axis=axis)
    ours = two_sample_diff_ci(a, b)
    low, high = scipy_ci((a, b), diff)
    # Different streams from scipy's: Monte Carlo error only (this difference has SE ≈ 0.07).
    assert abs(ours.ci_low - low) < 0.01 and abs(ours.ci_high - high) < 0.01
    assert (ours.n, ours.n_b, ours.estimate) == (60, 113, pytest.approx(a.mean() - b.mean()))


# --- Paired and clustered ------------------------------------------------------------------------


def test_paired_uses_the_same_indices_for_both_sides():
    a, b = judge_like(7), judge_like(8)
    paired, diff = paired_diff_ci(a, b), mean_ci(a - b)
    assert (paired.ci_low, paired.ci_high) == pytest.approx((diff.ci_low, diff.ci_high), abs=1e-12)
    # Correlated sides: the paired interval is much narrower than one ignoring the pairing.
    c = np.clip(a + np.random.default_rng(9).choice([-0.25, 0, 0.25], a.size), 0, 1)
    p, u = paired_diff_ci(c, a), two_sample_diff_ci(c, a)
    assert (p.ci_high - p.ci_low) < 0.5 * (u.ci_high - u.ci_low)


def test_singleton_clusters_equal_item_bootstrap():
    x = judge_like(10, 50)
    r = mean_ci(x, clusters=[f"c{i}" for i in range(50)])
    assert (r.ci_low, r.ci_high) == pytest.approx((mean_ci(x).ci_low, mean_ci(x).ci_high), abs=1e-12)
    assert r.n_clusters == 50 and r.n == 50


def test_equal_clusters_equal_bootstrap_of_cluster_means():
    # With equal cluster sizes the mean over drawn clusters' items is the mean of their means.
    x = judge_like(11, 60)
    clusters = np.repeat(np.arange(12), 5)
    r = mean_ci(x, clusters=clusters)
    ref = mean_ci(x.reshape(12, 5).mean(axis=1))
    assert (r.ci_low, r.ci_high) == pytest.approx((ref.ci_low, ref.ci_high), abs=1e-12)
    assert (r.n, r.n_clusters, r.estimate) == (60, 12, pytest.approx(x.mean()))


def test_unequal_clusters_match_a_per_resample_loop():
    rng = np.random.default_rng(12)
    sizes = rng.integers(1, 9, 15)
    clusters = np.repeat(np.arange(15), sizes)
    a = rng.random(clusters.size) + clusters * 0.05
    b = rng.random(clusters.size)
    members = [np.flatnonzero(clusters == c) for c in range(15)]
    draws = np.random.default_rng(3).integers(0, 15, size=(300, 15))
    ref = np.array([np.mean(np.concatenate([a[members[c]] - b[members[c]] for c in row])) for row in draws])
    ours = paired_diff_ci(a, b, clusters=clusters, resamples=300, seed=3)
    assert (ours.ci_low, ours.ci_high) == pytest.approx(tuple(np.quantile(ref, [0.025, 0.975])), abs=1e-12)
    # The generic weighted path gives the same interval from the same draws.
    d = a - b
    gen = bootstrap_weights(lambda w: (w @ d) / w.sum(axis=1), d.size, clusters=clusters, resamples=300, seed=3)
    assert (gen.ci_low, gen.ci_high) == pytest.approx((ours.ci_low, ours.ci_high), abs=1e-12)


def test_clustering_widens_the_interval_when_clusters_are_correlated():
    rng = np.random.default_rng(13)
    clusters = np.repeat(np.arange(20), 10)
    x = rng.normal(size=20)[clusters] + 0.1 * rng.normal(size=200)
    plain, clustered = mean_ci(x), mean_ci(x, clusters=clusters)
    assert (clustered.ci_high - clustered.ci_low) > 2 * (plain.ci_high - plain.ci_low)


# --- Resampling machinery ------------------------------------------------------------------------


def test_chunking_changes_nothing_and_bounds_memory():
    x = judge_like(14, 300)
    whole = mean_ci(x, resamples=2000)
    chunks = list(resample_indices(300, 2000, max_cells=7_000))
    assert all(c.size <= 7_000 for c in chunks) and sum(len(c) for c in chunks) == 2000
    assert np.array_equal(np.vstack(chunks), next(resample_indices(300, 2000)))
    assert mean_ci(x, resamples=2000, max_cells=7_000) == whole
    assert paired_diff_ci(x, x[::-1], resamples=2000, max_cells=301) == paired_diff_ci(x, x[::-1], resamples=2000)


def test_resample_counts_are_bincounts_of_the_indices():
    idx = next(resample_indices(40, 50, seed=1))
    counts = next(resample_counts(40, 50, seed=1))
    assert counts.shape == (50, 40) and (counts.sum(axis=1) == 40).all()
    assert np.array_equal(counts[7], np.bincount(idx[7], minlength=40))


def test_undefined_resamples_are_dropped_and_counted():
    x = np.array([0.0, 0.0, 1.0, 2.0])
    # Ratio statistic undefined (NaN) when a resample holds only zeros: probability (1/2)^4.
    def stat(idx):
        s = x[idx]
        with np.errstate(invalid="ignore", divide="ignore"):
            return s.max(axis=1) / s.sum(axis=1) * np.where(s.sum(axis=1) > 0, 1, np.nan)
    r = bootstrap_indices(stat, x.size, resamples=4000)
    assert 150 < r.dropped < 350 and r.ci_low is not None


# --- Properties ----------------------------------------------------------------------------------

values = st.lists(st.floats(-100, 100, allow_nan=False), min_size=3, max_size=40).filter(
    lambda v: max(v) - min(v) > 1e-3
)


@settings(max_examples=40, deadline=None)
@given(values)
def test_ci_contains_estimate(v):
    r = mean_ci(v, resamples=2000)
    assert r.ci_low <= r.estimate <= r.ci_high


@settings(max_examples=25, deadline=None)
@given(values, st.integers(0, 2**32 - 1))
def test_reproducible_with_same_seed(v, seed):
    assert mean_ci(v, resamples=500, seed=seed) == mean_ci(v, resamples=500, seed=seed)
    a = np.asarray(v)
    assert paired_diff_ci(a, a[::-1], resamples=500, seed=seed) == paired_diff_ci(a, a[::-1], resamples=500, seed=seed)


def _counts_by_bincount(n: int, resamples: int, seed: int) -> np.ndarray:
    idx = np.vstack(list(resample_indices(n, resamples, seed)))
    return np.vstack([np.bincount(row, minlength=n) for row in idx])


@pytest.mark.parametrize("n", [1, 7, 300, 1200])
def test_shared_counts_equal_the_counts_of_the_drawn_indices(n, monkeypatch):
    from scorer.metrics import resample as bootstrap

    expected = _counts_by_bincount(n, 700, 3)
    bootstrap._counts_cache.clear()
    first = np.vstack(list(resample_counts(n, 700, 3)))  # drawn and kept
    again = np.vstack(list(resample_counts(n, 700, 3, max_cells=999)))  # from the cache, other chunks
    assert (3 in {k[2] for k in bootstrap._counts_cache}) and first.dtype == np.int64
    monkeypatch.setattr(bootstrap, "COUNT_BLOCK_CELLS", 5)  # a block size that splits rows oddly
    bootstrap._counts_cache.clear()
    blocked = np.vstack(list(resample_counts(n, 700, 3)))
    from_generator = np.vstack(list(resample_counts(n, 700, np.random.default_rng(3), max_cells=2_000)))
    for got in (first, again, blocked, from_generator):
        assert np.array_equal(got, expected)


def test_counts_cache_stays_within_its_budget(monkeypatch):
    from scorer.metrics import resample as bootstrap

    monkeypatch.setattr(bootstrap, "COUNTS_CACHE_BYTES", 400_000)
    bootstrap._counts_cache.clear()
    for n in range(20, 100, 5):  # 920 kB in all; each 1,000 × n uint8 matrix fits a quarter of the budget
        next(resample_counts(n, 1_000, 1))
    assert sum(m.nbytes for m in bootstrap._counts_cache.values()) <= 400_000
    assert (20, 1_000, 1) not in bootstrap._counts_cache  # the oldest went first
    assert list(bootstrap._counts_cache)[-1] == (95, 1_000, 1)
    next(resample_counts(200, 1_000, 1))  # 200 kB: more than a quarter, drawn but not kept
    assert (200, 1_000, 1) not in bootstrap._counts_cache
    cached = bootstrap._counts_cache[(95, 1_000, 1)]
    with pytest.raises(ValueError):
        cached[0, 0] = 9  # shared between callers: read-only
    bootstrap._counts_cache.clear()


@pytest.mark.parametrize("size", [1, 2, 3, 39, 40, 41, 10_000])
@pytest.mark.parametrize("confidence", [0.95, 0.9, 0.5])
def test_percentiles_equal_numpy_quantile_and_a_sort_exactly(size, confidence):
    from scorer.metrics.resample import percentile_rows

    rng = np.random.default_rng(size)
    dist = np.vstack([rng.normal(size=size), np.round(rng.random(size) * 8) / 8, np.full(size, 0.3)])
    alpha = (1 - confidence) / 2
    low, high = percentile_rows(dist, confidence)
    ref = np.quantile(dist, [alpha, 1 - alpha], axis=1)
    assert np.allclose(low, ref[0], rtol=0, atol=1e-12) and np.allclose(high, ref[1], rtol=0, atol=1e-12)
    assert percentile_ci(dist[0], confidence) == (float(low[0]), float(high[0]))
    # the order statistics of a full sort, interpolated as numpy does: the very same floats (the
    # report's values did not move when the sort became a partition, issue 19)
    rows = np.sort(dist, axis=1)
    for q, got in ((alpha, low), (1 - alpha, high)):
        pos = q * (size - 1)
        lo = int(np.floor(pos))
        a, b, frac = rows[:, lo], rows[:, min(lo + 1, size - 1)], pos - lo
        assert np.array_equal(got, a + (b - a) * frac if frac < 0.5 else b - (b - a) * (1 - frac))


@pytest.mark.parametrize("way", [None, "each", "once"])  # None: this call probes which is faster
@pytest.mark.parametrize("size", [1, 2, 5, 1_000, 10_000])
def test_order_statistics_placed_either_way_equal_one_partition(size, way, monkeypatch):
    """place_order_statistics (one multi-k partition, or a partition at each k in turn, whichever
    the process's first probe found faster, issue 19) puts at every k the value numpy's one multi-k
    partition and a full sort put there, NaN, infinities and ties included, in the rows it probed
    on as in the rest."""
    from scorer.metrics import resample
    from scorer.metrics.resample import PROBE_ROWS, place_order_statistics

    monkeypatch.setattr(resample, "_WAY", [] if way is None else [way])
    rng = np.random.default_rng(size)
    normal = rng.normal(size=(3, size))
    ties = np.round(rng.random((3, size)) * 4) / 4
    odd = rng.normal(size=(3, size))
    odd[rng.random((3, size)) < 0.1] = np.nan
    odd[rng.random((3, size)) < 0.05] = np.inf
    odd[rng.random((3, size)) < 0.05] = -np.inf
    rows = np.vstack([normal, ties, odd, np.full((1, size), np.nan), odd[::-1], normal[:1]])
    assert rows.shape[0] > 2 * PROBE_ROWS  # the probe's rows and some after them
    positions = {min(k, size - 1) for k in (0, size // 40, size // 40 + 1, size - size // 40 - 1, size - size // 40)}
    for kth in (sorted(positions), [size // 2], [0], [size - 1]):
        got = rows.copy()
        place_order_statistics(got, kth)
        for ref in (np.partition(rows, kth, axis=1), np.sort(rows, axis=1)):
            assert np.array_equal(got[:, kth], ref[:, kth], equal_nan=True), kth
        assert np.array_equal(np.sort(got, axis=1), np.sort(rows, axis=1), equal_nan=True)  # the same values
    probed = size >= resample.PROBE_MIN_COLUMNS and len(positions) > 1
    assert resample._WAY == ([way] if way else ([resample._WAY[0]] if probed else []))
    assert not resample._WAY or resample._WAY[0] in ("each", "once")


@pytest.mark.parametrize("n, resamples", [(30, 400), (2_000, 7_000)])  # cached multiplicities | index draws
def test_resample_code_counts_equal_the_multiplicity_product(n, resamples):
    from scorer.metrics.resample import COUNTS_CACHE_BYTES, resample_code_counts

    cacheable = n * resamples * (1 if n <= 255 else 2) <= COUNTS_CACHE_BYTES // 4
    assert cacheable == (n == 30)  # the two cases take the two paths
    codes = np.random.default_rng(4).integers(0, 7, n)
    onehot = np.eye(7)[codes]
    idx = np.random.default_rng(11).integers(0, n, size=(resamples, n))  # the project's draws
    reference = np.stack([np.bincount(codes[row], minlength=7) for row in idx]).astype(float)
    for max_cells in (4_000_000, 5_000):
        got = np.vstack(list(resample_code_counts(codes, 7, resamples, 11, max_cells=max_cells)))
        assert np.array_equal(got, reference)
    products = np.vstack([w @ onehot for w in resample_counts(n, resamples, 11, dtype=float)])
    assert np.array_equal(products, reference)
