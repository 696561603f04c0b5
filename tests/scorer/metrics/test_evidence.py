"""Retrieval diagnostics and the app's per-item marks on hand-built items (tests/builders/model.py).

Item Y3 (the workhorse): sessions D1, D2; clues D1:1 [order 0] and D2:2 [order 4] → latest = D2:2;
stale = rounds of D1/D2 before order 4 = {D1:1, D1:2, D1:3, D2:1}; D3:* are never stale.
"""

from __future__ import annotations

import json

import numpy as np
import pytest

from scorer.metrics.evidence import (clue_positions, dedupe, diagnose, fact_modality, item_diagnosis, item_evidence,
                                     item_evidence_marks, recall_curve, round_modalities, tie_ranks)
from scorer.model import ChainFact, Retrieved
from tests.builders import model as E
from tests.paths import DEMO

Y3 = E.item(1, ["Y3"], ["D1:1", "D2:2"], ["D1", "D2"])
ONE_CLUE_Y3 = E.item(2, ["Y3"], ["D3:2"], ["D3"])
Y1 = E.item(3, ["Y1"], ["D3:1"], ["D3"])
GHOST = E.item(4, ["Y2"], ["D9:1", "D9:2"], ["D9"])
TASK = E.task([Y3, ONE_CLUE_Y3, Y1, GHOST])


def ranked(*ids, scores=None):
    scores = scores or [None] * len(ids)
    return tuple(Retrieved(r, i, s) for i, (r, s) in enumerate(zip(ids, scores), start=1))


def test_stale_ranked_above_latest_is_inversion_and_dominance():
    # top-3 of [D1:2, D2:2, D3:1, D1:1] = D1:2 (stale, rank 1), D2:2 (latest, rank 2), D3:1.
    # clues hit: D2:2 only (D1:1 is at position 4 > K) → any 1, coverage 1/2, full 0.
    d = item_diagnosis(TASK, Y3, ranked("D1:2", "D2:2", "D3:1", "D1:1"), k=3)
    assert (d.any_clue, d.coverage, d.full_clue) == (True, 0.5, False)
    assert d.latest_hit and not d.latest_miss
    assert d.rank_inversion and d.stale_dominance
    assert (d.n_stale, d.latest_rank, d.best_stale_rank) == (1, 2, 1)


def test_tied_scores_are_not_an_inversion():
    # D1:1 (stale) listed before D2:2 (latest) but both score 0.9 → both rank 1; "ranked above"
    # needs a strictly better rank, so no inversion and no dominance. Both clues in top-10 → full.
    d = item_diagnosis(TASK, Y3, ranked("D1:1", "D2:2", "D3:1", scores=[0.9, 0.9, 0.5]), k=10)
    assert tie_ranks([0.9, 0.9, 0.5]) == [1, 1, 3]
    assert (d.latest_rank, d.best_stale_rank) == (1, 1)
    assert not d.rank_inversion and not d.stale_dominance
    assert d.full_clue and d.coverage == 1.0


def test_tie_ranks_competition_and_unscored():
    assert tie_ranks([0.9, 0.8, 0.8, 0.8, 0.1]) == [1, 2, 2, 2, 5]
    assert tie_ranks([None, None, 0.5]) == [1, 2, 3]  # no scores: positions


def test_missing_latest_with_stale_present_dominates():
    # [D1:1, D1:3, D3:2]: latest D2:2 absent; stale D1:1 and D1:3 present → dominance by the second
    # clause, no inversion (needs both present), latest-miss. Clues: D1:1 hit → any 1, cov 1/2.
    d = item_diagnosis(TASK, Y3, ranked("D1:1", "D1:3", "D3:2"), k=10)
    assert d.latest_miss and not d.latest_hit
    assert d.stale_dominance and not d.rank_inversion
    assert (d.any_clue, d.coverage, d.full_clue, d.n_stale) == (True, 0.5, False, 2)


def test_missing_latest_without_stale_is_not_dominance():
    d = item_diagnosis(TASK, Y3, ranked("D3:1", "D3:2"), k=10)
    assert d.latest_miss and not d.stale_dominance and not d.any_clue and d.coverage == 0.0


