"""A flag: one of the store's flag kinds, picked with 1–6, then an optional comment; enter saves."""

from __future__ import annotations

from typing import NamedTuple

from rich.text import Text
from textual.app import ComposeResult
from textual.containers import Vertical
from textual.widgets import Input, Static

from scorer.store import FLAGS
from tui.keymap import bind
from tui.modals.dialog import Dialog

FLAG_HELP = {
    "ambiguous": "the question or its answer can be read more than one way",
    "leakage": "the answer can be had without the evidence (question, options or text give it away)",
    "bad_media": "an image, video or audio clip is missing, broken or unreadable",
    "wrong_gold": "the gold answer (or correct option) is wrong",
    "wrong_label": "the item's X / Y labels are wrong",
    "other": "anything else (say what in the comment)",
}


class Flagged(NamedTuple):
    flag: str  # one of FLAGS
    comment: str | None


class FlagDialog(Dialog[Flagged]):
    """Returns the flag and its comment, or None."""

    BINDINGS = [bind(f"flag.pick-{i + 1}", f"pick({i})", show=False) for i in range(len(FLAGS))]  # choice keys
    AUTO_FOCUS = ""  # the digits pick the flag; the comment box takes focus only after that

    def __init__(self, where: Text) -> None:
        super().__init__()
        self.where = where
        self.choice: str | None = None

    def compose(self) -> ComposeResult:
        with Vertical():
            yield Static(Text.assemble("Flag ", self.where), classes="dialog-title")
            yield Static(self._list(), id="flag-list")
            yield Input(placeholder="optional comment, then enter", id="flag-text")
            yield Static(Text("1–6 picks the flag · enter saves · esc cancels"), classes="dialog-hint")

    def on_mount(self) -> None:
        box = self.query_one(Input)
        box.display = False
        box.disabled = True

    def _list(self) -> Text:
        out = Text()
        for i, f in enumerate(FLAGS):
            chosen = f == self.choice
            out.append(f"{'▶' if chosen else ' '} {i + 1} ", style="bold cyan")
            out.append(f"{f:<12}", style="bold reverse" if chosen else "bold")
            out.append(f" {FLAG_HELP[f]}\n", style="" if chosen else "dim")
        out.rstrip()
        return out

    def action_pick(self, i: int) -> None:
        self.choice = FLAGS[i]
        self.query_one("#flag-list", Static).update(self._list())
        box = self.query_one(Input)
        box.display = True
        box.disabled = False
        box.focus()

    def on_input_submitted(self, event: Input.Submitted) -> None:
        if self.choice is not None:
            self.dismiss(Flagged(self.choice, event.value.strip() or None))
