"""Recency counterfactual on hand-built pools. λ = 0.02 throughout; exp values to 6 places:
exp(−0.14) = 0.869358 (age 7), exp(−0.06) = 0.941765 (age 3), exp(−0.04) = 0.960789 (age 2).

Y3 item: clues D1:1 (stale state, age 7) and D2:2 (latest, age 3); D3:1 (age 2) is not gold, not stale.
"""

from __future__ import annotations

import math

import numpy as np
import pytest

from scorer.metrics.bootstrap import paired_diff_ci
from scorer.metrics.recency import (RECENCY_METRICS, RecencyCase, diagnose_at, missing_inputs,
                                    recency_counterfactual, recency_counterfactuals, recency_score,
                                    recency_values, rerank)
from scorer.model import Retrieved
from tests.builders import model as E

STALE = frozenset({"D1:1", "D1:2", "D1:3", "D2:1"})
CLUES = ("D1:1", "D2:2")


def pool(*entries):
    return tuple(Retrieved(r, i, s, a) for i, (r, s, a) in enumerate(entries, start=1))


# Case A: stale above latest on similarity; α = 0.5 flips it, α = 0.7 does not.
#   α=0.7: D1:1 = .7·.77 + .3·.869358 = .539 + .260807 = .799807; D2:2 = .7·.70 + .3·.941765 = .490 + .282530
#          = .772530 → D1:1 still first (inversion).
#   α=0.5: D1:1 = .385 + .434679 = .819679; D2:2 = .350 + .470882 = .820882 → D2:2 first (fixed).
#          D3:1 = .5·.60 + .5·.960789 = .300 + .480395 = .780395 (third).
A = RecencyCase(pool(("D1:1", 0.77, 7), ("D2:2", 0.70, 3), ("D3:1", 0.60, 2)), CLUES, "D2:2", STALE, "c1")
# Case B: latest already first at every α: D2:2 .90/age 3 vs D1:1 .50/age 7.
B = RecencyCase(pool(("D2:2", 0.90, 3), ("D1:1", 0.50, 7)), CLUES, "D2:2", STALE, "c1")
# Case C: latest not in the pool: stale D1:1 present → dominance and latest-miss at every α.
C = RecencyCase(pool(("D1:1", 0.80, 7), ("D3:1", 0.70, 2)), CLUES, "D2:2", STALE, "c2")


def test_score_formula():
    assert recency_score(0.77, 7, 0.5) == pytest.approx(0.385 + 0.5 * math.exp(-0.14))
    assert recency_score(0.77, 7, 1.0) == 0.77
    assert recency_score(0.2, 0, 0.0) == 1.0


def test_rerank_by_hand():
    assert [e.round_id for e in rerank(A.pool, 1.0)] == ["D1:1", "D2:2", "D3:1"]
    assert [e.round_id for e in rerank(A.pool, 0.7)] == ["D1:1", "D2:2", "D3:1"]
    r5 = rerank(A.pool, 0.5)
    assert [e.round_id for e in r5] == ["D2:2", "D1:1", "D3:1"]
    assert [round(e.score, 6) for e in r5] == [0.820882, 0.819679, 0.780395]
    assert [e.rank for e in r5] == [1, 2, 3]


def test_rerank_ties_keep_original_order():
    # equal sims and equal ages → equal mixed scores; the original rank decides (stable), and the
    # diagnosis treats them as tied (no inversion).
    p = pool(("D1:1", 0.5, 4), ("D2:2", 0.5, 4))
    assert [e.round_id for e in rerank(p, 0.7)] == ["D1:1", "D2:2"]
    d = diagnose_at(RecencyCase(p, CLUES, "D2:2", STALE), 0.7, k=10)
    assert not d.rank_inversion and not d.stale_dominance


def test_pool_longer_than_k_can_change_latest_at_k():
    # K=1: at α=1 the top is D1:1 (latest missed at K); at α=0.5 D2:2 moves up → latest hit.
    assert diagnose_at(A, 1.0, k=1).latest_miss
    assert diagnose_at(A, 0.5, k=1).latest_hit


def test_runs_without_scores_or_ages():
    assert missing_inputs(pool(("D1:1", None, 3))) == "no similarity score"
    assert missing_inputs(pool(("D1:1", 0.4, None))) == "no recency age"
    assert missing_inputs(()) == "empty candidate pool"
    assert missing_inputs(A.pool) is None
    with pytest.raises(ValueError):
        rerank(pool(("D1:1", None, 3)), 0.5)
    with pytest.raises(ValueError):
        rerank(A.pool, 1.5)


