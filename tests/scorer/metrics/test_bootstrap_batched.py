"""Many paired CIs on shared draws (issue 19): `paired_diff_cis` equals `paired_diff_ci` value for
value (==), by hand and against scipy.stats.bootstrap on the same indices; `exact_sums` decides
which pairs may take the one matrix product; the buffered multiplicity counts equal the plain ones;
PairedPlan's shortcuts keep its results."""

from __future__ import annotations

import numpy as np
import pytest
from scipy import stats

from scorer.metrics import bootstrap
from scorer.metrics.bootstrap import exact_sums, paired_diff_ci, paired_diff_cis, resampled_unit_means
from scorer.metrics.resample import resample_counts, resample_indices


def binary(seed: int, n: int) -> np.ndarray:
    return np.random.default_rng(seed).integers(0, 2, n).astype(float)


def quarters(seed: int, n: int) -> np.ndarray:
    return np.random.default_rng(seed).choice([0, 0.25, 0.5, 0.75, 1.0], n)


def test_two_items_by_hand():
    # d = a − b = [0, 1]: a resample's mean is 0, ½ or 1 with probabilities ¼, ½, ¼, so with 10,000
    # resamples the 2.5th percentile is 0 and the 97.5th is 1 (as for mean_ci([0, 1])).
    (r,) = paired_diff_cis([([1.0, 1.0], [1.0, 0.0])])
    assert (r.estimate, r.ci_low, r.ci_high, r.mean_a, r.mean_b, r.n, r.dropped) == (0.5, 0.0, 1.0, 1.0, 0.5, 2, 0)


def test_exact_sums_by_hand():
    assert exact_sums(np.array([0.0, 1.0, -1.0]), 10)  # 0/1 metrics and their differences
    assert exact_sums(np.array([0.25, -0.75, 0.5]), 371)  # judge quarters: multiples of 2^-2
    assert exact_sums(np.array([]), 5)
    assert not exact_sums(np.array([1 / 3, 0.0]), 3)  # thirds: the order of summation rounds
    assert not exact_sums(np.array([0.1]), 3)
    assert not exact_sums(np.array([2.0**50]), 16)  # 16·2^50 ≥ 2^53: the sums would round
    assert exact_sums(np.array([2.0**48]), 16)
    assert not exact_sums(np.array([np.nan, 1.0]), 2)


def test_many_pairs_equal_one_call_each(monkeypatch):
    """Exact pairs of several lengths, with and without clusters (their own or the default), and a
    pair with thirds (not exact: computed by paired_diff_ci itself): every result == its own call."""
    n = 57
    clusters = [f"c{i % 9}" for i in range(n)]
    thirds = np.random.default_rng(5).integers(0, 4, n) / 3
    pairs = [(binary(1, n), binary(2, n)), (quarters(3, n), quarters(4, n)), (thirds, quarters(6, n)),
             (quarters(9, n), binary(10, n), clusters), (binary(11, n), quarters(12, n), None), ([], [])]
    calls = []
    real = bootstrap.paired_diff_ci
    monkeypatch.setattr(bootstrap, "paired_diff_ci", lambda *a, **k: calls.append(len(a[0])) or real(*a, **k))
    for default, extra in ((None, [(binary(7, 20), binary(8, 20))]), (clusters, [])):
        calls.clear()
        batch = pairs + extra
        got = paired_diff_cis(batch, default, resamples=3000, seed=11)
        for pair, res in zip(batch, got):
            a, b, cl = pair if len(pair) == 3 else (*pair, default)
            assert res == real(a, b, cl, resamples=3000, seed=11)  # every field, floats exactly
        assert sorted(calls) == [0, n]  # only the thirds and the empty pair went to paired_diff_ci
    with pytest.raises(ValueError, match="clusters has 57 labels for 20 items"):
        paired_diff_cis([(binary(7, 20), binary(8, 20))], clusters, resamples=300, seed=1)


def test_unequal_clusters_equal_paired_diff_ci():
    n = 40
    clusters = np.random.default_rng(2).integers(0, 6, n)  # unequal sizes: ratio of drawn sums
    pairs = [(binary(s, n), binary(s + 50, n), clusters) for s in range(4)]
    for (a, b, cl), res in zip(pairs, paired_diff_cis(pairs, resamples=2000, seed=3)):
        assert res == paired_diff_ci(a, b, cl, resamples=2000, seed=3)
        assert res.n_clusters == 6


def test_matches_scipy_on_the_same_indices():
    a, b = quarters(20, 371), quarters(21, 371)
    res = stats.bootstrap((a, b), lambda x, y, axis=-1: np.mean(x - y, axis=axis), paired=True, vectorized=True,
                          n_resamples=10_000, method="percentile", rng=np.random.default_rng(20260430))
    (ours,) = paired_diff_cis([(a, b)])
    assert (ours.ci_low, ours.ci_high) == pytest.approx(
        (res.confidence_interval.low, res.confidence_interval.high), abs=1e-12)
    # and the straightforward per-resample computation on those indices, exactly
    d = a - b
    idx = np.vstack(list(resample_indices(371, 10_000, 20260430)))
    assert (ours.ci_low, ours.ci_high) == tuple(float(q) for q in np.quantile(d[idx].mean(axis=1), [0.025, 0.975]))


