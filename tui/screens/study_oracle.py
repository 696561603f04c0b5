"""Human-oracle study: only the item's gold clue rounds, in time order, with their images, video and
audio — never the rest of the conversation, the clue roles, the latest/stale marks or the
explanation — then the question and the options of one rotation (fixed per annotator and item).
One key per letter answers (`a`–`e`, `g`, `h`; shift+letter too, and shift+F for an option F since
`f` flags). For Y3 items the screen tells the annotator to answer from the latest valid state.
The seconds from showing the item to the answer go into the payload.

Open-form oracle studies (--mode open) take a typed answer instead: `i` to type, enter to save. A
typed answer not yet saved is never dropped without a word: moving to another entry, leaving or
quitting asks first (save / discard / stay).
"""

from __future__ import annotations

import time

from rich.text import Text
from textual.app import ComposeResult
from textual.binding import Binding
from textual.containers import Vertical, VerticalScroll
from textual.widget import Widget
from textual.widgets import Input, Static

from scorer.metrics.constants import OPTION_LETTERS as LETTERS
from scorer.model import Item
from tui.bases.study import StudyScreen
from tui.keymap import bind
from tui.acts import payload_text
from tui.study_session import Saved
from tui.text import safe
from tui.widgets.clue_rounds import clue_widgets, mount_question_media
from tui.widgets.media_audio import MediaAudio
from tui.widgets.media_keys import MediaKeys

Y3_INSTRUCTION = ("Y3 item: what the rounds describe changes over time. Answer from the latest valid "
                  "state — the one that still holds after every later update.")


def _letter_bindings() -> list[Binding]:
    # choice keys (tui/keymap.py): a–h and shift+letter, shift+F only for F since lower-case f flags
    return [bind(f"oracle.answer-{L.lower()}", f"answer('{L}')", show=False) for L in LETTERS]


def options_text(item: Item, rotation: int) -> Text:
    rot = item.rotations[rotation]
    out = Text()
    for letter, text in rot.options.items():
        out.append(f" {letter} ", style="bold reverse")
        out.append(" ")
        out.append_text(safe(text))
        out.append("\n")
    out.rstrip()
    return out


