"""A fuzzy picker: a list of choices narrowed as you type (Textual's fuzzy matcher, as the command
palette); enter picks the highlighted one, esc cancels. Returns the chosen value, or None.

Choices are (label, value, count): the label is data text (shown through rich Text, never markup),
the count, when given, is shown beside it (a filter's number of items)."""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any, Sequence

from rich.text import Text
from textual.app import ComposeResult
from textual.binding import Binding
from textual.containers import Vertical
from textual.fuzzy import Matcher
from textual.widgets import Input, OptionList, Static
from textual.widgets.option_list import Option

from tui.modals.dialog import Dialog
from tui.text import safe

MAX_SHOWN = 200  # options listed at once (type to narrow the rest)


@dataclass(frozen=True)
class Choice:
    label: str
    value: Any
    count: int | None = None
    hint: str = ""  # dim text after the label (not matched)


def choice_text(c: Choice) -> Text:
    out = Text()
    if c.count is not None:
        out.append(f"{c.count:>6}  ", style="bold" if c.count else "dim")
    out.append_text(safe(c.label, one_line=True))
    if c.hint:
        out.append("  ")
        out.append_text(safe(c.hint, "dim", one_line=True))
    return out


def narrow(choices: Sequence[Choice], query: str) -> list[Choice]:
    """The choices whose label matches every word of `query` fuzzily (in any order: "qwen srag v"
    finds "SRAG(V) · qwen3-vl-8b"), best first; all of them, in order, for no query."""
    words = query.split()
    if not words:
        return list(choices)
    matchers = [Matcher(w) for w in words]
    scored = []
    for i, c in enumerate(choices):
        scores = [m.match(c.label) for m in matchers]
        if all(s > 0 for s in scores):
            scored.append((sum(scores), i, c))
    return [c for _, _, c in sorted(scored, key=lambda t: (-t[0], t[1]))]


class Picker(Dialog[Any]):
    """Pick one of `choices` (type to narrow, ↑/↓, enter); None on esc."""

    DEFAULT_CSS = """
    Picker > Vertical { max-height: 100%; }
    Picker OptionList { height: auto; max-height: 50vh; }  /* title, query and hint stay on an 80×24 screen */
    """
    BINDINGS = [Binding("down", "move(1)", "Down", show=False, id="picker.down"),
                Binding("up", "move(-1)", "Up", show=False, id="picker.up")]

    def __init__(self, title: str, choices: Sequence[Choice],
                 hint: str = "type to narrow · enter picks · esc cancels") -> None:
        super().__init__()
        self.title_text = title
        self.choices = list(choices)
        self.hint = hint
        self.shown: list[Choice] = []

    def compose(self) -> ComposeResult:
        with Vertical():
            yield Static(Text(self.title_text), classes="dialog-title")
            yield Input(placeholder="type to narrow", id="picker-query")
            yield OptionList(id="picker-options")
            yield Static(Text(self.hint), classes="dialog-hint")

    def on_mount(self) -> None:
        self._fill("")
        self.query_one(Input).focus()

    def _fill(self, query: str) -> None:
        self.shown = narrow(self.choices, query)[:MAX_SHOWN]
        options = self.query_one(OptionList)
        options.clear_options()
        options.add_options([Option(choice_text(c)) for c in self.shown])
        if self.shown:
            options.highlighted = 0

    def on_input_changed(self, event: Input.Changed) -> None:
        self._fill(event.value)

    def action_move(self, step: int) -> None:
        options = self.query_one(OptionList)
        if not self.shown:
            return
        i = (options.highlighted or 0) + step
        options.highlighted = max(0, min(len(self.shown) - 1, i))

    def on_input_submitted(self, event: Input.Submitted) -> None:
        event.stop()
        self._pick(self.query_one(OptionList).highlighted)

    def on_option_list_option_selected(self, event: OptionList.OptionSelected) -> None:
        event.stop()
        self._pick(event.option_index)

    def _pick(self, index: int | None) -> None:
        if index is None or not 0 <= index < len(self.shown):
            self.notify("Nothing matches: type less, or esc.", severity="warning", timeout=2)
            return
        self.dismiss(self.shown[index].value)
