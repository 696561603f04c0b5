"""The Items table's rows and filters: one row per (item, mode) with each run's score, the filters
the Items screen combines, their order and the bar that names them. Computed once at load by
tui.state; read by the screens.

No Textual here: plain Python, tested and timed on its own.
"""

from __future__ import annotations

from dataclasses import dataclass, replace
from typing import Callable, Mapping, Protocol, Sequence

from scorer.metrics.constants import JUDGE_THRESHOLD
from scorer.model import Item, Prediction

RIGHT = JUDGE_THRESHOLD  # a score ≥ this counts as right: DESIGN §5's judge ≥ 0.5 → accept, and most MCQ rotations


@dataclass(frozen=True, slots=True)
class RunRef:
    """One (backbone, method, mode) across every task folder it was run on."""

    index: int  # position in AppState.run_refs; widget ids use it (data never becomes an id)
    backbone: str
    method: str
    mode: str
    display: str
    modality: str | None

    @property
    def key(self) -> str:
        return f"{self.backbone}/{self.method}"

    @property
    def title(self) -> str:
        return f"{self.display} · {self.backbone}"

    @property
    def is_text(self) -> bool:
        return self.modality == "text"


def score_of(p: Prediction, mode: str) -> float | None:
    """The item-level score the app shows: EM for MCQ (mean over rotations), the judge for open."""
    if mode == "mcq":
        if p.em is not None:
            return p.em
        ems = [r.em for r in p.rotations if r.em is not None]
        return sum(ems) / len(ems) if ems else None
    return p.judge


@dataclass(frozen=True, slots=True)
class ItemRow:
    """One (item, mode): what the Items table shows and filters on, computed once at load."""

    item: Item
    search: str  # lower-cased id, task, question, answer and options
    scores: Mapping[int, float | None]  # run index → score, for runs that answered this item
    annotated: bool = False
    disagree: bool = False  # a human verdict differs from the judge on some run

    judge: float | None = None  # the mean judge score over the runs that answered (open items)
    key: tuple[str, str] = ("", "")  # (item id, mode): set from the item (a field: read for every row of a filter)

    def __post_init__(self) -> None:
        object.__setattr__(self, "key", (self.item.item_id, self.item.mode))

    def wrong(self, run_index: int) -> bool:
        s = self.scores.get(run_index)
        return s is not None and s < RIGHT

    def right(self, run_index: int) -> bool:
        s = self.scores.get(run_index)
        return s is not None and s >= RIGHT

    @property
    def right_count(self) -> tuple[int, int]:
        known = [s for s in self.scores.values() if s is not None]
        return sum(s >= RIGHT for s in known), len(known)


SORT_COLUMNS = ("task", "id", "X", "Y", "score", "judge", "disagreement")  # what the Items table sorts by


class HasRunRefs(Protocol):
    """What Filter.describe reads of the app state (tui.state.AppState)."""

    run_refs: Sequence["RunRef"]