def test_resampled_unit_means_by_hand():
    # three units, two resamples' counts written out: means Σ w·s / Σ w·z
    sums, sizes = np.array([[1.0], [2.0], [4.0]]), np.array([[1.0], [2.0], [1.0]])
    w = next(resample_counts(3, 2, 7, dtype=float))
    got = resampled_unit_means(sums, sizes, 2, 7)
    assert got.shape == (1, 2)
    assert got[0].tolist() == [(w[r] @ sums[:, 0]) / (w[r] @ sizes[:, 0]) for r in range(2)]
    assert resampled_unit_means(sums, None, 2, 7)[0].tolist() == [(w[r] @ sums[:, 0]) / 3 for r in range(2)]


@pytest.mark.parametrize("n, max_cells", [(30, 4_000_000), (30, 700), (300, 40_000)])
def test_buffered_counts_equal_plain_counts(n, max_cells):
    plain = [w.copy() for w in resample_counts(n, 500, 9, max_cells, dtype=float)]
    buffer = np.empty(n * 500)
    buffered = [w.copy() for w in resample_counts(n, 500, 9, max_cells, dtype=float, buffer=buffer)]
    assert len(plain) == len(buffered) and all(np.array_equal(p, q) for p, q in zip(plain, buffered))


def test_products_run_on_one_blas_thread_whatever_the_process_allows():
    """Some BLAS builds sum a product in another order on two threads (OpenBLAS 0.3.31: the 14th
    digit differs), so one_blas_thread runs every product on one thread, small or large: inside it
    the BLAS reports one thread and a product equals the one computed on one thread, even where the
    process allows two; PairedPlan.run limits itself the same way."""
    from threadpoolctl import threadpool_info, threadpool_limits

    from scorer.metrics.comparisons import PairedPlan
    from scorer.metrics.resample import one_blas_thread

    rng = np.random.default_rng(6)
    sums = rng.integers(-3, 4, (371, 40)) / 3
    w = next(resample_counts(371, 10_000, 5, dtype=float))
    small = w[:50]
    with threadpool_limits(limits=1, user_api="blas"):
        want, want_small = w @ sums, small @ sums
    with threadpool_limits(limits=2, user_api="blas"):
        with one_blas_thread():
            assert {m["num_threads"] for m in threadpool_info() if m["user_api"] == "blas"} == {1}
            one, one_small = w @ sums, small @ sums
    assert np.array_equal(one, want) and np.array_equal(one_small, want_small)

    def plan():
        p = PairedPlan(10_000, 5)
        for j in range(40):
            p.add(j, rng_a[:, j], rng_b[:, j])
        return p

    rng_a, rng_b = rng.integers(0, 4, (200, 40)) / 3, rng.integers(0, 4, (200, 40)) / 3
    from scorer.metrics import comparisons

    with threadpool_limits(limits=1, user_api="blas"):
        single = comparisons.PairedPlan._run(plan())  # the computation on one thread
    with threadpool_limits(limits=2, user_api="blas"):
        limited = plan().run()  # run() limits itself
    assert limited == single


def test_a_serial_report_is_the_parallel_one_whatever_blas_threads_the_process_allows(monkeypatch):
    """Sections computed in this process (a small benchmark, or one worker) run their products on
    one BLAS thread too, as forked workers do: the report does not change with the thread limit."""
    from threadpoolctl import threadpool_limits

    from scorer.scoring import score
    from tests.paths import DEMO

    monkeypatch.setenv("MEMSCOPE_SECTION_WORKERS", "1")
    chosen = ["caption_proof", "bootstrap", "recency"]
    with threadpool_limits(limits=2, user_api="blas"):
        two = score(DEMO, [DEMO / "runs"], sections=chosen).json_data()
    with threadpool_limits(limits=1, user_api="blas"):
        one = score(DEMO, [DEMO / "runs"], sections=chosen).json_data()
    assert {k: v for k, v in two.items() if k != "inputs"} == {k: v for k, v in one.items() if k != "inputs"}


def test_transposed_equals_numpys_transpose_of_the_stacked_chunks(monkeypatch):
    """The blocked transpose copy behind every shared-draw CI matrix: the same array as
    np.ascontiguousarray(np.concatenate(parts).T), for chunks shorter and longer than a block and
    not a multiple of it; and the CIs on it are still scipy's percentile bootstrap's."""
    from scorer.metrics import resample

    rng = np.random.default_rng(5)
    monkeypatch.setattr(resample, "TRANSPOSE_BLOCK_ROWS", 7)
    for shapes in ([(3, 4)], [(20, 1)], [(7, 5), (15, 5), (1, 5)], [(1000, 3), (333, 3)]):
        parts = [rng.random(s) for s in shapes]
        got = resample.transposed(parts)
        want = np.ascontiguousarray(np.concatenate(parts).T)
        assert got.flags.c_contiguous and got.dtype == want.dtype and np.array_equal(got, want)
    x = rng.choice([0.0, 0.5, 1.0], 40)
    y = rng.choice([0.0, 1.0], 40)
    [ci] = paired_diff_cis([(x, y)], resamples=2000, seed=9)
    ref = stats.bootstrap((x - y,), np.mean, n_resamples=2000, method="percentile", random_state=9)
    assert abs(ci.ci_low - ref.confidence_interval.low) < 0.06 and abs(ci.ci_high - ref.confidence_interval.high) < 0.06
    assert ci == paired_diff_ci(x, y, resamples=2000, seed=9)
