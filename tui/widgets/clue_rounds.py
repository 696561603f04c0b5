"""A gold clue round in full, for the study screens (oracle, labels): its header, the user and assistant
text, and each medium at study size. Captions are left out on purpose: the annotator sees the original
media, as in MemEye's protocol. (The Item screen's compact clue cards are tui/widgets/clues.py.)
"""

from __future__ import annotations

from rich.text import Text
from textual.containers import Horizontal, Vertical
from textual.widget import Widget
from textual.widgets import Static

from scorer.model import Item, Media, Round
from tui.media.audio import Player
from tui.text import safe
from tui.widgets.media import media_label, media_widget


def clue_widgets(r: Round, n: int, of: int, state, player: Player | None) -> list[Widget]:
    head = Text(f"Clue round {n} of {of}", style="bold cyan")
    if r.date:
        head.append(" · ")
        head.append_text(safe(r.date, one_line=True))
    parts: list[Widget] = [Static(head, classes="oracle-clue-head")]
    for who, text, style in (("User", r.user, "bold"), ("Assistant", r.assistant, "bold green")):
        if text:
            parts.append(Static(Text.assemble((f"{who}  ", style), safe(text)), classes="oracle-clue-turn"))
    for m in r.media:
        parts.append(media_block(m, state, player))
    return [Vertical(*parts, classes="oracle-clue")]


def media_block(m: Media, state, player: Player | None) -> Widget:
    return Vertical(Static(media_label(m), classes="study-media-label"),
                    media_widget(m, state.bench.root, state.allow_outside_root, player=player),
                    classes=f"study-media study-media-{m.kind}")


async def mount_question_media(box: Widget, item: Item, state, player: Player | None) -> None:
    """The question's own images (part of the question, not a clue) into `box`, under a label; the
    box is hidden when the question has none. `box` is emptied first by the caller."""
    if item.question_images:
        label = Static(Text("Question image" + ("s" if len(item.question_images) > 1 else "") +
                            " (part of the question)", style="bold cyan"), classes="study-media-label")
        await box.mount_all([label, Horizontal(*(media_block(m, state, player) for m in item.question_images),
                                               classes="study-question-media")])
    box.display = bool(item.question_images)
