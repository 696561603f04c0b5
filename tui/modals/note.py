"""A free-text note (on a study entry, or on an item from the Item screen); enter saves, esc cancels."""

from __future__ import annotations

from rich.text import Text
from textual.app import ComposeResult
from textual.containers import Vertical
from textual.widgets import Input, Static

from tui.modals.dialog import Dialog


class NoteDialog(Dialog[str]):
    """Returns the note's text (never empty), or None."""

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