def test_several_stale_rounds_and_k_cut():
    # [D2:1, D1:3, D2:2, D1:1], K=3: top-3 = D2:1 (stale), D1:3 (stale), D2:2 (latest, rank 3).
    # D1:1 (stale and a clue) is at position 4, outside K: 2 stale in top-K, coverage 1/2.
    d = item_diagnosis(TASK, Y3, ranked("D2:1", "D1:3", "D2:2", "D1:1"), k=3)
    assert (d.n_stale, d.best_stale_rank, d.latest_rank) == (2, 1, 3)
    assert d.rank_inversion and d.stale_dominance and d.coverage == 0.5
    # K=4 takes D1:1 in too → full chain; still an inversion.
    d4 = item_diagnosis(TASK, Y3, ranked("D2:1", "D1:3", "D2:2", "D1:1"), k=4)
    assert d4.full_clue and d4.n_stale == 3


def test_latest_first_is_clean():
    d = item_diagnosis(TASK, Y3, ranked("D2:2", "D1:1"), k=10)
    assert d.latest_hit and not d.rank_inversion and not d.stale_dominance and d.full_clue


def test_one_clue_and_non_y3_items_get_no_temporal_metrics():
    d = item_diagnosis(TASK, ONE_CLUE_Y3, ranked("D3:1", "D3:2"), k=10)
    assert d.full_clue and d.latest_hit is None and d.stale_dominance is None and not d.temporal
    d1 = item_diagnosis(TASK, Y1, ranked("D3:1"), k=10)
    assert d1.full_clue and d1.latest_miss is None


def test_no_provenance_is_none():
    assert item_diagnosis(TASK, GHOST, ranked("D1:1"), k=10) is None  # no clue exists in the task
    assert item_diagnosis(TASK, Y1, None, k=10) is None  # retrieval not logged
    # an empty list is a logged retrieval that found nothing
    d = item_diagnosis(TASK, Y3, (), k=10)
    assert d.coverage == 0.0 and d.latest_miss and not d.stale_dominance


def test_duplicates_keep_first_position():
    # [D3:1, D3:1, D2:2, D1:1] → deduped [D3:1, D2:2, D1:1]; K=2 → D3:1, D2:2: latest at rank 2.
    entries = ranked("D3:1", "D3:1", "D2:2", "D1:1")
    assert [e.round_id for e in dedupe(entries)] == ["D3:1", "D2:2", "D1:1"]
    d = item_diagnosis(TASK, Y3, entries, k=2)
    assert d.latest_rank == 2 and d.n_hit == 1


def test_diagnose_rejects_bad_input():
    with pytest.raises(ValueError):
        diagnose(["a"], ["a"], k=0)
    with pytest.raises(ValueError):
        diagnose(["a"], [], k=1)


def test_recall_curve_by_hand():
    # item 1 clues {D1:1 at 4, D2:2 at 2}; item 2 clue {D3:1 at 1}.
    p1 = clue_positions(["D1:2", "D2:2", "D3:1", "D1:1"], ["D1:1", "D2:2"])
    p2 = clue_positions(["D3:1"], ["D3:1"])
    assert sorted(p1.tolist()) == [2.0, 4.0]
    c = recall_curve([p1, p2], [1, 2, 3, 4])
    # K=1: item1 0 hits, item2 1/1 → any 0.5, cov (0 + 1)/2 = 0.5, full 0.5
    # K=2: item1 1/2 → any 1, cov (0.5 + 1)/2 = 0.75, full 0.5
    # K=4: item1 2/2 → everything 1
    np.testing.assert_allclose(c["any_clue_recall"], [0.5, 1, 1, 1])
    np.testing.assert_allclose(c["coverage"], [0.5, 0.75, 0.75, 1])
    np.testing.assert_allclose(c["full_clue_recall"], [0.5, 0.5, 0.5, 1])
    # the curve at K agrees with the per-item diagnosis at K
    d = item_diagnosis(TASK, Y3, ranked("D1:2", "D2:2", "D3:1", "D1:1"), k=2)
    assert d.coverage == 0.5


def test_recall_curve_absent_clue_never_counts():
    c = recall_curve([clue_positions(["x"], ["D1:1", "D2:2"])], [1, 50])
    np.testing.assert_allclose(c["coverage"], [0, 0])


