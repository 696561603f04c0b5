"""MOSAIC metrics (scorer.metrics.mosaic): paired drops by hand and against scipy.stats.bootstrap,
strata, sweep order, composition counts with overlapping challenges."""

from __future__ import annotations

import numpy as np
import pytest
from scipy import stats

from scorer.metrics.constants import DEFAULT_RESAMPLES, DEFAULT_SEED
from scorer.metrics.mosaic import (
    ItemFacts,
    budget_key,
    budget_text,
    budget_value,
    chain_shares,
    challenge_counts,
    media_counts,
    media_role,
    paired_drop,
    strata_of,
    stratum_items,
)
from scorer.model import CHAIN_CHALLENGES


def judge_like(seed: int, n: int) -> np.ndarray:
    return np.random.default_rng(seed).choice([0, 0.25, 0.5, 0.75, 1.0], n, p=[0.3, 0.1, 0.1, 0.1, 0.4])


def test_paired_drop_by_hand():
    # upper − lower per item: [0, .5, 0, .5, 0] → drop .2; W/T/L 2/3/0
    d = paired_drop([1, 1, 1, 0.75, 1], [1, 0.5, 1, 0.25, 1], ["p1", "p1", "p2", "p2", "p3"])
    assert d.items.estimate == pytest.approx(0.2)
    assert (d.items.mean_a, d.items.mean_b) == (pytest.approx(0.95), pytest.approx(0.75))
    assert (d.wtl.wins, d.wtl.ties, d.wtl.losses) == (2, 3, 0)
    assert d.clusters is not None and d.clusters.n_clusters == 3
    assert d.items.n_clusters is None
    # every resample's mean lies in [0, .5]: the CI cannot leave it
    assert 0 <= d.items.ci_low <= 0.2 <= d.items.ci_high <= 0.5


def test_paired_drop_ci_matches_scipy():
    a, b = judge_like(11, 784), judge_like(12, 784)
    ours = paired_drop(a, b)
    ref = stats.bootstrap((a, b), lambda x, y, axis=-1: np.mean(x - y, axis=axis), paired=True, vectorized=True,
                          n_resamples=DEFAULT_RESAMPLES, method="percentile", rng=np.random.default_rng(DEFAULT_SEED))
    assert (ours.items.ci_low, ours.items.ci_high) == pytest.approx(
        (ref.confidence_interval.low, ref.confidence_interval.high), abs=1e-12)
    # another seed: Monte Carlo error only
    other = stats.bootstrap((a, b), lambda x, y, axis=-1: np.mean(x - y, axis=axis), paired=True, vectorized=True,
                            n_resamples=DEFAULT_RESAMPLES, method="percentile", rng=np.random.default_rng(5))
    assert abs(ours.items.ci_low - other.confidence_interval.low) < 0.005
    assert ours.clusters is None  # no clusters given: no sensitivity CI


def test_cluster_ci_matches_scipy_on_cluster_means_when_clusters_are_equal_sized():
    # 40 clusters of 5 items: the clustered mean of a resample = the mean of its drawn cluster means,
    # which is scipy's bootstrap of the cluster means (same generator, same draws).
    a, b = judge_like(21, 200), judge_like(22, 200)
    clusters = np.repeat(np.arange(40), 5)
    ours = paired_drop(a, b, list(clusters))
    cm = (a - b).reshape(40, 5).mean(axis=1)
    ref = stats.bootstrap((cm,), np.mean, vectorized=True, n_resamples=DEFAULT_RESAMPLES, method="percentile",
                          rng=np.random.default_rng(DEFAULT_SEED))
    assert (ours.clusters.ci_low, ours.clusters.ci_high) == pytest.approx(
        (ref.confidence_interval.low, ref.confidence_interval.high), abs=1e-12)


def test_strata_overlap():
    s1 = strata_of([("image", "fine_attribute"), ("audio", "prosody")])
    s2 = strata_of([("video", "video_order")])
    s3 = strata_of([("image", "spatial"), ("image", "background"), ("text", None)])
    assert s1 == (frozenset({"image", "audio"}), frozenset({"fine_attribute", "prosody"}))
    assert s3[0] == {"image", "text"} and s3[1] == {"spatial", "background"}
    mods = {"i1": s1[0], "i2": s2[0], "i3": s3[0]}
    assert stratum_items(mods, "image") == ["i1", "i3"]
    assert stratum_items(mods, "video") == ["i2"]
    assert stratum_items(mods, "audio") == ["i1"]


