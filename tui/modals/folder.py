"""Which folder to write to (asked once, e.g. by the batch case-card export); enter accepts the
path typed (the default filled in), esc cancels. Returns the text, or None."""

from __future__ import annotations

from rich.text import Text
from textual.app import ComposeResult
from textual.containers import Vertical
from textual.widgets import Input, Static

from tui.modals.dialog import Dialog


class FolderDialog(Dialog[str]):
    def __init__(self, title: str, default: str) -> None:
        super().__init__()
        self.title_text = title
        self.default = default

    def compose(self) -> ComposeResult:
        with Vertical():
            yield Static(Text(self.title_text), classes="dialog-title")
            yield Input(value=self.default, placeholder="a folder (created if missing)", id="folder-path")
            yield Static(Text("enter writes there (asked once per session) · esc cancels"), classes="dialog-hint")

    def on_mount(self) -> None:
        self.query_one(Input).focus()

    def on_input_submitted(self, event: Input.Submitted) -> None:
        text = event.value.strip()
        if not text:
            self.notify("Type a folder (esc cancels).", severity="warning")
            return
        self.dismiss(text)
