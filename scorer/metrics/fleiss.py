"""Fleiss' κ for three or more raters on nominal categories (Fleiss 1971), with a vectorised
percentile bootstrap CI over items.

With N items, each rated by the same number m of raters, c_ij = how many raters put item i in
category j: P_i = (Σ_j c_ij² − m) / (m(m − 1)) (the share of agreeing rater pairs on item i),
P̄ = mean P_i, p_j = Σ_i c_ij / (N m), P_e = Σ_j p_j², κ = (P̄ − P_e) / (1 − P_e) — what
statsmodels' `fleiss_kappa` computes from the same counts. κ is undefined (None with the reason)
when P_e = 1: every rating in one category.

The formula needs the same number of ratings on every item. The input is a raters × items table
(None/NaN = no rating, as for Krippendorff's α): only items that every rater rated are used (`n`);
items some but not all raters rated are left out and counted (`excluded`); items nobody rated do
not count at all. Krippendorff's α, which allows missing ratings, is the coefficient to report
beside it over all items.

No analytic CI: the Fleiss, Nee & Landis (1979) standard error holds only under κ = 0 (a test of
no agreement, not an interval), so the interval is the bootstrap over items only.

Pure functions: no I/O, no printing.
"""

from __future__ import annotations

from collections.abc import Hashable, Sequence
from dataclasses import dataclass

import numpy as np

from scorer.metrics.constants import DEFAULT_RESAMPLES, DEFAULT_SEED
from scorer.metrics.resample import MAX_CELLS, percentile_ci, resample_code_counts
from scorer.metrics.kappa import KappaBootstrap, infer_labels, is_missing


@dataclass(frozen=True)
class FleissResult:
    """Fleiss' κ over the `n` items every one of `raters` raters rated. `observed` = P̄ (mean
    share of agreeing rater pairs), `expected` = P_e; `counts[j]` = ratings in labels[j]."""

    kappa: float | None
    observed: float | None
    expected: float | None
    n: int
    raters: int
    excluded: int  # items rated by some but not all raters (left out)
    labels: tuple
    counts: tuple[int, ...]
    undefined_reason: str | None = None


def rating_counts(reliability_data: Sequence[Sequence] | np.ndarray,
                  labels: Sequence[Hashable] | None = None) -> tuple[np.ndarray, tuple, int, int]:
    """(items × categories counts over the items every rater rated, labels, raters, excluded).
    A rating outside `labels` is an error, never dropped silently."""
    rows = [list(r) for r in reliability_data]
    if len({len(r) for r in rows}) > 1:
        raise ValueError("every rater's row must cover the same items (use None for missing)")
    m = len(rows)
    n_items = len(rows[0]) if rows else 0
    present = np.array([[not is_missing(v) for v in r] for r in rows], dtype=bool).reshape(m, n_items)
    rated = present.sum(axis=0)
    complete = np.flatnonzero(rated == m) if m else np.zeros(0, dtype=np.int64)
    excluded = int(((rated > 0) & (rated < m)).sum())
    values = [rows[r][i] for r in range(m) for i in complete]
    labels = infer_labels(values) if labels is None else tuple(labels)
    pos = {lab: j for j, lab in enumerate(labels)}
    if len(pos) != len(labels):
        raise ValueError(f"labels contain duplicates: {labels!r}")
    k = len(labels)
    counts = np.zeros((len(complete), k), dtype=np.int64)
    for r in range(m):
        for row_i, i in enumerate(complete):
            try:
                counts[row_i, pos[rows[r][i]]] += 1
            except KeyError:
                raise ValueError(f"rating {rows[r][i]!r} is not among the labels {labels!r}") from None
    return counts, labels, m, excluded


def fleiss_from_counts(counts: np.ndarray, raters: int) -> tuple[float | None, float | None, float | None]:
    """(κ, P̄, P_e) from items × categories counts with `raters` ratings per item; κ None when
    P_e = 1. Integer arithmetic up to the last division, so the P_e = 1 test is exact."""
    counts = np.asarray(counts, dtype=np.int64)
    n, m = counts.shape[0], int(raters)
    if n == 0 or m < 2:
        return None, None, None
    totals = counts.sum(axis=0)
    nm = n * m
    agree = int((counts * counts).sum()) - nm  # Σ_i (Σ_j c_ij² − m): agreeing ordered pairs
    s = int((totals * totals).sum())
    observed = agree / (n * m * (m - 1))
    expected = s / (nm * nm)
    if s == nm * nm:
        return None, observed, 1.0
    # κ = (P̄ − P_e)/(1 − P_e), both terms over (N m)²
    return (agree * nm / (m - 1) - s) / (nm * nm - s), observed, expected


