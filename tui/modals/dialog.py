"""What every dialog shares: a centred box, esc cancels (dismissing with None)."""

from __future__ import annotations

from typing import TypeVar

from textual.screen import ModalScreen

from tui.keymap import bind

ResultT = TypeVar("ResultT")

_CSS = """
Dialog { align: center middle; }
Dialog > Vertical { width: 84; max-width: 100%; height: auto; max-height: 100%; border: round $accent;
                    background: $surface; padding: 0 1; }
Dialog .dialog-title { text-style: bold; margin-bottom: 1; }
Dialog .dialog-hint { color: $text-muted; margin-top: 1; }
"""


class Dialog(ModalScreen[ResultT | None]):
    """A dialog returning a `ResultT`, or None when cancelled."""

    DEFAULT_CSS = _CSS
    BINDINGS = [bind("dialog.cancel", "cancel")]

    def action_cancel(self) -> None:
        self.dismiss(None)