def test_modalities():
    assert round_modalities(TASK, "D2:1") == ("video",)
    assert round_modalities(TASK, "D1:2") == ("text",)
    assert fact_modality(TASK, "D3:1") == "audio"
    assert round_modalities(TASK, "nope") == ("text",)


def test_item_marks_delivered_subset():
    # retrieved [D1:2 .9, D2:2 .8, D3:1 .8, D1:1 .1]; delivered {D2:2, D1:1} ⊂ retrieved.
    p = E.pred(Y3, retrieved=[{"round": "D1:2", "score": 0.9, "recency_age": 6},
                              {"round": "D2:2", "score": 0.8, "recency_age": 3},
                              {"round": "D3:1", "score": 0.8, "recency_age": 2},
                              {"round": "D1:1", "score": 0.1, "recency_age": 7}],
               delivered=["D1:1", "D2:2"])
    m = item_evidence_marks(TASK, Y3, p, k=3)
    by = {r.round_id: r for r in m.rounds}
    assert [r.rank for r in m.rounds] == [1, 2, 2, 4]  # D2:2 and D3:1 tie at 0.8
    assert by["D1:2"].stale and not by["D1:2"].gold and not by["D1:2"].delivered
    assert by["D2:2"].latest and by["D2:2"].gold and by["D2:2"].delivered and not by["D2:2"].stale
    assert by["D1:1"].gold and by["D1:1"].stale and not by["D1:1"].in_top_k
    assert by["D3:1"].score == 0.8 and by["D1:1"].recency_age == 7
    # retrieved = the top K = 3: D1:1 (a chain fact, 4th) is a candidate beyond K, as the chain and
    # delivery tables count it (issue 12, point 11); it was delivered without being retrieved
    assert m.chain_retrieved is False and m.chain_delivered is True
    assert (m.status.n_retrieved, m.status.n_delivered, m.status.n_facts) == (1, 2, 2)
    assert [(c.round_id, c.retrieved) for c in m.chain] == [("D1:1", False), ("D2:2", True)]
    assert m.delivered_not_retrieved == ("D1:1",)
    assert [r.round_id for r in m.dropped] == ["D1:2", "D3:1"]  # top-3 rounds packing left out
    assert [c.modality for c in m.chain] == ["image", "image"]
    assert m.diagnosis.rank_inversion  # D1:2 (stale, rank 1) above D2:2 (rank 2)
    m4 = item_evidence_marks(TASK, Y3, p, k=4)  # at K = 4 the whole chain is retrieved
    assert m4.chain_retrieved is True and m4.chain_delivered is True and m4.delivered_not_retrieved == ()
    assert m4.status.n_retrieved == 2 and [r.round_id for r in m4.dropped] == ["D1:2", "D3:1"]


def test_item_marks_delivered_not_subset_and_unknown():
    # delivered has D2:1 that was never retrieved; the chain is retrieved but not delivered (D1:1 dropped).
    p = E.pred(Y3, retrieved=["D2:2", "D1:1"], delivered=["D2:2", "D2:1"])
    m = item_evidence_marks(TASK, Y3, p, k=10)
    assert m.chain_retrieved is True and m.chain_delivered is False
    assert m.delivered_not_retrieved == ("D2:1",)
    # delivery unknown: None, never "same as retrieved"
    m2 = item_evidence_marks(TASK, Y3, E.pred(Y3, retrieved=["D2:2", "D1:1"]), k=10)
    assert m2.chain_delivered is None and all(r.delivered is None for r in m2.rounds)
    # oracle row: delivered without retrieval
    m3 = item_evidence_marks(TASK, Y3, E.pred(Y3, delivered=["D1:1", "D2:2"]), k=10)
    assert m3.rounds == () and m3.chain_retrieved is None and m3.chain_delivered is True and m3.diagnosis is None


