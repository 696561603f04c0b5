"""An item's X / Y labels: toggle X1–X4 (1–4) and Y1–Y3 (5–7) with the taxonomy on screen; enter saves."""

from __future__ import annotations

from typing import NamedTuple

from rich.text import Text
from textual.app import ComposeResult
from textual.containers import Vertical
from textual.widgets import Static

from tui.keymap import bind
from tui.modals.dialog import Dialog
from tui.widgets.labels import definitions, labels_str, toggle_bindings


class Labels(NamedTuple):
    x: list[str]  # sorted, at least one
    y: list[str]


class LabelDialog(Dialog[Labels]):
    """Returns the chosen labels (at least one X and one Y), or None."""

    BINDINGS = toggle_bindings() + [bind("labels.save", "save", description="Save")]
    DEFAULT_CSS = "LabelDialog .label-keys { margin-top: 0; margin-bottom: 1; }"

    def __init__(self, where: Text, x: set[str], y: set[str]) -> None:
        super().__init__()
        self.where, self.x, self.y = where, set(x), set(y)

    def compose(self) -> ComposeResult:
        with Vertical():
            yield Static(Text.assemble("Labels of ", self.where), classes="dialog-title")
            # the keys first: the definitions run past a 24-row terminal, and what is below them is cut
            yield Static(Text("1–4 X · 5–7 Y (toggle) · enter saves · esc cancels"), classes="dialog-hint label-keys")
            yield Static(id="label-defs")

    def on_mount(self) -> None:
        self._show()

    def _show(self) -> None:
        out = Text.assemble(("selected: ", "bold"), (labels_str(self.x, self.y), "bold magenta"), "\n\n")
        out.append_text(definitions(self.x, self.y))
        self.query_one("#label-defs", Static).update(out)

    def action_toggle(self, label: str) -> None:
        (self.x if label.startswith("X") else self.y).symmetric_difference_update({label})
        self._show()

    def action_save(self) -> None:
        if not self.x or not self.y:
            self.notify("Pick at least one X (1–4) and one Y (5–7).", severity="warning", timeout=3)
            return
        self.dismiss(Labels(sorted(self.x), sorted(self.y)))
