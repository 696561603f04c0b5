"""Item: the gold side (question, answer, options of the shown rotation, labels, the clue chain in
time order with thumbnails, latest/stale marks for Y3) beside one tab per run (its answer, score,
judge reasoning, retrieved and delivered evidence, chain completeness). n/p step through the
Items list it was opened from; s puts two runs side by side; x exports a case card; g jumps to the
highlighted clue's round in the Session screen (by a message to the app: tui/messages.py).

Speed (issue 4: next item < 50 ms, opening < 150 ms; bench/app.py): the tabs are a Tabs bar over ONE
run panel, refilled for the selected run (no pane per run to build); an item change refills the
widgets in place (Static.update, the clue cards and thumbnails reused) in one batch and one layout.

The annotation side (labels, verdicts, notes, flags: l v N f u) is the panel in #annotation-slot,
with its keys and dialogs in the base class (tui/bases/annotating.py).
"""

from __future__ import annotations

import asyncio
import gc

from rich.text import Text
from textual import events
from textual.app import ComposeResult
from textual.binding import Binding
from textual.containers import Container, Horizontal, Vertical, VerticalScroll
from textual.widgets import Static, Tab, Tabs
from textual.widgets._tabs import Underline

from scorer.model import Item
from tui.bases.annotating import AnnotatingScreen
from tui.casecard import CaseCardError, export_case
from tui.item_lines import labels_text, options_table, question_text
from tui.keymap import shown_key
from tui.messages import OpenCompare, OpenRound
from tui.preload import warm_later
from tui.serve_deliver import deliver
from tui.state import default_pair
from tui.text import safe
from tui.widgets.boxes import BlankColumn, BlankRow, BlankScroll
from tui.widgets.clues import ClueChain
from tui.widgets.keybar import KeyBar
from tui.widgets.literal import label
from tui.widgets.prepared import PreparedCache, show_text
from tui.widgets.run_panel import VIEWS, RunPanel
from tui.widgets.picture import PictureView
from tui.widgets.run_tabs import RunTabs, unique_labels
from tui.widgets.status import StatusLine
from tui.widgets.thumbs import ImageThumb, MediaThumb, ThumbRow


