"""Items: every (item, mode) in one table, with filters and search; Enter opens the item.

Thousands of rows: the table is only rebuilt when the filtered key list actually changes (and search
waits for a pause in typing), every row's cells are built once and cached, and every column has a
fixed width so Textual never measures cells (DESIGN §9).
"""

from __future__ import annotations

from rich.text import Text
from textual import on
from textual.app import ComposeResult
from textual.binding import Binding
from textual.reactive import reactive
from textual.timer import Timer
from textual.widgets import DataTable, Input, Static

from scorer.model import MODES, X_LABELS, Y_LABELS
from tui.bases.screen import BaseScreen
from tui.messages import OpenItem, OpenSearch
from tui.state import Filter, ItemRow
from tui.text import cell, safe

SEARCH_DELAY = 0.15  # seconds of quiet typing before the table is filtered
COLUMNS = (("item", 28), ("mode", 4), ("X", 5), ("Y", 5), ("ans", 3), ("right", 5), ("ann", 3),
           ("J≠H", 3), ("question", 44))  # widths are reset to fit the ids and the terminal on mount
MAX_ID_WIDTH = 36
SEP = "\x1f"  # between item id and mode in a row key (cannot occur in ids read from JSON text safely shown)


def row_key(key: tuple[str, str]) -> str:
    return f"{key[0]}{SEP}{key[1]}"


def cycle(options: list, current):
    """The option after `current` (None → first; last → None)."""
    if current is None:
        return options[0] if options else None
    try:
        i = options.index(current)
    except ValueError:
        return None
    return options[i + 1] if i + 1 < len(options) else None


class ItemsScreen(BaseScreen):
    WHERE = "Items"
    BINDINGS = [
        Binding("enter", "open", "Open", tooltip="open the highlighted item", id="items.open"),
        Binding("slash", "search", "Search", key_display="/", tooltip="search id, question, answer, options",
                id="items.filter-text"),
        Binding("s", "meaning", "Meaning", tooltip="search rounds and items by meaning, jump to a hit",
                id="search.open"),
        Binding("t", "cycle('task')", "Task", tooltip="filter by task (cycles)", id="items.filter-task"),
        Binding("x", "cycle('x')", "X", tooltip="filter by visual granularity X1–X4 (cycles)", id="items.filter-x"),
        Binding("y", "cycle('y')", "Y", tooltip="filter by reasoning depth Y1–Y3 (cycles)", id="items.filter-y"),
        Binding("m", "cycle('mode')", "Mode", tooltip="MCQ / open (cycles)", id="items.filter-mode"),
        Binding("a", "cycle('answerable')", "Answerable", tooltip="answerable / abstention controls",
                id="items.filter-answerable"),
        Binding("w", "cycle('wrong_run')", "Wrong by", tooltip="items a given run got wrong (cycles runs)",
                id="items.filter-wrong"),
        Binding("j", "toggle_disagree", "J≠H", tooltip="a human verdict disagrees with the judge",
                id="items.filter-disagree"),
        Binding("n", "cycle('annotated')", "Annotated", tooltip="annotated or not (cycles)",
                id="items.filter-annotated"),
        Binding("c", "clear", "Clear", tooltip="clear every filter", id="items.clear"),
    ]

    filter: reactive[Filter] = reactive(Filter, init=False)

    def __init__(self) -> None:
        super().__init__()
        self.keys: list[tuple[str, str]] = []
        self._cells: dict[tuple[str, str], tuple[Text, ...]] = {}
        self._search_timer: Timer | None = None

    def body(self) -> ComposeResult:
        yield Static(id="filter-bar")
        yield Input(placeholder="search: words in id, question, answer or options (enter: done, esc: clear)",
                    id="search")
        table = DataTable(id="items-table", cursor_type="row", zebra_stripes=True)
        for name, width in COLUMNS:
            table.add_column(name, width=width, key=name)
        yield table

    def on_mount(self) -> None:
        self.query_one("#search", Input).display = False
        self._fit_columns()
        self._apply()
        self.query_one(DataTable).focus()

    def _fit_columns(self) -> None:
        """Fixed widths (no per-cell measuring): ids as wide as the longest, the question the rest."""
        table = self.query_one(DataTable)
        id_width = min(MAX_ID_WIDTH, max((len(r.item.item_id) for r in self.state.rows), default=8))
        table.columns["item"].width = max(8, id_width)
        fixed = sum(c.width for k, c in table.columns.items() if k != "question")
        padding = 2 * table.cell_padding * len(table.columns) + 2  # + scrollbar
        table.columns["question"].width = max(20, self.app.size.width - fixed - padding)

    # -- filtering ---------------------------------------------------------------------------------
    def watch_filter(self) -> None:
        self._apply()

    def _cells_of(self, row: ItemRow) -> tuple[Text, ...]:
        cells = self._cells.get(row.key)
        if cells is None:
            it = row.item
            right, known = row.right_count
            cells = (
                cell(it.item_id),
                Text(it.mode),
                cell(",".join(sorted(it.x)) or "—"),
                cell(",".join(sorted(it.y)) or "—"),
                Text("" if it.answerable else "no", style="yellow"),
                Text(f"{right}/{known}" if known else "—", style=_right_style(right, known)),
                Text("✎" if row.annotated else ""),
                Text("≠" if row.disagree else "", style="bold red"),
                cell(it.question),
            )
            self._cells[row.key] = cells
        return cells

    def _apply(self) -> None:
        rows = self.state.filtered(self.filter)
        keys = [r.key for r in rows]
        table = self.query_one(DataTable)
        if keys != self.keys:
            current = self.current_key()
            self.keys = keys
            table.clear()
            for r in rows:
                table.add_row(*self._cells_of(r), key=row_key(r.key))
            if current in keys:
                table.move_cursor(row=keys.index(current), animate=False)
        self._show_filters(len(rows))

    def _show_filters(self, shown: int) -> None:
        parts = [Text(f"{shown} of {len(self.state.rows)} items", style="bold")]
        for name, value in self.filter.describe(self.state):
            parts.append(Text.assemble("  ", (f"{name}=", "cyan"), safe(value, one_line=True)))
        if len(parts) == 1:
            parts.append(Text("  no filters (t x y m a w j n, / search, ? help)", style="dim"))
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
            wrong = f.wrong_run
            if wrong is not None and mode is not None and st.run_refs[wrong].mode != mode:
                wrong = None
            self.filter = f.with_(mode=mode, wrong_run=wrong)
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
            self.post_message(OpenItem(list(self.keys), key))


def _right_style(right: int, known: int) -> str:
    if not known:
        return "dim"
    share = right / known
    return "green" if share >= 0.75 else "yellow" if share >= 0.4 else "red"
