"""How screens ask the app to go somewhere: each message names a destination and carries what it needs.

A screen posts one (`self.post_message(OpenItem(...))`); it bubbles from the screen to the app, whose
handler (`MemscopeApp.on_open_item`, …) builds the screen and pushes it. So no screen imports another:
the app is the hub that knows every screen (tui/app.py), and a screen knows only these messages.
"""

from __future__ import annotations

from dataclasses import dataclass

from textual.message import Message

from scorer.model import Item
from tui.rows import Filter
from tui.study_session import StudySession


@dataclass
class OpenItem(Message):
    """Open the Item screen on `key`; n/p step through `keys` (the list it was opened from)."""

    keys: list[tuple[str, str]]
    key: tuple[str, str]
    run: int | None = None  # a RunRef index: the run whose tab opens first (the list was about it)


@dataclass
class OpenItems(Message):
    """Show the Items table with `filter` (a tui.state.Filter: a Scores cell, a palette entry)."""

    filter: Filter


@dataclass
class OpenRound(Message):
    """Open the Session screen on a task at a round (None: its first); with `item`, its clues are marked."""

    task: str
    round_id: str | None = None
    item: Item | None = None


@dataclass
class OpenSearch(Message):
    """Open search by meaning; from a session, its task's hits come first. A hit opens its round or item."""

    task: str | None = None


@dataclass
class OpenCompare(Message):
    """Put two runs (RunRef indices) side by side on one item."""

    key: tuple[str, str]
    left: int
    right: int


@dataclass
class OpenStudy(Message):
    """Work through a study in the screen for its kind (agreement, oracle, labels)."""

    session: StudySession


@dataclass
class AnnotationSaved(Message):
    """The store has committed an act (or its undo): the status line says "saved"."""
