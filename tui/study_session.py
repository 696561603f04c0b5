"""One annotator working through one study: the queue, where they are, and every act written to the
store (committed before the caller shows it as saved).

No Textual here, so the queue logic is tested and timed without an app. The Study screens
(tui/screens/study_*.py) only render `StudySession` and call its methods.
"""

from __future__ import annotations

import time
from dataclasses import dataclass
from typing import Any

from scorer.errors import UserError
from scorer.model import Item, Prediction
from scorer.store import STUDY_EVENT, QueueEntry, Study, oracle_rotation


@dataclass(frozen=True)
class Saved:
    """What the screen shows once a write has returned (it is on disk)."""

    entry: QueueEntry
    event_id: int
    kind: str
    payload: dict
    seconds: float  # wall time of the write itself


class StudySession:
    def __init__(self, state: Any, name: str) -> None:
        if state.store is None:
            raise UserError("a study is kept in the annotation database: open the app with --db FILE")
        self.state = state
        self.store = state.store
        self.annotator: str = state.annotator
        self.study: Study = self.store.study(name)
        self.name = name
        self.event_kind = STUDY_EVENT[self.study.kind]
        self.queue: list[QueueEntry] = []
        self.done: set[int] = set()
        self.pos = 0  # index into queue (0-based); == len(queue) never: finished is a flag
        self.reload()
        self.pos = self.first_open(0)

    # -- queue -------------------------------------------------------------------------------------
    def reload(self) -> None:
        """Re-read the queue and what is done from the store (after an undo, or another process)."""
        self.queue = self.store.annotator_queue(self.name, self.annotator)
        self.done = {q.position for q in self.queue if q.done}

    @property
    def total(self) -> int:
        return len(self.queue)

    @property
    def n_done(self) -> int:
        return len(self.done)

    @property
    def finished(self) -> bool:
        return self.n_done >= self.total

    @property
    def entry(self) -> QueueEntry:
        return self.queue[self.pos]

    def is_done(self, entry: QueueEntry | None = None) -> bool:
        return (entry or self.entry).position in self.done

    def first_open(self, start: int) -> int:
        """The first entry not yet done at or after `start`, wrapping round; `start` if none is open."""
        n = len(self.queue)
        for k in range(n):
            i = (start + k) % n
            if self.queue[i].position not in self.done:
                return i
        return min(start, n - 1)

    def step(self, delta: int) -> None:
        self.pos = max(0, min(self.pos + delta, len(self.queue) - 1))

    # -- what an entry shows -------------------------------------------------------------------------
    def item(self, entry: QueueEntry | None = None) -> Item | None:
        e = entry or self.entry
        bench = self.state.bench
        if e.mode is not None:
            return bench.item(e.item_id, e.mode)
        return bench.item(e.item_id, "open") or bench.item(e.item_id, "mcq")

    def prediction(self, entry: QueueEntry | None = None) -> Prediction | None:
        """The prediction an agreement entry is about (from the runs the app loaded), or None."""
        e = entry or self.entry
        item = self.item(e)
        if item is None or e.run_key is None:
            return None
        for ref, p in self.state.predictions(item):
            if ref.key == e.run_key and ref.mode == e.mode:
                return p
        return None

    def rotation(self, entry: QueueEntry | None = None) -> int:
        e = entry or self.entry
        item = self.item(e)
        return oracle_rotation(self.study.seed, self.annotator, e.item_id, len(item.rotations) if item else 0)

    def current_answer(self, entry: QueueEntry | None = None) -> dict | None:
        """This annotator's live answer to the entry in this study, if any (for review)."""
        e = entry or self.entry
        if e.position not in self.done:
            return None
        for row in self.store.current(self.event_kind, study=self.name, annotator=self.annotator):
            if (row["item_id"], row["mode"], row["run_key"]) == (e.item_id, e.mode, e.run_key):
                return row
        return None

    def trace(self, entry: QueueEntry | None = None) -> list[Any]:
        """Every live act of this annotator on the entry in this study, oldest first, read from the
        store: the answer (only the latest stands), each note and each flag with its reason."""
        e = entry or self.entry
        ident = (e.item_id, e.mode, e.run_key)
        return [ev for ev in self.store.events(study=self.name, annotator=self.annotator, live_only=True)
                if (ev.item_id, ev.mode, ev.run_key) == ident]

    def same_as_current(self, payload: dict, entry: QueueEntry | None = None) -> dict | None:
        """The live answer to the entry if it says what `payload` says (timing aside), else None."""
        mine = self.current_answer(entry)
        if mine is None:
            return None
        fields = [k for k in payload if k != "seconds"]
        def norm(v: Any) -> Any:
            return sorted(v) if isinstance(v, list) else v
        return mine if all(norm(mine.get(k)) == norm(payload[k]) for k in fields) else None

    # -- acts ----------------------------------------------------------------------------------------
    def _write(self, kind: str, payload: dict) -> Saved:
        e = self.entry
        started = time.perf_counter()
        ev = self.store.add(kind, self.annotator, e.item_id, payload, mode=e.mode, run_key=e.run_key,
                            study=self.name)
        return Saved(e, ev.id, kind, dict(ev.payload), time.perf_counter() - started)

    def answer(self, payload: dict) -> Saved:
        """Record the study's act on the current entry (committed when this returns); the entry is done."""
        saved = self._write(self.event_kind, payload)
        self.done.add(saved.entry.position)
        return saved

    def advance(self) -> None:
        """To the next entry not yet done after the current one (the current one if all are done)."""
        if not self.finished:
            self.pos = self.first_open(self.pos + 1)

    def note(self, text: str) -> Saved:
        return self._write("note", {"text": text})

    def flag(self, flag: str, text: str | None = None) -> Saved:
        payload = {"flag": flag} if not text else {"flag": flag, "text": text}
        return self._write("flag", payload)

    def last_act(self) -> Any | None:
        return self.store.last_act(self.annotator, study=self.name)

    def undo(self, act: Any | None = None) -> tuple[Any, Any] | None:
        """Undo this annotator's last act in this study (or `act`, one of theirs found earlier);
        returns (the act, the undo event) or None. An undone answer reopens its entry, and the
        session goes back to it."""
        last = act if act is not None else self.last_act()
        if last is None:
            return None
        undo = self.store.undo(self.annotator, last.id)
        self.reload()
        for i, q in enumerate(self.queue):
            if (q.item_id, q.mode, q.run_key) == (last.item_id, last.mode, last.run_key):
                self.pos = i
                break
        return last, undo
