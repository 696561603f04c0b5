"""A verdict on one run's prediction: a accept, r reject, b borderline."""

from __future__ import annotations

from rich.text import Text
from textual.app import ComposeResult
from textual.containers import Vertical
from textual.widgets import Static

from tui.keymap import bind, shown_key
from tui.modals.dialog import Dialog

# the agreement study's keys too (the same ids: one key per verdict wherever verdicts are given)
VERDICTS = ("accept", "reject", "borderline")


class VerdictDialog(Dialog[str]):
    """Returns "accept", "reject" or "borderline", or None."""

    BINDINGS = [bind(f"verdict.{v}", f"pick('{v}')") for v in VERDICTS]

    def __init__(self, where: Text) -> None:
        super().__init__()
        self.where = where

    def compose(self) -> ComposeResult:
        with Vertical():
            yield Static(Text.assemble("Verdict on ", self.where), classes="dialog-title")
            hint = " · ".join(f"{shown_key(f'verdict.{v}')} {v}" for v in VERDICTS)
            yield Static(Text(f"{hint} · esc cancels"), classes="dialog-hint")

    def action_pick(self, verdict: str) -> None:
        self.dismiss(verdict)