def test_counterfactual_table_by_hand():
    rows = recency_counterfactual([A, B, C], k=10, alphas=(1.0, 0.7, 0.5), resamples=2000, seed=1)
    got = {(r.alpha, r.metric): r for r in rows}
    # α = 1.0: latest hit A, B (2/3); miss C (1/3); dominance A, C (2/3); inversion A (1/3)
    assert got[(1.0, "latest_clue_recall")].value == pytest.approx(2 / 3)
    assert got[(1.0, "latest_miss")].value == pytest.approx(1 / 3)
    assert got[(1.0, "stale_dominance")].value == pytest.approx(2 / 3)
    assert got[(1.0, "rank_inversion")].value == pytest.approx(1 / 3)
    assert got[(1.0, "stale_dominance")].delta is None and got[(1.0, "rank_inversion")].n == 3
    # α = 0.7 changes nothing: deltas 0 with a degenerate CI
    r7 = got[(0.7, "stale_dominance")]
    assert r7.value == pytest.approx(2 / 3) and r7.delta == 0 and (r7.ci_low, r7.ci_high) == (0, 0)
    # α = 0.5 fixes A: dominance 1/3 (C), inversion 0; deltas −1/3; latest-miss unchanged (C)
    r5 = got[(0.5, "stale_dominance")]
    assert r5.value == pytest.approx(1 / 3) and r5.delta == pytest.approx(-1 / 3)
    assert got[(0.5, "rank_inversion")].delta == pytest.approx(-1 / 3)
    assert got[(0.5, "latest_miss")].delta == 0
    # the CI is the paired bootstrap of the per-item differences [−1, 0, 0]
    ref = paired_diff_ci(np.array([0.0, 0, 1]), np.array([1.0, 0, 1]), resamples=2000, seed=1)
    assert (r5.ci_low, r5.ci_high) == (ref.ci_low, ref.ci_high)
    assert -1 <= r5.ci_low <= r5.delta <= r5.ci_high <= 0


def test_counterfactual_clustered():
    rows = recency_counterfactual([A, B, C], k=10, alphas=(0.5,), clustered=True, resamples=500, seed=3)
    r5 = next(r for r in rows if r.alpha == 0.5 and r.metric == "stale_dominance")
    # clusters c1 = {A, B} (diffs −1, 0), c2 = {C} (0): two clusters resampled
    assert r5.n_clusters == 2 and r5.n == 3
    ref = paired_diff_ci([0.0, 0, 1], [1.0, 0, 1], clusters=["c1", "c1", "c2"], resamples=500, seed=3)
    assert (r5.ci_low, r5.ci_high) == (ref.ci_low, ref.ci_high)


# ---------------------------------------------------------------- all cases at once (issue 19)


def _random_cases(seed: int, n: int) -> list[RecencyCase]:
    """Pools with repeated rounds, exact score ties (scores and ages from small sets), logged ranks
    out of list order (they break ties), latest clue absent from some pools, stale rounds anywhere."""
    rng = np.random.default_rng(seed)
    rounds = [f"D{d}:{r}" for d in range(1, 4) for r in range(1, 5)]
    cases = []
    for i in range(n):
        size = int(rng.integers(1, 9))
        ids = list(rng.choice(rounds, size))  # may repeat: dedupe keeps the first
        ranks = rng.permutation(size) + 1 if i % 2 else np.arange(1, size + 1)  # logged ranks out of list order
        entries = tuple(Retrieved(str(r), int(rank), float(rng.choice([0.3, 0.5, 0.5, 0.7])),
                                  float(rng.choice([1, 2, 4, 4]))) for r, rank in zip(ids, ranks))
        latest = str(rng.choice(rounds))
        stale = frozenset(str(r) for r in rng.choice(rounds, 4))
        cases.append(RecencyCase(entries, ("D1:1", latest), latest, stale, f"c{i % 3}"))
    return cases


def test_all_cases_at_once_equal_one_case_at_a_time():
    cases = [A, B, C, *_random_cases(1, 300)]
    alphas = (1.0, 0.7, 0.5, 0.0, 0.25)
    for k in (1, 2, 3, 10):
        got = recency_values(cases, k, alphas)
        for a in alphas:
            for m in RECENCY_METRICS:
                assert got[a][m].tolist() == [float(diagnose_at(c, a, k).value(m)) for c in cases], (k, a, m)
    assert recency_values([], 3, alphas)[0.5]["rank_inversion"].size == 0
    with pytest.raises(ValueError, match="cannot re-rank: no similarity score"):
        recency_values([RecencyCase(pool(("D1:1", None, 3)), CLUES, "D2:2", STALE)], 3)
    with pytest.raises(ValueError, match="alpha"):
        recency_values([A], 3, (1.5,))


def test_groups_at_once_equal_one_group_at_a_time():
    groups = [[A, B, C], _random_cases(2, 40), _random_cases(3, 40), _random_cases(4, 17)]
    for clustered in (False, True):
        together = recency_counterfactuals(groups, 3, (1.0, 0.7, 0.5), clustered=clustered, resamples=700, seed=5)
        alone = [recency_counterfactual(g, 3, (1.0, 0.7, 0.5), clustered=clustered, resamples=700, seed=5)
                 for g in groups]
        assert together == alone
        # and each delta's CI is paired_diff_ci's own, exactly
        g = groups[1]
        base = [float(diagnose_at(c, 1.0, 3).value("latest_miss")) for c in g]
        half = [float(diagnose_at(c, 0.5, 3).value("latest_miss")) for c in g]
        ref = paired_diff_ci(half, base, [c.cluster for c in g] if clustered else None, resamples=700, seed=5)
        row = next(r for r in together[1] if r.alpha == 0.5 and r.metric == "latest_miss")
        assert (row.delta, row.ci_low, row.ci_high, row.n_clusters) == (ref.estimate, ref.ci_low, ref.ci_high,
                                                                       ref.n_clusters)


