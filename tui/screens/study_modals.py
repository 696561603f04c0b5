"""Small dialogs of the Study screens: a note (free text) and a flag (one of the store's flag kinds,
with an optional comment). Each returns its result through `dismiss`; esc cancels with None."""

from __future__ import annotations

from rich.text import Text
from textual.app import ComposeResult
from textual.binding import Binding
from textual.containers import Vertical
from textual.screen import ModalScreen
from textual.widgets import Input, Static

from scorer.store_payload import FLAGS

FLAG_HELP = {
    "ambiguous": "the question or its answer can be read more than one way",
    "leakage": "the answer can be had without the evidence (question, options or text give it away)",
    "bad_media": "an image, video or audio clip is missing, broken or unreadable",
    "wrong_gold": "the gold answer (or correct option) is wrong",
    "wrong_label": "the item's X / Y labels are wrong",
    "other": "anything else (say what in the comment)",
}

_CSS = """
StudyDialog { align: center middle; }
StudyDialog > Vertical { width: 84; height: auto; border: round $accent; background: $surface; padding: 0 1; }
StudyDialog .dialog-title { text-style: bold; margin-bottom: 1; }
StudyDialog .dialog-hint { color: $text-muted; margin-top: 1; }
"""


class StudyDialog(ModalScreen):
    DEFAULT_CSS = _CSS
    BINDINGS = [Binding("escape", "cancel", "Cancel")]

    def action_cancel(self) -> None:
        self.dismiss(None)


class NoteDialog(StudyDialog):
    """A free-text note on the current entry; enter saves, esc cancels."""

    def __init__(self, where: Text) -> None:
        super().__init__()
        self.where = where

    def compose(self) -> ComposeResult:
        with Vertical():
            yield Static(Text.assemble("Note on ", self.where), classes="dialog-title")
            yield Input(placeholder="your note", id="note-text")
            yield Static(Text("enter saves · esc cancels"), classes="dialog-hint")

    def on_mount(self) -> None:
        self.query_one(Input).focus()

    def on_input_submitted(self, event: Input.Submitted) -> None:
        text = event.value.strip()
        if not text:
            self.notify("An empty note is not saved (esc cancels).", severity="warning")
            return
        self.dismiss(text)


class FlagDialog(StudyDialog):
    """Pick a flag with 1–6, then optionally type a comment; enter saves, esc cancels."""

    BINDINGS = [Binding(str(i + 1), f"pick({i})", f"{i + 1}", show=False) for i in range(len(FLAGS))]
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
            self.dismiss((self.choice, event.value.strip() or None))