class OracleStudyScreen(MediaKeys, StudyScreen):
    KIND = "human oracle (gold clue rounds only)"
    CSS_PATH = "study.tcss"
    BINDINGS = _letter_bindings() + [
        bind("oracle.type-answer", "type_answer"),
        bind("media.next-frame", "frame(1)", key_display="←/→"),
        bind("media.prev-frame", "frame(-1)", show=False),
        bind("media.play", "play", tooltip="play or stop a clue's audio"),
        bind("media.next", "next_media"),
    ]

    @property
    def is_open(self) -> bool:
        return self.session.entry.mode == "open"

    def entry_widgets(self) -> ComposeResult:
        yield Static(id="or-instruction", classes="study-block")
        yield Vertical(id="or-question-media")  # part of the question: above the clues, not below them
        yield Vertical(id="or-clues")

    def side_widgets(self) -> ComposeResult:
        # pinned beside the clues (which scroll): the question and its options stay on screen
        with VerticalScroll(id="or-pinned", can_focus=False):
            yield Static(id="or-question", classes="study-block")
            yield Static(id="or-options", classes="study-block study-answer")
            yield Input(placeholder="your answer (enter saves)", id="or-answer")
            yield Static(id="or-mine", classes="study-block")

    def check_action(self, action: str, parameters: tuple[object, ...]) -> bool | None:
        if action == "answer":
            return not self.is_open
        if action == "type_answer":
            return self.is_open
        return True

    async def render_entry(self) -> None:
        s = self.session
        item = s.item()
        clues = self.query_one("#or-clues", Vertical)
        for w in clues.query(MediaAudio):
            w.stop()
        await clues.remove_children()
        qmedia = self.query_one("#or-question-media", Vertical)
        await qmedia.remove_children()
        if item is None:
            self.query_one("#or-question", Static).update(
                Text.assemble(("item not in the benchmark: ", "bold red"), safe(s.entry.item_id, one_line=True)))
            return
        task = self.state.task(item)
        chain = task.clue_chain(item)
        self.query_one("#or-instruction", Static).update(
            Text(Y3_INSTRUCTION, style="bold yellow") if "Y3" in item.y else
            Text("Answer from these clue rounds only (shown in time order).", style="dim"))
        player = self.app.player
        widgets: list[Widget] = []
        for n, r in enumerate(chain, 1):
            widgets += clue_widgets(r, n, len(chain), self.state, player)
        if not widgets:
            widgets.append(Static(Text("this item has no gold clue rounds", style="dim")))
        await clues.mount_all(widgets)
        await mount_question_media(qmedia, item, self.state, player)
        self.query_one("#or-question", Static).update(Text.assemble(("Question\n", "bold cyan"),
                                                                    safe(item.question, "bold")))
        box = self.query_one("#or-answer", Input)
        box.value = ""
        box.display = self.is_open
        box.disabled = not self.is_open
        if self.is_open or not item.rotations:
            self.query_one("#or-options", Static).update(
                Text("type your answer: i, then enter saves (moving on with a typed answer not saved asks "
                     "first)", style="dim") if self.is_open else
                Text("this item has no options", style="bold red"))
        else:
            r = s.rotation()
            self.query_one("#or-options", Static).update(options_text(item, r))
        mine = s.current_answer()
        mine_text = Text("")
        if mine:
            mine_text = Text.assemble(("your answer: ", "bold"), safe(mine.get("choice") or mine.get("answer") or "",
                                                                      "bold green", one_line=True))
        self.query_one("#or-mine", Static).update(mine_text)
        self.set_focus(None)

    def keys_text(self) -> Text:
        item = self.session.item()
        if self.is_open:
            first = Text.assemble(("i", "bold reverse"), " type your answer, enter saves   ")
        else:
            letters = list(item.rotations[0].options) if item is not None and item.rotations else []
            shown = "/".join(("F" if L == "F" else L.lower()) for L in letters) or "—"
            first = Text.assemble((shown, "bold reverse"), " answer   ")
        return Text.assemble(first, *self.common_keys_text(), "  ", ("←/→ space m", "bold"), " media")

    def describe(self, payload: dict) -> str:
        return payload_text("oracle", payload)

    # -- pending: a typed answer not yet saved ---------------------------------------------------------
    def _typed(self) -> str:
        box = self.query_one("#or-answer", Input)
        return box.value.strip() if self.is_open else ""

    def pending(self) -> Text | None:
        text = self._typed()
        if not text:
            return None
        mine = self.session.current_answer()
        if mine is not None and (mine.get("answer") or "").strip() == text:
            return None
        return Text.assemble("typed answer ", safe(f"“{text}”", one_line=True))

    def pending_savable(self) -> bool:
        return bool(self._typed())

    async def save_pending(self, then=None) -> bool:
        text = self._typed()
        if not text:
            return False
        return await self.commit({"answer": text, "seconds": self._seconds()}, then=then or "next") is not None

    def discard_pending(self) -> None:
        self.query_one("#or-answer", Input).value = ""

    def saved_text(self, saved: Saved) -> Text:
        out = Text(self.describe(saved.payload), style="bold")
        if saved.payload.get("seconds") is not None:
            out.append(f" · {saved.payload['seconds']:.1f} s on the item", style="dim")
        return out

    def _seconds(self) -> float:
        return round(time.monotonic() - self.shown_at, 2)

    async def action_answer(self, letter: str) -> None:
        self.mark_key()
        item = self.session.item()
        if item is None or not item.rotations:
            return
        r = self.session.rotation()
        if letter not in item.rotations[r].options:
            self.notify(f"There is no option {letter} here.", timeout=2)
            return
        await self.commit({"choice": letter, "rotation": r, "seconds": self._seconds()})

    def action_type_answer(self) -> None:
        self.query_one("#or-answer", Input).focus()

    async def on_input_submitted(self, event: Input.Submitted) -> None:
        if event.input.id != "or-answer":
            return
        text = event.value.strip()
        if not text:
            self.notify("Type an answer first (esc leaves the box).", severity="warning")
            return
        self.mark_key()
        await self.save_pending()

    # -- media ---------------------------------------------------------------------------------------
    def media_widgets(self) -> list[Widget]:
        return list(self.query_one("#study-body").query("MediaVideo, MediaAudio"))
