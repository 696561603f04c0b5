"""MOSAIC's paired diagnosis (the write→retrieve→deliver→read ladder, its strata, the delivery-budget
sweep, carrier interventions) and the benchmark-composition counts, as pure functions.

- A paired drop between two conditions is mean(score_upper − score_lower) over the answerable items
  both scored, with the item-bootstrap percentile CI (DESIGN §5), win/tie/loss (the upper side's),
  and, as a sensitivity check, the CI of a bootstrap that resamples clusters (personas) instead.
- Strata overlap: an item is in the stratum of every modality and every challenge its required
  facts carry (a challenge's facts and distinct items are counted apart; neither sums to the items).
- Composition: media references by modality × role — `required` (in a round that is a required
  fact of some item), `evidence` (another round of a session that holds a required fact: evidence
  present but not required), `filler` (every other round).

No I/O, no printing.
"""

from __future__ import annotations

import re
from collections.abc import Hashable, Iterable, Sequence
from dataclasses import dataclass

import numpy as np

from scorer.metrics.bootstrap import PairedCI, WinTieLoss, paired_diff_ci, win_tie_loss
from scorer.metrics.constants import DEFAULT_RESAMPLES, DEFAULT_SEED
from scorer.metrics.resample import DEFAULT_CONFIDENCE, MAX_CELLS, percentile_rows, resample_counts
from scorer.metrics.mosaic_labels import FULL_BUDGET

MEDIA_ROLES = ("required", "evidence", "filler")


@dataclass(frozen=True)
class Drop:
    items: PairedCI  # item bootstrap (the reported CI)
    clusters: PairedCI | None  # cluster bootstrap (sensitivity), None with fewer than two clusters
    wtl: WinTieLoss


def paired_drop(
    upper: Sequence[float] | np.ndarray,
    lower: Sequence[float] | np.ndarray,
    clusters: Sequence[Hashable] | None = None,
    resamples: int = DEFAULT_RESAMPLES,
    seed: int = DEFAULT_SEED,
) -> Drop:
    """mean(upper − lower) per item, its item-bootstrap CI (paired_diff_ci's, computed as
    paired_drops does), the cluster-bootstrap CI, win/tie/loss."""
    a, b = np.asarray(upper, dtype=float), np.asarray(lower, dtype=float)
    if a.ndim == 1 and a.shape == b.shape and a.size:
        items = paired_drops(a[:, None], b[:, None], resamples, seed)[0].items
    else:
        items = paired_diff_ci(upper, lower, resamples=resamples, seed=seed)
    by_cluster = None
    if clusters is not None and len(set(clusters)) >= 2:
        by_cluster = paired_diff_ci(upper, lower, clusters, resamples=resamples, seed=seed)
    return Drop(items, by_cluster, win_tie_loss(upper, lower))


def paired_drops(
    upper: np.ndarray,
    lower: np.ndarray,
    resamples: int = DEFAULT_RESAMPLES,
    seed: int = DEFAULT_SEED,
) -> list[Drop]:
    """Item-bootstrap drops of several pairs over one item set at once: `upper`, `lower` are
    (items, pairs). Every pair is resampled with the same draws, those paired_diff_ci makes for
    that many items and that seed, so each result equals paired_drop's item CI (to 1e-12, tested);
    the draws are taken once instead of once per pair. No cluster CI."""
    a, b = np.asarray(upper, dtype=float), np.asarray(lower, dtype=float)
    if a.ndim != 2 or a.shape != b.shape:
        raise ValueError(f"expected two (items, pairs) matrices of one shape, got {a.shape} and {b.shape}")
    n, m = a.shape
    if n == 0 or m == 0:
        return [Drop(paired_diff_ci(a[:, j], b[:, j], resamples=resamples, seed=seed), None,
                     win_tie_loss(a[:, j], b[:, j])) for j in range(m)]
    if not (np.isfinite(a).all() and np.isfinite(b).all()):
        raise ValueError("scores contain NaN or infinite values; drop unscored items first")
    d = a - b  # (items, pairs)
    # A resample's mean = its multiplicity counts · d / n: one matrix product per chunk for every pair
    # (the counts come from the same draws as paired_diff_ci's indices, and are shared by every
    # report CI over n items: scorer.metrics.resample's cache)
    dist = np.concatenate([w @ d for w in resample_counts(n, resamples, seed, MAX_CELLS, dtype=np.float64)]) / n
    low, high = percentile_rows(dist.T, DEFAULT_CONFIDENCE)  # (pairs, resamples) rows
    out = []
    for j in range(m):
        ci = PairedCI(float(d[:, j].mean()), float(low[j]), float(high[j]), n, resamples, seed, DEFAULT_CONFIDENCE,
                      mean_a=float(a[:, j].mean()), mean_b=float(b[:, j].mean()))
        out.append(Drop(ci, None, win_tie_loss(a[:, j], b[:, j])))
    return out


