"""The question asked before a choice that is not saved would be lost (moving to another entry,
leaving a study, quitting): enter saves it and goes on, d discards it and goes on, esc stays."""

from __future__ import annotations

from rich.text import Text
from textual.app import ComposeResult
from textual.containers import Vertical
from textual.widgets import Static

from tui.keymap import bind, key_of
from tui.modals.dialog import Dialog

SAVE, DISCARD = "save", "discard"


class PendingDialog(Dialog[str]):
    """Returns SAVE, DISCARD, or None (stay)."""

    BINDINGS = [bind("pending.save", "save"), bind("pending.discard", "discard")]

    def __init__(self, what: Text, where: Text, going: str, savable: bool) -> None:
        super().__init__()
        self.what, self.where, self.going, self.savable = what, where, going, savable

    def compose(self) -> ComposeResult:
        with Vertical():
            yield Static(Text.assemble("Not saved yet on ", self.where), classes="dialog-title")
            what = self.what.copy()
            what.stylize("bold magenta")
            yield Static(Text.assemble("your choice: ", what, f"\nbefore {self.going}:"), id="pending-what")
            save = (Text.assemble(("enter", "bold"), " save it and go on · ") if self.savable else
                    Text("(incomplete: it cannot be saved as it is) · ", style="yellow"))
            yield Static(Text.assemble(save, (key_of("pending.discard"), "bold"), " discard it and go on · ",
                                       ("esc", "bold"), " stay"), classes="dialog-hint", id="pending-hint")

    def action_save(self) -> None:
        if not self.savable:
            self.notify("This choice is incomplete: esc to finish it, or d to discard it.", severity="warning",
                        timeout=3)
            return
        self.dismiss(SAVE)

    def action_discard(self) -> None:
        self.dismiss(DISCARD)
