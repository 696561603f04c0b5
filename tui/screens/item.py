"""Item: the gold side (question, answer, options of the shown rotation, labels, the clue chain in
time order with thumbnails, latest/stale marks for Y3) beside one tab per run (its answer, score,
judge reasoning, retrieved and delivered evidence, chain completeness). n/p step through the
Items list it was opened from; s puts two runs side by side; x exports a case card; g jumps to the
highlighted clue's round in the Session screen.

The annotation side (labels, verdicts, notes, flags) belongs in #annotation-slot (another issue).
"""

from __future__ import annotations

import gc

from rich.console import Group
from rich.text import Text
from textual.app import ComposeResult
from textual.binding import Binding
from textual.containers import Horizontal, Vertical, VerticalScroll
from textual.widgets import Static, TabbedContent, TabPane

from scorer.model import Item
from tui.screens.item_annotate import AnnotatingScreen
from tui.text import label, safe
from tui.widgets.clues import ClueChain
from tui.widgets.run_panel import VIEWS, RunPanel
from tui.widgets.thumbs import media_thumb


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


def annotation_summary(state, item: Item) -> Text:
    """Read-only: what the store holds on this item (the annotation panel will replace this)."""
    if state.store is None:
        return Text("annotations: no database open", style="dim")
    kinds: dict[str, int] = {}
    for ev in state.store.events(live_only=True):
        if ev.item_id == item.item_id:
            kinds[ev.kind] = kinds.get(ev.kind, 0) + 1
    if not kinds:
        return Text("annotations: none on this item yet", style="dim")
    return Text("annotations: " + ", ".join(f"{n} {k}" for k, n in sorted(kinds.items())), style="dim")


