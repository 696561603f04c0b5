"""Fleiss' κ (scorer.metrics.fleiss): hand-computed and published cases, statsmodels' fleiss_kappa
as the reference, the complete-item rule for missing ratings, and the bootstrap against a loop."""

from __future__ import annotations

import numpy as np
import pytest
from statsmodels.stats.inter_rater import aggregate_raters, fleiss_kappa as sm_fleiss

from scorer.metrics.agreement import fleiss_bootstrap_ci, fleiss_kappa, krippendorff_alpha


def test_hand_computed_three_raters():
    # Items (3 raters): aaa, aab, bbb, abb, and a fifth rated by two raters only (left out).
    # P_i = (Σ c² − 3)/6: 1, 1/3, 1, 1/3 → P̄ = 2/3; a and b 6 ratings each → P_e = 1/2;
    # κ = (2/3 − 1/2)/(1 − 1/2) = 1/3.
    data = [["a", "a", "b", "a", "a"],
            ["a", "a", "b", "b", None],
            ["a", "b", "b", "b", "b"]]
    r = fleiss_kappa(data)
    assert r.kappa == pytest.approx(1 / 3) and r.observed == pytest.approx(2 / 3) and r.expected == pytest.approx(0.5)
    assert (r.n, r.raters, r.excluded, r.labels, r.counts) == (4, 3, 1, ("a", "b"), (6, 6))


def test_published_example():
    # Fleiss (1971)-style worked example (14 raters, 10 subjects, 5 categories), as in the Wikipedia
    # article on Fleiss' kappa: P̄ = 0.378, P_e = 0.213, κ = 0.210.
    table = np.array([[0, 0, 0, 0, 14], [0, 2, 6, 4, 2], [0, 0, 3, 5, 6], [0, 3, 9, 2, 0], [2, 2, 8, 1, 1],
                      [7, 7, 0, 0, 0], [3, 2, 6, 3, 0], [2, 5, 3, 2, 2], [6, 5, 2, 1, 0], [0, 2, 2, 3, 7]])
    data = np.array([np.repeat(np.arange(5), row) for row in table]).T  # 14 raters × 10 subjects
    r = fleiss_kappa(data.tolist(), labels=range(5))
    assert round(r.observed, 3) == 0.378 and round(r.expected, 3) == 0.213 and round(r.kappa, 3) == 0.210
    assert r.kappa == pytest.approx(sm_fleiss(table), abs=1e-12)


def test_matches_statsmodels_on_random_data_with_missing():
    for seed in range(15):
        rng = np.random.default_rng(seed)
        m, n, k = 3 + seed % 4, 20 + 3 * seed, 2 + seed % 4
        truth = rng.integers(0, k, n)
        data = np.array([np.where(rng.random(n) < 0.6, truth, rng.integers(0, k, n)) for _ in range(m)]).astype(object)
        data[rng.random(data.shape) < 0.08] = None
        complete = [i for i in range(n) if all(data[r, i] is not None for r in range(m))]
        rated = [i for i in range(n) if any(data[r, i] is not None for r in range(m))]
        r = fleiss_kappa(data.tolist(), labels=range(k))
        counts, _ = aggregate_raters(data[:, complete].T.astype(int), n_cat=k)
        assert r.kappa == pytest.approx(sm_fleiss(counts), abs=1e-12)
        assert (r.n, r.excluded) == (len(complete), len(rated) - len(complete))


def test_unused_category_does_not_change_kappa():
    rng = np.random.default_rng(5)
    data = rng.integers(0, 3, (4, 25)).tolist()
    assert fleiss_kappa(data, labels=range(3)).kappa == pytest.approx(fleiss_kappa(data, labels=range(6)).kappa)


def test_near_alpha_on_complete_data():
    # α_nominal = 1 − (1 − κ_Fleiss)(nm − 1)/(nm) on complete data (same relation as in test_agreement)
    rng = np.random.default_rng(8)
    data = rng.integers(0, 3, (3, 30))
    fk = fleiss_kappa(data.tolist()).kappa
    nm = data.size
    assert krippendorff_alpha(data.tolist()).alpha == pytest.approx(1 - (1 - fk) * (nm - 1) / nm)


def test_undefined_cases():
    r = fleiss_kappa([["x"] * 5, ["x"] * 5, ["x"] * 5])
    assert r.kappa is None and "P_e = 1" in r.undefined_reason and r.observed == 1.0 and r.n == 5
    r = fleiss_kappa([["x", None], [None, "y"], ["x", "y"]])
    assert r.kappa is None and r.n == 0 and r.excluded == 2 and "every rater" in r.undefined_reason
    assert "two raters" in fleiss_kappa([["x", "y"]]).undefined_reason
    with pytest.raises(ValueError, match="not among the labels"):
        fleiss_kappa([["x", "z"], ["x", "y"], ["y", "y"]], labels=["x", "y"])
    with pytest.raises(ValueError, match="same items"):
        fleiss_kappa([["x", "y"], ["x"]])
    boot = fleiss_bootstrap_ci([["x"] * 4] * 3, n_resamples=40)
    assert boot.ci_low is None and boot.dropped == 40


def test_bootstrap_matches_a_per_resample_loop():
    rng = np.random.default_rng(2)
    data = rng.integers(0, 3, (4, 18))
    data[1, :6] = data[0, :6]
    counts, _ = aggregate_raters(data.T, n_cat=3)
    idx = np.random.default_rng(9).integers(0, 18, size=(300, 18))  # the project's draws for (18, 300, seed 9)
    ref = []
    for row in idx:
        t = counts[row]
        ref.append(np.nan if (t.sum(0) > 0).sum() == 1 else sm_fleiss(t))
    ref = np.array(ref)
    ours = fleiss_bootstrap_ci(data.tolist(), labels=range(3), n_resamples=300, seed=9)
    low, high = np.quantile(ref[np.isfinite(ref)], [0.025, 0.975])
    assert (ours.ci_low, ours.ci_high) == (pytest.approx(low, abs=1e-12), pytest.approx(high, abs=1e-12))
    assert ours.dropped == int(np.isnan(ref).sum()) and ours.kappa == pytest.approx(sm_fleiss(counts), abs=1e-12)
    assert ours == fleiss_bootstrap_ci(data.tolist(), labels=range(3), n_resamples=300, seed=9, max_cells=50)
