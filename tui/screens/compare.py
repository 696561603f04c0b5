"""Two runs side by side on one item — e.g. FC(V) vs FC(T): each side's answer and score, its chain
completeness, and the clue chain as that run saw it (a text-only method sees the caption in place
of each image, so that is what its side shows). Opened from the Item screen (`S`), which picks the
starting pair (tui.state.default_pair)."""

from __future__ import annotations

from rich.console import Group
from rich.text import Text
from textual.app import ComposeResult
from textual.containers import Horizontal, VerticalScroll
from textual.widgets import Static

from scorer.model import Item
from tui.bases.screen import BaseScreen
from tui.evidence import run_evidence
from tui.keymap import bind
from tui.text import safe
from tui.widgets.clues import ClueChain
from tui.widgets.evidence_tables import chain_summary, chain_table
from tui.widgets.run_panel import answer_text


class CompareScreen(BaseScreen):
    WHERE = "Side by side"
    BINDINGS = [bind("back", "back"), bind("compare.left", "cycle(0)"), bind("compare.right", "cycle(1)"),
                bind("compare.swap", "swap")]  # keys: tui/keymap.py

    def __init__(self, key: tuple[str, str], left: int, right: int) -> None:
        super().__init__()
        self.key = key
        self.sides = [left, right]

    @property
    def item(self) -> Item:
        return self.state.bench.item(*self.key)

    def body(self) -> ComposeResult:
        yield Static(id="cmp-title")
        with Horizontal(id="cmp-body"):
            for side in (0, 1):
                with VerticalScroll(classes="cmp-side", id=f"cmp-side-{side}"):
                    yield Static(classes="cmp-head")
                    yield Static(classes="cmp-chain")
                    yield ClueChain(classes="cmp-clues")

    async def on_mount(self) -> None:
        item = self.item
        title = Text.assemble(safe(item.item_id, "bold", one_line=True), "  Q ", safe(item.question),
                              "\nA ", safe(item.answer, "green"))
        self.query_one("#cmp-title", Static).update(title)
        for side in (0, 1):
            await self._show(side)

    async def _show(self, side: int) -> None:
        item = self.item
        task = self.state.task(item)
        preds = dict((ref.index, (ref, p)) for ref, p in self.state.predictions(item))
        ref, p = preds[self.sides[side]]
        box = self.query_one(f"#cmp-side-{side}", VerticalScroll)
        ev = run_evidence(task, item, p)
        box.query_one(".cmp-head", Static).update(answer_text(ref, p, item, 0))
        seen = Text("sees: ", style="bold")
        seen.append("captions and transcripts in place of media" if ref.is_text else "the media themselves",
                    style="italic")
        box.query_one(".cmp-chain", Static).update(Group(chain_summary(ev), chain_table(ev), seen))
        chain = box.query_one(ClueChain)
        await chain.show(task, item, captions_only=ref.is_text)
        self.call_after_refresh(chain.mount_media)

    async def action_cycle(self, side: int) -> None:
        order = [ref.index for ref, _ in self.state.predictions(self.item)]
        i = order.index(self.sides[side]) if self.sides[side] in order else -1
        self.sides[side] = order[(i + 1) % len(order)]
        await self._show(side)

    async def action_swap(self) -> None:
        self.sides.reverse()
        for side in (0, 1):
            await self._show(side)

    def action_back(self) -> None:
        self.app.pop_screen()
