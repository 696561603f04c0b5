"""Items: every (item, mode) in one table, with filters and search; Enter opens the item.

Filters (tui.rows.Filter, the state the app holds) combine: task / X / Y / mode / answerable, the
run the list is about (a Scores cell, `w`), how that run failed (`!`: tui.failures' kinds, each
with its count, plus A right / B wrong, judge ≠ human, flags by kind, notes). `t` and `w` open a
fuzzy picker (tui/modals/picker.py; the pickers are tui/bases/items_pickers.py). `O` / a header
click sorts, `I` reverses; `E` writes the case cards of every item shown (tui/casecards_batch.py; in
a browser they are sent as one zip, `D` sends it again). The header says what is shown and how many.

Thousands of rows: the table is only rebuilt when the filtered key list actually changes (and search
waits for a pause in typing), every row's cells are built once and cached, and every column has a
fixed width so Textual never measures cells (DESIGN §9). A rebuild adds the first FIRST_ROWS rows at
once and the rest a chunk per frame (Textual's add_row costs ~0.1 ms: 10,000 rows at once would be a
second); a failure filter's kinds are computed once per run, in a thread worker.
"""

from __future__ import annotations

from threading import Thread

from rich.text import Text
from textual import on
from textual.app import ComposeResult
from textual.binding import Binding
from textual.reactive import reactive
from textual.timer import Timer
from textual.widgets import DataTable, Input, Static

from scorer.model import MODES, X_LABELS, Y_LABELS
from tui.bases.items_pickers import ItemsPickers
from tui.bases.screen import BaseScreen
from tui.messages import OpenItem, OpenSearch
from tui.preload import WARM, warm_css
from tui.rows import SORT_COLUMNS, Filter, ItemRow
from tui.text import cell, safe
from tui.widgets.items_table import ItemsTable, middle_cut, right_style, row_key, score_text

SEARCH_DELAY = 0.15  # seconds of quiet typing before the table is filtered
FIRST_ROWS = 120  # rows added at once on a filter change (a screenful and then some); the rest follow
FILL_CHUNK = 500  # rows added per frame after that
COLUMNS = (("item", 28), ("mode", 4), ("X", 5), ("Y", 5), ("ans", 3), ("score", 5), ("right", 5), ("ann", 3),
           ("J≠H", 3), ("question", 44))  # widths are reset to fit the ids and the terminal on mount
HEADER_SORT = {"item": "id", "X": "X", "Y": "Y", "score": "score", "J≠H": "disagreement"}  # a header click
MAX_ID_WIDTH = 36
MIN_ID_WIDTH = 10  # a narrow terminal cuts ids (in the middle) down to this, for the question's sake
MIN_QUESTION = 25  # the question column's width kept at 80 columns


def cycle(options: list, current):
    """The option after `current` (None → first; last → None)."""
    if current is None:
        return options[0] if options else None
    try:
        i = options.index(current)
    except ValueError:
        return None
    return options[i + 1] if i + 1 < len(options) else None


