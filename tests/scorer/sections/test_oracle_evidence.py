"""Oracle-evidence tables and the evolving visual-state probe on hand-built open items.

O1 X1/Y1 clue D1:1; O2 X4/Y1 clue D2:2; O3 X4/Y3 clues D1:1 → D2:2 (latest carries an image: in the
evolving visual-state subset); O4 X1/Y3 clues D1:2 → D3:2 (latest is text: not in the subset).
"""

from __future__ import annotations

import pytest

from scorer.metrics.bootstrap import paired_diff_ci
from scorer.sections import oracle_evidence as section
from tests.builders import model as E

O1 = E.item(1, ["Y1"], ["D1:1"], ["D1"], x=["X1"])
O2 = E.item(2, ["Y1"], ["D2:2"], ["D2"], x=["X4"])
O3 = E.item(3, ["Y3"], ["D1:1", "D2:2"], ["D1", "D2"], x=["X4"])
O4 = E.item(4, ["Y3"], ["D1:2", "D3:2"], ["D1", "D3"], x=["X1"])
ITEMS = [O1, O2, O3, O4]


def runs(extra=True):
    def mk(method, judges, bleu=0.5):
        return E.run(method, [E.pred(it, judge=j, bleu_1=bleu) for it, j in zip(ITEMS, judges) if j is not None])

    out = [mk("clue_only_context__multimodal", [1, 1, 0.5, 1]), mk("clue_only_context__text_only", [1, 0, 0, 0.5])]
    if extra:
        out += [mk("latest_only_context__multimodal", [None, None, 1.0, None]),
                mk("stale_only_context__multimodal", [None, None, 0.0, None]),
                mk("semantic_rag__multimodal", [1, 1, 0.25, 0])]
    return out


def test_by_y_and_by_x_by_hand():
    res = section.build(E.context(ITEMS, runs(), resamples=400))
    by_y = {r["y"]: r for r in res.data["by_y"]}
    # visual oracle judges: Y1 (1, 1) → 1.0; Y3 (0.5, 1) → 0.75; all 0.875
    assert (by_y["Y1"]["judge"], by_y["Y1"]["n_judge"]) == (1.0, 2)
    assert by_y["Y3"]["judge"] == 0.75 and by_y["all"]["judge"] == 0.875 and by_y["all"]["bleu_1"] == 0.5
    gaps = {(r["metric"], r["x"]): r for r in res.data["by_x"]}
    # X1: V (1, 1) vs T (1, .5) → Δ .25; X4: V (1, .5) vs T (0, 0) → Δ .75; all: .875 − .375 = .5
    assert gaps[("judge", "X1")]["delta"] == 0.25 and gaps[("judge", "X4")]["delta"] == 0.75
    g = gaps[("judge", "all")]
    assert (g["visual"], g["text"], g["delta"], g["n"]) == (0.875, 0.375, 0.5, 4)
    ref = paired_diff_ci([1, 1, 0.5, 1], [1, 0, 0, 0.5], resamples=400, seed=20260430)
    assert (g["ci_low"], g["ci_high"]) == (ref.ci_low, ref.ci_high)


def test_evolving_state_probe():
    res = section.build(E.context(ITEMS, runs(), resamples=100))
    probe = {(r["role"], r["method"]): r for r in res.data["evolving_state"]}
    # the subset is O3 only: stale-only 0, latest-only 1, all-clue oracle 0.5, SRAG(V) 0.25; no text oracle
    assert {k: (v["judge"], v["n_judge"]) for k, v in probe.items()} == {
        ("stale_only", "stale_only_context__multimodal"): (0.0, 1),
        ("latest_only", "latest_only_context__multimodal"): (1.0, 1),
        ("visual", "Oracle(V)"): (0.5, 1),
        ("memory", "SRAG(V)"): (0.25, 1)}
    table = next(t for t in res.tables if t.name == "oracle_evolving_state")
    assert [r["Method"] for r in table.rows] == ["Stale-only", "Latest-only", "All-clue oracle", "SRAG(V)"]


def test_probe_only_with_latest_or_stale_runs_and_absent_without_oracles():
    res = section.build(E.context(ITEMS, runs(extra=False), resamples=100))
    assert res.data["evolving_state"] == [] and not any(t.name == "oracle_evolving_state" for t in res.tables)
    none = section.build(E.context(ITEMS, runs()[4:], resamples=100))
    assert none.reason is not None


@pytest.mark.parametrize("cfg", [{"visual": ["my_oracle"], "text": "re:^txt"}])
def test_custom_method_names(cfg):
    r = [E.run("my_oracle", [E.pred(it, judge=1.0) for it in ITEMS]),
         E.run("txt_clues", [E.pred(it, judge=0.0) for it in ITEMS])]
    res = section.build(E.context(ITEMS, r, resamples=100, extra={"oracle_methods": cfg}))
    assert next(g for g in res.data["by_x"] if g["x"] == "all")["delta"] == 1.0


@pytest.mark.parametrize("clustered", [False, True])
def test_every_gap_ci_is_paired_diff_cis_one_at_a_time(clustered):
    """The by-X gaps' CIs come from one paired_diff_cis call (X1 and X4 have two items each and share
    a drawing): each equals paired_diff_ci on that row's items, by hand, items in benchmark order."""
    res = section.build(E.context(ITEMS, runs(), resamples=300, clustered=clustered))
    gaps = {(r["metric"], r["x"]): r for r in res.data["by_x"]}
    assert set(gaps) == {("judge", "X1"), ("judge", "X4"), ("judge", "all")}
    by_hand = {"X1": ([1, 1], [1, 0.5]), "X4": ([1, 0.5], [0, 0]), "all": ([1, 1, 0.5, 1], [1, 0, 0, 0.5])}
    for x, (v, t) in by_hand.items():
        cl = [E.TASK] * len(v) if clustered else None
        ref = paired_diff_ci(v, t, cl, resamples=300, seed=20260430)
        g = gaps[("judge", x)]
        assert (g["ci_low"], g["ci_high"], g["n"], g["n_clusters"], g["delta"]) == (
            ref.ci_low, ref.ci_high, ref.n, ref.n_clusters, ref.estimate), x
