"""The vectorised per-item evidence values (scorer.metrics.evidence_flat) against the one-item
definitions the app reads (scorer.metrics.evidence: item_evidence, item_diagnosis, clue_positions;
scorer.model.rows.retrieved_of), row by row: on hand-made rows that exercise every rule (ties,
repeated and unknown rounds, odd score types, upstream logs, delivered lists with repeats), on a
hand-computed case, and on every record of the demo.
"""

from __future__ import annotations

import math

import numpy as np
import pytest

from scorer.metrics.evidence import (RETRIEVAL_METRICS, TEMPORAL_METRICS, clue_positions, dedupe, item_diagnosis,
                                     item_evidence, recall_curve, recall_from_hits, round_modalities)
from scorer.metrics.evidence_flat import flat_evidence, ranking_of
from scorer.metrics.logged_lists import ages_of, scores_of
from scorer.metrics.evidence_at_k import at_k, clue_hits
from scorer.model import ChainFact, Item, Prediction, Task
from scorer.model.labels import CHAIN_MODALITIES
from scorer.model.rows import retrieved_of
from tests.builders import model as E
from tests.paths import DEMO

Y3 = E.item(1, ["Y3"], ["D1:1", "D2:2"], ["D1", "D2"])
ONE_CLUE_Y3 = E.item(2, ["Y3"], ["D3:2"], ["D3"])
Y1 = E.item(3, ["Y1"], ["D3:1"], ["D3"])
GHOST = E.item(4, ["Y2"], ["D9:1", "D9:2"], ["D9"])
Y3_NO_SESSIONS = E.item(5, ["Y3"], ["D1:2", "D2:1", "D3:3"])  # stale by the clues' own sessions
CHAIN = Item(**{**{f: getattr(Y3, f) for f in Y3.__dataclass_fields__}, "index": 6, "item_id": "T:6",
                "chain": (ChainFact("D1:1", modality="image"), ChainFact("D2:2"), ChainFact("D9:9"),
                          ChainFact("D1:1", modality="audio"))})
ITEMS = [Y3, ONE_CLUE_Y3, Y1, GHOST, Y3_NO_SESSIONS, CHAIN]
TASK = E.task(ITEMS)

RANKINGS = [
    None,
    [],
    ["D1:2", "D2:2", "D3:1", "D1:1"],
    ["D1:1", "D1:1", "D2:2", "D9:7", "D1:2", "D2:2", "D3:1"],  # repeats and a round the task lacks
    [{"round": "D1:1", "score": 0.9}, {"round": "D2:2", "score": 0.9}, {"round": "D1:2", "score": 0.5},
     {"round_id": "D3:1", "score": 0.5}, {"round": "D2:1", "score": None}, {"round": "D1:3"}],
    [{"round": "D2:2", "score": 1}, {"round": "D1:3", "score": True}, {"round": "D1:1", "score": "1"},
     {"round": "D1:2", "score": "x"}, {"round": 7}, 5, "D3:2", {"round": "D2:1", "score": 1.0}],
    [{"round": "D1:2", "score": float("nan")}, {"round": "D1:1", "score": float("nan")}, {"round": "D2:2"}],
    [{"round": "D1:2", "score": 0.3}, {"round": "D2:2", "score": 0.6}, {"round": "D3:1", "score": 0.6},
     {"round": "D1:1", "score": 0.2}, {"round": "D2:1", "score": 0.6}],  # not sorted by score
    # recency ages of every kind, a repeated round with another age (the first is kept)
    [{"round": "D1:2", "score": 0.3, "recency_age": 4}, {"round": "D2:2", "score": 0.6, "recency_age": "2.5"},
     {"round": "D1:2", "score": 0.1, "recency_age": 9}, {"round": "D3:1", "recency_age": float("nan")},
     {"round": "D1:1", "recency_age": "inf"}, {"round": "D2:1", "recency_age": True}, "D1:3",
     {"round": "D3:2", "recency_age": 10 ** 400, "score": 10 ** 400}, {"round": "D9:1", "recency_age": "old"}],
]
DELIVERED = [None, [], ["D2:2", "D2:2", "D1:1"], ["D3:1", "D9:1", "D1:2"], ["D1:1", 3, "D2:2", "D2:1"]]


