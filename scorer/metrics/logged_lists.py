"""What rows logged for the evidence arrays, as flat arrays (issue 19): each row's ranking (round
ids and scores) and its delivered list (round ids), every round id as a number into a list of names.

The lean reader's workers build these while they read (scorer.load.joined_rows.evidence_segment)
and send them as a few arrays rather than a Python tuple per row; scorer.metrics.evidence_flat
codes the names once per distinct (task, round id) instead of once per entry. The values are those
of scorer.metrics.evidence_flat.logged_lists, row by row (tested).

Pure functions: no I/O, no printing; numpy only (the reader workers import this before pandas).
"""

from __future__ import annotations

import math
from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any

import numpy as np

from scorer.model.rows import num

NAN = float("nan")
_PLAIN = {float, int, bool, type(None)}  # numpy reads these as num() does (None as NaN)

# A ranking as scorer.metrics.evidence_flat.ranking_of reads it: round ids, scores and recency
# ages as logged (one of each per entry)
Ranking = tuple[list[str], list[Any], list[Any]]
# (ranking, or None; delivered list, or None)
Logged = tuple[Ranking | None, tuple[str, ...] | None]


def scores_of(logged: list) -> np.ndarray:
    """Logged scores as num() reads them, NaN where it gives None (a missing score ties with nothing,
    as None does in scorer.metrics.evidence.tie_ranks)."""
    if set(map(type, logged)) <= _PLAIN:
        try:
            return np.asarray(logged, dtype=float)
        except OverflowError:  # an integer past a float's range (num reads it as ±inf)
            pass
    return np.asarray([NAN if (v := num(x)) is None else v for x in logged], dtype=float)


def ages_of(logged: list) -> np.ndarray:
    """Logged recency ages as num() reads them, in one float each: NaN where it gives None (no age:
    the recency section may fill it in), +inf for a logged age that is not finite (NaN, ±inf: never
    filled in, never re-ranked — the two read alike wherever an age is read)."""
    if set(map(type, logged)) <= _PLAIN:
        try:
            out = np.asarray(logged, dtype=float)
        except OverflowError:  # an integer past a float's range
            out = None
        if out is not None and int(np.isnan(out).sum()) == logged.count(None):  # (no NaN is logged in JSON)
            out[np.isinf(out)] = np.inf
            return out
    vals = [num(x) for x in logged]
    return np.asarray([NAN if v is None else v if math.isfinite(v) else math.inf for v in vals], dtype=float)


class RoundNames:
    """Round ids numbered in the order they are first met. One is shared by every run a reader
    worker reads in a part, so that each id travels once, in `names`."""

    __slots__ = ("index", "names")

    def __init__(self) -> None:
        self.index: dict[str, int] = {}
        self.names: list[str] = []

    def numbers(self, ids: Sequence[str]) -> list[int]:
        try:  # every id met before (most runs of a part name the same rounds): at C speed
            return list(map(self.index.__getitem__, ids))
        except KeyError:
            pass
        get, index, names = self.index.get, self.index, self.names
        out = []
        for rid in ids:
            n = get(rid)
            if n is None:
                n = index[rid] = len(names)
                names.append(rid)
            out.append(n)
        return out


