"""Delivery metrics and stage losses on hand-built chains (MOSAIC's retrieve ≠ deliver)."""

from __future__ import annotations

import numpy as np
import pytest

from scorer.errors import UserError
from scorer.metrics.bootstrap import paired_diff_ci
from scorer.metrics.delivery import (budget_family, budget_of, budget_sort_key, chain_status, count_by_modality,
                                     not_delivered, parse_stage_pair, stage_loss)
from scorer.metrics.evidence import round_modalities
from scorer.model import ChainFact
from tests.builders import model as E

TASK = E.task([])


def test_delivered_subset_of_retrieved():
    # chain {D1:1, D2:2, D3:1}; retrieved all three (+ D1:2); delivered D2:2, D3:1 only.
    s = chain_status(["D1:1", "D2:2", "D3:1"], ["D1:2", "D1:1", "D2:2", "D3:1"], ["D2:2", "D3:1"])
    assert (s.n_facts, s.n_retrieved, s.n_delivered) == (3, 3, 2)
    assert s.required_fact_recall == 1.0 and s.chain_retrieved and s.chain_delivered is False
    # retrieved-but-not-delivered, in retrieved order: D1:2 (text), D1:1 (image)
    dropped = not_delivered(["D1:2", "D1:1", "D2:2", "D3:1"], ["D2:2", "D3:1"])
    assert dropped == ["D1:2", "D1:1"]
    assert count_by_modality(dropped, lambda r: round_modalities(TASK, r)) == {"text": 1, "image": 1}


def test_delivered_not_subset_of_retrieved():
    # retrieval found 1 of 2 facts (recall 1/2) but the reader got both (e.g. a full-context reader):
    # chain delivery is read from `delivered` alone.
    s = chain_status(["D1:1", "D2:2"], ["D2:2", "D3:2"], ["D1:1", "D2:2", "D2:1"])
    assert s.required_fact_recall == 0.5 and s.chain_retrieved is False and s.chain_delivered is True
    assert not_delivered(["D2:2", "D3:2"], ["D1:1", "D2:2", "D2:1"]) == ["D3:2"]


def test_unknown_is_none_not_same_as_retrieved():
    s = chain_status(["D1:1"], ["D1:1"], None)
    assert s.chain_retrieved is True and s.chain_delivered is None
    s2 = chain_status(["D1:1"], None, ["D1:1"])
    assert s2.required_fact_recall is None and s2.chain_delivered is True
    assert chain_status([], ["D1:1"], ["D1:1"]).chain_delivered is None  # no chain: nothing to deliver


def test_repeated_fact_round_counts_once():
    s = chain_status(["D1:1", "D1:1", "D2:2"], ["D1:1"], ["D1:1"])
    assert s.n_facts == 2 and s.required_fact_recall == 0.5


def test_count_by_modality_multi_media_round():
    assert count_by_modality(["a", "b", "c"], {"a": ("image", "audio"), "b": ("text",), "c": ("image",)}.get) == {
        "image": 2, "audio": 1, "text": 1}


@pytest.mark.parametrize("text", [
    'retrieval:"Oracle(V)"→"SRAG(V)"', "retrieval:Oracle(V)->SRAG(V)", " Retrieval : 'Oracle(V)' -> 'SRAG(V)' ",
])
def test_parse_stage_pair_variants(text):
    sp = parse_stage_pair(text)
    assert (sp.stage, sp.a, sp.b) == ("retrieval", "Oracle(V)", "SRAG(V)")


def test_parse_stage_pair_with_spaces_in_names():
    sp = parse_stage_pair('delivery:"SRAG(V)"->"SRAG(V) budget"')
    assert (sp.stage, sp.a, sp.b) == ("delivery", "SRAG(V)", "SRAG(V) budget")
    assert sp.label == "delivery: SRAG(V) → SRAG(V) budget"


@pytest.mark.parametrize("bad", ["retrieval", "retrieval:A", "retrieval:A->", "nonsense:A->B", ":A->B"])
def test_parse_stage_pair_errors(bad):
    with pytest.raises(UserError):
        parse_stage_pair(bad)


def test_stage_loss_by_hand():
    # A = [1, 1, .5, 0, 1], B = [0, 1, .5, 1, .5]: diffs [1, 0, 0, −1, .5] → loss = 0.5/5 = 0.1;
    # A wins items 1 and 5, ties 2 and 3, loses item 4.
    a, b = [1, 1, 0.5, 0, 1], [0, 1, 0.5, 1, 0.5]
    res = stage_loss(a, b, resamples=3000, seed=5)
    assert res.ci.estimate == pytest.approx(0.1)
    assert (res.wtl.wins, res.wtl.ties, res.wtl.losses, res.wtl.n) == (2, 2, 1, 5)
    assert res.ci.mean_a == pytest.approx(0.7) and res.ci.mean_b == pytest.approx(0.6)
    # CI against a plain numpy percentile bootstrap of the per-item differences (same draws)
    d = np.array(a) - np.array(b)
    idx = np.random.default_rng(5).integers(0, 5, size=(3000, 5))
    lo, hi = np.quantile(d[idx].mean(axis=1), [0.025, 0.975])
    assert (res.ci.ci_low, res.ci.ci_high) == pytest.approx((lo, hi))


