"""Retrieval diagnostics against the gold clue rounds (DESIGN.md §5; MemEye App. "Retrieval
Diagnostics"), and the per-item marks the app shows beside a run's retrieved list.

Definitions, per item, over the top-K of the run's ranked list (best first):
- Any-Clue Recall@K: at least one gold clue is in the top-K;
- Coverage@K: the fraction of the gold clues in the top-K;
- Full-Clue Recall@K: every gold clue is in the top-K;
and for Y3 items with at least two existing clues (one clue has no update to track):
- latest = the chronologically last clue; stale = a retrieved round from one of the item's source
  sessions that precedes the latest clue (`Task.is_stale`: earlier clue states count as stale);
- Latest-Clue Recall@K: the latest clue is in the top-K; Latest-Miss: it is not;
- Stale-Dominance: a stale round is ranked above the latest clue, or a stale round is present while
  the latest is absent;
- Rank-Inversion: both present and a stale round ranked above the latest.

Ranks: the list order decides membership in the top-K (what the system returned); "ranked above"
compares ranks where an entry whose score equals the previous entry's shares its rank, so an exact
tie in score is never an inversion. Repeated round ids keep their first (best) position.

Pure functions: no I/O, no printing.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from functools import cached_property
from typing import AbstractSet, Iterable, Sequence

import numpy as np

from scorer.metrics.constants import DEFAULT_K
from scorer.metrics.delivery import ChainStatus, chain_status, not_delivered
from scorer.model import ChainFact, Item, Prediction, Retrieved, Task

Y3 = "Y3"
RETRIEVAL_METRICS = ("any_clue_recall", "coverage", "full_clue_recall")
TEMPORAL_METRICS = ("latest_clue_recall", "stale_dominance", "rank_inversion", "latest_miss")


# ----------------------------------------------------------------------------------- ranked lists


def dedupe(entries: Sequence[Retrieved]) -> tuple[Retrieved, ...]:
    """First occurrence of each round id, list order kept."""
    if len({e.round_id for e in entries}) == len(entries):  # the usual case: nothing repeats
        return tuple(entries)
    seen: set[str] = set()
    out = []
    for e in entries:
        if e.round_id not in seen:
            seen.add(e.round_id)
            out.append(e)
    return tuple(out)


def tie_ranks(scores: Sequence[float | None]) -> list[int]:
    """1-based ranks from list positions; an entry whose score equals the previous entry's score
    shares that entry's rank (competition ranking, so ranks may skip: 1, 2, 2, 4)."""
    ranks: list[int] = []
    for pos, s in enumerate(scores, start=1):
        prev = scores[pos - 2] if pos > 1 else None
        if pos > 1 and s is not None and prev is not None and s == prev:
            ranks.append(ranks[-1])
        else:
            ranks.append(pos)
    return ranks


# ----------------------------------------------------------------------------------- one item


@dataclass(frozen=True)
class Diagnosis:
    """One item's retrieval diagnostics at K. Temporal fields are None when the item is not an
    eligible Y3 item (not Y3, or fewer than two existing clues)."""

    k: int
    n_clues: int
    n_hit: int
    any_clue: bool
    coverage: float
    full_clue: bool
    latest_hit: bool | None = None
    stale_dominance: bool | None = None
    rank_inversion: bool | None = None
    latest_miss: bool | None = None
    n_stale: int | None = None  # stale rounds in the top-K
    latest_rank: int | None = None
    best_stale_rank: int | None = None

    @property
    def temporal(self) -> bool:
        return self.latest_hit is not None

    def value(self, metric: str) -> float | None:
        v = {
            "any_clue_recall": self.any_clue, "coverage": self.coverage, "full_clue_recall": self.full_clue,
            "latest_clue_recall": self.latest_hit, "stale_dominance": self.stale_dominance,
            "rank_inversion": self.rank_inversion, "latest_miss": self.latest_miss,
        }[metric]
        return None if v is None else float(v)