def test_item_evidence_reads_the_top_k_distinct_rounds_as_retrieved():
    # logged: D1:2, D1:2 again, D2:2, D1:1, D3:1; K = 3 → retrieved D1:2, D2:2, D1:1 (a repeat keeps its
    # first position and takes no place in the top K), D3:1 a candidate beyond K
    p = E.pred(Y3, retrieved=["D1:2", "D1:2", "D2:2", "D1:1", "D3:1"], delivered=["D2:2", "D3:1"])
    ev = item_evidence(TASK, Y3, p, 3)
    assert ev.retrieved == ("D1:2", "D2:2", "D1:1") and [e.round_id for e in ev.pool][-1] == "D3:1"
    assert (ev.chain.n_retrieved, ev.chain.n_delivered, ev.chain.n_facts) == (2, 1, 2)
    assert ev.chain.chain_retrieved is True and ev.chain.chain_delivered is False
    assert ev.diagnosis.full_clue and ev.diagnosis.coverage == 1.0  # the same K, the same rounds
    assert ev.not_delivered == ("D1:2", "D1:1")  # top-3 rounds packing left out; D3:1 is no "drop"
    at2 = item_evidence(TASK, Y3, p, 2)
    assert at2.chain.chain_retrieved is False and at2.diagnosis.coverage == 0.5 and at2.not_delivered == ("D1:2",)
    unknown = item_evidence(TASK, Y3, E.pred(Y3, retrieved=None, delivered=None), 3)
    assert not unknown.any_logged and unknown.chain.n_retrieved is None and unknown.not_delivered is None


def test_item_marks_use_chain_modalities_when_given():
    it = E.item(9, ["Y2"], ["D1:1", "D3:1"], ["D1", "D3"],
                chain=[ChainFact("D1:1", "narrow", "image", "background"), ChainFact("D3:1", "answer", "audio")])
    t = E.task([it])
    m = item_evidence_marks(t, it, E.pred(it, retrieved=["D1:1"], delivered=["D1:1"]), k=10)
    assert [(c.role, c.modality, c.retrieved, c.delivered) for c in m.chain] == [
        ("narrow", "image", True, True), ("answer", "audio", False, False)]
    assert m.chain_retrieved is False and m.chain_delivered is False


def test_tie_ranks_match_scipy_min_ranking_on_sorted_scores():
    from scipy.stats import rankdata

    rng = np.random.default_rng(7)
    for _ in range(20):
        s = sorted(rng.integers(0, 5, size=12).astype(float) / 4, reverse=True)
        assert tie_ranks(s) == rankdata([-v for v in s], method="min").astype(int).tolist()


# ------------------------------------------------------------------------------------ the section


def _section_runs():
    """Two open items for one SRAG run: the Y3 item (retrieved [D1:2, D2:2, D3:1, D1:1]) and a Y1 item
    with clue D3:1 (retrieved [D3:1]); plus a run without retrieval (ignored by the section)."""
    y1 = E.item(5, ["Y1"], ["D3:1"], ["D3"], x=["X2"])
    items = [Y3, y1]
    srag = E.run("semantic_rag__multimodal", [
        E.pred(Y3, retrieved=["D1:2", "D2:2", "D3:1", "D1:1"], judge=0.5),
        E.pred(y1, retrieved=["D3:1"], judge=1.0)])
    fc = E.run("full_context__multimodal", [E.pred(Y3, judge=0.0), E.pred(y1, judge=1.0)])
    return items, [srag, fc]


def test_section_rows_by_hand():
    from scorer.sections import evidence as section

    items, runs = _section_runs()
    res = section.build(E.context(items, runs, k=3))
    rows = {(r["y"], r["x"], r["task"], r["metric"]): r for r in res.data if r["k"] == 3}
    assert {r["method"] for r in res.data} == {"semantic_rag__multimodal"}
    # all items (n 2): any = (1 + 1)/2 = 1; coverage = (1/2 + 1)/2 = 0.75; full = (0 + 1)/2 = 0.5
    assert (rows[("all", "all", "all", "coverage")]["value"], rows[("all", "all", "all", "coverage")]["n"]) == (0.75, 2)
    assert rows[("all", "all", "all", "full_clue_recall")]["value"] == 0.5
    # Y3 (the one item): inversion, dominance, latest hit at K = 3
    assert rows[("Y3", "all", "all", "stale_dominance")]["value"] == 1.0
    assert rows[("Y3", "all", "all", "latest_miss")]["value"] == 0.0 and rows[("Y3", "all", "all", "latest_miss")]["n"] == 1
    # no temporal rows for Y1 or for y = all
    assert ("Y1", "all", "all", "stale_dominance") not in rows and ("all", "all", "all", "latest_miss") not in rows
    # by X: X1 holds the Y3 item (coverage 1/2), X2 the Y1 item (coverage 1)
    assert rows[("all", "X1", "all", "coverage")]["value"] == 0.5 and rows[("all", "X2", "all", "coverage")]["value"] == 1.0
    assert rows[("Y3", "X1", "all", "rank_inversion")]["value"] == 1.0
    # per task
    assert rows[("all", "all", "T", "any_clue_recall")]["n"] == 2
    by_y = next(t for t in res.tables if t.name == "evidence_by_y")
    assert by_y.columns[:4] == ["Method", "Backbone", "Mode", "Y"] and "Stale-Dom." in by_y.columns
    y3 = next(r for r in by_y.rows if r["Y"] == "Y3")
    assert (y3["n Y3"], y3["Latest"], y3["Rank-Inv."]) == (1, 1.0, 1.0)


