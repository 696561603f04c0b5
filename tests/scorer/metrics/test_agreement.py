"""Agreement metrics: hand-computed cases, the MemEye judge study, and reference libraries
(scikit-learn, statsmodels, krippendorff, scipy) on seeded random inputs."""

from __future__ import annotations

import math

import krippendorff
import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from scipy.stats import spearmanr
from sklearn.metrics import cohen_kappa_score
from statsmodels.stats.inter_rater import aggregate_raters, cohens_kappa, fleiss_kappa

from scorer.metrics.agreement import (
    JUDGE_LEVELS,
    cohen_kappa,
    confusion_matrix,
    gwet_ac1,
    human_majority,
    judge_vs_human,
    kappa_bootstrap_ci,
    krippendorff_alpha,
    observed_agreement,
    pairwise_kappa,
    prevalence_paradox,
    spearman,
)


def from_table(table) -> tuple[list[int], list[int]]:
    """Rater lists whose confusion matrix (rows = a, columns = b) is `table`."""
    a, b = [], []
    for i, row in enumerate(table):
        for j, count in enumerate(row):
            a += [i] * count
            b += [j] * count
    return a, b


def memeye_study() -> tuple[list, list, list]:
    """The MemEye judge study (App. "LLM-as-a-Judge Validation"): 40 accept-accept, 29 reject-reject,
    one each way, one borderline; per method FC(V) 35/36 and SRAG(V) 34/35 agree."""
    judge = [1.0] * 20 + [0.0] * 15 + [0.75] + [1.0] * 20 + [0.0] * 14 + [0.25] + [0.5]
    human = ["accept"] * 20 + ["reject"] * 15 + ["reject"] + ["accept"] * 20 + ["reject"] * 14 + ["accept"] + ["borderline"]
    method = ["FC(V)"] * 36 + ["SRAG(V)"] * 36
    return judge, human, method


# --- Cohen's κ: hand-computed ------------------------------------------------------------------


def test_kappa_2x2_by_hand():
    # table [[20, 5], [10, 15]], n = 50: p_o = 35/50 = 0.7; rows (25, 25), columns (30, 20);
    # p_e = (25·30 + 25·20)/50² = 0.5; κ = (0.7 − 0.5)/(1 − 0.5) = 0.4
    a, b = from_table([[20, 5], [10, 15]])
    r = cohen_kappa(a, b)
    assert r.kappa == pytest.approx(0.4)
    assert (r.observed, r.expected, r.n) == (pytest.approx(0.7), pytest.approx(0.5), 50)
    assert r.confusion == ((20, 5), (10, 15))
    assert r.ci_low < 0.4 < r.ci_high and r.undefined_reason is None


def test_weighted_kappa_3x3_by_hand():
    # table [[2,1,0],[0,2,1],[1,0,3]], n = 10, rows = columns = (3, 3, 4).
    # Unweighted: p_o = 7/10, p_e = (9 + 9 + 16)/100 = 0.34, κ = 0.36/0.66 = 6/11.
    # Linear |i−j|: observed disagreement 1·1 + 1·1 + 2·1 = 4; expected Σ r_i c_j |i−j|
    #   = 3(3·1 + 4·2) + 3(3·1 + 4·1) + 4(3·2 + 3·1) = 33 + 21 + 36 = 90; κ = 1 − 10·4/90 = 5/9.
    # Quadratic (i−j)²: observed 1 + 1 + 4 = 6; expected 3(3 + 16) + 3(3 + 4) + 4(12 + 3) = 138;
    #   κ = 1 − 10·6/138 = 13/23.
    a, b = from_table([[2, 1, 0], [0, 2, 1], [1, 0, 3]])
    assert cohen_kappa(a, b).kappa == pytest.approx(6 / 11)
    assert cohen_kappa(a, b, "linear").kappa == pytest.approx(5 / 9)
    assert cohen_kappa(a, b, "quadratic").kappa == pytest.approx(13 / 23)
    # Weighted p_o is the weighted agreement: 1 − 4/(10·2) = 0.8 with linear weights |i−j|/2.
    assert cohen_kappa(a, b, "linear").observed == pytest.approx(0.8)


