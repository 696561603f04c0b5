"""Agreement metrics (DESIGN.md §5 "Agreement"): Cohen's κ, unweighted and weighted (from
`kappa`), Fleiss' κ (from `fleiss`), Gwet's AC1, Krippendorff's α, the prevalence-paradox
warning, judge-vs-human agreement and human majorities.

Every result carries its n, and an undefined value is None with `undefined_reason`, never a silent
0 or NaN. Pure functions: no I/O, no printing.
"""

from __future__ import annotations

from collections import Counter
from collections.abc import Hashable, Mapping, Sequence
from dataclasses import dataclass, replace
from itertools import combinations

import numpy as np

from scorer.metrics.bootstrap import DEFAULT_RESAMPLES, DEFAULT_SEED
from scorer.metrics.constants import DECIDED_VERDICTS, JUDGE_LEVELS, JUDGE_THRESHOLD, VERDICTS  # noqa: F401 (JUDGE_LEVELS re-exported)
from scorer.metrics.fleiss import FleissResult, fleiss_bootstrap_ci, fleiss_kappa  # noqa: F401  (re-exported)
from scorer.metrics.kappa import (  # noqa: F401  (re-exported: this module is the public face)
    KappaBootstrap,
    KappaResult,
    OrdinalKappa,
    cohen_kappa,
    confusion_matrix,
    encode,
    infer_labels,
    is_missing,
    kappa_bootstrap_ci,
    observed_agreement,
    ordinal_kappas,
    paired_ratings,
)

VERDICT_SCALE = ("reject", "borderline", "accept")  # verdicts as an ordinal scale, lowest first


@dataclass(frozen=True)
class AC1Result:
    ac1: float | None
    observed: float | None
    expected: float | None
    n: int
    labels: tuple
    undefined_reason: str | None = None


@dataclass(frozen=True)
class AlphaResult:
    """Krippendorff's α; `n` = units with at least two ratings (the only ones that count)."""

    alpha: float | None
    n: int
    n_values: int
    level: str
    undefined_reason: str | None = None


@dataclass(frozen=True)
class PairKappa:
    rater_a: str
    rater_b: str
    result: KappaResult


@dataclass(frozen=True)
class SpearmanResult:
    rho: float | None
    n: int
    undefined_reason: str | None = None


@dataclass(frozen=True)
class MajorityResult:
    """Strict majority per item; None where there is none (`ties`) or nobody voted (`no_votes`)."""

    verdicts: tuple
    n: int
    ties: int
    no_votes: int


@dataclass(frozen=True)
class JudgeHumanResult:
    """Judge (score >= threshold -> accept) against human accept/reject verdicts.

    Confusion is judge-first: `accept_reject` = judge accepts, human rejects. `n` counts compared
    pairs; `excluded` = borderline verdicts + pairs with a missing score or verdict."""

    n: int
    excluded: int
    excluded_borderline: int
    excluded_missing: int
    agreements: int
    observed: float | None
    kappa: KappaResult
    bootstrap: KappaBootstrap
    ac1: AC1Result
    accept_accept: int
    accept_reject: int
    reject_accept: int
    reject_reject: int
    paradox_warning: str | None = None
    strata: tuple = ()  # of JudgeHumanStratum


@dataclass(frozen=True)
class JudgeHumanStratum:
    dimension: str  # e.g. "method" or "cell"
    key: Hashable  # e.g. "FC(V)" or ("X3", "Y2")
    result: JudgeHumanResult


# ---------------------------------------------------------------------------------------------
# Coefficients


def gwet_ac1(a: Sequence[Hashable], b: Sequence[Hashable], labels: Sequence[Hashable] | None = None) -> AC1Result:
    """Gwet's AC1 for two raters, nominal categories (Gwet 2008):
    p_e = Σ_k π_k (1 − π_k) / (K − 1), π_k = mean share of category k over both raters, K = number
    of categories (`labels`, default those used). Undefined with fewer than two categories."""
    a, b, _ = paired_ratings(a, b)
    ia, ib, labels = encode(a, b, labels)
    n, k = len(ia), len(labels)
    if n == 0:
        return AC1Result(None, None, None, 0, labels, "no items rated by both raters")
    observed = float(np.mean(ia == ib))
    if k < 2:
        return AC1Result(None, observed, None, n, labels,
                         f"only one category ({labels[0]!r}): AC1 needs at least two (K − 1 = 0)")
    pi = (np.bincount(ia, minlength=k) + np.bincount(ib, minlength=k)) / (2 * n)
    expected = float((pi * (1 - pi)).sum() / (k - 1))
    return AC1Result((observed - expected) / (1 - expected), observed, expected, n, labels)