def test_section_absent_without_logs():
    from scorer.sections import evidence as section

    items, runs = _section_runs()
    res = section.build(E.context(items, runs[1:]))
    assert res.reason and res.data["value"] is None


# ------------------------------------------------------------------------------------ end to end

@pytest.fixture(scope="module")
def demo_report(tmp_path_factory):
    from scorer.cli import main

    out = tmp_path_factory.mktemp("report")
    code = main(["score", str(DEMO), "--runs", str(DEMO / "runs"), "--out", str(out), "--format", "md,json",
                 "--resamples", "300"])
    assert code == 0
    return (out / "report.md").read_text(encoding="utf-8"), json.loads((out / "report.json").read_text(encoding="utf-8"))


@pytest.mark.needs_demo
def test_demo_markdown_has_every_evidence_table(demo_report):
    md, _ = demo_report
    for heading in ("### Retrieval diagnostics by Y (K = 10)", "### Recency counterfactual (Y3, K = 10)",
                    "### Recency counterfactual: paired deltas vs α = 1.0", "### Delivery of the gold chain per run",
                    "### Stage losses (paired)", "### Abstention: correct on unanswerable, false on answerable",
                    "### Oracle evidence (a): reasoning depth by Y", "### Oracle evidence (b): text vs visual gap by X",
                    "## Caption-proof gain", "### Retrieved but not delivered, by modality"):
        assert heading in md, heading
    by_y = md.split("### Retrieval diagnostics by Y")[1].split("###")[0]
    assert "| Latest | Stale-Dom. | Rank-Inv. | Latest-Miss |" in by_y
    assert "| SRAG(V) budget |" in md.split("### Delivery of the gold chain per run")[1].split("###")[0]
    assert "delivery | SRAG(V) → SRAG(V) budget" in md  # the default delivery pair for the budgeted run
    assert '"information is unavailable"' in md  # the abstention pattern list is printed


@pytest.mark.needs_demo
def test_demo_json_rows(demo_report):
    _, data = demo_report
    ev = data["evidence"]
    assert {"backbone", "method", "y", "metric", "k", "value", "n"} <= set(ev[0])
    metrics = {r["metric"] for r in ev}
    assert {"any_clue_recall", "coverage", "full_clue_recall", "latest_clue_recall", "stale_dominance",
            "rank_inversion", "latest_miss", "required_fact_recall", "chain_retrieved", "chain_delivered"} <= metrics
    assert all(r["y"] == "Y3" for r in ev if r["metric"] in ("stale_dominance", "latest_miss"))
    assert all(0 <= r["value"] <= 1 and r["n"] > 0 for r in ev if r["value"] is not None)
    ab = data["abstention"]
    assert {r["metric"] for r in ab} == {"correct_abstention", "false_abstention", "answerable_score"}
    budget = [r for r in data["delivery"]["runs"] if r["method"] == "semantic_rag_budget__multimodal"]
    assert budget and all(r["chain_delivered"] <= 1 and r["not_delivered"] > 0 for r in budget)
    full = [r for r in data["delivery"]["runs"] if r["method"] == "semantic_rag__multimodal"]
    # the unbudgeted reader gets the whole top K: its chain is delivered exactly when it was retrieved
    assert full and all(r["not_delivered"] == 0 and r["chain_delivered"] == r["chain_retrieved"] for r in full)
    rec = [r for r in data["recency"]["rows"] if r["alpha"] == 0.5 and r["metric"] == "stale_dominance"]
    assert rec and all(r["ci_low"] <= r["delta"] <= r["ci_high"] for r in rec)