def diagnose(
    ranked: Sequence[str],
    clues: Iterable[str],
    k: int,
    latest: str | None = None,
    stale: AbstractSet[str] = frozenset(),
    ranks: Sequence[int] | None = None,
) -> Diagnosis:
    """Diagnostics of one ranked list (deduplicated round ids, best first) against `clues`.

    `latest` (the latest clue id) turns on the temporal metrics; `stale` is the set of round ids
    that are stale for this item; `ranks` are tie-aware ranks aligned with `ranked` (default the
    list positions)."""
    if k < 1:
        raise ValueError(f"k must be >= 1, got {k}")
    clue_set = set(clues)
    if not clue_set:
        raise ValueError("an item needs at least one gold clue to be diagnosed")
    if ranks is None:
        ranks = range(1, len(ranked) + 1)
    top = list(zip(ranked[:k], ranks[:k]))
    hit = sum(1 for r, _ in top if r in clue_set)
    n = len(clue_set)
    base = {"k": k, "n_clues": n, "n_hit": hit, "any_clue": hit > 0, "coverage": hit / n, "full_clue": hit == n}
    if latest is None:
        return Diagnosis(**base)
    latest_rank = next((rk for r, rk in top if r == latest), None)
    stale_ranks = [rk for r, rk in top if r in stale and r != latest]
    best_stale = min(stale_ranks) if stale_ranks else None
    present = latest_rank is not None
    above = present and best_stale is not None and best_stale < latest_rank
    return Diagnosis(
        **base,
        latest_hit=present,
        latest_miss=not present,
        rank_inversion=above,
        stale_dominance=above or (not present and best_stale is not None),
        n_stale=len(stale_ranks),
        latest_rank=latest_rank,
        best_stale_rank=best_stale,
    )


def temporal_eligible(task: Task, item: Item) -> bool:
    """Y3 metrics need a Y3 label and at least two existing clue rounds (an update to track)."""
    return Y3 in item.y and len(task.clue_chain(item)) >= 2


def item_diagnosis(task: Task, item: Item, retrieved: Sequence[Retrieved] | None, k: int,
                   ranks: Sequence[int] | None = None, deduped: bool = False) -> Diagnosis | None:
    """Diagnostics of a prediction's retrieved list, or None without valid provenance (no
    retrieval logged, or none of the item's clue rounds exists in the task). `deduped` says the
    list has no repeated round, `ranks` its tie-aware ranks when already computed."""
    chain = task.clue_chain(item)
    if retrieved is None or not chain:
        return None
    entries = retrieved if deduped else dedupe(retrieved)
    if ranks is None:
        ranks = tie_ranks([e.score for e in entries])
    ids = [e.round_id for e in entries]
    latest = chain[-1].round_id if temporal_eligible(task, item) else None
    stale = frozenset(r for r in ids if task.is_stale(item, r)) if latest else frozenset()
    return diagnose(ids, [r.round_id for r in chain], k, latest, stale, ranks)


# ----------------------------------------------------------------------------------- one item, one run


def top_k(retrieved: Sequence[Retrieved] | None, k: int) -> tuple[str, ...] | None:
    """What the retriever returned at K: the first K distinct round ids of the logged ranking (a
    longer logged list is a candidate pool); None when the run logged no retrieval."""
    if retrieved is None:
        return None
    head = [e.round_id for e in retrieved[:k]]
    if len(set(head)) == len(head):  # no repeat among the first K: they are the top K
        return tuple(head)
    seen: set[str] = set()
    out: list[str] = []
    for e in retrieved:
        if e.round_id not in seen:
            if len(out) == k:
                break
            seen.add(e.round_id)
            out.append(e.round_id)
    return tuple(out)


@dataclass  # not frozen (a frozen dataclass costs 2 µs more to build, once per row and section): read-only
class ItemEvidence:
    """One run's evidence on one item at K: the per-item values the report's evidence and delivery
    tables are built from, and that the app's Item screen and case cards show (`item_evidence`).

    - `retrieved`: the top K distinct round ids (None: retrieval not logged); `pool`: the whole logged
      ranking, deduplicated (candidates beyond K are shown, never counted as retrieved);
    - `delivered`: the rounds in the reader's request (None: unknown, never "same as retrieved");
    - `facts`: the chain facts counted (their round is in the task); `chain`: how many of them were
      retrieved (in the top K) and delivered;
    - `not_delivered`: top-K rounds left out of the request (both lists logged), in rank order;
    - `diagnosis`: the retrieval diagnostics at K (None without valid provenance);
    - `counted`: whether the tables count the item at all (abstention controls are left out)."""

    k: int
    logged: tuple[Retrieved, ...] | None  # the ranking as the run logged it
    retrieved: tuple[str, ...] | None
    delivered: tuple[str, ...] | None
    facts: tuple[ChainFact, ...]
    chain: ChainStatus
    not_delivered: tuple[str, ...] | None
    counted: bool
    task: Task = field(compare=False, repr=False)
    item: Item = field(compare=False, repr=False)

    @cached_property
    def pool(self) -> tuple[Retrieved, ...] | None:
        """The whole logged ranking, deduplicated (its first K round ids are `retrieved`)."""
        return None if self.logged is None else dedupe(self.logged)

    @cached_property
    def ranks(self) -> list[int]:
        """Tie-aware ranks of `pool` (an entry whose score equals the previous one's shares its rank)."""
        return tie_ranks([e.score for e in self.pool or ()])

    @cached_property
    def diagnosis(self) -> Diagnosis | None:
        # computed on first use: the chain and delivery tables do not need it
        return item_diagnosis(self.task, self.item, self.pool, self.k, self.ranks, deduped=True)

    @property
    def any_logged(self) -> bool:
        """The run logged a retrieved or a delivered list (the chain tables count the item)."""
        return self.retrieved is not None or self.delivered is not None


