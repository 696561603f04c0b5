"""Cohen's κ for two raters: unweighted, linear and quadratic weighted, with the analytic SE and
CI exactly as statsmodels' `cohens_kappa` computes them, and a vectorised bootstrap CI.

κ = (p_o − p_e) / (1 − p_e). With weights, p_o and p_e are the weighted agreements
1 − Σ w_ij p_ij and 1 − Σ w_ij e_ij, w the disagreement weights (0 on the diagonal, 1 at the
farthest pair): the same κ as scikit-learn's `cohen_kappa_score`. κ is undefined when p_e = 1
(all ratings from both raters in one category): reported as None with the reason, never 0 or NaN.

Public through `scorer.metrics.agreement`. Pure functions: no I/O, no printing.
"""

from __future__ import annotations

import math
from collections.abc import Hashable, Sequence
from dataclasses import dataclass
from statistics import NormalDist

import numpy as np

from scorer.metrics.bootstrap import (
    DEFAULT_RESAMPLES,
    DEFAULT_SEED,
    MAX_CELLS,
    percentile_ci,
    resample_counts,
)

WEIGHTS = (None, "linear", "quadratic")
Z95 = NormalDist().inv_cdf(0.975)  # statsmodels: stats.norm.isf(0.025)


@dataclass(frozen=True)
class KappaResult:
    """Cohen's κ; `confusion[i][j]` counts items rater a put in labels[i] and rater b in labels[j].
    `n` counts items rated by both (`n_missing` pairs with a missing rating were left out).
    The CI is statsmodels' κ ± 1.96·se, not clipped to [−1, 1] (clip when displaying)."""

    kappa: float | None
    se: float | None
    ci_low: float | None
    ci_high: float | None
    observed: float | None
    expected: float | None
    n: int
    labels: tuple
    confusion: tuple[tuple[int, ...], ...]
    weights: str | None = None
    undefined_reason: str | None = None
    n_missing: int = 0


@dataclass(frozen=True)
class KappaBootstrap:
    """Percentile bootstrap CI of κ over items. Resamples where κ is undefined (p_e = 1) are
    dropped and counted in `dropped`; `used` = resamples − dropped."""

    kappa: float | None
    ci_low: float | None
    ci_high: float | None
    n: int
    resamples: int
    used: int
    dropped: int
    seed: int
    weights: str | None = None
    confidence: float = 0.95
    undefined_reason: str | None = None


def is_missing(v) -> bool:
    """None, NaN and pandas' NA count as missing ratings."""
    if v is None:
        return True
    if isinstance(v, (float, np.floating)):
        return math.isnan(v)
    return type(v).__name__ in ("NAType", "NaTType")  # pandas' missing markers, without importing pandas


def paired_ratings(a: Sequence, b: Sequence) -> tuple[list, list, int]:
    """Drop pairs where either rating is missing; return the kept pairs and how many were dropped."""
    a, b = list(a), list(b)
    if len(a) != len(b):
        raise ValueError(f"raters rated different numbers of items: {len(a)} vs {len(b)}")
    keep = [(x, y) for x, y in zip(a, b) if not is_missing(x) and not is_missing(y)]
    return [x for x, _ in keep], [y for _, y in keep], len(a) - len(keep)


def infer_labels(*ratings: Sequence) -> tuple:
    """Categories in sorted order when they sort (numbers, strings), else in order of appearance."""
    seen = list(dict.fromkeys(v for r in ratings for v in r))
    try:
        return tuple(sorted(seen))
    except TypeError:
        return tuple(seen)


def encode(a: Sequence, b: Sequence, labels: Sequence | None) -> tuple[np.ndarray, np.ndarray, tuple]:
    """Map ratings to label positions; a rating outside `labels` is an error, not silently dropped."""
    labels = infer_labels(a, b) if labels is None else tuple(labels)
    pos = {lab: i for i, lab in enumerate(labels)}
    if len(pos) != len(labels):
        raise ValueError(f"labels contain duplicates: {labels!r}")
    try:
        ia = np.fromiter((pos[v] for v in a), dtype=np.int64, count=len(a))
        ib = np.fromiter((pos[v] for v in b), dtype=np.int64, count=len(b))
    except KeyError as err:
        raise ValueError(f"rating {err.args[0]!r} is not among the labels {labels!r}") from None
    return ia, ib, labels


