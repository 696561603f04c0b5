"""`?`: the keys of the screen you came from (the command palette's list: tui/widgets/keys.py), the
app's one key map (tui/keymap.py: each key with the one thing it means, and where remapping lives),
what the marks mean, and how images are drawn."""

from __future__ import annotations

from rich.table import Table
from rich.text import Text
from textual.app import ComposeResult
from textual.containers import VerticalScroll
from textual.screen import ModalScreen, Screen
from textual.widgets import Static

from tui.keymap import KEYMAP, MEANINGS, bind, keys_file, meaning, shown_key
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


def keymap_table(remap: dict[str, str] | None = None) -> Table:
    """The whole key map: each key once with what it means (its ids' descriptions where the meaning
    has no words of its own), then the choice keys."""
    t = Table(box=None, show_header=True, header_style="bold", pad_edge=False)
    t.add_column("key", style="bold cyan", no_wrap=True)
    t.add_column("means (on every screen where it exists)")
    t.add_column("id", style="dim", no_wrap=True)
    seen: dict[str, list[str]] = {}
    for binding_id, k in KEYMAP.items():
        if not k.choice:
            seen.setdefault(meaning(binding_id), []).append(binding_id)
    for m, ids in seen.items():
        first = KEYMAP[ids[0]]
        words = MEANINGS.get(m) or first.tooltip or first.description
        if m not in MEANINGS and first.tooltip and first.description:
            words = f"{first.description}: {first.tooltip}"
        t.add_row(Text(shown_key(ids[0], remap)), Text(words), Text(m if len(ids) > 1 else ids[0]))
    t.add_row(Text("a–h  1–7  1–6"), Text("choices: the letter or digit printed beside a choice picks it (the "
                                          "oracle's options, shift+letter too; the X/Y labels; the flags)"),
              Text("oracle.answer-*, labels.toggle-*, flag.pick-*"))
    return t


def legend_table() -> Table:
    t = Table(box=None, show_header=False, pad_edge=False)
    t.add_column(style="bold", no_wrap=True)
    t.add_column()
    for mark, what in LEGEND:
        t.add_row(Text(mark), Text(what))
    return t


class HelpScreen(ModalScreen[None]):
    BINDINGS = [bind("help.close", "dismiss"), bind("app.help", "dismiss", description="Close help")]
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
            yield Static(Text("The key map"), classes="help-title")
            remap = getattr(self.app, "user_keys", None) or {}
            where = Text.assemble("A key means one thing on every screen where it exists. Remap keys by id or "
                                  "meaning in ", (str(keys_file()), "bold"), " (e.g. note = \"ctrl+t\").")
            if remap:
                where.append(f" {len(remap)} binding(s) remapped from it.")
            for problem in getattr(self.app, "keymap_problems", ()):
                where.append("\n")
                where.append(problem, style="yellow")
            yield Static(where, id="help-keymap-file")
            yield Static(keymap_table(remap), id="help-keymap")