def _predictions() -> list[tuple[Item, Prediction]]:
    out = []
    for n, it in enumerate(ITEMS):
        for i, ranking in enumerate(RANKINGS):
            out.append((it, E.pred(it, retrieved=ranking, delivered=DELIVERED[(n + i) % len(DELIVERED)])))
    # upstream semantic-RAG logs: seeds in rank order, scores for some
    runtime = {"seed_round_ids": ["D1:2", "D2:2", 4, "D1:1", "D1:2"], "selected_round_ids": ["D2:2"],
               "top_candidates": [{"round_id": "D1:2", "score": 0.7}, {"round": "D2:2", "score": 0.7}, "x",
                                  {"round_id": "D1:1", "score": None}]}
    out += [(Y3, E.pred(Y3, method_runtime=runtime)), (CHAIN, E.pred(CHAIN, method_runtime={"seed_round_ids": 3}))]
    return out


def _codes_to_ids(fe) -> dict[int, str]:
    return {c: rid for tbl in fe.codes.tables.values() for rid, c in tbl.items()}


def _compare(rows: list[tuple[Task, Item, Prediction]], k: int) -> int:
    """Every flat value of every row against the one-item definitions; returns the rows compared."""
    fe = flat_evidence([(t, it, p.raw, p.delivered) for t, it, p in rows])
    a = at_k(fe, k)
    names = _codes_to_ids(fe)
    for i, (task, item, p) in enumerate(rows):
        ev = item_evidence(task, item, p, k)
        d = item_diagnosis(task, item, p.retrieved, k)
        where = f"row {i} ({item.item_id}, {p.raw.get('retrieved')!r}, {p.delivered!r})"
        assert bool(fe.has_ret[i]) == (p.retrieved is not None), where
        assert bool(fe.has_del[i]) == (p.delivered is not None), where
        pool = dedupe(p.retrieved or ())
        mine = fe.e_row == i
        assert [names[c] for c in fe.e_code[mine]] == [e.round_id for e in pool], where
        assert fe.e_rank[mine].tolist() == ev.ranks, where
        assert [None if v != v else v for v in fe.e_age[mine].tolist()] == [
            None if e.recency_age is None else e.recency_age if math.isfinite(e.recency_age) else math.inf
            for e in pool], where
        assert bool(a.valid[i]) == (d is not None), where
        for m in (*RETRIEVAL_METRICS, *TEMPORAL_METRICS):
            want = None if d is None else d.value(m)
            got = a.values[m][i]
            assert (got != got and want is None) or got == want, (where, m, got, want)
        assert bool(a.temporal[i]) == (d is not None and d.temporal), where
        assert a.diagnosis(fe, i) == d, where  # every field, ranks and counts included
        assert a.chain_status(fe, i) == ev.chain, where
        assert (a.top(fe, i), a.not_delivered(fe, i)) == (ev.retrieved, ev.not_delivered), where
        for m in ("required_fact_recall", "chain_retrieved", "chain_delivered"):
            want = getattr(ev.chain, m)
            got = a.chain[m][i]
            assert (got != got and want is None) or got == float(want), (where, m, got, want)
        if ev.retrieved is not None:
            assert a.n_top[i] == len(set(ev.retrieved)), where
        if ev.delivered is not None:
            assert a.n_delivered[i] == len(set(ev.delivered)), where
        dropped = [names[c] for c in fe.e_code[mine & a.dropped]]
        assert dropped == list(ev.not_delivered or ()), where
        mods = {}
        for rid in dropped:
            for m in round_modalities(task, rid):
                mods[m] = mods.get(m, 0) + 1
        got = fe.round_modality(fe.e_code[mine & a.dropped]).sum(axis=0)
        assert {m: int(n) for m, n in zip(CHAIN_MODALITIES, got) if n} == mods, where
        gone = set(dropped)
        facts = sorted(f.modality or _fact_modality(task, f.round_id) for f in ev.facts if f.round_id in gone)
        fmine = (fe.f_row == i) & a.dropped_facts
        assert sorted(fe.modality_names[m] for m in fe.f_modality[fmine]) == facts, where
    # the recall curve of the rows with valid provenance
    valid = np.nonzero(a.valid)[0]
    if len(valid):
        ks = list(range(1, 12))
        hits, n_clues = clue_hits(fe, valid, ks)
        got = recall_from_hits(hits, n_clues, ks)
        want = recall_curve([clue_positions([e.round_id for e in dedupe(rows[i][2].retrieved)],
                                            [c.round_id for c in rows[i][0].clue_chain(rows[i][1])])
                             for i in valid.tolist()], ks)
        for m in RETRIEVAL_METRICS:
            assert got[m].tolist() == want[m].tolist(), m
    return len(rows)


def _fact_modality(task, rid):
    from scorer.metrics.evidence import fact_modality

    return fact_modality(task, rid)


@pytest.mark.parametrize("k", [1, 2, 3, 5, 10])
def test_flat_values_equal_the_one_item_definitions_on_hand_made_rows(k):
    rows = [(TASK, it, p) for it, p in _predictions()]
    assert _compare(rows, k) == len(rows)