def test_labels_order_and_confusion():
    a = ["hi", "lo", "mid", "lo"]
    b = ["hi", "mid", "mid", "lo"]
    m = confusion_matrix(a, b, labels=["lo", "mid", "hi"])
    assert m.tolist() == [[1, 1, 0], [0, 1, 0], [0, 0, 1]]
    assert cohen_kappa(a, b, labels=["lo", "mid", "hi"]).labels == ("lo", "mid", "hi")
    assert observed_agreement(a, b) == 0.75
    with pytest.raises(ValueError, match="not among the labels"):
        cohen_kappa(a, b, labels=["lo", "mid"])
    with pytest.raises(ValueError, match="different numbers"):
        cohen_kappa(a, b[:3])
    with pytest.raises(ValueError, match="weights"):
        cohen_kappa(a, b, weights="cubic")
    with pytest.raises(ValueError, match="ordered categories"):
        cohen_kappa(["a", 1], [1, "a"], weights="linear")


def test_missing_ratings_drop_the_pair():
    r = cohen_kappa(["a", None, "b", "a", float("nan")], ["a", "b", "b", None, "a"])
    assert (r.n, r.n_missing, r.kappa) == (2, 3, 1.0)


# --- Undefined κ -------------------------------------------------------------------------------


def test_kappa_undefined_when_pe_is_one():
    r = cohen_kappa(["accept"] * 6, ["accept"] * 6, labels=["accept", "reject"])
    assert r.kappa is None and r.se is None and r.ci_low is None
    assert "p_e = 1" in r.undefined_reason and "'accept'" in r.undefined_reason
    assert (r.observed, r.expected, r.n) == (1.0, 1.0, 6)
    for w in ("linear", "quadratic"):
        assert cohen_kappa([2] * 4, [2] * 4, w, labels=[1, 2, 3]).kappa is None
    boot = kappa_bootstrap_ci(["x"] * 5, ["x"] * 5, n_resamples=200)
    assert boot.ci_low is None and boot.dropped == 200 and "p_e = 1" in boot.undefined_reason


def test_kappa_defined_zero_when_raters_use_different_single_categories():
    # Rater a always "x", rater b always "y": p_o = 0, p_e = 0, κ = 0 — defined, not undefined.
    r = cohen_kappa(["x"] * 4, ["y"] * 4)
    assert r.kappa == 0.0 and r.undefined_reason is None


def test_kappa_no_items():
    r = cohen_kappa([], [])
    assert r.kappa is None and r.n == 0 and "no items" in r.undefined_reason


# --- References ----------------------------------------------------------------------------------


def random_pair(seed: int, n: int, k: int, agree: float = 0.6):
    rng = np.random.default_rng(seed)
    a = rng.integers(0, k, n)
    b = np.where(rng.random(n) < agree, a, rng.integers(0, k, n))
    return a.tolist(), b.tolist()


@pytest.mark.parametrize("weights", [None, "linear", "quadratic"])
def test_kappa_matches_sklearn_and_statsmodels(weights):
    for seed in range(12):
        k = 2 + seed % 4
        a, b = random_pair(seed, 30 + 7 * seed, k)
        labels = list(range(k))
        r = cohen_kappa(a, b, weights, labels)
        assert r.kappa == pytest.approx(cohen_kappa_score(a, b, labels=labels, weights=weights), abs=1e-12)
        table = np.array(r.confusion)
        sm = cohens_kappa(table) if weights is None else cohens_kappa(table, wt=weights)
        assert r.kappa == pytest.approx(sm.kappa, abs=1e-12)
        assert r.se == pytest.approx(sm.std_kappa, abs=1e-12)
        assert r.ci_low == pytest.approx(sm.kappa_low, abs=1e-12)
        assert r.ci_high == pytest.approx(sm.kappa_upp, abs=1e-12)


def test_quadratic_kappa_on_judge_levels_matches_sklearn():
    rng = np.random.default_rng(7)
    a = rng.choice(JUDGE_LEVELS, 80)
    b = np.clip(a + rng.choice([-0.25, 0, 0, 0.25], 80), 0, 1)
    r = cohen_kappa(a.tolist(), b.tolist(), "quadratic", labels=JUDGE_LEVELS)
    codes = lambda x: np.searchsorted(JUDGE_LEVELS, x)
    assert r.kappa == pytest.approx(cohen_kappa_score(codes(a), codes(b), weights="quadratic", labels=range(5)))