def item_evidence(task: Task, item: Item, prediction: Prediction, k: int) -> ItemEvidence:
    """The one place that decides what a run retrieved (the top K of its logged ranking), delivered
    and left out for one item: the evidence and delivery sections and the app all read it."""
    logged = prediction.retrieved
    retrieved = None if logged is None else top_k(logged, k)
    delivered = prediction.delivered
    facts = tuple(f for f in item.chain if task.has_round(f.round_id))
    status = chain_status([f.round_id for f in facts], retrieved, delivered)
    dropped = None if retrieved is None or delivered is None else tuple(not_delivered(retrieved, delivered))
    return ItemEvidence(k, logged, retrieved, delivered, facts, status, dropped, item.answerable, task, item)


# ----------------------------------------------------------------------------------- recall curve


def clue_positions(ranked: Sequence[str], clues: Iterable[str]) -> np.ndarray:
    """1-based list position of each gold clue in a deduplicated ranked list (inf when absent)."""
    pos = {r: i for i, r in enumerate(ranked, start=1)}
    return np.array([pos.get(c, np.inf) for c in sorted(set(clues))], dtype=float)


def recall_curve(positions: Sequence[np.ndarray], ks: Sequence[int]) -> dict[str, np.ndarray]:
    """Any-Clue, Coverage and Full-Clue Recall at every K in `ks`, averaged over items; `positions`
    holds each item's clue positions (from `clue_positions`)."""
    kk = np.asarray(ks, dtype=float)
    if not len(positions):
        empty = np.full(kk.shape, np.nan)
        return {"k": kk.astype(int), "any_clue_recall": empty, "coverage": empty, "full_clue_recall": empty}
    width = max(len(p) for p in positions)
    # (items, clues) padded with NaN: NaN <= K is False and NaN does not count as a clue.
    mat = np.full((len(positions), width), np.nan)
    for i, p in enumerate(positions):
        mat[i, : len(p)] = p
    n_clues = np.isfinite(mat).sum(axis=1) + np.isinf(mat).sum(axis=1)
    hit = (mat[:, :, None] <= kk[None, None, :]).sum(axis=1)  # (items, ks)
    return recall_from_hits(hit, n_clues, ks)


def recall_from_hits(hit: np.ndarray, n_clues: np.ndarray, ks: Sequence[int]) -> dict[str, np.ndarray]:
    """recall_curve from each item's clue count at every K (`hit`, items × ks, integers) and its
    number of distinct clues (scorer.metrics.evidence_flat.clue_hits gives both for many rows)."""
    kk = np.asarray(ks, dtype=float)
    if not len(hit):
        return recall_curve([], ks)
    return {
        "k": kk.astype(int),
        "any_clue_recall": (hit > 0).mean(axis=0),
        "coverage": (hit / n_clues[:, None]).mean(axis=0),
        "full_clue_recall": (hit == n_clues[:, None]).mean(axis=0),
    }


# ----------------------------------------------------------------------------------- app marks


@dataclass(frozen=True)
class RoundMark:
    """One retrieved round as the app's Item screen shows it."""

    round_id: str
    rank: int  # tie-aware rank
    position: int  # 1-based list position (of the deduplicated list)
    score: float | None
    recency_age: float | None
    in_top_k: bool  # counted as retrieved (beyond K: a candidate the reader was not given by retrieval)
    exists: bool  # the round id is in the task
    gold: bool
    stale: bool
    latest: bool
    delivered: bool | None  # None when the run did not log what it delivered