def confusion_matrix(a: Sequence, b: Sequence, labels: Sequence | None = None) -> np.ndarray:
    """k × k counts, rows rater a, columns rater b, in `labels` order (missing pairs dropped)."""
    a, b, _ = paired_ratings(a, b)
    ia, ib, labels = encode(a, b, labels)
    k = len(labels)
    return np.bincount(ia * k + ib, minlength=k * k).reshape(k, k)


def observed_agreement(a: Sequence, b: Sequence) -> float | None:
    """Share of items (rated by both) on which the raters agree; None when there are none."""
    a, b, _ = paired_ratings(a, b)
    return sum(x == y for x, y in zip(a, b)) / len(a) if a else None


def disagreement_weights(k: int, weights: str | None) -> np.ndarray:
    """Integer disagreement weights (unnormalised: κ is invariant to their scale)."""
    if weights not in WEIGHTS:
        raise ValueError(f"weights must be None, 'linear' or 'quadratic', got {weights!r}")
    i = np.arange(k)
    d = np.abs(i[:, None] - i[None, :])
    if weights is None:
        return (d > 0).astype(np.int64)
    return d if weights == "linear" else d * d


def cohen_kappa(
    a: Sequence[Hashable],
    b: Sequence[Hashable],
    weights: str | None = None,
    labels: Sequence[Hashable] | None = None,
) -> KappaResult:
    """Cohen's κ of two raters over the same items (None/NaN ratings drop that item).

    For weighted κ the categories are ordered as `labels` (default: sorted), and the weights use
    their positions, as scikit-learn and statsmodels do."""
    a, b, missing = paired_ratings(a, b)
    if weights is not None and labels is None:
        try:
            sorted(set(a) | set(b))
        except TypeError:
            raise ValueError("weighted κ needs ordered categories: pass labels in order") from None
    ia, ib, labels = encode(a, b, labels)
    k, n = len(labels), len(ia)
    table = np.bincount(ia * k + ib, minlength=k * k).reshape(k, k)
    conf = tuple(tuple(int(v) for v in row) for row in table)
    base = {"n": n, "labels": labels, "confusion": conf, "weights": weights, "n_missing": missing}
    d = disagreement_weights(k, weights)
    if n == 0:
        return KappaResult(None, None, None, None, None, None, undefined_reason="no items rated by both raters", **base)
    rows, cols = table.sum(1), table.sum(0)
    obs_dis = int((d * table).sum())  # exact integers: the p_e = 1 test is exact
    exp_dis = int(rows @ d @ cols)
    observed = 1 - obs_dis / (n * d.max()) if k > 1 else 1.0
    if exp_dis == 0:
        return KappaResult(None, None, None, None, observed, 1.0, undefined_reason=_why_undefined(labels, rows, n), **base)
    expected = 1 - exp_dis / (n * n * d.max())
    kappa = 1 - n * obs_dis / exp_dis
    var = _variance(table, kappa, weights, d)
    se = float(np.sqrt(max(var, 0.0)))  # a rounding-level negative variance means 0
    return KappaResult(kappa, se, kappa - Z95 * se, kappa + Z95 * se, observed, expected, **base)


def _why_undefined(labels: tuple, rows: np.ndarray, n: int) -> str:
    only = labels[int(np.argmax(rows))]
    return (f"p_e = 1: both raters put all {n} items in the single category {only!r}, so chance "
            "agreement is already total and κ = (p_o − p_e)/(1 − p_e) is 0/0")