# --- Bootstrap κ ---------------------------------------------------------------------------------


def loop_kappas(a, b, n_resamples, seed, weights=None):
    """The slow reference: one sklearn κ per resample, the same index draws."""
    a, b = np.asarray(a), np.asarray(b)
    idx = np.random.default_rng(seed).integers(0, len(a), size=(n_resamples, len(a)))
    out = []
    for row in idx:
        ra, rb = a[row], b[row]
        if len(set(ra) | set(rb)) == 1:
            out.append(np.nan)  # p_e = 1
        else:
            out.append(cohen_kappa_score(ra, rb, weights=weights))
    return np.array(out)


@pytest.mark.parametrize("weights", [None, "quadratic"])
def test_kappa_bootstrap_matches_a_per_resample_loop(weights):
    a, b = random_pair(3, 40, 3)
    ref = loop_kappas(a, b, 200, 11, weights)
    ours = kappa_bootstrap_ci(a, b, weights, n_resamples=200, seed=11)
    low, high = np.quantile(ref[np.isfinite(ref)], [0.025, 0.975])
    assert (ours.ci_low, ours.ci_high) == (pytest.approx(low, abs=1e-12), pytest.approx(high, abs=1e-12))
    assert ours.kappa == pytest.approx(cohen_kappa_score(a, b, weights=weights))


def test_kappa_bootstrap_drops_and_counts_undefined_resamples():
    # Three items: (x, x), (x, x), (y, y). A resample of only the first two is all-x (p_e = 1):
    # probability (2/3)³ ≈ 0.30, plus all-y (1/3)³ ≈ 0.04.
    a, b = ["x", "x", "y"], ["x", "x", "y"]
    ref = loop_kappas(a, b, 300, 5)
    ours = kappa_bootstrap_ci(a, b, n_resamples=300, seed=5)
    assert ours.dropped == int(np.isnan(ref).sum()) and 70 < ours.dropped < 140
    assert ours.used + ours.dropped == 300 and ours.ci_low == ours.ci_high == 1.0


def test_kappa_bootstrap_reproducible_and_chunk_invariant():
    a, b = random_pair(9, 120, 4)
    one = kappa_bootstrap_ci(a, b, "linear", n_resamples=3000)
    assert one == kappa_bootstrap_ci(a, b, "linear", n_resamples=3000)
    assert one == kappa_bootstrap_ci(a, b, "linear", n_resamples=3000, max_cells=1000)
    assert one.seed == 20260430 and one.resamples == 3000
    assert one != kappa_bootstrap_ci(a, b, "linear", n_resamples=3000, seed=1)


# --- The MemEye judge study ----------------------------------------------------------------------


def test_memeye_judge_study():
    judge, human, method = memeye_study()
    r = judge_vs_human(judge, human, strata={"method": method})
    # p_o = 69/71; judge and human both accept 41/71; p_e = (41² + 30²)/71² = 2581/5041;
    # κ = (4899 − 2581)/(5041 − 2581) = 2318/2460 = 0.9423 -> 0.94
    assert (r.n, r.excluded, r.excluded_borderline, r.agreements) == (71, 1, 1, 69)
    assert r.observed == pytest.approx(69 / 71)
    assert r.kappa.kappa == pytest.approx(2318 / 2460) and round(r.kappa.kappa, 2) == 0.94
    assert (r.accept_accept, r.reject_reject, r.accept_reject, r.reject_accept) == (40, 29, 1, 1)
    assert r.kappa.ci_low < r.kappa.kappa < r.kappa.ci_high
    assert r.bootstrap.ci_low < r.kappa.kappa <= r.bootstrap.ci_high and r.bootstrap.n == 71
    # AC1: π_accept = 82/142 = 41/71; p_e = 2·(41/71)(30/71) = 2460/5041; AC1 = 2439/2581
    assert r.ac1.ac1 == pytest.approx(2439 / 2581)
    assert r.paradox_warning is None
    by = {s.key: s.result for s in r.strata}
    assert round(by["FC(V)"].observed, 3) == 0.972 and by["FC(V)"].n == 36  # 35/36
    assert round(by["SRAG(V)"].observed, 3) == 0.971 and by["SRAG(V)"].n == 35  # 34/35
    assert by["SRAG(V)"].excluded_borderline == 1


