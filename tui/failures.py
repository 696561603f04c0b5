"""How a run failed on an item, for the Items screen's failure filters: one set of (item id, mode)
keys per failure kind and run, decided by the scorer's own per-item functions so that a filter's
count is the count behind the report's number.

- retrieved but not delivered: a required fact in the top K that packing left out of the request
  (scorer.metrics.evidence.item_evidence's `not_delivered` ∩ its chain facts — what the delivery
  table's "Req. facts not deliv." adds up);
- chain incomplete in the top K: `item_evidence(...).chain.chain_retrieved` is False (the evidence
  and delivery tables' Chain Retr.);
- stale dominates / rank inversion / latest missed: scorer.metrics.evidence.item_diagnosis on an
  eligible Y3 item (the evidence table's Stale-Dom., Rank-Inv., Latest-Miss);
- abstained on an answerable item / answered an unanswerable one: scorer.metrics.abstention's
  prediction_abstention (the logged flag, else the text rule) > 0, resp. < 1 (an MCQ row's value is
  the mean over its rotations: the report's rate is the mean of these values).

The evidence kinds count answerable items only, as the sections do (abstention controls have no
evidence to retrieve). Plain Python, no Textual.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping
from dataclasses import dataclass

from scorer.metrics.abstention import compile_patterns, prediction_abstention
from scorer.metrics.constants import DEFAULT_K
from scorer.metrics.evidence import item_evidence
from scorer.model import Item, Prediction, Task

Key = tuple[str, str]


@dataclass(frozen=True)
class Kind:
    name: str  # the filter's id (Filter.failures holds these)
    label: str  # what the picker and the filter bar say


KINDS: tuple[Kind, ...] = (
    Kind("not_delivered", "retrieved but not delivered"),
    Kind("chain_incomplete", "chain incomplete in the top K"),
    Kind("stale_dominance", "stale dominates"),
    Kind("rank_inversion", "rank inversion"),
    Kind("latest_miss", "latest missed"),
    Kind("abstained_answerable", "abstained on an answerable item"),
    Kind("answered_unanswerable", "answered an unanswerable item"),
)
LABELS: dict[str, str] = {k.name: k.label for k in KINDS}
TEMPORAL = ("stale_dominance", "rank_inversion", "latest_miss")


def item_failures(task: Task, item: Item, p: Prediction, k: int = DEFAULT_K, patterns=None) -> set[str]:
    """The failure kinds of one run's prediction on one item."""
    out: set[str] = set()
    rx = patterns if patterns is not None else _RX
    abst, _ = prediction_abstention(item, p, rx)
    if item.answerable:
        if abst > 0:
            out.add("abstained_answerable")
        ev = item_evidence(task, item, p, k)
        if ev.not_delivered:
            gone = set(ev.not_delivered)
            if any(f.round_id in gone for f in ev.facts):
                out.add("not_delivered")
        if ev.any_logged and ev.chain.chain_retrieved is False:
            out.add("chain_incomplete")
        d = ev.diagnosis
        if d is not None and d.temporal:
            for name in TEMPORAL:
                if getattr(d, name):
                    out.add(name)
    elif abst < 1:
        out.add("answered_unanswerable")
    return out


_RX = compile_patterns()


def run_failures(pairs: Iterable[tuple[Task, Item, Prediction]], k: int = DEFAULT_K) -> dict[str, frozenset[Key]]:
    """kind → the (item id, mode) keys one run failed that way (every kind present, maybe empty)."""
    found: dict[str, set[Key]] = {kind.name: set() for kind in KINDS}
    for task, item, p in pairs:
        for name in item_failures(task, item, p, k):
            found[name].add((item.item_id, item.mode))
    return {name: frozenset(keys) for name, keys in found.items()}


def flag_index(flags: Iterable[Mapping], notes: Iterable[Mapping]) -> tuple[dict[str, frozenset[str]], frozenset[str]]:
    """(flag kind → item ids flagged so, item ids with a note) from the store's current rows."""
    by_kind: dict[str, set[str]] = {}
    for r in flags:
        by_kind.setdefault(str(r.get("flag") or "?"), set()).add(r["item_id"])
    return {k: frozenset(v) for k, v in sorted(by_kind.items())}, frozenset(r["item_id"] for r in notes)