@dataclass(frozen=True)
class ChainMark:
    round_id: str
    role: str
    modality: str | None
    retrieved: bool | None  # in the top K (None: retrieval not logged or the fact is not counted)
    delivered: bool | None  # in the request (None: delivery not logged or the fact is not counted)
    counted: bool = True  # False: its round is not in the task, so the chain metrics leave it out


@dataclass(frozen=True)
class EvidenceMarks:
    k: int
    rounds: tuple[RoundMark, ...]  # the whole logged ranking, deduplicated; in_top_k marks the top K
    chain: tuple[ChainMark, ...]  # the item's chain facts, in the benchmark's order
    chain_retrieved: bool | None  # every counted chain fact in the top K (None: retrieval unknown)
    chain_delivered: bool | None  # every counted chain fact delivered (None: delivery unknown)
    delivered_not_retrieved: tuple[str, ...]  # in the request without being in the top K
    diagnosis: Diagnosis | None
    status: ChainStatus | None = None  # the counts behind chain_retrieved / chain_delivered (n/m)
    dropped: tuple[RoundMark, ...] = ()  # top-K rounds packing left out of the request
    counted: bool = True  # False for an abstention control: the report's tables leave the item out


def item_evidence_marks(task: Task, item: Item, prediction: Prediction, k: int = DEFAULT_K) -> EvidenceMarks:
    """Everything the Item screen marks for one run's row: each retrieved round's rank, score,
    gold/stale/latest/delivered flags, and the chain's retrieved/delivered completeness. Built on
    `item_evidence`, which the scorer's evidence and delivery tables read: the app and the report
    never disagree (tests/tui/test_evidence_truth.py compares them on every demo item and run)."""
    ev = item_evidence(task, item, prediction, k)
    entries = ev.pool or ()
    ranks = ev.ranks
    gold = {r.round_id for r in task.clue_chain(item)}
    latest_round = task.latest_clue(item) if temporal_eligible(task, item) else None
    latest = latest_round.round_id if latest_round else None
    delivered_set = set(ev.delivered) if ev.delivered is not None else None
    rounds = tuple(
        RoundMark(
            round_id=e.round_id, rank=rk, position=pos, score=e.score, recency_age=e.recency_age,
            in_top_k=pos <= k, exists=task.has_round(e.round_id), gold=e.round_id in gold,
            stale=bool(latest) and task.is_stale(item, e.round_id), latest=e.round_id == latest,
            delivered=None if delivered_set is None else e.round_id in delivered_set,
        )
        for pos, (e, rk) in enumerate(zip(entries, ranks), start=1)
    )
    top = set(ev.retrieved) if ev.retrieved is not None else None
    counted = {f.round_id for f in ev.facts}
    chain = tuple(
        ChainMark(
            f.round_id, f.role, f.modality or fact_modality(task, f.round_id),
            None if top is None or f.round_id not in counted else f.round_id in top,
            None if delivered_set is None or f.round_id not in counted else f.round_id in delivered_set,
            f.round_id in counted,
        )
        for f in item.chain
    )
    extra = tuple(d for d in dict.fromkeys(ev.delivered or ()) if top is None or d not in top)
    by_id = {m.round_id: m for m in rounds} if ev.not_delivered else {}
    return EvidenceMarks(
        k=k,
        rounds=rounds,
        chain=chain,
        chain_retrieved=ev.chain.chain_retrieved,
        chain_delivered=ev.chain.chain_delivered,
        delivered_not_retrieved=extra if top is not None else (),
        diagnosis=ev.diagnosis,
        status=ev.chain,
        dropped=tuple(by_id[r] for r in ev.not_delivered or ()),
        counted=ev.counted,
    )


def round_modalities(task: Task, round_id: str) -> tuple[str, ...]:
    """The media kinds a round carries, in (image, video, audio) order; ("text",) when none."""
    r = task.round(round_id)
    kinds = {m.kind for m in r.media} if r is not None else set()
    found = tuple(k for k in ("image", "video", "audio") if k in kinds)
    return found or ("text",)


def fact_modality(task: Task, round_id: str) -> str:
    """A chain fact's modality when the benchmark does not give one: the round's first media kind
    (video before image before audio, the richest channel first), else text."""
    kinds = round_modalities(task, round_id)
    for k in ("video", "image", "audio"):
        if k in kinds:
            return k
    return "text"
