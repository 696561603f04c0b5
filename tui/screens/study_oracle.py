"""Human-oracle study: only the item's gold clue rounds, in time order, with their images, video and
audio — never the rest of the conversation, the clue roles, the latest/stale marks or the
explanation — then the question and the options of one rotation (fixed per annotator and item).
One key per letter answers (`a`–`e`, `g`, `h`; shift+letter too, and shift+F for an option F since
`f` flags). For Y3 items the screen tells the annotator to answer from the latest valid state.
The seconds from showing the item to the answer go into the payload.

Open-form oracle studies (--mode open) take a typed answer instead: `i` to type, enter to save.
"""

from __future__ import annotations

import time

from rich.text import Text
from textual.app import ComposeResult
from textual.binding import Binding
from textual.containers import Horizontal, Vertical
from textual.widget import Widget
from textual.widgets import Input, Static

from scorer.metrics.constants import OPTION_LETTERS as LETTERS
from scorer.model import Item
from tui.bases.study import StudyScreen
from tui.study_session import Saved
from tui.text import safe
from tui.widgets.clue_rounds import clue_widgets, media_block
from tui.widgets.media_audio import MediaAudio
from tui.widgets.media_keys import MediaKeys

Y3_INSTRUCTION = ("Y3 item: what the rounds describe changes over time. Answer from the latest valid "
                  "state — the one that still holds after every later update.")


def _letter_bindings() -> list[Binding]:
    out = []
    for L in LETTERS:
        keys = L if L == "F" else f"{L.lower()},{L}"  # lower-case f is the flag key
        out.append(Binding(keys, f"answer('{L}')", L, show=False, tooltip=f"answer option {L}",
                           id=f"oracle.answer-{L.lower()}"))
    return out


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
        Binding("i", "type_answer", "Type answer", tooltip="open-form study: type your answer, enter saves",
                id="oracle.type-answer"),
        Binding("right", "frame(1)", "Frame", key_display="←/→", tooltip="a video's next frame (← previous)",
                id="media.next-frame"),
        Binding("left", "frame(-1)", "Previous frame", show=False, id="media.prev-frame"),
        Binding("space", "play", "Play/stop", tooltip="play or stop a clue's audio", id="media.play"),
        Binding("m", "next_media", "Media", tooltip="which video/audio ←/→ and space act on", id="media.next"),
    ]

    @property
    def is_open(self) -> bool:
        return self.session.entry.mode == "open"

    def entry_widgets(self) -> ComposeResult:
        yield Static(id="or-instruction", classes="study-block")
        yield Vertical(id="or-clues")
        yield Horizontal(id="or-question-media")
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
        qmedia = self.query_one("#or-question-media", Horizontal)
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
        if item.question_images:
            await qmedia.mount_all([media_block(m, self.state, player) for m in item.question_images])
        qmedia.display = bool(item.question_images)
        self.query_one("#or-question", Static).update(Text.assemble(("Question\n", "bold cyan"),
                                                                    safe(item.question, "bold")))
        box = self.query_one("#or-answer", Input)
        box.value = ""
        box.display = self.is_open
        box.disabled = not self.is_open
        if self.is_open or not item.rotations:
            self.query_one("#or-options", Static).update(
                Text("type your answer: i, then enter", style="dim") if self.is_open else
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
        return Text.assemble(first, ("u", "bold"), " undo  ", ("n", "bold"), " note  ", ("f", "bold"), " flag  ",
                             ("[ ]", "bold"), " browse  ", ("←/→ space m", "bold"), " media")

    def describe(self, payload: dict) -> str:
        if "choice" in payload:
            return f"{payload['choice']} (rotation {payload.get('rotation', 0) + 1})"
        return str(payload.get("answer") or payload.get("text") or super().describe(payload))

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
        await self.commit({"answer": text, "seconds": self._seconds()})

    # -- media ---------------------------------------------------------------------------------------
    def media_widgets(self) -> list[Widget]:
        return list(self.query_one("#study-body").query("MediaVideo, MediaAudio"))