def test_judge_threshold_missing_and_multi_label_strata():
    judge = [0.5, 0.49, None, 1.0, 0.0, 0.75]
    human = ["accept", "reject", "accept", None, "Reject", "ACCEPT"]
    cells = [("X1", "Y1"), ("X1", "Y1"), ("X2", "Y1"), ("X2", "Y1"), [("X1", "Y1"), ("X2", "Y2")], None]
    r = judge_vs_human(judge, human, strata={"cell": cells})
    assert (r.n, r.excluded_missing, r.accept_accept, r.reject_reject) == (4, 2, 2, 2)
    by = {s.key: s.result for s in r.strata}
    assert set(by) == {("X1", "Y1"), ("X2", "Y2"), ("X2", "Y1")}
    assert by[("X1", "Y1")].n == 3 and by[("X2", "Y2")].n == 1 and by[("X2", "Y1")].n == 0
    assert by[("X2", "Y2")].kappa.kappa is None  # one reject-reject pair: p_e = 1
    with pytest.raises(ValueError, match="unknown verdict"):
        judge_vs_human([1.0], ["maybe"])
    with pytest.raises(ValueError, match="judge scores"):
        judge_vs_human([1.0, 0.0], ["accept"])


def test_all_accept_is_undefined_with_paradox_warning():
    r = judge_vs_human([1.0] * 10, ["accept"] * 10, n_resamples=100)
    assert r.kappa.kappa is None and "p_e = 1" in r.kappa.undefined_reason
    assert r.ac1.ac1 == 1.0  # two categories declared, π = (1, 0): p_e = 0
    assert "undefined" in r.paradox_warning and "n = 10" in r.paradox_warning


def test_human_majority():
    m = human_majority([
        ["accept", "accept", "reject"],   # 2 of 3 -> accept
        ["accept", "reject"],              # 1 of 2 is not a strict majority -> tie
        ["accept", "borderline", "reject"],  # three-way split -> tie
        [None, None],                      # nobody voted
        ["reject", None],                  # 1 of 1 voter -> reject
        ["borderline", "borderline", "accept"],  # borderline majority (excluded later)
    ])
    assert m.verdicts == ("accept", None, None, None, "reject", "borderline")
    assert (m.n, m.ties, m.no_votes) == (6, 2, 1)
    r = judge_vs_human([1.0, 1.0, 0.0, 0.0, 0.0, 1.0], m.verdicts, n_resamples=100)
    assert (r.n, r.excluded_missing, r.excluded_borderline) == (2, 3, 1)


# --- Gwet's AC1 and the prevalence paradox -------------------------------------------------------


def test_ac1_gwet_2008_example():
    # Gwet (2008) high-agreement example [[118, 5], [2, 0]], n = 125: p_a = 118/125 = 0.944;
    # π_1 = (123 + 120)/250 = 0.972; p_e = 2·0.972·0.028 = 0.054432;
    # AC1 = (0.944 − 0.054432)/(1 − 0.054432) = 0.940767...
    a, b = from_table([[118, 5], [2, 0]])
    r = gwet_ac1(a, b)
    assert r.ac1 == pytest.approx((0.944 - 0.054432) / (1 - 0.054432))
    assert (r.n, r.observed, r.expected) == (125, pytest.approx(0.944), pytest.approx(0.054432))
    k = cohen_kappa(a, b)
    # κ: p_e = (123·120 + 2·5)/125² = 0.9453; κ = (0.944 − 0.9453)/(1 − 0.9453) ≈ −0.0234
    assert k.kappa == pytest.approx((0.944 - 14770 / 15625) / (1 - 14770 / 15625))
    warning = prevalence_paradox(k, r)
    assert warning and "prevalence paradox" in warning and "n = 125" in warning


def ac1_multi_rater(a, b, labels):
    """Gwet's general formula on the units × categories count table (r = 2 raters)."""
    counts = np.array([[(x == c) + (y == c) for c in labels] for x, y in zip(a, b)], dtype=float)
    pa = (counts * (counts - 1)).sum(1).mean() / 2
    pi = counts.mean(0) / 2
    pe = (pi * (1 - pi)).sum() / (len(labels) - 1)
    return (pa - pe) / (1 - pe)