def _variance(table: np.ndarray, kappa: float, weights: str | None, d: np.ndarray) -> float:
    """Asymptotic variance of κ, transcribed from statsmodels.stats.inter_rater.cohens_kappa
    (Fleiss, Cohen & Everitt for the simple κ; the SAS-manual formula for weighted κ)."""
    nobs = table.sum()
    probs = table / nobs
    freq_row, freq_col = table.sum(1) / nobs, table.sum(0) / nobs
    if weights is None:
        p_e = float((freq_row * freq_col).sum())
        term_a = (np.diag(probs) * (1 - (freq_row + freq_col) * (1 - kappa)) ** 2).sum()
        term_b = probs * (freq_col[:, None] + freq_row) ** 2
        np.fill_diagonal(term_b, 0)
        term_b = (1 - kappa) ** 2 * term_b.sum()
        term_c = (kappa - p_e * (1 - kappa)) ** 2
        return float((term_a + term_b - term_c) / (1 - p_e) ** 2 / nobs)
    w = 1.0 - d / d.max()  # agreement weights, 1 on the diagonal
    w_row = (freq_col * w).sum(1)
    w_col = (freq_row[:, None] * w).sum(0)
    agree_wexp = (w * freq_col * freq_row[:, None]).sum()
    term_a = probs * (w - (w_col + w_row[:, None]) * (1 - kappa)) ** 2
    var = term_a.sum() - (kappa - agree_wexp * (1 - kappa)) ** 2
    return float(var / ((1 - agree_wexp) ** 2 * nobs))


def kappa_bootstrap_ci(
    a: Sequence[Hashable],
    b: Sequence[Hashable],
    weights: str | None = None,
    labels: Sequence[Hashable] | None = None,
    n_resamples: int = DEFAULT_RESAMPLES,
    seed: int = DEFAULT_SEED,
    confidence: float = 0.95,
    max_cells: int = MAX_CELLS,
) -> KappaBootstrap:
    """Percentile bootstrap CI of κ, resampling items. Every resample's k × k table is its item
    multiplicities (scorer.metrics.bootstrap.resample_counts, shared by every CI over n items)
    times each item's one-hot cell: one matrix product, no Python loop per resample."""
    a, b, _ = paired_ratings(a, b)
    ia, ib, labels = encode(a, b, labels)
    k, n = len(labels), len(ia)
    point = cohen_kappa(a, b, weights, labels)
    base = {"n": n, "resamples": n_resamples, "seed": seed, "weights": weights, "confidence": confidence}
    if n == 0:
        return KappaBootstrap(None, None, None, used=0, dropped=0, undefined_reason=point.undefined_reason, **base)
    d = disagreement_weights(k, weights).astype(float)
    cells = ia * k + ib
    kk = k * k
    parts = []
    # Each chunk also holds a (rows, k·k) table: budget for both.
    onehot = np.zeros((n, kk))
    onehot[np.arange(n), cells] = 1.0
    # A resample's table is its item multiplicities times each item's cell: exact small integers.
    for w in resample_counts(n, n_resamples, seed, max(1, max_cells * n // (n + kk)), dtype=float):
        rows = w.shape[0]
        t = (w @ onehot).reshape(rows, k, k)
        obs_dis = (t * d).sum(axis=(1, 2))
        exp_dis = np.einsum("ri,ij,rj->r", t.sum(2), d, t.sum(1))
        with np.errstate(divide="ignore", invalid="ignore"):
            kap = np.where(exp_dis > 0, 1 - n * obs_dis / exp_dis, np.nan)
        parts.append(kap)
    dist = np.concatenate(parts)
    ok = dist[np.isfinite(dist)]
    dropped = int(dist.size - ok.size)
    if ok.size == 0:
        reason = point.undefined_reason or "κ is undefined (p_e = 1) on every resample"
        return KappaBootstrap(point.kappa, None, None, used=0, dropped=dropped, undefined_reason=reason, **base)
    low, high = percentile_ci(ok, confidence)
    return KappaBootstrap(point.kappa, low, high, used=int(ok.size), dropped=dropped,
                          undefined_reason=point.undefined_reason, **base)
