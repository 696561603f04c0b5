"""Label study: the annotator gives each item its X (visual evidence granularity) and Y
(memory-reasoning depth) labels, with the taxonomy's definitions and boundary rules on screen
(tui/widgets/labels.py, the relabel dialog's too). The item's
question, gold answer, explanation and clue rounds with their media are shown; its gold labels are
not, until the annotator has committed. `1`–`4` toggle X1–X4, `5`–`7` toggle Y1–Y3 (an item may
have several), enter saves, backspace clears. Labels chosen and not saved are never dropped without a
word: the selection panel says "not saved", and moving to another entry, leaving or quitting asks
first (save / discard / stay).
"""

from __future__ import annotations

from rich.text import Text
from textual.app import ComposeResult
from textual.containers import Vertical, VerticalScroll
from textual.widget import Widget
from textual.widgets import Static

from tui.bases.study import StudyScreen
from tui.keymap import bind
from tui.study_session import Saved
from tui.text import safe
from tui.widgets.clue_rounds import clue_widgets
from tui.widgets.labels import definitions, gold_compare, labels_str, toggle_bindings

class LabelStudyScreen(StudyScreen):
    KIND = "X/Y labels (gold hidden)"
    CSS_PATH = "study.tcss"
    BINDINGS = toggle_bindings() + [bind("labels.save", "save"), bind("labels.clear", "clear")]  # 1–7: toggles

    def __init__(self, session) -> None:
        super().__init__(session)
        self.sel_x: set[str] = set()
        self.sel_y: set[str] = set()

    def entry_widgets(self) -> ComposeResult:
        yield Static(id="lab-item", classes="study-block")
        yield Vertical(id="lab-clues")

    def side_widgets(self) -> ComposeResult:
        with VerticalScroll(id="lab-side", can_focus=False):
            yield Static(id="lab-selection", classes="study-answer")
            yield Static(id="lab-defs")

    async def render_entry(self) -> None:
        s = self.session
        item = s.item()
        mine = s.current_answer()
        self.sel_x = set(mine["x"]) if mine else set()
        self.sel_y = set(mine["y"]) if mine else set()
        clues = self.query_one("#lab-clues", Vertical)
        await clues.remove_children()
        if item is None:
            self.query_one("#lab-item", Static).update(
                Text.assemble(("item not in the benchmark: ", "bold red"), safe(s.entry.item_id, one_line=True)))
            self._selection()
            return
        body = Text.assemble(("Question  ", "bold cyan"), safe(item.question, "bold"),
                             ("\nGold answer  ", "bold green"), safe(item.answer))
        if item.explanation:
            body.append("\nExplanation  ", style="bold")
            body.append_text(safe(item.explanation))
        self.query_one("#lab-item", Static).update(body)
        chain = self.state.task(item).clue_chain(item)
        player = self.app.player
        widgets: list[Widget] = []
        for n, r in enumerate(chain, 1):
            widgets += clue_widgets(r, n, len(chain), self.state, player)
        await clues.mount_all(widgets)
        self._selection()

    def _selection(self) -> None:
        sel = Text.assemble(("your labels: ", "bold"), (labels_str(self.sel_x, self.sel_y), "bold magenta"))
        if self.pending() is not None:
            sel.append("  not saved", style="bold yellow")
            sel.append(" — enter saves; moving on, leaving or quitting asks first", style="yellow")
        elif self.session.current_answer() is not None:
            sel.append("  saved", style="green")
        mine = self.session.current_answer()
        item = self.session.item()
        if mine and item is not None:  # committed already: the gold labels may show
            sel.append("\n")
            sel.append_text(gold_compare(item, mine["x"], mine["y"]))
        self.query_one("#lab-selection", Static).update(sel)
        self.query_one("#lab-defs", Static).update(definitions(self.sel_x, self.sel_y))

    def keys_text(self) -> Text:
        return Text.assemble(("1–4", "bold reverse"), " X1–X4   ", ("5–7", "bold reverse"), " Y1–Y3   ",
                             ("enter", "bold reverse"), " save   ", *self.common_keys_text(clear=True))

    def describe(self, payload: dict) -> str:
        return labels_str(payload.get("x", ()), payload.get("y", ()))

    # -- pending -------------------------------------------------------------------------------------
    def pending(self) -> Text | None:
        mine = self.session.current_answer()
        saved = (set(mine["x"]), set(mine["y"])) if mine else (set(), set())
        if (self.sel_x, self.sel_y) == saved:
            return None
        return Text(f"labels {labels_str(self.sel_x, self.sel_y)}")

    def pending_savable(self) -> bool:
        return bool(self.sel_x and self.sel_y)

    async def save_pending(self, then=None) -> bool:
        if not self.pending_savable():
            return False
        return await self.commit({"x": sorted(self.sel_x), "y": sorted(self.sel_y)}, then=then or "next") is not None

    def discard_pending(self) -> None:
        mine = self.session.current_answer()
        self.sel_x = set(mine["x"]) if mine else set()
        self.sel_y = set(mine["y"]) if mine else set()
        self._selection()

    def saved_text(self, saved: Saved) -> Text:
        out = Text.assemble("you ", (labels_str(saved.payload["x"], saved.payload["y"]), "bold"), " | ")
        item = self.session.item(saved.entry)
        if item is not None:
            out.append_text(gold_compare(item, saved.payload["x"], saved.payload["y"]))
        return out

    def action_toggle(self, label: str) -> None:
        sel = self.sel_x if label.startswith("X") else self.sel_y
        sel.symmetric_difference_update({label})
        self._selection()

    def action_clear(self) -> None:
        self.sel_x.clear()
        self.sel_y.clear()
        self._selection()

    async def action_save(self) -> None:
        self.mark_key()
        if not self.sel_x or not self.sel_y:
            self.notify("Pick at least one X (1–4) and one Y (5–7) first.", severity="warning", timeout=3)
            return
        await self.save_pending()
