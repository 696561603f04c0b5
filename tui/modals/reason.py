"""The reason for an adjudication (or an adjudicated open answer): one line of text; enter saves
(empty allowed where the text is optional), esc cancels and nothing is written."""

from __future__ import annotations

from rich.text import Text
from textual.app import ComposeResult
from textual.containers import Vertical
from textual.widgets import Input, Static

from tui.modals.dialog import Dialog


class ReasonDialog(Dialog[str]):
    """Returns the text typed ("" when optional and left empty), or None when cancelled."""

    def __init__(self, title: Text, placeholder: str = "why (optional)", required: bool = False) -> None:
        super().__init__()
        self.title_text = title
        self.placeholder = placeholder
        self.required = required

    def compose(self) -> ComposeResult:
        with Vertical():
            yield Static(self.title_text, classes="dialog-title")
            yield Input(placeholder=self.placeholder, id="reason-text")
            yield Static(Text("enter saves · esc cancels (nothing is written)"), classes="dialog-hint")

    def on_mount(self) -> None:
        self.query_one(Input).focus()

    def on_input_submitted(self, event: Input.Submitted) -> None:
        text = event.value.strip()
        if self.required and not text:
            self.notify("Type something first (esc cancels).", severity="warning")
            return
        self.dismiss(text)