def test_budget_order_loosest_first():
    budgets = [800, "full", 3200, "top5", 1600.0, "media-cap"]
    assert sorted(budgets, key=budget_key) == ["full", 3200, 1600.0, 800, "top5", "media-cap"]
    assert budget_key(None) == budget_key("full")
    assert [budget_text(b) for b in (None, 1600.0, 2.5, "top5")] == ["full", "1600", "2.5", "top5"]
    assert [budget_value(b) for b in ("full", 800, "4k", "media-cap")] == [None, 800.0, 4000.0, None]


def facts_fixture() -> list[ItemFacts]:
    return [
        ItemFacts("t:1", True, (("D1:1", "image", "fine_attribute"), ("D2:1", "audio", "prosody"))),
        ItemFacts("t:2", True, (("D1:3", "video", "video_order"),)),
        ItemFacts("t:3", True, (("D2:2", "image", "spatial"), ("D1:1", "image", "background"))),
        ItemFacts("t:4", True, (("D2:1", "audio", "prosody"), ("D3:1", "audio", "prosody"),
                                ("D1:3", "video", "video_count"))),
        ItemFacts("t:5", True, (("D1:2", "text", None),)),
        ItemFacts("t:6", False, (("D4:1", "image", "spatial"),)),  # an abstention control: not counted
    ]


def test_challenge_counts_overlap_facts_and_items():
    rows = {r["challenge"]: (r["facts"], r["items"]) for r in challenge_counts(facts_fixture(), CHAIN_CHALLENGES)}
    assert rows == {"fine_attribute": (1, 1), "background": (1, 1), "spatial": (1, 1), "video_order": (1, 1),
                    "video_count": (1, 1), "video_state": (0, 0), "prosody": (3, 2)}
    # overlapping: the item column sums to more than the 4 answerable items with a challenge
    assert sum(i for _, i in rows.values()) == 7


def test_chain_shares():
    s = chain_shares(facts_fixture())
    assert (s["n"], s["two_facts"], s["two_modalities"]) == (5, 3, 2)
    assert (s["share_two_facts"], s["share_two_modalities"]) == (pytest.approx(0.6), pytest.approx(0.4))
    assert chain_shares([])["share_two_facts"] is None


def test_media_roles_and_counts():
    required, sessions = {"D1:1", "D2:2"}, {"D1", "D2"}
    assert media_role("D1:1", "D1", required, sessions) == "required"
    assert media_role("D2:3", "D2", required, sessions) == "evidence"
    assert media_role("D4:1", "D4", required, sessions) == "filler"
    rows = media_counts([("image", "required"), ("image", "required"), ("image", "filler"), ("audio", "evidence"),
                         ("text", "filler")], ("image", "video", "audio"))
    assert rows == [{"modality": "image", "required": 2, "evidence": 0, "filler": 1, "total": 3},
                    {"modality": "video", "required": 0, "evidence": 0, "filler": 0, "total": 0},
                    {"modality": "audio", "required": 0, "evidence": 1, "filler": 0, "total": 1}]



@pytest.mark.parametrize("n", [784, 55, 3, 1])
def test_paired_drops_at_once_equal_paired_diff_ci_one_by_one(n):
    from scorer.metrics.mosaic import paired_drops

    a = np.stack([judge_like(40 + j, n) for j in range(6)], axis=1)
    b = np.stack([judge_like(50 + j, n) for j in range(6)], axis=1)
    from scorer.metrics.bootstrap import paired_diff_ci, win_tie_loss

    many = paired_drops(a, b)
    for j, got in enumerate(many):
        ref = paired_diff_ci(a[:, j], b[:, j])  # the index-matrix bootstrap: the same draws
        assert (got.items.estimate, got.items.ci_low, got.items.ci_high) == pytest.approx(
            (ref.estimate, ref.ci_low, ref.ci_high), abs=1e-12)
        assert (got.items.n, got.items.mean_a, got.items.mean_b) == (ref.n, ref.mean_a, ref.mean_b)
        assert got.wtl == win_tie_loss(a[:, j], b[:, j]) and got.clusters is None
        assert paired_drop(a[:, j], b[:, j]).items == got.items