def test_budget_detection():
    assert budget_of("semantic_rag__multimodal", {"name": "semantic_rag", "top_k": 10}) is None
    assert budget_of("semantic_rag_budget__multimodal", {"token_budget": 3200}) == "token_budget=3200"
    assert budget_of("semantic_rag_budget__multimodal") == "budget"
    assert budget_of("srag_budget8k__multimodal") == "8k"
    assert budget_family("semantic_rag_budget__multimodal") == "semantic_rag__multimodal"
    assert budget_family("srag_budget8k__multimodal") == "srag__multimodal"
    keys = sorted(["budget=4k", None, "budget=16k", "budget"], key=budget_sort_key)
    assert keys == [None, "budget=16k", "budget=4k", "budget"]


# ------------------------------------------------------------------------------------ the section
# Items: A (Y2) chain D1:1 (narrow, image) → D3:1 (answer, audio); B (Y1) clue D2:1 (video);
# C unanswerable (left out of every delivery figure).


A = E.item(1, ["Y2"], ["D1:1", "D3:1"], ["D1", "D3"],
           chain=[ChainFact("D1:1", "narrow", "image"), ChainFact("D3:1", "answer", "audio")])
B = E.item(2, ["Y1"], ["D2:1"], ["D2"])
C = E.item(3, ["Y1"], ["D1:3"], ["D1"], answerable=False)


def _runs():
    full = E.run("semantic_rag__multimodal", [
        E.pred(A, ["D1:1", "D3:1", "D1:2"], ["D1:1", "D3:1", "D1:2"], judge=1.0),
        E.pred(B, ["D2:1", "D3:2"], ["D2:1", "D3:2"], judge=1.0),
        E.pred(C, ["D1:3"], ["D1:3"], judge=0.0)])
    b8 = E.run("semantic_rag_budget8k__multimodal", [
        E.pred(A, ["D1:1", "D3:1", "D1:2"], ["D1:1", "D1:2"], judge=0.0),  # drops D3:1 (audio fact)
        E.pred(B, ["D2:1", "D3:2"], ["D2:1"], judge=1.0)])  # drops D3:2 (text, not a fact)
    b2 = E.run("semantic_rag_budget2k__multimodal", [
        E.pred(A, ["D1:1", "D3:1", "D1:2"], ["D1:2"], judge=0.0),  # drops D1:1 (image) and D3:1 (audio)
        E.pred(B, ["D2:1", "D3:2"], [], judge=0.5)])  # drops D2:1 (video) and D3:2 (text)
    oracle = E.run("clue_only_context__multimodal", [  # delivered ⊄ retrieved: nothing retrieved
        E.pred(A, None, ["D1:1", "D3:1"], judge=1.0), E.pred(B, None, ["D2:1"], judge=1.0)])
    return [full, b8, b2, oracle]


def test_section_runs_modalities_and_sweep_by_hand():
    from scorer.sections import delivery as section

    res = section.build(E.context([A, B, C], _runs(), resamples=300))
    runs = {r["method"]: r for r in res.data["runs"]}
    # budget8k: recall (2/2 + 1/1)/2 = 1; chain delivered A no, B yes → 0.5; 2 rounds dropped, 1 of them a fact
    r8 = runs["semantic_rag_budget8k__multimodal"]
    assert (r8["n_items"], r8["required_fact_recall"], r8["chain_retrieved"], r8["chain_delivered"]) == (2, 1.0, 1.0, 0.5)
    assert (r8["not_delivered"], r8["facts_not_delivered"], r8["delivered_mean"]) == (2, 1, 1.5)
    r2 = runs["semantic_rag_budget2k__multimodal"]
    assert (r2["chain_delivered"], r2["not_delivered"], r2["facts_not_delivered"]) == (0.0, 4, 3)
    ro = runs["clue_only_context__multimodal"]
    assert ro["required_fact_recall"] is None and ro["chain_delivered"] == 1.0 and ro["not_delivered"] is None
    modal = {(r["method"], r["modality"]): (r["rounds"], r["facts"]) for r in res.data["not_delivered"]}
    assert modal[("semantic_rag_budget2k__multimodal", "image")] == (1, 1)
    assert modal[("semantic_rag_budget2k__multimodal", "video")] == (1, 1)
    assert modal[("semantic_rag_budget2k__multimodal", "audio")] == (1, 1)
    assert modal[("semantic_rag_budget2k__multimodal", "text")] == (1, 0)
    assert modal[("semantic_rag_budget8k__multimodal", "audio")] == (1, 1)
    # score join: 8k: delivered chain → B (1.0), cut → A (0.0)
    join = {r["method"]: r for r in res.data["score_join"]}
    assert (join["semantic_rag_budget8k__multimodal"]["score_delivered"],
            join["semantic_rag_budget8k__multimodal"]["score_missing"]) == (1.0, 0.0)
    assert join["semantic_rag_budget2k__multimodal"]["score_delivered"] is None
    # sweep: full (score 1.0), 8k (0.5), 2k ((0 + 0.5)/2 = 0.25), in that order
    sweep = [(r["budget"], r["score"], r["chain_delivered"]) for r in res.data["budget_sweep"]]
    assert sweep == [("none (full)", 1.0, 1.0), ("8k", 0.5, 0.5), ("2k", 0.25, 0.0)]
    # default pairs: Oracle(V) → SRAG(V) (retrieval) and full → each budget (delivery)
    losses = {(r["stage"], r["b"]): r for r in res.data["stage_losses"]}
    assert losses[("retrieval", "SRAG(V)")]["loss"] == 0.0 and losses[("retrieval", "SRAG(V)")]["ties"] == 2
    # full → 2k: diffs A 1 − 0 = 1, B 1 − 0.5 = 0.5 → loss 0.75, A wins both
    l2 = losses[("delivery", "semantic_rag_budget2k__multimodal")]
    assert (l2["loss"], l2["wins"], l2["ties"], l2["losses"], l2["n"]) == (0.75, 2, 0, 0, 2)


