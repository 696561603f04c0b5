"""Planning an agreement study (issue 16): how many rated pairs give Cohen's κ a 95% CI no wider
than ±W, by statsmodels' analytic SE (`cohens_kappa`, the formula scorer.metrics.kappa transcribes).

The expected table. Two raters, two categories (accept / reject), the same marginal share p of
"accept" for both (the prevalence). Chance agreement is p_e = p² + (1 − p)², so a κ means an
observed agreement p_o = κ(1 − p_e) + p_e, split evenly between the two kinds of disagreement:

    both accept   p − (1 − p_o)/2        one accepts, the other rejects   (1 − p_o)/2 each
    both reject   (1 − p) − (1 − p_o)/2

(a κ so low that a cell would be negative is impossible at that prevalence and refused). The
analytic variance of κ over n pairs is V/n, V the variance of that table of proportions at n = 1,
so the expected half-width at n is z·√(V/n) and the pairs needed are the least n with
z·√(V/n) ≤ W: ⌈z²V/W²⌉. The same V of an observed table (κ and marginals so far) gives the live
"pairs to go" of a running study.

Pure functions: no I/O, no printing.
"""

from __future__ import annotations

import math
from dataclasses import dataclass

import numpy as np

from scorer.metrics.constants import DEFAULT_PREVALENCE, DEFAULT_RATERS  # noqa: F401 (re-exported)
from scorer.metrics.kappa import Z95, _variance, disagreement_weights


@dataclass(frozen=True)
class KappaPlan:
    kappa: float
    prevalence: float
    half_width: float
    pairs: int  # the least n whose expected half-width is at most `half_width`
    expected_half_width: float  # at `pairs`
    table: tuple[tuple[float, float], tuple[float, float]]  # expected proportions, accept first
    variance_per_pair: float  # V: var(κ) = V / n


def unit_variance(table: np.ndarray) -> tuple[float, float]:
    """(κ, V) of a 2×2 (or k×k) table of counts or proportions: var(κ̂) = V/n over n pairs, by
    statsmodels' formula. ValueError when κ is undefined (p_e = 1)."""
    t = np.asarray(table, dtype=float)
    p = t / t.sum()
    rows, cols = p.sum(1), p.sum(0)
    p_e = float(rows @ cols)
    if p_e >= 1.0:
        raise ValueError("κ is undefined on this table (p_e = 1)")
    kappa = (float(np.trace(p)) - p_e) / (1 - p_e)
    return kappa, _variance(p, kappa, None, disagreement_weights(len(p), None))


def expected_table(kappa: float, prevalence: float) -> np.ndarray:
    """The 2×2 table of proportions (accept first) of two raters with equal marginals `prevalence`
    whose κ is `kappa`. ValueError when no such table exists."""
    if not 0.0 < prevalence < 1.0:
        raise ValueError(f"the prevalence must lie strictly between 0 and 1, got {prevalence:g}")
    if not -1.0 < kappa < 1.0:
        raise ValueError(f"plan for a κ strictly between −1 and 1, got {kappa:g} (at κ = 1 the analytic SE "
                         "is 0 for every n)")
    p_e = prevalence ** 2 + (1 - prevalence) ** 2
    p_o = kappa * (1 - p_e) + p_e
    off = (1 - p_o) / 2
    a, d = prevalence - off, (1 - prevalence) - off
    if a < -1e-12 or d < -1e-12:
        lowest = (1 - 2 * min(prevalence, 1 - prevalence) - p_e) / (1 - p_e)
        raise ValueError(f"κ {kappa:g} is impossible with equal marginals at prevalence {prevalence:g} "
                         f"(the lowest is {lowest:.4f})")
    return np.array([[max(a, 0.0), off], [off, max(d, 0.0)]])


MAX_PAIRS = 10**9  # a plan beyond this many pairs is refused: it is no study anyone runs


def pairs_for_width(variance_per_pair: float, half_width: float, z: float = Z95) -> int:
    """The least n ≥ 1 with z·√(V/n) ≤ half_width (a half-width in (0, 1); one that would take
    more than MAX_PAIRS pairs is refused, not computed)."""
    if not 0 < half_width < 1:  # NaN and inf too
        raise ValueError(f"the half-width must lie between 0 and 1, got {half_width:g}")
    wanted = z * z * variance_per_pair / half_width / half_width  # inf, not an overflow, for a tiny width
    if not wanted <= MAX_PAIRS:
        takes = (f"takes about {wanted:.3g} pairs, more than {MAX_PAIRS:,}" if math.isfinite(wanted)
                 else f"takes more pairs than {MAX_PAIRS:,}")
        raise ValueError(f"a half-width of {half_width:g} {takes} (no study is that large): ask for a wider one")
    n = max(1, math.ceil(wanted))
    while n > 1 and z * math.sqrt(variance_per_pair / (n - 1)) <= half_width:  # float rounding, down
        n -= 1
    while z * math.sqrt(variance_per_pair / n) > half_width:  # and up
        n += 1
    return n


def plan_kappa(kappa: float, half_width: float, prevalence: float = 0.5) -> KappaPlan:
    """The pairs an agreement study needs to show κ ± half_width (95%) at that κ and prevalence."""
    table = expected_table(kappa, prevalence)
    _, v = unit_variance(table)
    n = pairs_for_width(v, half_width)
    return KappaPlan(kappa, prevalence, half_width, n, Z95 * math.sqrt(v / n),
                     ((float(table[0, 0]), float(table[0, 1])), (float(table[1, 0]), float(table[1, 1]))), v)


def pairs_to_go(confusion, half_width: float) -> int | None:
    """From the table observed so far (counts), about how many more pairs bring the analytic 95%
    half-width down to `half_width`, if κ and the marginals stay as they are; None when κ is
    undefined so far or its analytic SE is 0 (no disagreement yet)."""
    t = np.asarray(confusion, dtype=float)
    n = int(round(t.sum()))
    if n == 0:
        return None
    try:
        _, v = unit_variance(t)
    except ValueError:
        return None
    if v <= 0:  # perfect agreement so far: the analytic SE is 0 whatever n, and says nothing of n
        return None
    return max(0, pairs_for_width(v, half_width) - n)
