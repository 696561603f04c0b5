"""`?`: the keys of the screen you came from (the command palette's list: tui/widgets/keys.py), what the
marks mean, and how images are drawn."""

from __future__ import annotations

from rich.table import Table
from rich.text import Text
from textual.app import ComposeResult
from textual.binding import Binding
from textual.containers import VerticalScroll
from textual.screen import ModalScreen, Screen
from textual.widgets import Static

from tui.media.image import status as image_status
from tui.widgets.keys import screen_commands

LEGEND = (
    ("✓", "a gold clue round (part of the item's gold chain)"),
    ("★ latest", "Y3 items: the chronologically last clue — the state the answer must come from"),
    ("⟲ stale", "Y3 items: a round of the item's source sessions before the latest clue (superseded)"),
    ("✗ dropped", "retrieved but not delivered: packing/budget left it out of the reader's request"),
    ("right", "runs scoring ≥ 0.5 (MCQ: EM over rotations; open: judge) out of runs that answered"),
    ("J≠H", "a human verdict (accept/reject) differs from the judge (≥ 0.5 = accept) on some run"),
)


def keys_table(screen: Screen) -> Table:
    t = Table(box=None, show_header=True, header_style="bold", pad_edge=False)
    t.add_column("key", style="bold cyan", no_wrap=True)
    t.add_column("action")
    t.add_column("", style="dim")
    for desc, key, _action, _node, tip in screen_commands(screen):
        t.add_row(Text(key), Text(desc), Text(tip))
    return t


def legend_table() -> Table:
    t = Table(box=None, show_header=False, pad_edge=False)
    t.add_column(style="bold", no_wrap=True)
    t.add_column()
    for mark, meaning in LEGEND:
        t.add_row(Text(mark), Text(meaning))
    return t


class HelpScreen(ModalScreen[None]):
    BINDINGS = [Binding("escape,question_mark,q", "dismiss", "Close help", id="help.close")]
    DEFAULT_CSS = """
    HelpScreen { align: center middle; }
    HelpScreen > VerticalScroll { width: 96; height: 90%; border: round $accent; background: $surface;
                                  padding: 0 1; }
    HelpScreen .help-title { text-style: bold; margin-top: 1; }
    """

    def __init__(self, under: Screen) -> None:
        super().__init__()
        self.under = under

    def compose(self) -> ComposeResult:
        with VerticalScroll():
            where = getattr(self.under, "WHERE", "") or type(self.under).__name__
            yield Static(Text(f"Keys — {where}"), classes="help-title")
            yield Static(keys_table(self.under), id="help-keys")
            yield Static(Text("Marks"), classes="help-title")
            yield Static(legend_table())
            yield Static(Text("Everything"), classes="help-title")
            yield Static(Text(
                "ctrl+p opens the command palette (every key above, searchable). Text from the data is "
                "shown literally: markup and terminal escapes appear as typed. Media outside the "
                "benchmark root are refused."))
            yield Static(Text(image_status()), id="help-images")
