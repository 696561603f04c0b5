"""The typed model of a benchmark: tasks, their sessions and rounds, items, media.

Everything is a frozen dataclass: the readers (scorer.load) build them once, and every other part of
memscope (scorer, app, judge, retrieval) reads them without being able to change them. Mappings are
exposed as read-only views. The raw dict of every round and item is kept (`raw`) so that no field a
benchmark file holds is ever lost.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from pathlib import Path
from types import MappingProxyType
from typing import Any, Iterator, Mapping

from scorer.model.frozen import empty


@dataclass(frozen=True, slots=True)
class Source:
    """Where a thing came from, for one-line error messages: `file:location`."""

    file: str
    location: str = ""

    def __str__(self) -> str:
        return f"{self.file}:{self.location}" if self.location else self.file


@dataclass(frozen=True, slots=True)
class Media:
    """One image, video or audio reference. Never decoded at load time.

    `path` is the resolved local file (inside the benchmark root unless the user allowed otherwise);
    `url` is set for remote references (e.g. LoCoMo's img_url). `text` is the caption (image/video)
    or transcript (audio). `frames` are pre-extracted video frame paths.
    """

    kind: str
    ref: str
    path: Path | None = None
    url: str | None = None
    text: str | None = None
    media_id: str | None = None
    frames: tuple[Path, ...] = ()
    problem: str | None = None  # why `path` could not be resolved, if it could not

    @property
    def is_remote(self) -> bool:
        return self.url is not None

    @property
    def name(self) -> str:
        return self.media_id or Path(self.ref).name or self.ref


@dataclass(frozen=True, slots=True, eq=False)
class Round:
    round_id: str
    session_id: str
    position: int  # 1-based position within its session
    order: int  # 0-based global chronological position within its task
    user: str = ""
    assistant: str = ""
    media: tuple[Media, ...] = ()
    date: str | None = None
    raw: Mapping[str, Any] = field(default_factory=empty)

    @property
    def images(self) -> tuple[Media, ...]:
        return tuple(m for m in self.media if m.kind == "image")

    @property
    def text(self) -> str:
        """User + assistant text with captions/transcripts: what a text-only method sees. A turn of a
        two-person conversation (LoCoMo) is prefixed with its speaker, as questions name people."""
        speaker = self.raw.get("speaker")
        parts = [self.user, self.assistant]
        if isinstance(speaker, str) and speaker:
            parts = [f"{speaker}: {p}" for p in parts if p] or [speaker]
        parts += [m.text for m in self.media if m.text]
        return "\n".join(p for p in parts if p)


@dataclass(frozen=True, slots=True)
class Session:
    session_id: str
    order: int  # 0-based chronological position within its task
    date: str | None
    rounds: tuple[Round, ...]
    source: Source = Source("")


@dataclass(frozen=True, slots=True)
class ChainFact:
    round_id: str
    role: str = "answer"
    modality: str | None = None
    challenge: str | None = None


@dataclass(frozen=True, slots=True)
class Rotation:
    """One MCQ rotation: its options (letter → text) and its answer letter."""

    options: Mapping[str, str]
    answer: str


@dataclass(frozen=True, slots=True, eq=False)
class Item:
    item_id: str  # "<Task>:<idx>", shared by an item's MCQ and open forms
    task: str
    index: int  # 1-based position in the task file's QA list (upstream `idx`)
    mode: str  # "mcq" | "open"
    question: str
    answer: str
    x: frozenset[str]
    y: frozenset[str]
    session_ids: tuple[str, ...] = ()
    clue_rounds: tuple[str, ...] = ()
    chain: tuple[ChainFact, ...] = ()
    rotations: tuple[Rotation, ...] = ()
    mcq_form: str | None = None  # "rotation" | "legacy" | None for open
    answerable: bool = True
    cluster: str = ""
    question_images: tuple[Media, ...] = ()
    explanation: str = ""
    source: Source = Source("")
    raw: Mapping[str, Any] = field(default_factory=empty)

    @property
    def key(self) -> tuple[str, str, int]:
        return (self.task, self.mode, self.index)

    @property
    def cells(self) -> tuple[tuple[str, str], ...]:
        """Every (X, Y) cell the item belongs to: the product of its labels, as upstream counts."""
        return tuple((x, y) for x in sorted(self.x) for y in sorted(self.y))


@dataclass(frozen=True, eq=False)
class Task:
    name: str
    sessions: tuple[Session, ...]
    items: tuple[Item, ...]  # both modes
    files: tuple[Path, ...] = ()
    profile: Mapping[str, Any] = field(default_factory=empty)
    _rounds: Mapping[str, Round] = field(default_factory=empty, repr=False)
    _chains: dict[int, tuple[Item, tuple[Round, ...]]] = field(default_factory=dict, repr=False, compare=False)

    def __post_init__(self) -> None:
        if not self._rounds:
            rounds = {r.round_id: r for s in self.sessions for r in s.rounds}
            object.__setattr__(self, "_rounds", MappingProxyType(rounds))

    @property
    def rounds(self) -> tuple[Round, ...]:
        return tuple(r for s in self.sessions for r in s.rounds)

    def round(self, round_id: str) -> Round | None:
        return self._rounds.get(round_id)

    def has_round(self, round_id: str) -> bool:
        return round_id in self._rounds

    def order_of(self, round_id: str) -> int | None:
        r = self._rounds.get(round_id)
        return None if r is None else r.order

    def clue_chain(self, item: Item) -> tuple[Round, ...]:
        """The item's existing clue rounds in chronological order (kept per item once computed:
        the evidence diagnostics ask for each item's chain once per run)."""
        hit = self._chains.get(id(item))
        if hit is not None and hit[0] is item:  # the item is held, so its id cannot be reused
            return hit[1]
        rounds = [self._rounds[c] for c in item.clue_rounds if c in self._rounds]
        chain = tuple(sorted(rounds, key=lambda r: r.order))
        self._chains[id(item)] = (item, chain)
        return chain

    def latest_clue(self, item: Item) -> Round | None:
        chain = self.clue_chain(item)
        return chain[-1] if chain else None

    def is_stale(self, item: Item, round_id: str) -> bool:
        """A round from one of the item's source sessions that precedes its latest clue (DESIGN §5)."""
        latest = self.latest_clue(item)
        r = self._rounds.get(round_id)
        if latest is None or r is None or r.round_id == latest.round_id:
            return False
        sessions = set(item.session_ids) or {c.session_id for c in self.clue_chain(item)}
        return r.session_id in sessions and r.order < latest.order


@dataclass(frozen=True, eq=False)
class Benchmark:
    root: Path
    name: str
    tasks: tuple[Task, ...]
    _tasks: Mapping[str, Task] = field(default_factory=empty, repr=False)
    _items: Mapping[tuple[str, str], Item] = field(default_factory=empty, repr=False)

    def __post_init__(self) -> None:
        object.__setattr__(self, "_tasks", MappingProxyType({t.name: t for t in self.tasks}))
        items = {(i.item_id, i.mode): i for t in self.tasks for i in t.items}
        object.__setattr__(self, "_items", MappingProxyType(items))

    def task(self, name: str) -> Task | None:
        return self._tasks.get(name)

    def item(self, item_id: str, mode: str) -> Item | None:
        return self._items.get((item_id, mode))

    def items(self, mode: str | None = None) -> Iterator[Item]:
        for t in self.tasks:
            for i in t.items:
                if mode is None or i.mode == mode:
                    yield i

    def item_ids(self) -> list[str]:
        """Distinct item ids in task order (an MCQ item and its open mirror share one id)."""
        seen: dict[str, None] = {}
        for i in self.items():
            seen.setdefault(i.item_id, None)
        return list(seen)

    def task_of(self, item: Item) -> Task:
        return self._tasks[item.task]