class ItemScreen(AnnotatingScreen):  # the annotation keys and panel: tui/bases/annotating.py
    WHERE = "Item"
    BINDINGS = [
        Binding("escape", "back", "Back", tooltip="back to the Items table", id="back"),
        Binding("n", "step(1)", "Next", tooltip="next item in the Items list", id="item.next"),
        Binding("p", "step(-1)", "Prev", tooltip="previous item in the Items list", id="item.prev"),
        Binding("right_square_bracket", "run(1)", "Next run", key_display="]", id="item.next-run"),
        Binding("left_square_bracket", "run(-1)", "Prev run", key_display="[", id="item.prev-run"),
        Binding("B", "backbone", "Backbone", tooltip="show the runs of the next backbone", id="item.backbone"),
        Binding("e", "evidence", "Retr/Deliv", tooltip="switch the evidence list: retrieved ↔ delivered",
                id="item.evidence"),
        Binding("o", "rotation", "Rotation", tooltip="cycle the MCQ rotation shown", id="item.rotation"),
        Binding("c", "clue(1)", "Clue", tooltip="highlight the next clue", id="item.next-clue"),
        Binding("C", "clue(-1)", "Prev clue", show=False, id="item.prev-clue"),
        Binding("g", "goto_round", "Go to round", tooltip="open the highlighted clue's round in Session",
                id="item.goto-round"),
        Binding("S", "compare", "Side by side", tooltip="two runs side by side (e.g. FC(V) vs FC(T))",
                id="item.compare"),
        Binding("E", "export", "Export card", tooltip="write a case card (Markdown + LaTeX) under exports/",
                id="item.export"),
    ]

    def __init__(self, keys: list[tuple[str, str]], key: tuple[str, str], run=None) -> None:
        """`run` (a RunRef, e.g. the run a filter or Scores cell was about): its tab opens first."""
        super().__init__()
        self.keys = keys or [key]
        self.key = key
        self.rotation = 0
        self.view = VIEWS[0]
        self.backbone: str | None = None if run is None else run.backbone
        self._first_tab: str | None = None if run is None else run.display
        self._tab_ids: list[str] = []  # the tabs shown, in order: "run-<slot>"
        self._chosen: dict = {}  # tab id → (RunRef, Prediction) of the item shown
        self._target: tuple[str, str] | None = None  # where n/p are heading (see action_step)
        self._stepping = False
        self.shown_key: tuple[str, str] | None = None  # the item whose content is on screen (bench/tests)
        self._texts = PreparedCache(64)  # the gold heads shown and prefetched
        self._resumed = False  # see _on_screen_resume

    @property
    def item(self) -> Item:
        return self.state.bench.item(*self.key)

    def body(self) -> ComposeResult:
        yield Static(id="item-title")
        with BlankRow(id="item-body"):
            # the frame draws the border, so the scrolling box (whose every line Textual repaints when
            # its content's height changes: each item) has nothing of its own to paint
            with Vertical(id="gold-frame"), BlankScroll(id="gold"):
                yield Static(id="gold-head")
                yield ThumbRow(id="question-media")
                yield Static(Text("clue chain (time order)", style="bold underline"), id="chain-title")
                chain = ClueChain(id="chain")
                chain.preload(self.state.task(self.item), self.item)  # mounted with the screen
                yield chain
            with BlankColumn(id="method-side"):
                yield Static(id="runs-head")
                chosen = self._runs_of(self.item)
                yield self._tabs(chosen, self._first_tab)
                yield RunPanel(id="run-panel")
                with Vertical(id="annotation-slot"):
                    yield Static(id="annotation-summary")

    async def on_mount(self) -> None:
        await self.show_item(self.key)

    def _on_screen_resume(self, event: events.ScreenResume) -> None:
        # (Textual runs this before Screen's own handler.) Pushed a moment ago, every widget was styled
        # as it was mounted: Textual would restyle them all once more (~10 ms of the first Enter:
        # bench/app.py). Later resumes are left as Textual has them.
        if not self._resumed:
            self._resumed = True
            event.refresh_styles = False

    # -- showing -----------------------------------------------------------------------------------
    async def show_item(self, key: tuple[str, str]) -> None:
        self.workers.cancel_group(self, "item-prefetch")
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
        # thumbnails that could not be reused come after that first frame (pictures decode off the UI
        # thread anyway), then the neighbours' texts are rendered ahead
        self.call_after_refresh(self._after_paint)

    async def _after_paint(self) -> None:
        if not self.is_attached:
            return
        async with self.lock:  # not in the middle of show_item (n/p pressed meanwhile)
            await self.query_one("#question-media", ThumbRow).settle()
            await self.query_one(ClueChain).mount_media()
        self.call_after_refresh(self._start_prefetch)  # once laid out with those: the widths are final

    def _start_prefetch(self) -> None:
        if self._target is None and self.is_attached:  # not while n/p are still moving
            self.run_worker(self._prefetch(), group="item-prefetch", exclusive=True)

    async def _prefetch(self) -> None:
        """Render the next item's texts (then the previous one's) at the widths of the widgets that
        will show them, while the user reads this one: n/p then only swap lines in. Yields between
        texts, so a key pressed meanwhile waits for one text at most (and cancels the rest)."""
        if self.key not in self.keys:
            return
        i = self.keys.index(self.key)
        for j in (i + 1, i - 1):
            if not 0 <= j < len(self.keys):
                continue
            item = self.state.bench.item(*self.keys[j])
            task = self.state.task(item)
            rotation = self.rotation if self.rotation < max(1, len(item.rotations)) else 0
            gold = self.query_one("#gold", VerticalScroll)
            self._title(item).render_ahead(self.query_one("#item-title", Static))
            self._gold_head(item, rotation).render_ahead(self.query_one("#gold-head", Static), gold)
            await asyncio.sleep(0)
            for _ in self.query_one(ClueChain).prepare(task, item, scroller=gold):
                await asyncio.sleep(0)
            run = self._run_for(item)
            if run is not None:
                self.query_one(RunPanel).prepare(run[0], task, item, run[1], rotation, self.view)
            await asyncio.sleep(0)

    async def _show_item(self, key: tuple[str, str]) -> None:
        self.key = key
        item = self.item
        task = self.state.task(item)
        if self.rotation >= max(1, len(item.rotations)):
            self.rotation = 0
        show_text(self.query_one("#item-title", Static), self._title(item))
        self._show_gold_head()
        qm = self.query_one("#question-media", ThumbRow)
        if item.question_images:
            qm.fill(item.question_images)
        if qm.display != bool(item.question_images):
            qm.display = bool(item.question_images)
        await self.query_one(ClueChain).show(task, item)
        gold = self.query_one("#gold", VerticalScroll)
        if gold.scroll_y:
            gold.scroll_home(animate=False)
        self.refresh_annotations()
        await self._show_runs()

    def _title(self, item: Item):
        key = (item.item_id, item.mode)
        pos = self.keys.index(key) + 1 if key in self.keys else 0
        return self._texts.get(("title", key, pos, len(self.keys)), lambda: Text.assemble(
            safe(item.item_id, "bold", one_line=True), "  ", safe(item.task, "dim", one_line=True),
            (f"   {pos}/{len(self.keys)} in list (n/p)", "dim")))

    def _show_gold_head(self) -> None:
        show_text(self.query_one("#gold-head", Static), self._gold_head(self.item, self.rotation))

    def _gold_head(self, item: Item, rotation: int):
        # one Text (not a Group): Textual wraps and measures it natively, and keeps its height
        return self._texts.get(("gold", item.item_id, item.mode, rotation), lambda: Text("\n\n").join(
            [labels_text(item), question_text(item), options_table(item, rotation)]))

    def _runs_of(self, item: Item) -> list:
        """The runs shown for `item`: those of the current backbone (the first one by default)."""
        self.backbone, chosen = self._backbone_runs(item)
        return chosen

    def _backbone_runs(self, item: Item) -> tuple[str | None, list]:
        preds = self.state.predictions(item)
        backbones = sorted({ref.backbone for ref, _ in preds})
        backbone = self.backbone if self.backbone in backbones or not backbones else backbones[0]
        return backbone, [(ref, p) for ref, p in preds if ref.backbone == backbone]

    def _run_for(self, item: Item) -> tuple | None:
        """(RunRef, Prediction) the run panel would show for `item` (the selected tab's method)."""
        chosen = self._backbone_runs(item)[1]
        shown = self._active_display()
        return next(((ref, p) for ref, p in chosen if ref.display == shown), chosen[0] if chosen else None)

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
                cycles = shown_key("item.backbone", getattr(self.app, "user_keys", None))  # the key, as remapped
                head.append(f" ({backbones.index(self.backbone) + 1}/{len(backbones)}, {cycles} cycles)", style="dim")
            switch = "/".join(shown_key(i, getattr(self.app, "user_keys", None)) for i in ("item.prev-run", "item.next-run"))
            head.append(f" · {len(chosen)} runs · {switch} switch", style="dim")
        else:
            head.append("  none answered this item", style="dim")
        show_text(self.query_one("#runs-head", Static), head)
        ids = [self._tab_id(ref) for ref, _ in chosen]
        if ids != self._tab_ids:  # another backbone, or another set of methods: a new tab bar
            active = self._active_display()
            old = self.query_one("#runs", Tabs)
            await old.remove()
            await self.mount(self._tabs(chosen, active), before=self.query_one(RunPanel))
        self._chosen = {self._tab_id(ref): (ref, p) for ref, p in chosen}
        panel = self.query_one(RunPanel)
        if panel.display != bool(chosen):
            panel.display = bool(chosen)
        self._refresh_active_panel()

    def _tabs(self, chosen: list, active: str | None) -> RunTabs:
        """The tab bar for `chosen` runs, on the one named `active` if it is there (else the first)."""
        self._tab_ids = [self._tab_id(ref) for ref, _ in chosen]
        on = next((self._tab_id(ref) for ref, _ in chosen if ref.display == active), None)
        names = unique_labels([ref.display for ref, _ in chosen], [ref.method for ref, _ in chosen])
        return RunTabs(*(Tab(label(name), id=self._tab_id(ref)) for name, (ref, _) in zip(names, chosen)),
                       active=on, id="runs")  # whole tabs only, never one cut at the edge

    def _tab_id(self, ref) -> str:
        """One tab per (backbone, method): an MCQ item and an open one keep the same tabs, so moving
        between them only refills the panel."""
        return f"run-{self.state.slot_of(ref)}"

    def _refresh_active_panel(self) -> None:
        """The one run panel shows the selected tab's run."""
        active = self.query_one("#runs", Tabs).active or (self._tab_ids[0] if self._tab_ids else None)
        if active not in self._chosen:
            return
        ref, p = self._chosen[active]
        self.query_one(RunPanel).show(ref, self.state.task(self.item), self.item, p, self.rotation, self.view)

    def on_tabs_tab_activated(self, event: Tabs.TabActivated) -> None:
        self._refresh_active_panel()

    def _active_display(self) -> str | None:
        panel = self.active_panel()
        return panel.ref.display if panel else None

    def active_panel(self) -> RunPanel | None:
        """The run panel, when a run answered the item (its `.ref` is the run shown)."""
        panel = self.query_one(RunPanel)
        return panel if self._chosen and panel.ref is not None else None

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
        if not self._tab_ids:
            return
        tabs = self.query_one("#runs", Tabs)
        i = self._tab_ids.index(tabs.active) if tabs.active in self._tab_ids else 0
        tabs.active = self._tab_ids[(i + step) % len(self._tab_ids)]

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
        self.post_message(OpenRound(self.state.task(self.item).name, r.round_id, self.item))

    def action_compare(self) -> None:
        pair = default_pair(self.state, self.item, self.backbone, self._active_display())
        if pair is None:
            self.notify("Side by side needs two runs that answered this item.", severity="warning")
            return
        self.post_message(OpenCompare(self.key, *pair))

    def action_export(self) -> None:
        try:
            paths = export_case(self.state, self.item, self.backbone)
        except (OSError, CaseCardError) as err:
            self.notify(f"Export failed: {err}", severity="error", markup=False)
            return
        try:
            sent = deliver(self.app, paths)  # in a browser (memscope serve): downloaded there as one zip
            sent = f"\n(sent to your browser as {sent})" if sent else ""
        except OSError as err:
            sent = f"\n(not sent to your browser: {err})"
        self.notify("Case card written:\n" + "\n".join(str(p) for p in paths) + sent, title="Export",
                    markup=False, timeout=8)


# the CSS of this screen and of every widget class it mounts, parsed while the Items list is read, not
# on the first Enter (tui.preload; tests/tui/test_preload.py checks that the Enter parses none)
warm_later(ItemScreen, StatusLine, KeyBar, Static, Container, Horizontal, Vertical, VerticalScroll, BlankRow,
           BlankColumn, BlankScroll, ClueChain, ThumbRow, ImageThumb, MediaThumb, PictureView, RunTabs, Tabs, Tab,
           Underline, RunPanel)
