"""Label study: the annotator gives each item its X (visual evidence granularity) and Y
(memory-reasoning depth) labels, with the taxonomy's definitions and boundary rules on screen
(tui/widgets/labels.py, the relabel dialog's too). The item's
question, gold answer, explanation and clue rounds with their media are shown; its gold labels are
not, until the annotator has committed. `1`–`4` toggle X1–X4, `5`–`7` toggle Y1–Y3 (an item may
have several), enter saves, `0` clears.
"""

from __future__ import annotations

from rich.text import Text
from textual.app import ComposeResult
from textual.binding import Binding
from textual.containers import Vertical, VerticalScroll
from textual.widget import Widget
from textual.widgets import Static

from tui.bases.study import StudyScreen
from tui.study_session import Saved
from tui.text import safe
from tui.widgets.clue_rounds import clue_widgets
from tui.widgets.labels import definitions, gold_compare, labels_str, toggle_bindings

class LabelStudyScreen(StudyScreen):
    KIND = "X/Y labels (gold hidden)"
    CSS_PATH = "study.tcss"
    BINDINGS = toggle_bindings() + [  # 1–7, the relabel dialog's keys
        Binding("enter", "save", "Save labels", tooltip="save the selected X and Y labels", id="labels.save"),
        Binding("0", "clear", "Clear", tooltip="clear the selection", id="labels.clear"),
    ]

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
        mine = self.session.current_answer()
        item = self.session.item()
        if mine and item is not None:  # committed already: the gold labels may show
            sel.append("\n")
            sel.append_text(gold_compare(item, mine["x"], mine["y"]))
        self.query_one("#lab-selection", Static).update(sel)
        self.query_one("#lab-defs", Static).update(definitions(self.sel_x, self.sel_y))

    def keys_text(self) -> Text:
        return Text.assemble(("1–4", "bold reverse"), " X1–X4   ", ("5–7", "bold reverse"), " Y1–Y3   ",
                             ("enter", "bold reverse"), " save   ", ("0", "bold"), " clear  ", ("u", "bold"),
                             " undo  ", ("n", "bold"), " note  ", ("f", "bold"), " flag  ", ("[ ]", "bold"), " browse")

    def describe(self, payload: dict) -> str:
        if "x" in payload:
            return labels_str(payload["x"], payload["y"])
        return super().describe(payload)

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
        await self.commit({"x": sorted(self.sel_x), "y": sorted(self.sel_y)})
