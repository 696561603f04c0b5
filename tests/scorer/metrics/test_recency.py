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
    assert missing_inputs(pool(("D1:1", 0.4, -1.0), ("D2:2", 0.5, None))) == "no recency age"  # first that holds
    assert missing_inputs(pool(("D1:1", 0.4, -1.0), ("D2:2", 0.5, 3))) == "negative recency age"
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


def _reference_cases(records, age_source):
    """Each group's re-rankable cases and skipped reasons, built one record at a time from its
    Prediction.retrieved (Retrieved objects), as the section built them before it read the flat
    arrays: the reference for scorer.metrics.recency_flat."""
    from dataclasses import replace

    from scorer.metrics.evidence import dedupe, temporal_eligible
    from scorer.sections.evidence_records import by_group

    out = {}
    for g, recs in by_group(records).items():
        cases, skipped = [], {}
        for r in recs:
            item, task = r.item, r.task
            if not (item.answerable and temporal_eligible(task, item)):
                continue
            retrieved = r.prediction.retrieved
            if retrieved is None:
                continue
            pool = dedupe(retrieved)
            if age_source == "dialogue":
                end = len(task.rounds)
                pool = tuple(e if e.recency_age is not None or task.order_of(e.round_id) is None
                             else replace(e, recency_age=float(end - task.order_of(e.round_id))) for e in pool)
            why = missing_inputs(pool)
            if why:
                skipped[why] = skipped.get(why, 0) + 1
                continue
            chain = task.clue_chain(item)
            stale = frozenset(e.round_id for e in pool if task.is_stale(item, e.round_id))
            cases.append(RecencyCase(pool, tuple(c.round_id for c in chain), chain[-1].round_id, stale, r.cluster))
        out[g] = (cases, skipped)
    return out


def _flat_cases(ctx, age_source):
    from scorer.metrics.recency_flat import RERANKABLE, pools_of, recency_rows
    from scorer.sections import evidence_records as er

    records, _ = er.collect(ctx)
    fe = er.flat(ctx)
    rows = recency_rows(fe, age_source)
    out = {}
    for g, at in er.group_rows(ctx).items():
        why = rows.why[at]
        ok = at[why == RERANKABLE]
        skipped = {}
        for c in why[why > RERANKABLE].tolist():
            skipped[rows.reason(c)] = skipped.get(rows.reason(c), 0) + 1
        out[g] = (pools_of(fe, rows, ok, [records[i].cluster for i in ok.tolist()]), skipped)
    return out


def _odd_pools_context():
    """Rows of every kind a ranking can log (see each comment), over items that are and are not
    cases (one item per kind of row and kind of item); four runs log each item a different kind of
    row, one of them an upstream log (method_runtime) for every other item."""
    kinds = [  # (y labels, clue rounds, sessions, answerable, cluster)
        (["Y3"], ["D1:1", "D2:2"], ["D1", "D2"], True, ""),
        (["Y3"], ["D1:1", "D1:2"], ["D1"], True, "k2"),
        (["Y3"], ["D2:2"], [], True, ""),  # Y3 with one clue: not temporal-eligible
        (["Y3"], ["D1:1", "D2:2"], [], False, ""),  # unanswerable
        (["Y1"], ["D1:1", "D2:2"], [], True, ""),  # not Y3
    ]
    e = lambda r, s=0.5, age=3: {"round": r, "score": s, "recency_age": age}  # noqa: E731
    logs = [
        [e("D1:2", 0.9, 1), e("D1:1", 0.8, 2), e("D1:2", 0.7, 9), e("D2:2", 0.8, 3), e("D9:9", 0.5, 4)],  # a repeat, a round not in the task
        [e("D1:1", None), e("D2:2")],  # no score
        [e("D1:1", 0.6, None), e("D2:2", 0.4, 1)],  # an age missing: filled in from the dialogue
        [e("D1:1", 0.6, None), e("D9:1", 0.4, None)],  # … but not for a round the task lacks
        [e("D1:1", 0.6, "nan"), e("D2:2")],  # an age logged as NaN is never filled in
        [e("D2:2", 0.6, "inf"), e("D1:1", 0.5, 10 ** 400)],
        [e("D2:2", 10 ** 400), e("D1:1")],  # a score past a float's range: +inf, not re-ranked
        [],  # an empty pool
        ["D1:1", "D2:2"],  # ids only: no scores
        [{"round": 5, "score": 0.9}, e("D2:2", 0.5, True), {"round_id": "D1:1", "score": "0.5", "recency_age": "3"}],
        [e("D1:1", 0.5, 2), e("D2:2", 0.5, 2), e("D1:2", 0.5, 2), e("D2:1", 0.5, 2)],  # ties everywhere
        [e("D1:3", 0.9, 6), e("D2:1", 0.8, 5), e("D1:1", 0.7, 7), e("D2:2", 0.2, 1)],  # stale above latest
        [e("D1:1", 0.9, -2), e("D2:2", 0.8, 1)],  # a negative age cannot be a distance: not re-ranked
        [e("D2:2", 0.9, -1e6), e("D1:1", 0.8, None)],  # (−λ·Δt past a float's range had raised OverflowError)
        None,  # no ranking logged
    ]
    items = [E.item(100 * t + i, y, clues, sessions, answerable=ok, cluster=cluster)
             for t, (y, clues, sessions, ok, cluster) in enumerate(kinds) for i in range(len(logs))]
    runtime = {"seed_round_ids": ["D1:1", "D2:2", 7], "top_candidates": [{"round_id": "D1:1", "score": 0.9}]}
    runs = []
    for j, method in enumerate(["semantic_rag__multimodal", "mma", "fc", "upstream"]):
        preds = []
        for n, it in enumerate(items):
            if method == "upstream" and n % 2:
                preds.append(E.pred(it, judge=1.0, method_runtime=runtime))
            else:
                preds.append(E.pred(it, retrieved=logs[(n + j) % len(logs)], judge=1.0))
        runs.append(E.run(method, preds, backbone=f"b{j % 2}"))
    return items, runs


