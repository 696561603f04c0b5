"""The Item screen's texts, as Rich texts (tui/screens/item.py shows them): an item's labels, its
question and answer, and one rotation's options. Data text goes through tui.text.safe, never read as
markup.

No Textual here.
"""

from __future__ import annotations

from rich.text import Text

from scorer.model import Item
from tui.text import safe


def labels_text(item: Item) -> Text:
    out = Text()
    for labels, style in ((item.x, "bold black on cyan"), (item.y, "bold black on magenta")):
        out.append_text(safe(f" {','.join(sorted(labels)) or '—'} ", style, one_line=True))
        out.append(" ")
    out.append(item.mode.upper(), style="bold")
    if not item.answerable:
        out.append("  unanswerable (abstention control)", style="bold yellow")
    return out


def question_text(item: Item) -> Text:
    out = Text("Q ", style="bold cyan")
    out.append_text(safe(item.question, "bold"))
    out.append("\nA ", style="bold green")
    out.append_text(safe(item.answer))
    if item.explanation:
        out.append("\nwhy ", style="bold dim")
        out.append_text(safe(item.explanation, "dim"))
    return out


def options_table(item: Item, rotation: int) -> Text:
    if not item.rotations:
        return Text("open-ended (no options)", style="dim")
    n = len(item.rotations)
    rot = item.rotations[rotation % n]
    out = Text.assemble(("options", "bold"), (f" — rotation {rotation % n + 1}/{n} (o cycles)", "dim"))
    for letter, text in rot.options.items():
        right = letter == rot.answer
        out.append(f"\n{'✓' if right else ' '} ", style="bold green")
        out.append_text(safe(letter, "bold green" if right else "bold", one_line=True))
        out.append("  ")
        out.append_text(safe(text, "green" if right else ""))
    return out