def test_ac1_matches_general_formula_on_random_data():
    for seed in range(8):
        k = 2 + seed % 3
        a, b = random_pair(seed, 50, k)
        assert gwet_ac1(a, b, range(k)).ac1 == pytest.approx(ac1_multi_rater(a, b, range(k)))


def test_ac1_single_category_undefined():
    r = gwet_ac1(["x"] * 3, ["x"] * 3)
    assert r.ac1 is None and "one category" in r.undefined_reason


def test_no_paradox_when_agreement_low():
    a, b = from_table([[20, 5], [10, 15]])
    assert prevalence_paradox(cohen_kappa(a, b), gwet_ac1(a, b)) is None


# --- Krippendorff's α --------------------------------------------------------------------------


def test_alpha_nominal_by_hand():
    # Two coders, units (a,a), (a,b), (b,b). Coincidences: o_aa = 2, o_ab = o_ba = 1, o_bb = 2;
    # n_a = n_b = 3, n = 6. D_o = 2/6; D_e = 2·3·3/(6·5) = 0.6; α = 1 − (1/3)/0.6 = 4/9.
    r = krippendorff_alpha([["a", "a", "b"], ["a", "b", "b"]])
    assert r.alpha == pytest.approx(4 / 9) and (r.n, r.n_values) == (3, 6)


KRIPP = [[np.nan, np.nan, np.nan, np.nan, np.nan, 3, 4, 1, 2, 1, 1, 3, 3, np.nan, 3],
         [1, np.nan, 2, 1, 3, 3, 4, 3, np.nan, np.nan, np.nan, np.nan, np.nan, np.nan, np.nan],
         [np.nan, np.nan, 2, 1, 3, 4, 4, np.nan, 2, 1, 1, 3, 3, np.nan, 4]]


def test_alpha_published_examples():
    # Krippendorff's worked example (as in the package docs): nominal 0.691358, interval 0.810845;
    # units 2 and 14 have no pairable values, unit 1 has one: 12 units count.
    nominal = krippendorff_alpha(KRIPP)
    assert round(nominal.alpha, 6) == 0.691358 and nominal.n == 12
    assert round(krippendorff_alpha(KRIPP, "interval").alpha, 6) == 0.810845
    words = [["very low", "low", "mid", "mid", "low", "very low", "high", "very low", "low", None, None, None],
             ["very low", "low", "mid", "mid", "low", "low", "high", "very low", "low", "very high", None, "mid"],
             [None, "mid", "mid", "mid", "low", "mid", "high", "low", "low", "very high", "very low", None],
             ["very low", "low", "mid", "mid", "low", "high", "high", "very low", "low", "very high", "very low", None]]
    order = ["very low", "low", "mid", "high", "very high"]
    assert round(krippendorff_alpha(words, "ordinal", labels=order).alpha, 3) == 0.815
    assert round(krippendorff_alpha(words, "nominal").alpha, 3) == 0.743


def test_alpha_matches_fleiss_on_complete_data():
    # Complete data, m raters, N units, n = N·m values: α_nominal = 1 − (1 − κ_Fleiss)(n − 1)/n.
    rng = np.random.default_rng(4)
    truth = rng.integers(0, 3, 40)
    data = np.array([np.where(rng.random(40) < 0.7, truth, rng.integers(0, 3, 40)) for _ in range(3)])
    fk = fleiss_kappa(aggregate_raters(data.T)[0])
    n = data.size
    assert krippendorff_alpha(data.tolist()).alpha == pytest.approx(1 - (1 - fk) * (n - 1) / n)


@pytest.mark.parametrize("level", ["nominal", "ordinal", "interval"])
def test_alpha_matches_package_with_missing(level):
    rng = np.random.default_rng(12)
    data = rng.integers(1, 6, (4, 30)).astype(float)
    data[rng.random(data.shape) < 0.25] = np.nan
    ours = krippendorff_alpha([[None if np.isnan(v) else v for v in row] for row in data], level)
    assert ours.alpha == pytest.approx(krippendorff.alpha(reliability_data=data, level_of_measurement=level))
    assert ours.n == int(((~np.isnan(data)).sum(0) >= 2).sum())


def test_alpha_undefined_cases():
    assert "two or more" in krippendorff_alpha([["a", None], [None, "b"]]).undefined_reason
    r = krippendorff_alpha([["a", "a"], ["a", "a"]])
    assert r.alpha is None and "expected disagreement is 0" in r.undefined_reason
    with pytest.raises(ValueError, match="numeric"):
        krippendorff_alpha([["a", "b"], ["a", "b"]], "interval")