@dataclass
class LoggedLists:
    """What n rows logged: row i's ranking is `r_len[i]` entries (`r_name`, `r_score`: scores_of of
    the logged scores, `r_age`: ages_of of the logged recency ages) and its delivered list
    `d_len[i]` entries (`d_name`), in the rows' order, each list in its logged order; `has_rank[i]` / `has_del[i]`: row i logged that list (it may be empty).
    A name is an index into `names`; one round id may stand at several indices (rows read in
    different parts)."""

    names: list[str]
    has_rank: np.ndarray  # bool (n,)
    r_len: np.ndarray  # int64 (n,)
    r_name: np.ndarray  # int64 (Σ r_len,)
    r_score: np.ndarray  # float64 (Σ r_len,)
    r_age: np.ndarray  # float64 (Σ r_len,)
    has_del: np.ndarray  # bool (n,)
    d_len: np.ndarray  # int64 (n,)
    d_name: np.ndarray  # int64 (Σ d_len,)

    @property
    def n(self) -> int:
        return len(self.has_rank)

    @classmethod
    def build(cls, logged: Sequence[Logged | None], names: RoundNames | None = None) -> LoggedLists:
        """The rows' lists from what each logged (scorer.metrics.evidence_flat.logged_lists: None,
        or (ranking, delivered)); `names` numbers the round ids (a fresh one if not given)."""
        names = RoundNames() if names is None else names
        n = len(logged)
        has_rank, has_del = np.zeros(n, dtype=bool), np.zeros(n, dtype=bool)
        r_len, d_len = np.zeros(n, dtype=np.int64), np.zeros(n, dtype=np.int64)
        ranked, r_counts, delivered_at, d_counts = [], [], [], []  # the rows that logged each list, and its length
        r_ids: list[str] = []
        r_scores: list[Any] = []
        r_ages: list[Any] = []
        d_ids: list[str] = []
        for i, lg in enumerate(logged):
            if lg is None:  # most rows: nothing logged (set once, by the zeros above)
                continue
            ranking, delivered = lg
            if ranking is not None:
                ids, scores, ages = ranking
                ranked.append(i)
                r_counts.append(len(ids))
                r_ids += ids
                r_scores += scores
                r_ages += ages
            if delivered is not None:
                delivered_at.append(i)
                d_counts.append(len(delivered))
                d_ids += delivered
        has_rank[ranked] = True
        r_len[ranked] = r_counts
        has_del[delivered_at] = True
        d_len[delivered_at] = d_counts
        return cls(names.names, has_rank, r_len, np.array(names.numbers(r_ids), dtype=np.int64), scores_of(r_scores),
                   ages_of(r_ages), has_del, d_len, np.array(names.numbers(d_ids), dtype=np.int64))

    @classmethod
    def concat(cls, parts: Sequence[LoggedLists]) -> LoggedLists:
        """The rows of `parts`, in order (parts that share a names list share it here too)."""
        if not parts:
            return cls.build([])
        names: list[str] = []
        offset: dict[int, int] = {}  # id of a part's names list → where it starts in `names`
        for p in parts:
            if id(p.names) not in offset:
                offset[id(p.names)] = len(names)
                names += p.names

        def cat(attr: str, shift: bool = False) -> np.ndarray:
            return np.concatenate([getattr(p, attr) + offset[id(p.names)] if shift else getattr(p, attr) for p in parts])

        return cls(names, cat("has_rank"), cat("r_len"), cat("r_name", True), cat("r_score"), cat("r_age"),
                   cat("has_del"), cat("d_len"), cat("d_name", True))

    def take(self, rows: Sequence[int] | np.ndarray) -> LoggedLists:
        """Rows `rows` (indices, in that order) of these."""
        rows = np.asarray(rows, dtype=np.int64)
        r_len, d_len = self.r_len[rows], self.d_len[rows]
        r_at = ragged(run_starts(self.r_len)[rows], r_len)
        d_at = ragged(run_starts(self.d_len)[rows], d_len)
        return LoggedLists(self.names, self.has_rank[rows], r_len, self.r_name[r_at], self.r_score[r_at],
                           self.r_age[r_at], self.has_del[rows], d_len, self.d_name[d_at])

    def as_rows(self) -> list[tuple[tuple[list[str], list[float], list[float]] | None, tuple[str, ...] | None]]:
        """Each row's (ranking as (ids, scores, ages), delivered ids), None for a list it did not
        log: the arrays read back, to compare with what rows logged."""
        out = []
        names, r_at, d_at = self.names, 0, 0
        for has_r, n_r, has_d, n_d in zip(self.has_rank.tolist(), self.r_len.tolist(), self.has_del.tolist(),
                                          self.d_len.tolist()):
            ranking = ([names[k] for k in self.r_name[r_at:r_at + n_r].tolist()],
                       self.r_score[r_at:r_at + n_r].tolist(), self.r_age[r_at:r_at + n_r].tolist()) if has_r else None
            delivered = tuple(names[k] for k in self.d_name[d_at:d_at + n_d].tolist()) if has_d else None
            out.append((ranking, delivered))
            r_at += n_r
            d_at += n_d
        return out


def run_starts(lengths: np.ndarray) -> np.ndarray:
    """Where each run of `lengths` starts in their concatenation."""
    return np.cumsum(lengths) - lengths


def ragged(starts: np.ndarray, lengths: np.ndarray) -> np.ndarray:
    """The indices starts[i] … starts[i] + lengths[i] − 1 of every i, in order."""
    total = int(lengths.sum())
    return np.arange(total, dtype=np.int64) + np.repeat(starts - run_starts(lengths), lengths)
