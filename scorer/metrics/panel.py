"""Agreement within a panel of LLM judges scoring the same rows (MOSAIC checks its judge this way).

Per pair of judges: quadratic-weighted Cohen's κ over the score levels, Spearman's ρ, the
exact-level rate and the same-band rate; across the panel: Krippendorff's α (ordinal). Bands:
{0, 0.25} = low, {0.5} = mid, {0.75, 1} = high (with three levels: 0 low, 0.5 mid, 1 high), so
"same band" forgives a quarter-step between neighbours but never a pass/fail flip across 0.5.

Judge-vs-human κ (judge ≥ 0.5 → accept) is the scorer's agreement section; the panel median it
needs comes from `panel_median`. Every result carries its n. Pure functions: no I/O, no printing.
"""

from __future__ import annotations

import statistics
from dataclasses import dataclass
from itertools import combinations
from typing import Mapping, Sequence

from scorer.metrics.agreement import (
    JUDGE_LEVELS,
    AlphaResult,
    KappaResult,
    SpearmanResult,
    cohen_kappa,
    is_missing,
    krippendorff_alpha,
    paired_ratings,
    spearman,
)

BANDS = {0.0: "low", 0.25: "low", 0.5: "mid", 0.75: "high", 1.0: "high"}


@dataclass(frozen=True)
class Rate:
    value: float | None  # None when n = 0
    n: int


@dataclass(frozen=True)
class PairAgreement:
    judge_a: str
    judge_b: str
    n: int  # rows both judges scored
    kappa: KappaResult  # quadratic-weighted
    spearman: SpearmanResult
    exact: Rate
    same_band: Rate


@dataclass(frozen=True)
class PanelAgreement:
    judges: tuple[str, ...]
    n_rows: int  # rows in the table (some may lack a score from some judges)
    pairs: tuple[PairAgreement, ...]
    alpha: AlphaResult  # ordinal, over rows with at least two scores


def band(score: float) -> str:
    """'low' | 'mid' | 'high' for a score on the judge levels; ValueError off them."""
    for level, name in BANDS.items():
        if abs(float(score) - level) < 1e-9:
            return name
    raise ValueError(f"score {score!r} is not a judge level {tuple(BANDS)}")


def _snap(v: float, levels: Sequence[float]) -> float:
    for lev in levels:
        if abs(float(v) - lev) < 1e-9:
            return lev
    raise ValueError(f"score {v!r} is not among the levels {tuple(levels)}")


def exact_rate(a: Sequence[float | None], b: Sequence[float | None]) -> Rate:
    a, b, _ = paired_ratings(a, b)
    n = len(a)
    return Rate(sum(abs(float(x) - float(y)) < 1e-9 for x, y in zip(a, b)) / n if n else None, n)


def same_band_rate(a: Sequence[float | None], b: Sequence[float | None]) -> Rate:
    a, b, _ = paired_ratings(a, b)
    n = len(a)
    return Rate(sum(band(x) == band(y) for x, y in zip(a, b)) / n if n else None, n)


def pair_agreement(name_a: str, a: Sequence[float | None], name_b: str, b: Sequence[float | None],
                   levels: Sequence[float] = JUDGE_LEVELS) -> PairAgreement:
    a = [None if is_missing(v) else _snap(v, levels) for v in a]
    b = [None if is_missing(v) else _snap(v, levels) for v in b]
    kappa = cohen_kappa(a, b, weights="quadratic", labels=tuple(levels))
    return PairAgreement(name_a, name_b, kappa.n, kappa, spearman(a, b), exact_rate(a, b), same_band_rate(a, b))


def panel_agreement(scores: Mapping[str, Sequence[float | None]],
                    levels: Sequence[float] = JUDGE_LEVELS) -> PanelAgreement:
    """`scores` maps each judge to its scores for the same rows, in the same order (None = that
    judge has no score for the row)."""
    names = list(scores)
    lengths = {len(scores[n]) for n in names}
    if len(lengths) > 1:
        raise ValueError(f"judges scored different numbers of rows: {sorted(lengths)}")
    n_rows = lengths.pop() if lengths else 0
    pairs = tuple(pair_agreement(x, scores[x], y, scores[y], levels) for x, y in combinations(names, 2))
    table = [[None if is_missing(v) else _snap(v, levels) for v in scores[n]] for n in names]
    if len(names) >= 2:
        alpha = krippendorff_alpha(table, level="ordinal", labels=tuple(levels))
    else:
        alpha = AlphaResult(None, 0, 0, "ordinal", "a panel needs at least two judges")
    return PanelAgreement(tuple(names), n_rows, pairs, alpha)


def panel_median(scores: Mapping[str, Sequence[float | None]]) -> list[float | None]:
    """Per row, the median of the judges' scores that are present (None when none is). With an
    even number of scores this is the mean of the middle two, which can fall between levels."""
    columns = list(zip(*scores.values())) if scores else []
    out: list[float | None] = []
    for col in columns:
        present = [float(v) for v in col if not is_missing(v)]
        out.append(statistics.median(present) if present else None)
    return out