@pytest.mark.parametrize("k", [1, 3, 10])
def test_flat_values_on_a_task_that_names_a_round_twice(k):
    """A round id twice in a task (`validate` calls it an error; `score` goes on): the flat values
    read each round as scorer.model.Task does (the later one), as the one-item definitions do.
    D1:2 comes back in session D3, after the latest clue D2:2: no longer stale."""
    from dataclasses import replace

    from scorer.model import Task

    sessions = list(E.make_sessions())
    d3 = sessions[2]
    sessions[2] = replace(d3, rounds=(replace(d3.rounds[0], round_id="D1:2"), *d3.rounds[1:]))
    task = Task(E.TASK, tuple(sessions), tuple(ITEMS))
    assert not task.is_stale(Y3, "D1:2") and TASK.is_stale(Y3, "D1:2")
    rows = [(task, it, p) for it, p in _predictions()]
    assert _compare(rows, k) == len(rows)


def test_ranking_of_reads_what_retrieved_of_reads():
    for _, p in _predictions():
        want = retrieved_of(p.raw)
        got = ranking_of(p.raw)
        if want is None:
            assert got is None
            continue
        ids, scores, ages = got
        assert ids == [e.round_id for e in want]
        s = scores_of(list(scores)).tolist()
        assert [None if v != v else v for v in s] == [None if e.score is None or e.score != e.score else e.score
                                                      for e in want]
        # ages as ages_of reads them: None (NaN) where retrieved_of reads none, +inf where it reads no finite one
        a = ages_of(list(ages)).tolist()
        assert [None if v != v else v for v in a] == [
            None if e.recency_age is None else e.recency_age if math.isfinite(e.recency_age) else math.inf
            for e in want]


def test_a_hand_computed_row():
    # Y3: clues D1:1 (order 0), D2:2 (latest, order 4); stale = D1:1, D1:2, D1:3, D2:1.
    # Ranking [D1:2 .9, D9:7 .8, D2:2 .8, D1:1 .1] at K = 3: the top 3 are D1:2 (stale, rank 1), D9:7
    # (unknown round, rank 2), D2:2 (latest; tied with D9:7's score → rank 2). Clues hit: D2:2 →
    # any 1, coverage 1/2, full 0; latest present (rank 2) below a stale round (rank 1) → inversion
    # and dominance. Delivered [D2:2]: D1:2 and D9:7 dropped; the chain (D1:1, D2:2) is not all
    # retrieved (1 of 2) nor all delivered (1 of 2).
    p = E.pred(Y3, retrieved=[{"round": "D1:2", "score": 0.9}, {"round": "D9:7", "score": 0.8},
                              {"round": "D2:2", "score": 0.8}, {"round": "D1:1", "score": 0.1}], delivered=["D2:2"])
    fe = flat_evidence([(TASK, Y3, p.raw, p.delivered)])
    a = at_k(fe, 3)
    assert fe.e_rank.tolist() == [1, 2, 2, 4]
    assert {m: a.values[m][0] for m in (*RETRIEVAL_METRICS, *TEMPORAL_METRICS)} == {
        "any_clue_recall": 1.0, "coverage": 0.5, "full_clue_recall": 0.0, "latest_clue_recall": 1.0,
        "stale_dominance": 1.0, "rank_inversion": 1.0, "latest_miss": 0.0}
    assert a.chain["required_fact_recall"][0] == 0.5 and a.chain["chain_delivered"][0] == 0.0
    names = _codes_to_ids(fe)
    assert [names[c] for c in fe.e_code[a.dropped]] == ["D1:2", "D9:7"]
    assert (a.n_top[0], a.n_delivered[0]) == (3, 1)


@pytest.mark.needs_demo
def test_flat_values_equal_the_one_item_definitions_on_the_demo():
    from scorer.scoring import build_context
    from scorer.sections.evidence_records import collect

    ctx, _, _ = build_context(DEMO, [DEMO / "runs"], needs_raw=False, evidence=True)
    records, _ = collect(ctx)
    rows = [(r.task, r.item, r.prediction) for r in records]
    assert sum(r.prediction.retrieved is not None for r in records) > 10
    for k in (1, 5, 10):
        assert _compare(rows, k) == len(rows)


def test_scores_read_as_num_reads_them():
    assert [v if v == v else None for v in scores_of([1, True, None, 0.5, "2.5", "x", float("nan")]).tolist()] == \
        [1.0, 1.0, None, 0.5, 2.5, None, None]
    assert math.isnan(scores_of([None])[0])