# ------------------------------------------------------------------------------------ the section



def _y3_item():
    return E.item(1, ["Y3"], ["D1:1", "D2:2"], ["D1", "D2"])


def test_section_reports_runs_without_scores_or_ages():
    from scorer.sections import recency as section

    it = _y3_item()
    scored = E.run("semantic_rag__multimodal", [E.pred(it, retrieved=[
        {"round": "D1:1", "score": 0.77, "recency_age": 7}, {"round": "D2:2", "score": 0.70, "recency_age": 3},
        {"round": "D3:1", "score": 0.60, "recency_age": 2}], judge=1.0)])
    ids_only = E.run("semantic_rag__text_only", [E.pred(it, retrieved=["D1:1", "D2:2"], judge=1.0)])
    no_age = E.run("mma", [E.pred(it, retrieved=[{"round": "D1:1", "score": 0.9}, {"round": "D2:2", "score": 0.8}],
                                  judge=1.0)])
    res = section.build(E.context([it], [scored, ids_only, no_age], resamples=200))
    skipped = {r["method"]: r["reason"] for r in res.data["not_reranked"]}
    assert skipped == {"semantic_rag__text_only": "no similarity score", "mma": "no recency age"}
    rows = {(r["method"], r["alpha"], r["metric"]): r for r in res.data["rows"]}
    assert {m for m, *_ in rows} == {"semantic_rag__multimodal"}  # only the re-rankable run has rows
    # case A of the metric tests: α = 0.5 fixes the inversion (delta −1 on one item)
    assert rows[("semantic_rag__multimodal", 0.5, "rank_inversion")]["delta"] == -1.0
    assert rows[("semantic_rag__multimodal", 0.7, "rank_inversion")]["delta"] == 0.0
    shown = next(t for t in res.tables if t.name == "recency_not_reranked")
    assert len(shown.rows) == 2


def test_section_dialogue_ages_and_custom_alphas():
    from scorer.sections import recency as section

    # no logged ages; derived Δt = 7 rounds − order: D1:1 → 7, D2:2 → 3 (the same as case A)
    it = _y3_item()
    run = E.run("semantic_rag__multimodal", [E.pred(it, retrieved=[
        {"round": "D1:1", "score": 0.77}, {"round": "D2:2", "score": 0.70}], judge=1.0)])
    res = section.build(E.context([it], [run], resamples=200,
                                  extra={"recency_age_source": "dialogue", "recency_alphas": [0.5]}))
    alphas = sorted({r["alpha"] for r in res.data["rows"]})
    assert alphas == [0.5, 1.0]  # the baseline is always there
    r5 = next(r for r in res.data["rows"] if r["alpha"] == 0.5 and r["metric"] == "stale_dominance")
    assert r5["value"] == 0.0 and r5["delta"] == -1.0


def test_section_rejects_bad_options():
    from scorer.errors import UserError
    from scorer.sections import recency as section

    with pytest.raises(UserError):
        section.build(E.context([_y3_item()], [], extra={"recency_alphas": [1.5]}))


def test_section_cases_with_facts_shared_by_runs_equal_cases_per_run():
    """The section's per-item facts (eligibility, clue chain, which rounds are stale), shared by
    every run's cases_of, give each run the cases it gets alone; D1:2 is stale for one item and the
    latest clue of the other, so facts mixed up between items would show."""
    from scorer.sections import recency as section
    from scorer.sections.evidence_records import by_group, collect

    a = E.item(1, ["Y3"], ["D1:1", "D2:2"], ["D1", "D2"])
    b = E.item(2, ["Y3"], ["D1:1", "D1:2"], ["D1"])
    pool = [{"round": r, "score": 0.9 - 0.1 * i, "recency_age": 1 + i}
            for i, r in enumerate(["D1:2", "D1:1", "D2:2", "D2:1", "D3:1"])]
    runs = [E.run(m, [E.pred(it, retrieved=pool[j:] + pool[:j], judge=1.0) for it in (a, b)])
            for j, m in enumerate(["semantic_rag__multimodal", "mma", "fc"])]
    records, _ = collect(E.context([a, b], runs, resamples=100))
    groups = list(by_group(records).values())
    assert len(groups) == 3
    facts: dict = {}
    shared = [section.cases_of(recs, "logged", facts) for recs in groups]
    alone = [section.cases_of(recs, "logged") for recs in groups]
    assert shared == alone
    stale = {c.latest: c.stale for cases, _ in alone for c in cases}
    assert stale == {"D2:2": frozenset({"D1:1", "D1:2", "D2:1"}), "D1:2": frozenset({"D1:1"})}
