"""Delivery of the gold reasoning chain (DESIGN.md §5; MOSAIC's write/retrieve/deliver/read split).

A memory system can retrieve every required fact and still drop some when it packs the reader's
request (a budget, a media cap), so retrieval and delivery are measured apart:
- required-fact recall: the fraction of an item's chain facts whose round is in the retrieved list
  (the caller passes the retriever's output: the top K of a logged ranking);
- complete-chain retrieval: every chain fact retrieved;
- complete-chain delivery: every chain fact's round placed in the reader's request;
- retrieved-but-not-delivered: retrieved rounds missing from the request, counted by modality.
`delivered` unknown (not logged) is never read as "same as retrieved": those metrics are left out.
Delivered rounds need not be a subset of the retrieved ones (a full-context or oracle reader gets
rounds nobody retrieved); chain delivery is read from `delivered` alone.

Stage losses are paired score differences between two runs that differ in one stage (e.g. oracle →
retrieval, full delivery → budgeted delivery): mean(score_A − score_B) over the items both answered,
with a paired bootstrap CI and win/tie/loss counts.

Pure functions: no I/O, no printing.
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from typing import Callable, Hashable, Iterable, Sequence

import numpy as np

from scorer.errors import UserError
from scorer.metrics.bootstrap import (DEFAULT_RESAMPLES, DEFAULT_SEED, PairedCI, WinTieLoss, paired_diff_ci,
                                      paired_diff_cis, win_tie_loss)

STAGES = ("write", "retrieval", "delivery", "read")
_ARROW = re.compile(r"\s*(?:→|->)\s*")


@dataclass(frozen=True)
class ChainStatus:
    n_facts: int
    n_retrieved: int | None  # None: the run logged no retrieval
    n_delivered: int | None  # None: the run logged no delivery

    @property
    def required_fact_recall(self) -> float | None:
        return None if self.n_retrieved is None or not self.n_facts else self.n_retrieved / self.n_facts

    @property
    def chain_retrieved(self) -> bool | None:
        return None if self.n_retrieved is None or not self.n_facts else self.n_retrieved == self.n_facts

    @property
    def chain_delivered(self) -> bool | None:
        return None if self.n_delivered is None or not self.n_facts else self.n_delivered == self.n_facts


def chain_status(facts: Sequence[str], retrieved: Iterable[str] | None, delivered: Iterable[str] | None) -> ChainStatus:
    """How much of a chain (its facts' round ids; a round named twice counts once) was retrieved and
    delivered."""
    need = set(facts)
    got_r = None if retrieved is None else len(need & set(retrieved))
    got_d = None if delivered is None else len(need & set(delivered))
    return ChainStatus(len(need), got_r, got_d)


def not_delivered(retrieved: Sequence[str], delivered: Iterable[str]) -> list[str]:
    """Retrieved round ids (in retrieved order, once each) that are not in the request."""
    sent = set(delivered)
    return [r for r in dict.fromkeys(retrieved) if r not in sent]


def count_by_modality(round_ids: Iterable[str], modalities: Callable[[str], Sequence[str]]) -> dict[str, int]:
    """Rounds per modality; a round carrying several media kinds counts once under each."""
    out: dict[str, int] = {}
    for rid in round_ids:
        for m in modalities(rid):
            out[m] = out.get(m, 0) + 1
    return out


# ----------------------------------------------------------------------------------- stage pairs


@dataclass(frozen=True)
class StagePair:
    stage: str
    a: str  # the run with the stage intact (oracle / full delivery)
    b: str  # the run with the stage under test

    @property
    def label(self) -> str:
        return f"{self.stage}: {self.a} → {self.b}"


def parse_stage_pair(text: str) -> StagePair:
    """`retrieval:"Oracle(V)"→"SRAG(V)"` (→ or ->; quotes optional) → StagePair."""
    stage, sep, rest = text.partition(":")
    stage = stage.strip().lower()
    parts = _ARROW.split(rest.strip(), maxsplit=1) if sep else []
    if not sep or len(parts) != 2 or not stage:
        raise UserError(f"--stage-pair {text!r}: expected STAGE:\"A\"→\"B\" (→ or ->), e.g. "
                        f"delivery:\"SRAG(V)\"->\"SRAG(V) budget\"")
    a, b = (p.strip().strip("\"'").strip() for p in parts)
    if not a or not b:
        raise UserError(f"--stage-pair {text!r}: both runs must be named")
    if stage not in STAGES:
        raise UserError(f"--stage-pair {text!r}: stage must be one of {', '.join(STAGES)}")
    return StagePair(stage, a, b)


@dataclass(frozen=True)
class StageLoss:
    """loss = mean(score_A − score_B): what the stage under test costs (positive = B scores lower)."""

    ci: PairedCI
    wtl: WinTieLoss  # wins/losses are A's


def stage_loss(
    a: Sequence[float] | np.ndarray,
    b: Sequence[float] | np.ndarray,
    clusters: Sequence[Hashable] | None = None,
    resamples: int = DEFAULT_RESAMPLES,
    seed: int = DEFAULT_SEED,
) -> StageLoss:
    return StageLoss(paired_diff_ci(a, b, clusters, resamples=resamples, seed=seed), win_tie_loss(a, b))


def stage_losses(
    pairs: Sequence[tuple],
    resamples: int = DEFAULT_RESAMPLES,
    seed: int = DEFAULT_SEED,
) -> list[StageLoss]:
    """[stage_loss(a, b, clusters, resamples, seed) for (a, b, clusters) in pairs], equal value for
    value: the CIs from one paired_diff_cis call (pairs over as many items share one drawing)."""
    cis = paired_diff_cis([(a, b, cl) for a, b, cl in pairs], resamples=resamples, seed=seed)
    return [StageLoss(ci, win_tie_loss(a, b)) for ci, (a, b, _) in zip(cis, pairs)]


# ----------------------------------------------------------------------------------- budgets

_BUDGET_KEYS = ("token_budget", "delivery_budget", "budget", "max_units", "unit_budget", "media_cap")
_BUDGET_IN_NAME = re.compile(r"_?budget(?:[_-]?(\d+[kKmM]?))?")


def budget_of(method: str, method_config: object = None) -> str | None:
    """The delivery budget a run was packed under, or None for an unbudgeted run: a budget key of
    the run's method config, else a `budget`/`budget<N>` token in its method name."""
    if isinstance(method_config, dict):
        for key in _BUDGET_KEYS:
            v = method_config.get(key)
            if v not in (None, "", False):
                return f"{key}={v}"
    m = _BUDGET_IN_NAME.search(method)
    if m:
        return m.group(1) or "budget"
    return None


def budget_family(method: str) -> str:
    """The method a budgeted variant belongs to: the name without its budget token."""
    return _BUDGET_IN_NAME.sub("", method, count=1)


def budget_sort_key(budget: str | None) -> tuple[int, float, str]:
    """Unbudgeted (full delivery) first, then budgets from large to small where a number is given."""
    if budget is None:
        return (0, 0.0, "")
    m = re.search(r"(\d+(?:\.\d+)?)\s*([kKmM]?)$", budget)
    if not m:
        return (2, 0.0, budget)
    scale = {"": 1, "k": 1e3, "m": 1e6}[m.group(2).lower()]
    return (1, -float(m.group(1)) * scale, budget)
