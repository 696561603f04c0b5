"""Recency counterfactual (DESIGN.md §5; MemEye App. "Retrieval Diagnostics", Table "Recency
counterfactual"): keep a run's candidate pool fixed and re-rank it by

    s_i = α·sim_i + (1 − α)·exp(−λ·Δt_i),   λ = 0.02, α ∈ {1.0, 0.7, 0.5},

where sim_i is the logged retrieval similarity and Δt_i the dialogue-round distance between
candidate i and the query (the logged `recency_age`, no normalisation). Then recompute Latest@K,
Latest-Miss, Stale-Dominance and Rank-Inversion on the eligible Y3 items, with paired bootstrap deltas
against α = 1.0 (similarity alone). Re-ranking cannot bring back a latest clue that is not in the
pool, so Latest-Miss only moves when the pool is longer than K.

A candidate pool is re-rankable only when every candidate has a score and an age, the age not below
0 (a distance in rounds: a negative one cannot be right, and −λ·Δt past a float's range had stopped the
report); items that are not are counted and left out, and a run with none is reported as not
re-rankable.

Pure functions: no I/O, no printing.
"""

from __future__ import annotations

import math
from dataclasses import dataclass
from typing import AbstractSet, Hashable, Sequence

import numpy as np

from scorer.metrics.bootstrap import DEFAULT_RESAMPLES, DEFAULT_SEED, PairedCI, paired_diff_cis
from scorer.metrics.evidence import Diagnosis, dedupe, diagnose, tie_ranks
from scorer.model import Retrieved

DEFAULT_LAMBDA = 0.02
DEFAULT_ALPHAS = (1.0, 0.7, 0.5)
BASELINE_ALPHA = 1.0
RECENCY_METRICS = ("latest_clue_recall", "latest_miss", "stale_dominance", "rank_inversion")


# Why a pool cannot be re-ranked, first that holds (the report's `not_reranked` reasons)
EMPTY_POOL, NO_SCORE, NO_AGE = "empty candidate pool", "no similarity score", "no recency age"
NEGATIVE_AGE = "negative recency age"  # a distance in rounds to the question cannot be below 0
NOT_RERANKED = (EMPTY_POOL, NO_SCORE, NO_AGE, NEGATIVE_AGE)


def missing_inputs(entries: Sequence[Retrieved]) -> str | None:
    """Why a pool cannot be re-ranked, or None when it can."""
    if not entries:
        return EMPTY_POOL
    if any(e.score is None or not math.isfinite(e.score) for e in entries):
        return NO_SCORE
    if any(e.recency_age is None or not math.isfinite(e.recency_age) for e in entries):
        return NO_AGE
    if any(e.recency_age < 0 for e in entries):
        return NEGATIVE_AGE
    return None


def recency_score(sim: float, age: float, alpha: float, lam: float = DEFAULT_LAMBDA) -> float:
    return alpha * sim + (1.0 - alpha) * math.exp(-lam * age)


def rerank(entries: Sequence[Retrieved], alpha: float, lam: float = DEFAULT_LAMBDA) -> tuple[Retrieved, ...]:
    """The pool re-ranked by the mixed score (best first); equal scores keep the original order.
    Each returned entry carries its new rank and its mixed score as `score`."""
    if not 0.0 <= alpha <= 1.0:
        raise ValueError(f"alpha must be in [0, 1], got {alpha}")
    pool = dedupe(entries)
    why = missing_inputs(pool)
    if why:
        raise ValueError(f"cannot re-rank: {why}")
    scored = [(recency_score(e.score, e.recency_age, alpha, lam), e.rank, e) for e in pool]
    scored.sort(key=lambda t: (-t[0], t[1]))  # stable on the original rank
    # Retrieved(…) with the new rank and score (what dataclasses.replace gives, a third of its cost)
    return tuple(Retrieved(e.round_id, i, s, e.recency_age) for i, (s, _, e) in enumerate(scored, start=1))


@dataclass(frozen=True)
class RecencyCase:
    """One eligible Y3 item of one run: its candidate pool and gold references."""

    pool: tuple[Retrieved, ...]
    clues: tuple[str, ...]
    latest: str
    stale: AbstractSet[str]
    cluster: Hashable = None


