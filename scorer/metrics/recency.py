"""Recency counterfactual (DESIGN.md §5; MemEye App. "Retrieval Diagnostics", Table "Recency
counterfactual"): keep a run's candidate pool fixed and re-rank it by

    s_i = α·sim_i + (1 − α)·exp(−λ·Δt_i),   λ = 0.02, α ∈ {1.0, 0.7, 0.5},

where sim_i is the logged retrieval similarity and Δt_i the dialogue-round distance between
candidate i and the query (the logged `recency_age`, no normalisation). Then recompute Latest@K,
Latest-Miss, Stale-Dominance and Rank-Inversion on the eligible Y3 items, with paired bootstrap deltas
against α = 1.0 (similarity alone). Re-ranking cannot bring back a latest clue that is not in the
pool, so Latest-Miss only moves when the pool is longer than K.

A candidate pool is re-rankable only when every candidate has a score and an age; items that are not
are counted and left out, and a run with none is reported as not re-rankable.

Pure functions: no I/O, no printing.
"""

from __future__ import annotations

import math
from dataclasses import dataclass
from typing import AbstractSet, Hashable, Sequence

import numpy as np

from scorer.metrics.bootstrap import DEFAULT_RESAMPLES, DEFAULT_SEED, PairedCI, paired_diff_ci
from scorer.metrics.evidence import Diagnosis, dedupe, diagnose, tie_ranks
from scorer.model import Retrieved

DEFAULT_LAMBDA = 0.02
DEFAULT_ALPHAS = (1.0, 0.7, 0.5)
BASELINE_ALPHA = 1.0
RECENCY_METRICS = ("latest_clue_recall", "latest_miss", "stale_dominance", "rank_inversion")


def missing_inputs(entries: Sequence[Retrieved]) -> str | None:
    """Why a pool cannot be re-ranked, or None when it can."""
    if not entries:
        return "empty candidate pool"
    if any(e.score is None or not math.isfinite(e.score) for e in entries):
        return "no similarity score"
    if any(e.recency_age is None or not math.isfinite(e.recency_age) for e in entries):
        return "no recency age"
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
    alphas = list(dict.fromkeys([BASELINE_ALPHA, *alphas]))  # the baseline always first
    values = {a: _values([diagnose_at(c, a, k, lam) for c in cases]) for a in alphas}
    clusters = [c.cluster for c in cases] if clustered else None
    rows = []
    for a in alphas:
        for m in RECENCY_METRICS:
            v = values[a][m]
            if a == BASELINE_ALPHA:
                mean = float(v.mean()) if v.size else None
                rows.append(RecencyRow(a, m, mean, int(v.size), n_clusters=len(set(clusters)) if clusters else None))
                continue
            ci: PairedCI = paired_diff_ci(v, values[BASELINE_ALPHA][m], clusters, resamples=resamples, seed=seed)
            rows.append(RecencyRow(a, m, ci.mean_a, ci.n, ci.estimate, ci.ci_low, ci.ci_high, ci.n_clusters))
    return rows


def _values(diags: list[Diagnosis]) -> dict[str, np.ndarray]:
    return {m: np.array([d.value(m) for d in diags], dtype=float) for m in RECENCY_METRICS}