def krippendorff_alpha(
    reliability_data: Sequence[Sequence] | np.ndarray,
    level: str = "nominal",
    labels: Sequence[Hashable] | None = None,
) -> AlphaResult:
    """Krippendorff's α over a raters × units table (None/NaN = missing) via the `krippendorff`
    package. Nominal/ordinal values may be any labels (ordinal order = `labels`, default sorted);
    interval values must be numbers."""
    import krippendorff  # core dependency; imported here to keep `import scorer` light

    if level not in ("nominal", "ordinal", "interval"):
        raise ValueError(f"level must be nominal, ordinal or interval, got {level!r}")
    rows = [list(r) for r in reliability_data]
    if len({len(r) for r in rows}) > 1:
        raise ValueError("every rater's row must cover the same units (use None for missing)")
    present = [[not is_missing(v) for v in r] for r in rows]
    if level == "interval":
        try:
            data = np.array([[float(v) if p else np.nan for v, p in zip(r, m)] for r, m in zip(rows, present)])
        except (TypeError, ValueError):
            raise ValueError("interval α needs numeric ratings") from None
    else:
        values = [v for r, m in zip(rows, present) for v, p in zip(r, m) if p]
        labels = infer_labels(values) if labels is None else tuple(labels)
        pos = {lab: i for i, lab in enumerate(labels)}
        unknown = [v for v in values if v not in pos]
        if unknown:
            raise ValueError(f"rating {unknown[0]!r} is not among the labels {labels!r}")
        data = np.array([[pos[v] if p else np.nan for v, p in zip(r, m)] for r, m in zip(rows, present)], dtype=float)
    data = data.reshape(len(rows), -1)
    pairable = (~np.isnan(data)).sum(axis=0) >= 2
    n_units, n_values = int(pairable.sum()), int((~np.isnan(data[:, pairable])).sum())
    if n_units == 0:
        return AlphaResult(None, 0, 0, level, "no unit has two or more ratings")
    distinct = np.unique(data[:, pairable][~np.isnan(data[:, pairable])])
    if distinct.size < 2:
        return AlphaResult(None, n_units, n_values, level,
                           "every pairable rating has the same value: expected disagreement is 0")
    domain = None if level == "interval" else np.arange(len(labels))
    alpha = float(krippendorff.alpha(reliability_data=data, level_of_measurement=level, value_domain=domain))
    return AlphaResult(alpha, n_units, n_values, level)


def prevalence_paradox(kappa: KappaResult, ac1: AC1Result, gap: float = 0.2, high_agreement: float = 0.8) -> str | None:
    """A warning when κ and AC1 tell different stories at high observed agreement: with one
    category dominating, p_e is near 1 and κ collapses although raters agree (Feinstein & Cicchetti
    1990). Returns the message, or None when there is nothing to warn about."""
    observed = kappa.observed if kappa.observed is not None else ac1.observed
    if observed is None or observed < high_agreement or ac1.ac1 is None:
        return None
    if kappa.kappa is None:
        return (f"κ is undefined ({kappa.undefined_reason}) although observed agreement is "
                f"{observed:.3f} and AC1 = {ac1.ac1:.3f} (n = {kappa.n}): prevalence paradox")
    if abs(ac1.ac1 - kappa.kappa) > gap:
        return (f"κ = {kappa.kappa:.3f} but AC1 = {ac1.ac1:.3f} at observed agreement {observed:.3f} "
                f"(n = {kappa.n}): one category dominates (prevalence paradox); read κ with care")
    return None


def pairwise_kappa(
    ratings: Mapping[str, Sequence[Hashable]],
    weights: str | None = None,
    labels: Sequence[Hashable] | None = None,
) -> tuple[PairKappa, ...]:
    """κ for every pair of raters (e.g. κ_X per annotator pair); each pair uses the items both rated."""
    names = list(ratings)
    if labels is None:
        labels = infer_labels(*[[v for v in ratings[r] if not is_missing(v)] for r in names])
    return tuple(PairKappa(x, y, cohen_kappa(ratings[x], ratings[y], weights, labels)) for x, y in combinations(names, 2))


def spearman(a: Sequence[float], b: Sequence[float]) -> SpearmanResult:
    """Spearman's ρ (average ranks for ties) over pairs where both values are present."""
    import pandas as pd

    a, b, _ = paired_ratings(a, b)
    n = len(a)
    if n < 2:
        return SpearmanResult(None, n, "fewer than two pairs")
    ra = pd.Series(a, dtype=float).rank(method="average").to_numpy()
    rb = pd.Series(b, dtype=float).rank(method="average").to_numpy()
    if ra.std() == 0 or rb.std() == 0:
        return SpearmanResult(None, n, "one side is constant: ρ is 0/0")
    return SpearmanResult(float(np.corrcoef(ra, rb)[0, 1]), n)