@pytest.mark.parametrize("age_source", ["logged", "dialogue"])
def test_flat_cases_equal_the_cases_built_from_each_rows_retrieved_list(age_source):
    """scorer.metrics.recency_flat's cases (which rows, why the others are left out, each pool's
    entries, latest and stale flags) equal the ones built record by record from Prediction.retrieved,
    and give the same values at every K and α, on rows of every kind."""
    from scorer.metrics.recency import Pools, pool_values

    items, runs = _odd_pools_context()
    ctx = E.context(items, runs, resamples=100)
    from scorer.sections.evidence_records import collect

    want = _reference_cases(collect(ctx)[0], age_source)
    got = _flat_cases(ctx, age_source)
    assert list(got) == list(want)
    n_cases = n_skipped = 0
    for g, (cases, skipped) in want.items():
        pools, flat_skipped = got[g]
        assert flat_skipped == skipped, g
        ref = Pools.of_cases(cases)
        assert pools.size.tolist() == ref.size.tolist()
        for f in ("sim", "age", "latest", "stale"):
            assert getattr(pools, f).tolist() == getattr(ref, f).tolist(), (g, f)
        assert list(pools.clusters) == list(ref.clusters)
        for k in (1, 2, 3, 10):
            for a, by_metric in pool_values(pools, k, (1.0, 0.7, 0.5, 0.0)).items():
                ref_values = pool_values(ref, k, (1.0, 0.7, 0.5, 0.0))[a]
                assert {m: v.tolist() for m, v in by_metric.items()} == {m: v.tolist() for m, v in ref_values.items()}
        n_cases += len(cases)
        n_skipped += sum(skipped.values())
    # the rows above do exercise both sides: re-rankable cases and every reason
    assert n_cases >= 12 and n_skipped >= 20
    reasons = {why for _, skipped in want.values() for why in skipped}
    assert reasons == {"empty candidate pool", "no similarity score", "no recency age", "negative recency age"}


def test_flat_cases_on_a_task_that_names_a_round_twice():
    """A task whose round id appears twice (`validate` calls it an error; `score` reads the task as
    scorer.model.Task does, the later round): the flat cases still equal the record-by-record ones."""
    from dataclasses import replace

    from scorer.model import Benchmark, Task
    from scorer.sections.base import ScoreContext, ScoreOptions
    from scorer.load.frame import predictions_frame

    items, runs = _odd_pools_context()
    sessions = list(E.make_sessions())
    d3 = sessions[2]
    moved = replace(d3.rounds[0], round_id="D1:2")  # D1:2 again, in session D3, after the latest clue D2:2
    sessions[2] = replace(d3, rounds=(moved, *d3.rounds[1:]))
    bench = Benchmark(E.bench(items).root, "hand", (Task(E.TASK, tuple(sessions), tuple(items)),))
    ctx = ScoreContext(bench, runs, predictions_frame(bench, runs), None, ScoreOptions(resamples=100))
    from scorer.sections.evidence_records import collect

    for age_source in ("logged", "dialogue"):
        want = _reference_cases(collect(ctx)[0], age_source)
        got = _flat_cases(ctx, age_source)
        for g, (cases, skipped) in want.items():
            pools, flat_skipped = got[g]
            assert flat_skipped == skipped
            from scorer.metrics.recency import Pools

            ref = Pools.of_cases(cases)
            for f in ("size", "sim", "age", "latest", "stale"):
                assert getattr(pools, f).tolist() == getattr(ref, f).tolist(), (g, f, age_source)