def fleiss_kappa(reliability_data: Sequence[Sequence] | np.ndarray,
                 labels: Sequence[Hashable] | None = None) -> FleissResult:
    """Fleiss' κ of a raters × items table (None/NaN = missing) over the items every rater rated."""
    counts, labels, m, excluded = rating_counts(reliability_data, labels)
    totals = tuple(int(v) for v in counts.sum(axis=0))
    base = {"n": counts.shape[0], "raters": m, "excluded": excluded, "labels": labels, "counts": totals}
    if m < 2:
        return FleissResult(None, None, None, undefined_reason="Fleiss' κ needs at least two raters", **base)
    if counts.shape[0] == 0:
        why = "no item was rated by every rater" if excluded else "no ratings"
        return FleissResult(None, None, None, undefined_reason=why, **base)
    kappa, observed, expected = fleiss_from_counts(counts, m)
    if kappa is None:
        only = labels[int(np.argmax(counts.sum(axis=0)))]
        why = (f"P_e = 1: all {counts.shape[0] * m} ratings are {only!r}, so chance agreement is already "
               "total and κ = (P̄ − P_e)/(1 − P_e) is 0/0")
        return FleissResult(None, observed, expected, undefined_reason=why, **base)
    return FleissResult(kappa, observed, expected, **base)


def fleiss_bootstrap_ci(
    reliability_data: Sequence[Sequence] | np.ndarray,
    labels: Sequence[Hashable] | None = None,
    n_resamples: int = DEFAULT_RESAMPLES,
    seed: int = DEFAULT_SEED,
    confidence: float = 0.95,
    max_cells: int = MAX_CELLS,
) -> KappaBootstrap:
    """Percentile bootstrap CI of Fleiss' κ, resampling the items every rater rated (the draws of
    scorer.metrics.bootstrap, shared by every CI over as many items). Resamples with all ratings in
    one category (P_e = 1) are dropped and counted."""
    counts, labels, m, _ = rating_counts(reliability_data, labels)
    n = counts.shape[0]
    point = fleiss_kappa(reliability_data, labels)
    base = {"n": n, "resamples": n_resamples, "seed": seed, "weights": None, "confidence": confidence}
    if n == 0 or m < 2:
        return KappaBootstrap(point.kappa, None, None, used=0, dropped=0, undefined_reason=point.undefined_reason,
                              **base)
    nm = n * m
    # Items with the same category counts are interchangeable: resample their pattern (few: the
    # ways m ratings fall into k categories) and read each resample's sums from the patterns.
    patterns, inverse = np.unique(counts, axis=0, return_inverse=True)
    per_pattern = ((patterns * patterns).sum(axis=1) - m).astype(float)  # agreeing ordered pairs
    pf = patterns.astype(float)
    parts = []
    for w in resample_code_counts(np.asarray(inverse).reshape(-1), len(patterns), n_resamples, seed, max_cells):
        agree = w @ per_pattern  # exact small integers
        totals = w @ pf
        s = (totals * totals).sum(axis=1)
        denom = nm * nm - s
        with np.errstate(divide="ignore", invalid="ignore"):
            parts.append(np.where(denom > 0, (agree * nm / (m - 1) - s) / denom, np.nan))
    dist = np.concatenate(parts)
    ok = dist[np.isfinite(dist)]
    dropped = int(dist.size - ok.size)
    if ok.size == 0:
        reason = point.undefined_reason or "κ is undefined (P_e = 1) on every resample"
        return KappaBootstrap(point.kappa, None, None, used=0, dropped=dropped, undefined_reason=reason, **base)
    low, high = percentile_ci(ok, confidence)
    return KappaBootstrap(point.kappa, low, high, used=int(ok.size), dropped=dropped,
                          undefined_reason=point.undefined_reason, **base)