# --- Pairwise κ and Spearman -----------------------------------------------------------------------


def test_pairwise_kappa():
    ratings = {"ann1": ["X1", "X2", "X3", "X3"], "ann2": ["X1", "X3", "X3", None], "ann3": ["X1", "X2", "X2", "X3"]}
    pairs = pairwise_kappa(ratings)
    assert [(p.rater_a, p.rater_b) for p in pairs] == [("ann1", "ann2"), ("ann1", "ann3"), ("ann2", "ann3")]
    assert pairs[0].result.n == 3 and pairs[0].result.labels == ("X1", "X2", "X3")
    assert pairs[1].result.kappa == pytest.approx(cohen_kappa_score(ratings["ann1"], ratings["ann3"]))


def test_spearman_matches_scipy():
    rng = np.random.default_rng(2)
    a = rng.integers(0, 5, 60).astype(float)  # many ties
    b = a + rng.normal(0, 2, 60)
    r = spearman(a.tolist(), b.tolist())
    assert r.rho == pytest.approx(spearmanr(a, b).statistic) and r.n == 60
    assert spearman([1, 1, 1], [1, 2, 3]).rho is None
    assert spearman([1, None, 3], [2, 5, 1]).n == 2


# --- Properties ----------------------------------------------------------------------------------

ratings = st.integers(min_value=2, max_value=60).flatmap(
    lambda n: st.tuples(st.lists(st.integers(0, 3), min_size=n, max_size=n), st.lists(st.integers(0, 3), min_size=n, max_size=n))
)


@settings(max_examples=60, deadline=None)
@given(ratings, st.sampled_from([None, "linear", "quadratic"]))
def test_kappa_symmetric(pair, weights):
    a, b = pair
    ab, ba = cohen_kappa(a, b, weights), cohen_kappa(b, a, weights)
    if ab.kappa is None:
        assert ba.kappa is None
    else:
        assert math.isclose(ab.kappa, ba.kappa, abs_tol=1e-12)
        assert math.isclose(ab.se, ba.se, abs_tol=1e-12)
    ac_ab, ac_ba = gwet_ac1(a, b).ac1, gwet_ac1(b, a).ac1
    assert (ac_ab is None and ac_ba is None) or math.isclose(ac_ab, ac_ba, abs_tol=1e-12)


@settings(max_examples=60, deadline=None)
@given(st.lists(st.sampled_from(["X1", "X2", "X3", "X4"]), min_size=2, max_size=50).filter(lambda x: len(set(x)) >= 2),
       st.sampled_from([None, "linear", "quadratic"]))
def test_identical_raters_kappa_one(a, weights):
    r = cohen_kappa(a, list(a), weights)
    assert r.kappa == 1.0 and r.observed == 1.0


# --- Weighted κ on an explicit ordinal scale (an unused level still counts) ----------------------


def test_weighted_kappa_with_an_unused_level_by_hand():
    # Scale 0 < 1 < 2 < 3; the raters never use 2. Pairs (0,0) ×2, (1,1), (3,3), (0,1), (1,3):
    # rows (3, 2, 0, 1), columns (2, 2, 0, 2).
    # Linear |i−j|: observed 1 + 2 = 3; expected Σ r_i c_j |i−j| = 3(2·1 + 2·3) + 2(2·1 + 2·2) + 1(2·3 + 2·2)
    #   = 24 + 12 + 10 = 46; κ = 1 − 6·3/46 = 14/23. Dropping the unused level (positions 0, 1, 2)
    #   would give 1 − 6·2/32 = 0.625 instead.
    # Quadratic (i−j)²: observed 1 + 4 = 5; expected 3(2 + 18) + 2(2 + 8) + 1(18 + 8) = 106; κ = 38/53.
    a = [0, 0, 1, 3, 0, 1]
    b = [0, 0, 1, 3, 1, 3]
    scale = (0, 1, 2, 3)
    assert cohen_kappa(a, b, "linear", scale).kappa == pytest.approx(14 / 23)
    assert cohen_kappa(a, b, "linear").kappa == pytest.approx(0.625)  # labels inferred: only those used
    assert cohen_kappa(a, b, "quadratic", scale).kappa == pytest.approx(38 / 53)
    for w in ("linear", "quadratic"):
        r = cohen_kappa(a, b, w, scale)
        assert r.kappa == pytest.approx(cohen_kappa_score(a, b, weights=w, labels=list(scale)), abs=1e-12)
        sm = cohens_kappa(np.array(r.confusion), wt=w)  # the 4 × 4 table with its empty row and column
        assert np.array(r.confusion)[2].sum() == 0 and np.array(r.confusion)[:, 2].sum() == 0
        assert (r.kappa, r.se, r.ci_low, r.ci_high) == (pytest.approx(sm.kappa, abs=1e-12),
                                                       pytest.approx(sm.std_kappa, abs=1e-12),
                                                       pytest.approx(sm.kappa_low, abs=1e-12),
                                                       pytest.approx(sm.kappa_upp, abs=1e-12))