def test_section_explicit_stage_pair_and_unknown_name():
    from scorer.sections import delivery as section

    pairs = (parse_stage_pair('delivery:"semantic_rag_budget8k__multimodal"->"semantic_rag_budget2k__multimodal"'),
             parse_stage_pair("retrieval:Nope->SRAG(V)"))
    res = section.build(E.context([A, B, C], _runs(), resamples=300, extra={"stage_pairs": pairs}))
    assert len(res.data["stage_losses"]) == 1  # explicit pairs replace the defaults
    r = res.data["stage_losses"][0]
    # 8k − 2k: A 0 − 0 = 0, B 1 − 0.5 = 0.5 → loss 0.25; one win, one tie
    assert (r["loss"], r["wins"], r["ties"], r["losses"]) == (0.25, 1, 1, 0)
    assert any("no run named 'Nope'" in w for w in res.warnings)


def test_cli_stage_pair_error_is_one_line(capsys, tmp_path):
    from scorer.cli import main

    code = main(["score", str(tmp_path), "--runs", str(tmp_path), "--stage-pair", "nonsense"])
    err = capsys.readouterr().err
    assert code != 0 and err.count("\n") == 1 and "--stage-pair" in err


def test_section_clustered_bootstrap_resamples_clusters():
    from scorer.sections import delivery as section

    a = E.item(1, ["Y1"], ["D1:1"], cluster="p1")
    b = E.item(2, ["Y1"], ["D2:1"], cluster="p1")
    c = E.item(3, ["Y1"], ["D3:1"], cluster="p2")
    full = E.run("semantic_rag__multimodal", [E.pred(i, [i.clue_rounds[0]], [i.clue_rounds[0]], judge=1.0)
                                             for i in (a, b, c)])
    cut = E.run("semantic_rag_budget__multimodal", [E.pred(i, [i.clue_rounds[0]], [], judge=j)
                                                   for i, j in ((a, 0.0), (b, 1.0), (c, 0.0))])
    res = section.build(E.context([a, b, c], [full, cut], resamples=400, clustered=True))
    loss = next(r for r in res.data["stage_losses"] if r["stage"] == "delivery")
    # diffs: a 1, b 0 (cluster p1), c 1 (p2) → loss 2/3; two clusters resampled
    assert loss["loss"] == pytest.approx(2 / 3) and loss["n_clusters"] == 2
    ref = paired_diff_ci([1.0, 1, 1], [0.0, 1, 0], clusters=["p1", "p1", "p2"], resamples=400, seed=20260430)
    assert (loss["ci_low"], loss["ci_high"]) == (ref.ci_low, ref.ci_high)


def test_stage_losses_at_once_equal_stage_loss_one_at_a_time():
    """stage_losses (one paired_diff_cis call, shared draws) gives each pair exactly stage_loss's
    result: pairs of equal and different lengths, with and without clusters, 0/1 scores (shared
    product) and thirds (computed one at a time); the CI is scipy's percentile bootstrap's."""
    from scipy import stats

    from scorer.metrics.delivery import stage_losses

    rng = np.random.default_rng(11)
    pairs = []
    for n, values in ((30, [0.0, 1.0]), (30, [0.0, 0.5, 1.0]), (17, [0.0, 1.0]), (30, [0.0, 1 / 3, 2 / 3, 1.0])):
        a, b = rng.choice(values, n), rng.choice(values, n)
        pairs.append((a, b, None))
        pairs.append((a, b, [f"c{i % 6}" for i in range(n)]))
    got = stage_losses(pairs, resamples=1500, seed=4)
    assert got == [stage_loss(a, b, cl, resamples=1500, seed=4) for a, b, cl in pairs]
    a, b, _ = pairs[0]
    ref = stats.bootstrap((a - b,), np.mean, n_resamples=1500, method="percentile", random_state=4).confidence_interval
    assert abs(got[0].ci.ci_low - ref.low) < 0.08 and abs(got[0].ci.ci_high - ref.high) < 0.08
    assert got[0].wtl.wins + got[0].wtl.ties + got[0].wtl.losses == 30