def diagnose_at(case: RecencyCase, alpha: float, k: int, lam: float = DEFAULT_LAMBDA) -> Diagnosis:
    ranked = rerank(case.pool, alpha, lam)
    return diagnose([e.round_id for e in ranked], case.clues, k, case.latest, case.stale,
                    tie_ranks([e.score for e in ranked]))


@dataclass(frozen=True)
class RecencyRow:
    alpha: float
    metric: str
    value: float | None
    n: int
    delta: float | None = None  # vs α = 1.0 (None for the baseline itself)
    ci_low: float | None = None
    ci_high: float | None = None
    n_clusters: int | None = None


@dataclass(frozen=True)
class Pools:
    """The candidate pools of several cases as flat arrays: case i's entries are the next size[i]
    entries, in pool order (deduplicated; every entry with a finite score and a finite age of 0 or
    more: what missing_inputs lets through), each with its similarity, its recency age, and whether
    it is the case's latest clue or a stale round (never both)."""

    size: np.ndarray  # int64, entries per case
    rank: np.ndarray  # int64, each entry's logged rank (breaks equal mixed scores; then pool order)
    sim: np.ndarray  # float64
    age: np.ndarray  # float64
    latest: np.ndarray  # bool
    stale: np.ndarray  # bool
    clusters: Sequence[Hashable]  # one per case

    @property
    def n(self) -> int:
        return len(self.size)

    @classmethod
    def of_cases(cls, cases: Sequence[RecencyCase]) -> Pools:
        pools = [dedupe(c.pool) for c in cases]
        for pool in pools:
            why = missing_inputs(pool)
            if why:
                raise ValueError(f"cannot re-rank: {why}")
        n = sum(map(len, pools))
        entries = [e for p in pools for e in p]
        return cls(
            size=np.fromiter((len(p) for p in pools), dtype=np.int64, count=len(pools)),
            rank=np.fromiter((e.rank for e in entries), dtype=np.int64, count=n),
            sim=np.fromiter((e.score for e in entries), dtype=float, count=n),
            age=np.fromiter((e.recency_age for e in entries), dtype=float, count=n),
            latest=np.fromiter((e.round_id == c.latest for c, p in zip(cases, pools) for e in p), dtype=bool, count=n),
            stale=np.fromiter((e.round_id in c.stale and e.round_id != c.latest for c, p in zip(cases, pools) for e in p),
                              dtype=bool, count=n),
            clusters=[c.cluster for c in cases])


def recency_counterfactual(
    cases: Sequence[RecencyCase],
    k: int,
    alphas: Sequence[float] = DEFAULT_ALPHAS,
    lam: float = DEFAULT_LAMBDA,
    clustered: bool = False,
    resamples: int = DEFAULT_RESAMPLES,
    seed: int = DEFAULT_SEED,
) -> list[RecencyRow]:
    """Per α and metric: the mean over cases, and for α ≠ 1.0 the paired delta against α = 1.0 with
    its percentile bootstrap CI (items resampled, or clusters when `clustered`)."""
    return recency_counterfactuals([cases], k, alphas, lam, clustered, resamples, seed)[0]


def recency_counterfactuals(
    groups: Sequence[Sequence[RecencyCase] | Pools],
    k: int,
    alphas: Sequence[float] = DEFAULT_ALPHAS,
    lam: float = DEFAULT_LAMBDA,
    clustered: bool = False,
    resamples: int = DEFAULT_RESAMPLES,
    seed: int = DEFAULT_SEED,
) -> list[list[RecencyRow]]:
    """recency_counterfactual of every group of cases (e.g. one per run; a group given as its
    cases, or as their Pools), each group's rows equal to its own call's: every paired CI of every
    group comes from one paired_diff_cis call, which shares the draws of all those with as many
    items (or clusters)."""
    alphas = list(dict.fromkeys([BASELINE_ALPHA, *alphas]))  # the baseline always first
    compared = [(a, m) for a in alphas if a != BASELINE_ALPHA for m in RECENCY_METRICS]
    values, pairs = [], []
    for group in groups:
        pools = group if isinstance(group, Pools) else _pools_of(group)
        v = pool_values(pools, k, alphas, lam)
        clusters = list(pools.clusters) if clustered else None
        values.append((v, clusters))
        pairs += [(v[a][m], v[BASELINE_ALPHA][m], clusters) for a, m in compared]
    cis = iter(paired_diff_cis(pairs, resamples=resamples, seed=seed))
    out = []
    for v, clusters in values:
        by_pair = dict(zip(compared, cis))
        rows = []
        for a in alphas:
            for m in RECENCY_METRICS:
                if a == BASELINE_ALPHA:
                    base = v[a][m]
                    mean = float(base.mean()) if base.size else None
                    rows.append(RecencyRow(a, m, mean, int(base.size),
                                           n_clusters=len(set(clusters)) if clusters else None))
                    continue
                ci: PairedCI = by_pair[(a, m)]
                rows.append(RecencyRow(a, m, ci.mean_a, ci.n, ci.estimate, ci.ci_low, ci.ci_high, ci.n_clusters))
        out.append(rows)
    return out


