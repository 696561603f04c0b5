"""The recency counterfactual's cases read from the flat evidence arrays (issue 19): which rows can
be re-ranked, why the others cannot, and the pools of those that can as scorer.metrics.recency.Pools
— what that module reads from RecencyCase objects, without a Retrieved per entry. A row is a case
when its item is answerable and temporal-eligible (Y3, two or more existing clues) and it logged a
ranking; its pool is that ranking, deduplicated (scorer.metrics.evidence_flat's e_* entries).

Pure functions: no I/O, no printing.
"""

from __future__ import annotations

from collections.abc import Hashable, Sequence
from dataclasses import dataclass

import numpy as np

from scorer.metrics.evidence_flat import FlatEvidence
from scorer.metrics.logged_lists import ragged, run_starts
from scorer.metrics.recency import NOT_RERANKED, Pools

NOT_A_CASE, RERANKABLE = -1, 0  # RecencyRows.why; 1 + i: NOT_RERANKED[i]
AGE_SOURCES = ("logged", "dialogue")


@dataclass(frozen=True)
class RecencyRows:
    """Per row of a FlatEvidence: `why` (NOT_A_CASE, RERANKABLE, or 1 + the index of the first
    NOT_RERANKED reason that holds); per ranking entry, the age re-ranking reads (`age`)."""

    why: np.ndarray  # int8 (n,)
    age: np.ndarray  # float64, one per e_* entry
    size: np.ndarray  # int64 (n,): entries of each row's pool
    start: np.ndarray  # int64 (n,): where they start among the e_* entries

    def reason(self, code: int) -> str:
        return NOT_RERANKED[code - 1]


def dialogue_ages(fe: FlatEvidence) -> np.ndarray:
    """The entries' ages, an entry that logged none given the round distance to the question (asked
    after the task's last round: its round count − the round's order) when its round is in the
    task; as the recency section's `recency_age_source = "dialogue"` defines it."""
    codes = fe.codes
    ends: dict[int, int] = {}
    end = np.fromiter((ends.setdefault(id(t), len(t.rounds)) for t in codes.task_of), dtype=float,
                      count=len(codes.task_of))
    exists = np.asarray(codes.exists, dtype=bool)
    order = np.asarray(codes.order, dtype=float)
    age = fe.e_age.copy()
    fill = np.isnan(age) & exists[fe.e_code]  # NaN: no age logged (a logged non-finite one reads +inf)
    age[fill] = end[fe.e_code[fill]] - order[fe.e_code[fill]]
    return age


def recency_rows(fe: FlatEvidence, age_source: str = "logged") -> RecencyRows:
    """Which rows are cases, which of those can be re-ranked (as scorer.metrics.recency's
    missing_inputs: the pool not empty, every entry with a finite score and a finite age of 0 or
    more), and the ages read (`age_source`: "logged" or "dialogue")."""
    if age_source not in AGE_SOURCES:
        raise ValueError(f"age_source must be one of {AGE_SOURCES}, got {age_source!r}")
    n = fe.n
    size = np.bincount(fe.e_row, minlength=n).astype(np.int64)
    age = dialogue_ages(fe) if age_source == "dialogue" else fe.e_age
    no_score = np.bincount(fe.e_row, weights=(~np.isfinite(fe.e_score)).astype(float), minlength=n) > 0
    no_age = np.bincount(fe.e_row, weights=(~np.isfinite(age)).astype(float), minlength=n) > 0
    negative = np.bincount(fe.e_row, weights=(age < 0).astype(float), minlength=n) > 0
    held = (size == 0, no_score, no_age, negative)  # NOT_RERANKED's reasons, in its order: the first that holds
    why = np.select(held, range(1, len(NOT_RERANKED) + 1), RERANKABLE).astype(np.int8)
    why[~(fe.answerable & fe.eligible & fe.has_ret)] = NOT_A_CASE
    return RecencyRows(why, age, size, run_starts(size))


def pools_of(fe: FlatEvidence, rows: RecencyRows, which: np.ndarray, clusters: Sequence[Hashable]) -> Pools:
    """The Pools of rows `which` (re-rankable ones, in the order given), `clusters` one per row."""
    which = np.asarray(which, dtype=np.int64)
    if (rows.why[which] != RERANKABLE).any():
        raise ValueError("pools_of: a row that cannot be re-ranked")
    at = ragged(rows.start[which], rows.size[which])
    return Pools(size=rows.size[which], rank=fe.e_pos[at], sim=fe.e_score[at], age=rows.age[at],
                 latest=fe.e_latest[at], stale=fe.e_stale[at], clusters=list(clusters))
