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

from scorer.metrics.constants import DEFAULT_RESAMPLES, DEFAULT_SEED
from scorer.metrics.resample import MAX_CELLS, percentile_ci, resample_code_counts

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
        return float(_difference(term_a + term_b, term_c) / (1 - p_e) ** 2 / nobs)
    w = 1.0 - d / d.max()  # agreement weights, 1 on the diagonal
    w_row = (freq_col * w).sum(1)
    w_col = (freq_row[:, None] * w).sum(0)
    agree_wexp = (w * freq_col * freq_row[:, None]).sum()
    term_a = probs * (w - (w_col + w_row[:, None]) * (1 - kappa)) ** 2
    var = _difference(term_a.sum(), (kappa - agree_wexp * (1 - kappa)) ** 2)
    return float(var / ((1 - agree_wexp) ** 2 * nobs))


def _difference(plus: float, minus: float) -> float:
    """plus − minus, or 0 when it is rounding noise: where the true variance is 0 (e.g. κ = 0 on a
    table whose every disagreement is equally far), float sums leave ~1e-17 and its square root a
    spurious SE of ~1e-8 that even changes when the raters are swapped (found by hypothesis)."""
    diff = float(plus - minus)
    return 0.0 if abs(diff) <= 1e-12 * max(abs(float(plus)), abs(float(minus))) else diff


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
    """Percentile bootstrap CI of κ, resampling items. Every resample's k × k table counts its
    drawn items per cell (scorer.metrics.resample.resample_code_counts, the draws every CI over n
    items shares): vectorised, no Python loop per resample."""
    return kappa_bootstrap_cis(a, b, (weights,), labels, n_resamples, seed, confidence, max_cells)[0]


def kappa_bootstrap_cis(
    a: Sequence[Hashable],
    b: Sequence[Hashable],
    weights: Sequence[str | None] = WEIGHTS,
    labels: Sequence[Hashable] | None = None,
    n_resamples: int = DEFAULT_RESAMPLES,
    seed: int = DEFAULT_SEED,
    confidence: float = 0.95,
    max_cells: int = MAX_CELLS,
) -> tuple[KappaBootstrap, ...]:
    """`kappa_bootstrap_ci` for several weightings at once: each resample's table is built once
    and every weighting read from it (the same values as one call per weighting)."""
    a, b, _ = paired_ratings(a, b)
    ia, ib, labels = encode(a, b, labels)
    k, n = len(labels), len(ia)
    points = [cohen_kappa(a, b, w, labels) for w in weights]
    if n == 0:
        return tuple(KappaBootstrap(None, None, None, n=0, resamples=n_resamples, used=0, dropped=0, seed=seed,
                                    weights=w, confidence=confidence, undefined_reason=p.undefined_reason)
                     for w, p in zip(weights, points))
    ds = [disagreement_weights(k, w).astype(float) for w in weights]
    cells = ia * k + ib
    kk = k * k
    parts: list[list[np.ndarray]] = [[] for _ in weights]
    # A resample's table counts the drawn items in each cell: exact small integers, and so are the
    # disagreement sums below (in any order: the κ values do not depend on it).
    for flat in resample_code_counts(cells, kk, n_resamples, seed, max_cells):
        rows = flat.shape[0]
        t = flat.reshape(rows, k, k)
        row_sums, col_sums = t.sum(2), t.sum(1)
        for d, out in zip(ds, parts):
            obs_dis = flat @ d.ravel()
            exp_dis = ((row_sums @ d) * col_sums).sum(1)
            with np.errstate(divide="ignore", invalid="ignore"):
                out.append(np.where(exp_dis > 0, 1 - n * obs_dis / exp_dis, np.nan))
    found = []
    for wt, point, chunks in zip(weights, points, parts):
        base = {"n": n, "resamples": n_resamples, "seed": seed, "weights": wt, "confidence": confidence}
        dist = np.concatenate(chunks)
        ok = dist[np.isfinite(dist)]
        dropped = int(dist.size - ok.size)
        if ok.size == 0:
            reason = point.undefined_reason or "κ is undefined (p_e = 1) on every resample"
            found.append(KappaBootstrap(point.kappa, None, None, used=0, dropped=dropped, undefined_reason=reason,
                                        **base))
            continue
        low, high = percentile_ci(ok, confidence)
        found.append(KappaBootstrap(point.kappa, low, high, used=int(ok.size), dropped=dropped,
                                    undefined_reason=point.undefined_reason, **base))
    return tuple(found)


@dataclass(frozen=True)
class OrdinalKappa:
    """One weighting of κ between two raters on a shared ordinal scale: the point estimate with
    its analytic SE/CI (`result`, statsmodels' formulas) and its percentile bootstrap CI."""

    weights: str | None
    result: KappaResult
    bootstrap: KappaBootstrap


def ordinal_kappas(
    a: Sequence[Hashable],
    b: Sequence[Hashable],
    labels: Sequence[Hashable],
    n_resamples: int = DEFAULT_RESAMPLES,
    seed: int = DEFAULT_SEED,
    weights: Sequence[str | None] = WEIGHTS,
) -> tuple[OrdinalKappa, ...]:
    """Unweighted, linear and quadratic κ of two raters whose ratings lie on the ordered scale
    `labels` (lowest first; given explicitly, so that a level neither rater used still counts in
    the weights, as scikit-learn's `labels=` and a statsmodels table with an empty row do). Every
    weighting's bootstrap uses the same item draws."""
    labels = tuple(labels)
    boots = kappa_bootstrap_cis(a, b, tuple(weights), labels, n_resamples=n_resamples, seed=seed)
    return tuple(OrdinalKappa(w, cohen_kappa(a, b, w, labels), bt) for w, bt in zip(weights, boots))