def mean_n(values: Iterable[float | None]) -> tuple[float | None, int]:
    """(mean, n) over the values that are known (None and NaN left out)."""
    v = np.array([float(x) for x in values if x is not None and x == x], dtype=float)
    return (float(v.mean()) if v.size else None), int(v.size)


def strata_of(facts: Iterable[tuple[str, str | None]]) -> tuple[frozenset[str], frozenset[str]]:
    """An item's (modalities, challenges) from its required facts' (modality, challenge)."""
    facts = list(facts)
    return (frozenset(m for m, _ in facts if m), frozenset(c for _, c in facts if c))


def stratum_items(strata: dict[Hashable, frozenset[str]], value: str) -> list[Hashable]:
    """The items (keys of `strata`, in order) whose stratum set holds `value`."""
    return [k for k, s in strata.items() if value in s]


# ----------------------------------------------------------------------------------- sweep


def budget_key(budget: float | str | None) -> tuple[int, float, str]:
    """Sweep order, loosest first: full delivery, then numbers from large to small, then labels
    (a label ending in a number, e.g. "top5", sorts by it)."""
    if budget is None or budget == FULL_BUDGET:
        return (0, 0.0, "")
    if isinstance(budget, (int, float)):
        return (1, -float(budget), "")
    m = re.search(r"(\d+(?:\.\d+)?)\s*([kKmM]?)$", budget)
    if m:
        scale = {"": 1, "k": 1e3, "m": 1e6}[m.group(2).lower()]
        return (1, -float(m.group(1)) * scale, budget)
    return (2, 0.0, budget)


def budget_text(budget: float | str | None) -> str:
    if budget is None:
        return FULL_BUDGET
    if isinstance(budget, float) and budget.is_integer():
        return str(int(budget))
    return str(budget)


def budget_value(budget: float | str | None) -> float | None:
    """A budget as a number for a plot axis (None for full delivery or a label without a number)."""
    k = budget_key(budget)
    return -k[1] if k[0] == 1 else None


# ----------------------------------------------------------------------------------- composition


@dataclass(frozen=True)
class ItemFacts:
    """One item's required facts for the composition tables: (round id, modality, challenge)."""

    item_id: str
    answerable: bool
    facts: tuple[tuple[str, str, str | None], ...]


def challenge_counts(items: Iterable[ItemFacts], challenges: Sequence[str]) -> list[dict]:
    """Per challenge, over answerable items: required facts carrying it and distinct items with
    at least one such fact (overlapping: an item counts under each of its challenges)."""
    facts = {c: 0 for c in challenges}
    seen: dict[str, set[str]] = {c: set() for c in challenges}
    for it in items:
        if not it.answerable:
            continue
        for _, _, ch in it.facts:
            if ch in facts:
                facts[ch] += 1
                seen[ch].add(it.item_id)
    return [{"challenge": c, "facts": facts[c], "items": len(seen[c])} for c in challenges]


def chain_shares(items: Iterable[ItemFacts]) -> dict:
    """Answerable items needing ≥ 2 facts (distinct rounds) and ≥ 2 modalities (text counts)."""
    ans = [it for it in items if it.answerable]
    two_facts = sum(1 for it in ans if len({r for r, _, _ in it.facts}) >= 2)
    two_mods = sum(1 for it in ans if len({m for _, m, _ in it.facts}) >= 2)
    n = len(ans)
    return {"n": n, "two_facts": two_facts, "two_modalities": two_mods,
            "share_two_facts": two_facts / n if n else None, "share_two_modalities": two_mods / n if n else None}


def media_role(round_id: str, session_id: str, required: set[str], evidence_sessions: set[str]) -> str:
    if round_id in required:
        return "required"
    return "evidence" if session_id in evidence_sessions else "filler"


def media_counts(refs: Iterable[tuple[str, str]], modalities: Sequence[str]) -> list[dict]:
    """(modality, role) media references → one row per modality with a count per role and total."""
    counts = {m: dict.fromkeys(MEDIA_ROLES, 0) for m in modalities}
    for m, role in refs:
        if m in counts:
            counts[m][role] += 1
    return [{"modality": m, **c, "total": sum(c.values())} for m, c in counts.items()]
