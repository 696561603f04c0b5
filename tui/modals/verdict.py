"""A verdict on one run's prediction: a accept, r reject, b borderline."""

from __future__ import annotations

from rich.text import Text
from textual.app import ComposeResult
from textual.binding import Binding
from textual.containers import Vertical
from textual.widgets import Static

from tui.modals.dialog import Dialog

# the agreement study's keys too (the same ids: one key per verdict wherever verdicts are given)
VERDICT_KEYS = (("a", "accept", "Accept"), ("r", "reject", "Reject"), ("b", "borderline", "Borderline"))


class VerdictDialog(Dialog[str]):
    """Returns "accept", "reject" or "borderline", or None."""

    BINDINGS = [Binding(k, f"pick('{v}')", d, id=f"verdict.{v}") for k, v, d in VERDICT_KEYS]

    def __init__(self, where: Text) -> None:
        super().__init__()
        self.where = where

    def compose(self) -> ComposeResult:
        with Vertical():
            yield Static(Text.assemble("Verdict on ", self.where), classes="dialog-title")
            yield Static(Text("a accept · r reject · b borderline · esc cancels"), classes="dialog-hint")

    def action_pick(self, verdict: str) -> None:
        self.dismiss(verdict)