class ItemScreen(AnnotatingScreen):  # the annotation keys and panel: tui/screens/item_annotate.py
    WHERE = "Item"
    BINDINGS = [
        Binding("escape", "back", "Back", tooltip="back to the Items table"),
        Binding("n", "step(1)", "Next", tooltip="next item in the Items list"),
        Binding("p", "step(-1)", "Prev", tooltip="previous item in the Items list"),
        Binding("right_square_bracket", "run(1)", "Next run", key_display="]"),
        Binding("left_square_bracket", "run(-1)", "Prev run", key_display="["),
        Binding("b", "backbone", "Backbone", tooltip="show the runs of the next backbone"),
        Binding("e", "evidence", "Retr/Deliv", tooltip="switch the evidence list: retrieved ↔ delivered"),
        Binding("o", "rotation", "Rotation", tooltip="cycle the MCQ rotation shown"),
        Binding("c", "clue(1)", "Clue", tooltip="highlight the next clue"),
        Binding("C", "clue(-1)", "Prev clue", show=False),
        Binding("g", "goto_round", "Go to round", tooltip="open the highlighted clue's round in Session"),
        Binding("s", "compare", "Side by side", tooltip="two runs side by side (e.g. FC(V) vs FC(T))"),
        Binding("x", "export", "Export card", tooltip="write a case card (Markdown + LaTeX) under exports/"),
    ]

    def __init__(self, keys: list[tuple[str, str]], key: tuple[str, str]) -> None:
        super().__init__()
        self.keys = keys or [key]
        self.key = key
        self.rotation = 0
        self.view = VIEWS[0]
        self.backbone: str | None = None
        self._pane_ids: list[str] = []
        self._chosen: dict = {}
        self._target: tuple[str, str] | None = None  # where n/p are heading (see action_step)
        self._stepping = False
        self.shown_key: tuple[str, str] | None = None  # the item whose content is on screen (bench/tests)

    @property
    def item(self) -> Item:
        return self.state.bench.item(*self.key)

    def body(self) -> ComposeResult:
        yield Static(id="item-title")
        with Horizontal(id="item-body"):
            with VerticalScroll(id="gold"):
                yield Static(id="gold-head")
                yield Horizontal(id="question-media")
                yield Static(Text("clue chain (time order)", style="bold underline"), id="chain-title")
                yield ClueChain(id="chain")
            with Vertical(id="method-side"):
                yield Static(id="runs-head")
                chosen = self._runs_of(self.item)
                self._pane_ids = [self._pane_id(ref) for ref, _ in chosen]
                with TabbedContent(id="runs"):
                    for ref, _ in chosen:
                        yield self._pane(ref)
                with Vertical(id="annotation-slot"):
                    yield Static(id="annotation-summary")

    async def on_mount(self) -> None:
        await self.show_item(self.key)

    # -- showing -----------------------------------------------------------------------------------
    async def show_item(self, key: tuple[str, str]) -> None:
        # One layout and one repaint for the whole change, however many widgets it swaps; and the
        # cyclic collector waits until the item is on screen (a collection in the middle of swapping
        # widgets cost a third of the keystroke's time: bench/app.py).
        collecting = gc.isenabled()
        gc.disable()
        try:
            async with self.batch():
                await self._show_item(key)
                self.shown_key = key  # inside the batch: the first frame after it shows this item
        finally:
            if collecting:  # the app's queue, not the screen's: it runs even if this screen is gone
                self.app.call_after_refresh(gc.enable)
        # the pictures come after that first frame (they decode off the UI thread anyway)
        self.call_after_refresh(self.query_one(ClueChain).mount_media)

    async def _show_item(self, key: tuple[str, str]) -> None:
        self.key = key
        item = self.item
        task = self.state.task(item)
        if self.rotation >= max(1, len(item.rotations)):
            self.rotation = 0
        pos = self.keys.index(key) + 1 if key in self.keys else 0
        title = Text.assemble(safe(item.item_id, "bold", one_line=True), "  ", safe(task.name, "dim", one_line=True),
                              (f"   {pos}/{len(self.keys)} in list (n/p)", "dim"))
        self.query_one("#item-title", Static).update(title)
        self._show_gold_head()
        qm = self.query_one("#question-media", Horizontal)
        if qm.children:
            await qm.remove_children()
        if item.question_images:
            await qm.mount_all([media_thumb(m, self.state) for m in item.question_images])
        qm.display = bool(item.question_images)
        await self.query_one(ClueChain).show(task, item)
        gold = self.query_one("#gold", VerticalScroll)
        if gold.scroll_y:
            gold.scroll_home(animate=False)
        self.refresh_annotations()
        await self._show_runs()

    def _show_gold_head(self) -> None:
        item = self.item
        gap = Text("")
        self.query_one("#gold-head", Static).update(
            Group(labels_text(item), gap, question_text(item), gap, options_table(item, self.rotation)))

    def _runs_of(self, item: Item) -> list:
        """The runs shown for `item`: those of the current backbone (the first one by default)."""
        preds = self.state.predictions(item)
        backbones = sorted({ref.backbone for ref, _ in preds})
        if backbones and self.backbone not in backbones:
            self.backbone = backbones[0]
        return [(ref, p) for ref, p in preds if ref.backbone == self.backbone]

    async def _show_runs(self) -> None:
        item = self.item
        preds = self.state.predictions(item)
        backbones = sorted({ref.backbone for ref, _ in preds})
        chosen = self._runs_of(item)
        head = Text("runs", style="bold")
        if backbones:
            head.append("  backbone ")
            head.append_text(safe(self.backbone, "bold", one_line=True))
            if len(backbones) > 1:
                head.append(f" ({backbones.index(self.backbone) + 1}/{len(backbones)}, b cycles)", style="dim")
            head.append(f" · {len(chosen)} runs · [ ] switch", style="dim")
        else:
            head.append("  none answered this item", style="dim")
        self.query_one("#runs-head", Static).update(head)
        tabs = self.query_one("#runs", TabbedContent)
        ids = [self._pane_id(ref) for ref, _ in chosen]
        if ids != self._pane_ids:  # another backbone, or another set of methods: new tabs
            active = self._active_display()
            await tabs.clear_panes()
            for ref, _ in chosen:
                await tabs.add_pane(self._pane(ref))
            self._pane_ids = ids
            match = next((self._pane_id(ref) for ref, _ in chosen if ref.display == active), None)
            if match:
                tabs.active = match
        self._chosen = {self._pane_id(ref): (ref, p) for ref, p in chosen}
        self._refresh_active_panel()

    def _pane_id(self, ref) -> str:
        """One tab per (backbone, method): an MCQ item and an open one keep the same tabs, so moving
        between them only refills the panel (rebuilding tabs costs a keystroke's budget)."""
        return f"run-{self.state.slot_of(ref)}"

    def _pane(self, ref) -> TabPane:
        slot = self.state.slot_of(ref)
        return TabPane(label(ref.display), RunPanel(ref, id=f"panel-{slot}"), id=f"run-{slot}")

    def _refresh_active_panel(self) -> None:
        """Only the visible run's panel is filled; the others when their tab is opened."""
        panel = self.active_panel()
        tabs = self.query_one("#runs", TabbedContent)
        if panel is None or tabs.active not in self._chosen:
            return
        ref, p = self._chosen[tabs.active]
        panel.ref = ref  # the same method in this item's mode
        panel.show(self.state.task(self.item), self.item, p, self.rotation, self.view)

    def on_tabbed_content_tab_activated(self, event: TabbedContent.TabActivated) -> None:
        self._refresh_active_panel()

    def _active_display(self) -> str | None:
        panel = self.active_panel()
        return panel.ref.display if panel else None

    def active_panel(self) -> RunPanel | None:
        tabs = self.query_one("#runs", TabbedContent)
        if not tabs.active:
            return None
        try:
            return tabs.get_pane(tabs.active).query_one(RunPanel)
        except Exception:
            return None

    # -- actions -----------------------------------------------------------------------------------
    def action_back(self) -> None:
        self.app.pop_screen()

    def action_step(self, step: int) -> None:
        """Move to the next/previous item. Held-down keys do not queue a redraw each: the target moves
        at once (and the title says where), and the screen draws only the latest target."""
        base = self._target or self.key
        if base not in self.keys:
            return
        i = self.keys.index(base) + step
        if not 0 <= i < len(self.keys):
            self.notify("End of the list." if step > 0 else "Start of the list.", timeout=1.5)
            return
        self._target = self.keys[i]
        if not self._stepping:
            self._stepping = True
            self.run_worker(self._step_to_target(), group="item-step")

    async def _step_to_target(self) -> None:
        try:
            while self._target is not None and self._target != self.key:
                await self.show_item(self._target)
        finally:
            self._target = None
            self._stepping = False

    def action_run(self, step: int) -> None:
        if not self._pane_ids:
            return
        tabs = self.query_one("#runs", TabbedContent)
        i = self._pane_ids.index(tabs.active) if tabs.active in self._pane_ids else 0
        tabs.active = self._pane_ids[(i + step) % len(self._pane_ids)]

    async def action_backbone(self) -> None:
        backbones = sorted({ref.backbone for ref, _ in self.state.predictions(self.item)})
        if len(backbones) < 2:
            self.notify("Only one backbone answered this item.", timeout=2)
            return
        self.backbone = backbones[(backbones.index(self.backbone) + 1) % len(backbones)]
        await self._show_runs()

    def action_evidence(self) -> None:
        self.view = VIEWS[(VIEWS.index(self.view) + 1) % len(VIEWS)]
        panel = self.active_panel()
        if panel is not None:
            panel.set_view(self.view)

    async def action_rotation(self) -> None:
        item = self.item
        if len(item.rotations) < 2:
            self.notify("This item has no other rotation.", timeout=2)
            return
        self.rotation = (self.rotation + 1) % len(item.rotations)
        self._show_gold_head()
        await self._show_runs()

    def action_clue(self, step: int) -> None:
        self.query_one(ClueChain).move(step)

    def action_goto_round(self) -> None:
        r = self.query_one(ClueChain).selected
        if r is None:
            self.notify("This item has no clue round to go to.", timeout=2)
            return
        task = self.state.task(self.item)
        from tui.screens.jump import open_session

        open_session(self.app, task, r.round_id, self.item)

    def action_compare(self) -> None:
        from tui.screens.compare import CompareScreen, default_pair

        pair = default_pair(self.state, self.item, self.backbone, self._active_display())
        if pair is None:
            self.notify("Side by side needs two runs that answered this item.", severity="warning")
            return
        self.app.push_screen(CompareScreen(self.key, *pair))

    def action_export(self) -> None:
        from tui.casecard import export_case

        try:
            paths = export_case(self.state, self.item, self.backbone)
        except OSError as err:
            self.notify(f"Export failed: {err}", severity="error", markup=False)
            return
        self.notify("Case card written:\n" + "\n".join(str(p) for p in paths), title="Export",
                    markup=False, timeout=8)