@dataclass(frozen=True)
class Filter:
    """The Items screen's filters (None, "" or () means "any") and its order.

    `run` is the run the list is about (a Scores cell, a failure or wrong/right filter): only items
    it scored, its score is the "score" column and items open on its tab. `failures` are
    tui.failures kinds of `run` (all must hold); `right_run` with `wrong_run`: A right, B wrong."""

    task: str | None = None
    x: str | None = None
    y: str | None = None
    mode: str | None = None
    answerable: bool | None = None
    wrong_run: int | None = None  # a RunRef index: items that run got wrong
    disagree: bool = False
    annotated: bool | None = None
    text: str = ""
    run: int | None = None  # a RunRef index: items that run scored (the run the list is about)
    right_run: int | None = None  # a RunRef index: items that run got right
    failures: tuple[str, ...] = ()  # tui.failures kinds of `run`, all of them
    flag: str | None = None  # a flag kind ("" = any flag)
    noted: bool = False  # items with a note
    sort: str | None = None  # one of SORT_COLUMNS (None: benchmark order)
    descending: bool = False

    def with_(self, **kw) -> "Filter":
        return replace(self, **kw)

    @property
    def about(self) -> int | None:
        """The run this list is about (its tab opens first on the Item screen), if any."""
        for r in (self.run, self.wrong_run, self.right_run):
            if r is not None:
                return r
        return None

    def describe(self, state: "HasRunRefs") -> list[tuple[str, str]]:
        """(name, value) pairs of the active filters, for the filter bar."""
        from tui.failures import LABELS  # lazy: tui.failures pulls numpy in (~40 ms of the app's start)

        out = []
        if self.run is not None:
            out.append(("run", run_label(state.run_refs[self.run])))
        if self.task:
            out.append(("task", self.task))
        if self.x:
            out.append(("X", self.x))
        if self.y:
            out.append(("Y", self.y))
        if self.mode:
            out.append(("mode", self.mode))
        if self.answerable is not None:
            out.append(("answerable", "yes" if self.answerable else "no"))
        for kind in self.failures:
            out.append(("failed", LABELS.get(kind, kind)))
        if self.right_run is not None:
            out.append(("right", run_label(state.run_refs[self.right_run])))
        if self.wrong_run is not None:
            out.append(("wrong", run_label(state.run_refs[self.wrong_run])))
        if self.disagree:
            out.append(("judge≠human", "yes"))
        if self.flag is not None:
            out.append(("flagged", self.flag or "any"))
        if self.noted:
            out.append(("note", "yes"))
        if self.annotated is not None:
            out.append(("annotated", "yes" if self.annotated else "no"))
        if self.text:
            out.append(("search", self.text))
        if self.sort:
            out.append(("sorted", f"{self.sort} {'↓' if self.descending else '↑'}"))
        return out


def run_label(ref: "RunRef") -> str:
    return f"{ref.display} ({ref.backbone}, {ref.mode})"


def matches(row: ItemRow, f: Filter, sets: "Sets | None" = None) -> bool:
    it = row.item
    if f.task and it.task != f.task:
        return False
    if f.x and f.x not in it.x:
        return False
    if f.y and f.y not in it.y:
        return False
    if f.mode and it.mode != f.mode:
        return False
    if f.answerable is not None and it.answerable != f.answerable:
        return False
    if f.run is not None and row.scores.get(f.run) is None:
        return False
    if f.wrong_run is not None and not row.wrong(f.wrong_run):
        return False
    if f.right_run is not None and not row.right(f.right_run):
        return False
    if f.disagree and not row.disagree:
        return False
    if f.annotated is not None and row.annotated != f.annotated:
        return False
    if sets is not None:
        if any(row.key not in s for s in sets.keys):
            return False
        if any(it.item_id not in s for s in sets.ids):
            return False
    if f.text:
        return all(word in row.search for word in f.text.lower().split())
    return True


@dataclass(frozen=True)
class Sets:
    """The failure and flag filters resolved to sets: a row must be in every one."""

    keys: tuple[frozenset, ...] = ()  # of (item id, mode)
    ids: tuple[frozenset, ...] = ()  # of item ids


def sort_key(column: str, run: int | None) -> Callable[[ItemRow], tuple]:
    """The Items order by one of SORT_COLUMNS; rows without a value go last either way round
    (see AppState.filtered), ties keep the benchmark order (a stable sort)."""
    if column == "task":
        return lambda r: (r.item.task,)
    if column == "id":
        return lambda r: (r.item.item_id, r.item.mode)
    if column in ("X", "Y"):
        attr = column.lower()
        return lambda r: (",".join(sorted(getattr(r.item, attr))),)
    if column == "score":
        if run is None:
            return lambda r: (_mean(r.scores.values()),)
        return lambda r: (r.scores.get(run),)
    if column == "judge":
        return lambda r: (r.judge,)
    if column == "disagreement":
        return lambda r: (int(r.disagree),)
    raise ValueError(f"unknown sort column {column!r} (known: {', '.join(SORT_COLUMNS)})")


def _mean(values) -> float | None:
    known = [v for v in values if v is not None]
    return sum(known) / len(known) if known else None


def search_text(it: Item) -> str:
    parts = [it.item_id, it.task, it.question, it.answer, it.explanation]
    for rot in it.rotations[:1]:
        parts += list(rot.options.values())
    return "\n".join(parts).lower()