# ---------------------------------------------------------------------------------------------
# Human verdicts and the judge


def strict_majority(votes: Sequence) -> tuple[object | None, int]:
    """(the value more than half of the non-missing votes share, or None; number of votes)."""
    cast = [v for v in votes if not is_missing(v)]
    if not cast:
        return None, 0
    value, count = Counter(cast).most_common(1)[0]
    return (value if 2 * count > len(cast) else None), len(cast)


def normalise_verdict(v) -> str | None:
    """'accept' / 'reject' / 'borderline' (any case), booleans or 1/0; None/NaN stay None."""
    if is_missing(v):
        return None
    if isinstance(v, (bool, np.bool_)) or (isinstance(v, (int, np.integer)) and v in (0, 1)):
        return "accept" if v else "reject"
    if isinstance(v, str) and v.strip().lower() in VERDICTS:
        return v.strip().lower()
    raise ValueError(f"unknown verdict {v!r}: expected accept, reject or borderline")


def human_majority(votes_per_item: Sequence[Sequence]) -> MajorityResult:
    """Per item, the strict majority of the annotators' verdicts (missing votes ignored). A
    majority can be 'borderline', which judge_vs_human then excludes like any borderline."""
    out, ties, empty = [], 0, 0
    for votes in votes_per_item:
        winner, cast = strict_majority([normalise_verdict(v) for v in votes])
        out.append(winner)
        ties += cast > 0 and winner is None
        empty += cast == 0
    return MajorityResult(tuple(out), len(out), int(ties), int(empty))


def judge_vs_human(
    judge_scores: Sequence[float | None],
    human_verdicts: Sequence,
    strata: Mapping[str, Sequence] | None = None,
    threshold: float = JUDGE_THRESHOLD,
    n_resamples: int = DEFAULT_RESAMPLES,
    seed: int = DEFAULT_SEED,
) -> JudgeHumanResult:
    """Agreement of the binarised judge (score >= threshold -> accept) with human verdicts.

    `strata` maps a dimension name to one key per pair (e.g. {"method": [...], "cell":
    [("X3", "Y2"), ...]}); a list/set element puts the pair in each of its keys (an item with
    several labels counts in each cell), None in none."""
    scores, verdicts = list(judge_scores), [normalise_verdict(v) for v in human_verdicts]
    if len(scores) != len(verdicts):
        raise ValueError(f"{len(scores)} judge scores but {len(verdicts)} human verdicts")
    result = _judge_vs_human(scores, verdicts, threshold, n_resamples, seed)
    if not strata:
        return result
    found = []
    for dim, keys in strata.items():
        keys = list(keys)
        if len(keys) != len(scores):
            raise ValueError(f"stratum {dim!r} has {len(keys)} keys for {len(scores)} pairs")
        members: dict = {}
        for i, key in enumerate(keys):
            for kk in _keys(key):
                members.setdefault(kk, []).append(i)
        for kk in infer_labels(list(members)):
            rows = members[kk]
            sub = _judge_vs_human([scores[i] for i in rows], [verdicts[i] for i in rows], threshold, n_resamples, seed)
            found.append(JudgeHumanStratum(dim, kk, sub))
    return replace(result, strata=tuple(found))


def _keys(key) -> list:
    if key is None:
        return []
    if isinstance(key, (list, set, frozenset)):
        return list(key)
    return [key]


def _judge_vs_human(scores: list, verdicts: list, threshold: float, n_resamples: int, seed: int) -> JudgeHumanResult:
    judge, human, borderline, missing = [], [], 0, 0
    for s, v in zip(scores, verdicts):
        if v == "borderline":
            borderline += 1
        elif v is None or is_missing(s):
            missing += 1
        else:
            try:
                judge.append("accept" if float(s) >= threshold else "reject")
            except (TypeError, ValueError):
                raise ValueError(f"judge score {s!r} is not a number") from None
            human.append(v)
    kappa = cohen_kappa(judge, human, labels=DECIDED_VERDICTS)
    boot = kappa_bootstrap_ci(judge, human, labels=DECIDED_VERDICTS, n_resamples=n_resamples, seed=seed)
    ac1 = gwet_ac1(judge, human, labels=DECIDED_VERDICTS)
    (aa, ar), (ra, rr) = kappa.confusion
    n = len(judge)
    return JudgeHumanResult(
        n=n, excluded=borderline + missing, excluded_borderline=borderline, excluded_missing=missing,
        agreements=aa + rr, observed=(aa + rr) / n if n else None, kappa=kappa, bootstrap=boot, ac1=ac1,
        accept_accept=aa, accept_reject=ar, reject_accept=ra, reject_reject=rr,
        paradox_warning=prevalence_paradox(kappa, ac1),
    )
