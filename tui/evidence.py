"""What one run retrieved and delivered for one item, shaped for the Item screen.

The marks (rank, score, gold, stale, latest, delivered, chain completeness and its counts, what
packing dropped) come from scorer.metrics.evidence.item_evidence_marks, built on item_evidence — the
per-item function the scorer's evidence and delivery tables read — at the scorer's K, so the app and
the report never disagree. This module only adds what the screen lists besides: the delivered rounds
in dialogue order with the same marks. Plain Python.
"""

from __future__ import annotations

from dataclasses import dataclass

from scorer.metrics.constants import DEFAULT_K  # the K of `memscope score` and of the Scores screen
from scorer.metrics.evidence import EvidenceMarks, RoundMark, item_evidence_marks, temporal_eligible
from scorer.model import Item, Prediction, Task


@dataclass(frozen=True, slots=True)
class DeliveredRow:
    round_id: str
    gold: bool
    stale: bool
    latest: bool
    retrieved_rank: int | None  # its rank in the retrieved list; None when not retrieved / unknown
    exists: bool


@dataclass(frozen=True)
class RunEvidence:
    marks: EvidenceMarks
    delivered: tuple[DeliveredRow, ...] | None  # dialogue order; None when the run did not log it
    dropped: tuple[RoundMark, ...]  # in the top K, not delivered (only when both were logged)
    retrieval_logged: bool
    history_source: str | None

    @property
    def rounds(self) -> tuple[RoundMark, ...]:
        return self.marks.rounds


def latest_round(task: Task, item: Item) -> str | None:
    """The latest clue of a Y3 item with an update to track (two or more clues), else None."""
    if not temporal_eligible(task, item):
        return None
    r = task.latest_clue(item)
    return r.round_id if r else None


def stale_clues(task: Task, item: Item) -> set[str]:
    """The item's own clue rounds that its latest clue supersedes (Y3 only)."""
    if latest_round(task, item) is None:
        return set()
    return {r.round_id for r in task.clue_chain(item) if task.is_stale(item, r.round_id)}


def run_evidence(task: Task, item: Item, p: Prediction, k: int = DEFAULT_K) -> RunEvidence:
    marks = item_evidence_marks(task, item, p, k)
    latest = latest_round(task, item)
    gold = {r.round_id for r in task.clue_chain(item)}
    rank_of = {m.round_id: m.rank for m in marks.rounds}
    delivered_raw = p.delivered
    delivered = None
    if delivered_raw is not None:
        ids = sorted(dict.fromkeys(delivered_raw),
                     key=lambda r: (task.order_of(r) is None, task.order_of(r) or 0))
        delivered = tuple(
            DeliveredRow(r, r in gold, bool(latest) and task.is_stale(item, r), r == latest,
                         rank_of.get(r), task.has_round(r))
            for r in ids)
    return RunEvidence(marks, delivered, marks.dropped, p.retrieved is not None, p.history_source)
