"""The typed model of a benchmark and of a method's run.

Everything is a frozen dataclass: loaders build them once, and every other part of memscope
(scorer, app, judge, retrieval) reads them without being able to change them. Mappings are exposed
as read-only views. The raw upstream dict of every item and prediction row is kept (`raw`) so that
no field a user's runner wrote is ever lost.
"""

from __future__ import annotations

import json
from dataclasses import dataclass, field
from pathlib import Path
from types import MappingProxyType
from typing import Any, Iterable, Iterator, Mapping

X_LABELS = ("X1", "X2", "X3", "X4")
Y_LABELS = ("Y1", "Y2", "Y3")
MODES = ("mcq", "open")
# How a rotation MCQ row's EM is averaged: over the item's rotations (the paper's definition: an
# unlogged rotation scores 0) or over the rotations the row logged (`--rotations logged`).
ROTATION_RULES = ("item", "logged")
MEDIA_KINDS = ("image", "video", "audio")
CHAIN_ROLES = ("narrow", "select", "answer")
CHAIN_MODALITIES = ("text", "image", "video", "audio")
CHAIN_CHALLENGES = (
    "fine_attribute",
    "background",
    "spatial",
    "video_order",
    "video_count",
    "video_state",
    "prosody",
)

EMPTY: Mapping[str, Any] = MappingProxyType({})


def _empty() -> Mapping[str, Any]:
    return EMPTY


def frozen_map(d: Mapping | None) -> Mapping:
    return MappingProxyType(dict(d or {}))


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
    raw: Mapping[str, Any] = field(default_factory=_empty)

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
    raw: Mapping[str, Any] = field(default_factory=_empty)

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
    profile: Mapping[str, Any] = field(default_factory=_empty)
    _rounds: Mapping[str, Round] = field(default_factory=_empty, repr=False)
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
    _tasks: Mapping[str, Task] = field(default_factory=_empty, repr=False)
    _items: Mapping[tuple[str, str], Item] = field(default_factory=_empty, repr=False)

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


@dataclass(frozen=True, slots=True)
class Retrieved:
    round_id: str
    rank: int  # 1-based, best first
    score: float | None = None
    recency_age: float | None = None  # rounds between this round and the question


@dataclass(frozen=True, slots=True)
class RotationResult:
    rotation_idx: int
    correct_position: str | None
    choice: str | None
    em: float | None
    pred: str = ""


def _as_text(v: Any) -> str:
    if v is None:
        return ""
    return v if type(v) is str else json.dumps(v, ensure_ascii=False)


def _as_num(v: Any) -> float | None:
    t = type(v)
    if t is float:
        return v
    if t is int or t is bool:
        return float(v)
    if t is str:
        try:
            return float(v)
        except ValueError:
            return None
    return None


def _of_type(v: Any, t: type) -> Any:
    return v if type(v) is t else None


@dataclass(frozen=True, slots=True, eq=False)
class Prediction:
    """One upstream row, kept whole in `raw`. Only what identifies it is stored; every score and
    text is read from `raw` on access (as the upstream runner wrote it), which keeps loading tens of
    thousands of rows cheap: building one object per row is most of a load's cost."""

    task: str
    mode: str
    idx: int
    line: int  # 1-based line in predictions.jsonl
    raw: Mapping[str, Any] = field(default_factory=_empty)
    parsed: dict[str, Any] | None = field(default=None, repr=False)  # rotations/retrieved/delivered once read

    question = property(lambda self: _as_text(self.raw.get("question")))
    gt = property(lambda self: _as_text(self.raw.get("gt")))
    pred = property(lambda self: _as_text(self.raw.get("pred")))
    em = property(lambda self: _as_num(self.raw.get("em")))
    judge = property(lambda self: _as_num(self.raw.get("judge")))
    bleu_1 = property(lambda self: _as_num(self.raw.get("bleu_1")))
    exact_match = property(lambda self: _as_num(self.raw.get("exact_match")))
    contains_gt = property(lambda self: _as_num(self.raw.get("contains_gt")))
    f1 = property(lambda self: _as_num(self.raw.get("f1")))
    judge_reasoning = property(lambda self: _of_type(self.raw.get("judge_reasoning"), str))
    choice = property(lambda self: _of_type(self.raw.get("choice"), str) or None)
    valid_choice = property(lambda self: _of_type(self.raw.get("valid_choice"), bool))
    abstained = property(lambda self: _of_type(self.raw.get("abstained"), bool))

    @property
    def history_source(self) -> str | None:
        hs = self.raw.get("history_source")
        if hs is None:
            runtime = self.raw.get("method_runtime")
            hs = runtime.get("history_source") if type(runtime) is dict else None
        return hs if type(hs) is str else None

    @property
    def item_id(self) -> str:
        return f"{self.task}:{self.idx}"

    @property
    def rotations(self) -> tuple[RotationResult, ...]:
        from scorer.load.rows import rotations_of

        return self._memo("rotations", rotations_of, self.raw)

    @property
    def retrieved(self) -> tuple[Retrieved, ...] | None:
        """Ranked retrieval, best first; None when the run logged none (unknown, not empty)."""
        from scorer.load.rows import retrieved_of

        return self._memo("retrieved", retrieved_of, self.raw)

    @property
    def delivered(self) -> tuple[str, ...] | None:
        """Round ids placed in the reader's request; None when unknown (not "same as retrieved")."""
        from scorer.load.rows import delivered_of

        return self._memo("delivered", delivered_of, self.raw, self.history_source)

    def _memo(self, name: str, parse: Any, *args: Any) -> Any:
        # Parsed lists (immutable tuples) are kept once read: the evidence diagnostics read a
        # row's retrieval several times, and parsing it is what costs.
        memo = self.parsed
        if memo is None:
            memo = {}
            object.__setattr__(self, "parsed", memo)
        if name not in memo:
            memo[name] = parse(*args)
        return memo[name]


@dataclass(frozen=True, slots=True)
class RunProblem:
    """Something a reader noticed in a run folder that changes what its numbers mean: a non-finite
    number read as missing, a score logged as text, a task name matched loosely. `location` is
    `file:line` (or the file alone); `severity` is "error", "warning" or "note"."""

    location: str
    severity: str
    message: str
    kind: str = ""

    def __str__(self) -> str:
        return f"{self.location}: {self.severity}: {self.message}"


@dataclass(frozen=True, eq=False)
class Run:
    """One (backbone, method, mode) over one task, read from one upstream run folder."""

    backbone: str
    method: str
    mode: str
    task: str
    folder: Path
    modality: str | None = None  # "text" | "multimodal" | "no_visual" | as logged | None (scorer.names)
    config: Mapping[str, Any] = field(default_factory=_empty)
    metrics: Mapping[str, Any] = field(default_factory=_empty)
    predictions: tuple[Prediction, ...] = ()
    problems: tuple[RunProblem, ...] = ()  # what the reader noticed (scorer.load.row_checks)

    @property
    def key(self) -> str:
        """`<backbone>/<method>`: the name a run goes by in tables, studies and annotations."""
        return f"{self.backbone}/{self.method}"

    @property
    def has_retrieval(self) -> bool:
        from scorer.load.rows import has_retrieval_log

        return any(has_retrieval_log(p.raw) for p in self.predictions)


def iter_predictions(runs: Iterable[Run]) -> Iterator[tuple[Run, Prediction]]:
    for run in runs:
        for p in run.predictions:
            yield run, p