def _pools_of(cases: Sequence[RecencyCase]) -> Pools:
    if any(not c.clues for c in cases):
        raise ValueError("an item needs at least one gold clue to be diagnosed")
    return Pools.of_cases(cases)


def recency_values(
    cases: Sequence[RecencyCase],
    k: int,
    alphas: Sequence[float] = DEFAULT_ALPHAS,
    lam: float = DEFAULT_LAMBDA,
) -> dict[float, dict[str, np.ndarray]]:
    """α → metric → one value per case: what diagnose_at(case, α, k, λ).value(metric) gives (equal,
    tested), for every case and α at once (pool_values of the cases' pools)."""
    _check(k, alphas)
    return pool_values(_pools_of(cases), k, alphas, lam)


def _check(k: int, alphas: Sequence[float]) -> None:
    if k < 1:
        raise ValueError(f"k must be >= 1, got {k}")
    for a in alphas:
        if not 0.0 <= a <= 1.0:
            raise ValueError(f"alpha must be in [0, 1], got {a}")


def pool_values(
    pools: Pools,
    k: int,
    alphas: Sequence[float] = DEFAULT_ALPHAS,
    lam: float = DEFAULT_LAMBDA,
) -> dict[float, dict[str, np.ndarray]]:
    """recency_values of cases given as their Pools. The mixed scores are the same floating-point
    operations as recency_score's (exp from math, as there), the pools sorted by (case, −score,
    logged rank) in one stable lexsort, tie ranks and top-K taken per case from the sorted order."""
    _check(k, alphas)
    n_cases = pools.n
    sizes = pools.size
    n = int(sizes.sum())
    case = np.repeat(np.arange(n_cases), sizes)
    start = np.concatenate([[0], np.cumsum(sizes)[:-1]]) if n_cases else np.zeros(0, dtype=np.int64)
    sim = pools.sim
    decay = np.fromiter((math.exp(-lam * a) for a in pools.age.tolist()), dtype=float, count=n)
    orig = pools.rank
    latest, stale = pools.latest, pools.stale
    out = {}
    for a in alphas:
        score = a * sim + (1.0 - a) * decay
        order = np.lexsort((orig, -score, case))  # stable: equal keys keep the pool order, as rerank
        s, c = score[order], case[order]
        pos = np.arange(n) - start[c]  # 0-based position in the re-ranked pool
        new = np.ones(n, dtype=bool)
        new[1:] = (s[1:] != s[:-1]) | (c[1:] != c[:-1])  # tie_ranks: equal to the previous shares its rank
        rank = np.maximum.accumulate(np.where(new, np.arange(n), 0)) - start[c] + 1
        top = pos < k
        lat, st = latest[order] & top, stale[order] & top
        latest_rank = np.full(n_cases, np.inf)
        latest_rank[c[lat]] = rank[lat]
        best_stale = np.full(n_cases, np.inf)
        np.minimum.at(best_stale, c[st], rank[st])
        present = np.isfinite(latest_rank)
        has_stale = np.isfinite(best_stale)
        above = present & has_stale & (best_stale < latest_rank)
        out[a] = {"latest_clue_recall": present.astype(float), "latest_miss": (~present).astype(float),
                  "stale_dominance": (above | (~present & has_stale)).astype(float),
                  "rank_inversion": above.astype(float)}
    return out


def _values(diags: list[Diagnosis]) -> dict[str, np.ndarray]:
    return {m: np.array([d.value(m) for d in diags], dtype=float) for m in RECENCY_METRICS}