@pytest.mark.parametrize("weights", ["linear", "quadratic"])
def test_weighted_kappa_with_unused_levels_matches_references(weights):
    for seed in range(10):
        rng = np.random.default_rng(100 + seed)
        used = sorted(rng.choice(6, size=3 + seed % 3, replace=False).tolist())  # of a six-level scale
        a = rng.choice(used, 40 + seed)
        b = np.where(rng.random(a.size) < 0.6, a, rng.choice(used, a.size))
        r = cohen_kappa(a.tolist(), b.tolist(), weights, labels=range(6))
        assert r.kappa == pytest.approx(cohen_kappa_score(a, b, weights=weights, labels=list(range(6))), abs=1e-12)
        sm = cohens_kappa(np.array(r.confusion), wt=weights)
        assert r.se == pytest.approx(sm.std_kappa, abs=1e-12)
        assert (r.ci_low, r.ci_high) == (pytest.approx(sm.kappa_low, abs=1e-12), pytest.approx(sm.kappa_upp, abs=1e-12))


def test_ordinal_kappas_three_weightings_shared_draws():
    from scorer.metrics.agreement import ordinal_kappas

    rng = np.random.default_rng(21)
    a = rng.choice(JUDGE_LEVELS, 50)
    b = np.clip(a + rng.choice([-0.25, 0, 0, 0.5], 50), 0, 1)
    got = ordinal_kappas(a.tolist(), b.tolist(), JUDGE_LEVELS, n_resamples=400, seed=3)
    assert [k.weights for k in got] == [None, "linear", "quadratic"]
    codes = lambda x: np.searchsorted(JUDGE_LEVELS, x)
    for k in got:
        assert k.result.kappa == pytest.approx(cohen_kappa_score(codes(a), codes(b), weights=k.weights,
                                                                 labels=range(5)), abs=1e-12)
        ref = loop_kappas(codes(a), codes(b), 400, 3, k.weights)  # the same item draws, one sklearn κ each
        low, high = np.quantile(ref[np.isfinite(ref)], [0.025, 0.975])
        assert (k.bootstrap.ci_low, k.bootstrap.ci_high) == (pytest.approx(low, abs=1e-12), pytest.approx(high, abs=1e-12))


def test_weighted_kappa_undefined_when_denominator_is_zero():
    # Both raters give every item the same level: p_e = 1 under any weighting (0/0), even though
    # the scale has other levels.
    for w in (None, "linear", "quadratic"):
        r = cohen_kappa([0.5] * 7, [0.5] * 7, w, labels=JUDGE_LEVELS)
        assert r.kappa is None and r.se is None and "p_e = 1" in r.undefined_reason and r.n == 7
        boot = kappa_bootstrap_ci([0.5] * 7, [0.5] * 7, w, labels=JUDGE_LEVELS, n_resamples=50)
        assert boot.ci_low is None and boot.dropped == 50


def test_zero_variance_is_zero_not_rounding_noise():
    # κ_linear = 0 here and its asymptotic variance is exactly 0 (checked with fractions); float
    # sums left ~1e-17, i.e. an SE of ~1e-8 that differed when the raters were swapped.
    for a, b in (([0, 0, 1], [2, 3, 1]), ([2, 3, 1], [0, 0, 1])):
        r = cohen_kappa(a, b, "linear")
        assert r.kappa == 0.0 and r.se == 0.0 and r.ci_low == r.ci_high == 0.0
