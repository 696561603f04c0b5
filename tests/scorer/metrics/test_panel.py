"""scorer.metrics.panel: a hand-computed case, then scikit-learn, scipy and krippendorff as references."""

from __future__ import annotations

import krippendorff
import numpy as np
import pytest
from scipy.stats import spearmanr
from sklearn.metrics import cohen_kappa_score

from scorer.metrics.panel import band, exact_rate, pair_agreement, panel_agreement, panel_median, same_band_rate

L5 = (0.0, 0.25, 0.5, 0.75, 1.0)
L3 = (0.0, 0.5, 1.0)


def test_hand_computed_three_levels():
    # a = [0, .5, 1], b = [0, 1, 1] → positions a = 0 1 2, b = 0 2 2, quadratic weights d².
    # observed disagreement Σ w·n = 1 (the .5/1 pair); expected Σ r_i c_j d² with r = (1,1,1),
    # c = (1,0,2): 8 + 3 + 4 = 15; κ = 1 − n·obs/exp = 1 − 3/15 = 0.8.
    # Spearman: ranks a = 1 2 3, b = 1 2.5 2.5 → ρ = 1.5 / √(2·1.5) = 0.8660.
    p = pair_agreement("a", [0, 0.5, 1], "b", [0, 1, 1], levels=L3)
    assert p.kappa.kappa == pytest.approx(0.8)
    assert p.spearman.rho == pytest.approx(1.5 / np.sqrt(3))
    assert p.exact.value == pytest.approx(2 / 3) and p.same_band.value == pytest.approx(2 / 3) and p.n == 3


def test_bands_and_rates():
    assert [band(v) for v in L5] == ["low", "low", "mid", "high", "high"]
    with pytest.raises(ValueError):
        band(0.3)
    a = [0, 0.25, 0.5, 1, 1, None]
    b = [0, 0.5, 0.5, 0.75, 1, 0.0]
    assert exact_rate(a, b).value == pytest.approx(3 / 5) and exact_rate(a, b).n == 5
    assert same_band_rate(a, b).value == pytest.approx(4 / 5)  # only 0.25 vs 0.5 crosses a band
    assert exact_rate([None], [1]).value is None and exact_rate([None], [1]).n == 0


def test_against_reference_libraries():
    rng = np.random.default_rng(7)
    a = rng.choice(L5, size=200)
    b = np.clip(a + rng.choice([-0.25, 0, 0, 0.25, 0.5], size=200), 0, 1)
    c = np.where(rng.random(200) < 0.8, a, rng.choice(L5, size=200))
    p = pair_agreement("a", list(a), "b", list(b))
    pos = {v: i for i, v in enumerate(L5)}
    ia, ib = [pos[v] for v in a], [pos[v] for v in b]
    assert p.kappa.kappa == pytest.approx(cohen_kappa_score(ia, ib, weights="quadratic", labels=range(5)))
    assert p.spearman.rho == pytest.approx(spearmanr(a, b).statistic)
    c_missing = [None if i % 10 == 0 else v for i, v in enumerate(c)]
    panel = panel_agreement({"a": list(a), "b": list(b), "c": c_missing})
    table = np.array([[pos[v] for v in a], [pos[v] for v in b],
                      [np.nan if v is None else pos[v] for v in c_missing]], dtype=float)
    ref = krippendorff.alpha(reliability_data=table, level_of_measurement="ordinal", value_domain=range(5))
    assert panel.alpha.alpha == pytest.approx(ref) and panel.alpha.n == 200
    assert [(x.judge_a, x.judge_b) for x in panel.pairs] == [("a", "b"), ("a", "c"), ("b", "c")]
    assert panel.pairs[1].n == 180 and panel.n_rows == 200


def test_undefined_and_errors():
    p = pair_agreement("a", [1, 1, 1], "b", [1, 1, 1])
    assert p.kappa.kappa is None and p.kappa.undefined_reason and p.spearman.rho is None
    assert p.exact.value == 1.0
    single = panel_agreement({"a": [0, 1]})
    assert single.pairs == () and single.alpha.alpha is None
    with pytest.raises(ValueError, match="different numbers"):
        panel_agreement({"a": [0, 1], "b": [0]})
    with pytest.raises(ValueError, match="levels"):
        pair_agreement("a", [0.3], "b", [0.5])


def test_median():
    assert panel_median({"a": [0, 1, None, 0.25], "b": [0.5, 1, None, None], "c": [1, 0, None, 0.75]}) == \
        [0.5, 1.0, None, 0.5]
    assert panel_median({"a": [0.25], "b": [0.5]}) == [0.375]  # even panels: mean of the middle two