class ItemsScreen(ItemsPickers, BaseScreen):
    WHERE = "Items"
    warming: Thread | None = None  # the thread parsing the Item screen's CSS (_warm_item_css)
    BINDINGS = [
        Binding("enter", "open", "Open", tooltip="open the highlighted item", id="items.open"),
        Binding("slash", "search", "Search", key_display="/", tooltip="search id, question, answer, options",
                id="items.filter-text"),
        Binding("s", "meaning", "Meaning", tooltip="search rounds and items by meaning, jump to a hit",
                id="search.open"),
        Binding("t", "pick_task", "Task", tooltip="filter by task (a fuzzy picker)", id="items.filter-task"),
        Binding("x", "cycle('x')", "X", tooltip="filter by visual granularity X1–X4 (cycles)", id="items.filter-x"),
        Binding("y", "cycle('y')", "Y", tooltip="filter by reasoning depth Y1–Y3 (cycles)", id="items.filter-y"),
        Binding("M", "cycle('mode')", "Mode", tooltip="MCQ / open (cycles)", id="items.filter-mode"),
        Binding("A", "cycle('answerable')", "Answerable", tooltip="answerable / abstention controls",
                id="items.filter-answerable"),
        Binding("w", "pick_wrong", "Wrong by", tooltip="items a run got wrong (a fuzzy picker of runs)",
                id="items.filter-wrong"),
        Binding("exclamation_mark", "pick_failure", "Failures", key_display="!",
                tooltip="how the run failed, with counts (filters combine)", id="items.filter-failure"),
        Binding("j", "toggle_disagree", "J≠H", tooltip="a human verdict disagrees with the judge",
                id="items.filter-disagree"),
        Binding("h", "cycle('annotated')", "Annotated", tooltip="annotated or not (cycles)",
                id="items.filter-annotated"),
        Binding("backspace", "clear", "Clear", tooltip="clear every filter", id="items.clear"),
        Binding("O", "sort", "Order by", tooltip="sort by task, id, X, Y, score, judge, disagreement (cycles)",
                id="items.sort"),
        Binding("I", "reverse", "Invert order", tooltip="reverse the order", id="items.sort-reverse"),
        Binding("E", "export_cards", "Export cards", tooltip="case cards of every item shown (Markdown + LaTeX)",
                id="items.export-cards"),
        Binding("D", "download_cards", "Download cards", show=False,
                tooltip="in a browser (memscope serve): the last exported cards as one zip", id="items.download-cards"),
    ]

    filter: reactive[Filter] = reactive(Filter, init=False)

    def __init__(self) -> None:
        super().__init__()
        self.keys: list[tuple[str, str]] = []
        self._cells: dict[tuple[str, str], tuple[Text, ...]] = {}
        self._search_timer: Timer | None = None
        self._run_shown: int | None = None  # the run whose score the score column shows
        self._top = False  # the next filter change puts the cursor on the first row (show_filter)
        self._fill_gen = 0  # which list the table is being filled with (see _fill)
        self._id_width: int | None = None  # ids cut to this in a narrow terminal (see _fit_columns)

    def body(self) -> ComposeResult:
        yield Static(id="filter-bar")
        yield Input(placeholder="search: words in id, question, answer or options (enter: done, esc: clear)",
                    id="search")
        table = ItemsTable(id="items-table", cursor_type="row", zebra_stripes=True)
        for name, width in COLUMNS:
            table.add_column(name, width=width, key=name)
        yield table

    def on_mount(self) -> None:
        self.query_one("#search", Input).display = False
        self._fit_columns()
        self._apply()
        self.query_one(DataTable).focus()

    def on_screen_resume(self) -> None:
        # The Item screen's CSS, parsed in a thread while the list is read, for the first Enter (issue
        # 19): Textual drops what it parsed on every mode switch (App.refresh_css), this one included
        self.call_after_refresh(self._warm_item_css)

    def _warm_item_css(self) -> None:
        # a daemon thread of its own: nothing waits for it, and an app quitting meanwhile leaves it be
        if self.is_attached:
            self.warming = Thread(target=warm_css, args=(self.app, WARM), name="warm-css",
                                  daemon=True)
            self.warming.start()

    def _fit_columns(self) -> None:
        """Fixed widths (no per-cell measuring): ids as wide as the longest, the question the rest."""
        table = self.query_one(DataTable)
        id_width = min(MAX_ID_WIDTH, max((len(r.item.item_id) for r in self.state.rows), default=8))
        table.columns["item"].width = max(8, id_width)
        fixed = sum(c.width for k, c in table.columns.items() if k != "question")
        padding = 2 * table.cell_padding * len(table.columns) + 2  # + scrollbar
        room = self.app.size.width - fixed - padding
        if room < MIN_QUESTION:  # a narrow terminal (80×24): one space between columns, ids cut in the
            # middle (start and end kept, so they stay distinct), the question keeping MIN_QUESTION
            table.cell_padding = 0
            for k, c in table.columns.items():
                c.width = dict(COLUMNS)[k] + 1 if k not in ("item", "question") else c.width
            others = sum(c.width for k, c in table.columns.items() if k not in ("item", "question"))
            spare = self.app.size.width - 2 - others - MIN_QUESTION - 1  # scrollbar; a space after the id
            self._id_width = max(MIN_ID_WIDTH, min(id_width, spare))
            table.columns["item"].width = self._id_width + 1
            room = self.app.size.width - 2 - others - table.columns["item"].width
            self._cells.clear()
        table.columns["question"].width = max(20, room)

    # -- filtering ---------------------------------------------------------------------------------
    def watch_filter(self) -> None:
        top, self._top = self._top, False
        self._apply(top=top)

    def _cells_of(self, row: ItemRow, run: int | None) -> tuple[Text, ...]:
        cells = self._cells.get((row.key, run))
        if cells is None:
            it = row.item
            right, known = row.right_count
            cells = (
                cell(it.item_id) if self._id_width is None else Text(middle_cut(it.item_id, self._id_width)),
                Text(it.mode),
                cell(",".join(sorted(it.x)) or "—"),
                cell(",".join(sorted(it.y)) or "—"),
                Text("" if it.answerable else "no", style="yellow"),
                score_text(row, run),
                Text(f"{right}/{known}" if known else "—", style=right_style(right, known)),
                Text("✎" if row.annotated else ""),
                Text("≠" if row.disagree else "", style="bold red"),
                cell(it.question),
            )
            self._cells[(row.key, run)] = cells
        return cells

    def _apply(self, top: bool = False) -> None:
        rows = self.state.filtered(self.filter)
        keys = [r.key for r in rows]
        table = self.query_one(DataTable)
        run = self.filter.about
        if keys != self.keys or run != self._run_shown:
            current = self.current_key()
            self.keys = keys
            self._run_shown = run
            self._fill_gen += 1  # a fill still under way for the previous list stops
            table.clear()
            at = keys.index(current) if current in keys and not top else None
            self._fill(rows, run, self._fill_gen, FIRST_ROWS if at is None else max(FIRST_ROWS, at + FIRST_ROWS))
            if at is not None:
                table.move_cursor(row=at, animate=False)
        self._show_filters(len(rows))

    def _fill(self, rows: list[ItemRow], run: int | None, gen: int, upto: int) -> None:
        """Add rows up to `upto` now; the rest a chunk per frame after this one is painted, so a filter
        change on 10,000 rows shows its first screenful at once (bench/app_review.py) and a key
        pressed meanwhile waits for one chunk at most."""
        if gen != self._fill_gen or not self.is_attached:
            return
        table = self.query_one(DataTable)
        start = table.row_count
        for r in rows[start:upto]:
            table.add_row(*self._cells_of(r, run), key=row_key(r.key))
        if upto < len(rows):
            self.call_after_refresh(self._fill, rows, run, gen, upto + FILL_CHUNK)

    @property
    def filling(self) -> bool:
        """Rows of the current list are still being added (tests and the bench wait for it)."""
        return self.query_one(DataTable).row_count < len(self.keys)

    def show_filter(self, f: Filter) -> None:
        """Show `f` (from a Scores cell or the palette), the cursor on the first row."""
        if f == self.filter:
            self._apply(top=True)
        else:
            self._top = True
            self.filter = f  # watch_filter applies it, once
        table = self.query_one(DataTable)
        table.move_cursor(row=0, animate=False)
        table.focus()

    def _show_filters(self, shown: int) -> None:
        parts = [Text(f"{shown} of {len(self.state.rows)} items", style="bold")]
        for name, value in self.filter.describe(self.state):
            parts.append(Text.assemble("  ", (f"{name}=", "cyan"), safe(value, one_line=True)))
        if len(parts) == 1:
            parts.append(Text("  no filters (t x y w ! j …, / search, O sort, ? help)", style="dim"))
        self.query_one("#filter-bar", Static).update(Text.assemble(*parts))

    def current_key(self) -> tuple[str, str] | None:
        table = self.query_one(DataTable)
        if not self.keys or table.cursor_row is None or not 0 <= table.cursor_row < len(self.keys):
            return None
        return self.keys[table.cursor_row]

    # -- actions -----------------------------------------------------------------------------------
    def action_cycle(self, name: str) -> None:
        st, f = self.state, self.filter
        if name == "task":
            self.filter = f.with_(task=cycle(st.tasks, f.task))
        elif name == "x":
            self.filter = f.with_(x=cycle(list(X_LABELS), f.x))
        elif name == "y":
            self.filter = f.with_(y=cycle(list(Y_LABELS), f.y))
        elif name == "mode":
            mode = cycle(list(MODES), f.mode)

            def kept(run):  # a run filter of the other mode would leave nothing
                return None if run is not None and mode is not None and st.run_refs[run].mode != mode else run

            run = kept(f.run)
            self.filter = f.with_(mode=mode, wrong_run=kept(f.wrong_run), right_run=kept(f.right_run), run=run,
                                  failures=f.failures if run is not None else ())
        elif name == "answerable":
            self.filter = f.with_(answerable=cycle([True, False], f.answerable))
        elif name == "annotated":
            if st.store is None:
                self.notify("No annotation database open (memscope tui … --db FILE).", severity="warning")
            self.filter = f.with_(annotated=cycle([True, False], f.annotated))
        elif name == "wrong_run":
            refs = [r.index for r in st.refs_for_mode(f.mode)]
            if not refs:
                self.notify("No runs loaded.", severity="warning")
            self.filter = f.with_(wrong_run=cycle(refs, f.wrong_run))

    # -- sorting -----------------------------------------------------------------------------------
    def action_sort(self) -> None:
        f = self.filter
        i = SORT_COLUMNS.index(f.sort) + 1 if f.sort in SORT_COLUMNS else 0
        self.filter = f.with_(sort=SORT_COLUMNS[i] if i < len(SORT_COLUMNS) else None, descending=False)

    def action_reverse(self) -> None:
        if not self.filter.sort:
            self.notify("Not sorted yet: O sorts (or click a column header).", timeout=2)
            return
        self.filter = self.filter.with_(descending=not self.filter.descending)

    @on(DataTable.HeaderSelected, "#items-table")
    def _header(self, event: DataTable.HeaderSelected) -> None:
        column = HEADER_SORT.get(str(event.column_key.value))
        if column is None:
            return
        f = self.filter
        self.filter = f.with_(sort=column, descending=not f.descending if f.sort == column else False)

    # -- batch case cards --------------------------------------------------------------------------
    def action_export_cards(self) -> None:
        from tui.casecards_batch import ask_and_export  # the writer (and its dialog) on first use

        ask_and_export(self, list(self.keys), self.filter)

    def action_download_cards(self) -> None:
        from tui.casecards_batch import download_cards

        download_cards(self)

    def action_toggle_disagree(self) -> None:
        if self.state.store is None:
            self.notify("No annotation database open: no human verdicts to compare.", severity="warning")
        self.filter = self.filter.with_(disagree=not self.filter.disagree)

    def action_clear(self) -> None:
        search = self.query_one("#search", Input)
        search.value = ""
        search.display = False
        self.filter = Filter()
        self.query_one(DataTable).focus()

    def action_meaning(self) -> None:
        self.post_message(OpenSearch())

    def action_search(self) -> None:
        search = self.query_one("#search", Input)
        search.display = True
        search.focus()

    @on(Input.Changed, "#search")
    def _typed(self, event: Input.Changed) -> None:
        if self._search_timer is not None:
            self._search_timer.stop()
        value = event.value
        self._search_timer = self.set_timer(SEARCH_DELAY, lambda: self._set_text(value))

    def _set_text(self, value: str) -> None:
        if value != self.filter.text:
            self.filter = self.filter.with_(text=value)

    @on(Input.Submitted, "#search")
    def _submitted(self, event: Input.Submitted) -> None:
        if self._search_timer is not None:
            self._search_timer.stop()
        self._set_text(event.value)
        self.query_one(DataTable).focus()

    def key_escape(self) -> None:
        search = self.query_one("#search", Input)
        if search.has_focus or self.filter.text:
            self.action_clear_search()

    def action_clear_search(self) -> None:
        search = self.query_one("#search", Input)
        search.value = ""
        search.display = False
        self._set_text("")
        self.query_one(DataTable).focus()

    @on(DataTable.RowSelected, "#items-table")
    def _selected(self, event: DataTable.RowSelected) -> None:
        self.action_open()

    def action_open(self) -> None:
        key = self.current_key()
        if key is not None:
            self.post_message(OpenItem(list(self.keys), key, run=self.filter.about))
