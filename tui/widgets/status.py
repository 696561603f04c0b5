"""The status line at the top of every screen: where you are, the benchmark, the annotator and
whether the annotations are saved. It reads the app's state; it keeps none of its own."""

from __future__ import annotations

from rich.text import Text
from textual.widgets import Static

from tui.text import safe


class StatusLine(Static):
    DEFAULT_CSS = """
    StatusLine { height: 1; dock: top; background: $panel; color: $text; padding: 0 1; }
    """

    def __init__(self, where: str, **kw) -> None:
        super().__init__(**kw)
        self.where = where

    def on_mount(self) -> None:
        self.watch(self.app, "save_state", self._refresh_line, init=True)

    def _refresh_line(self, *_: object) -> None:
        st = self.app.state
        n_items = len(st.bench.item_ids())
        line = Text.assemble(
            ("memscope", "bold"), " │ ", (self.where, "bold cyan"), " │ bench ",
            safe(st.bench.name, "bold", one_line=True),
            f" ({len(st.bench.tasks)} tasks · {n_items} items · {len(st.run_refs)} runs)",
            " │ annotator ", safe(st.annotator, "bold", one_line=True),
            " │ ", self._save_text(),
        )
        line.no_wrap = True
        line.overflow = "ellipsis"
        self.update(line)

    def _save_text(self) -> Text:
        st = self.app.state
        state = self.app.save_state
        if st.db_path is None:
            return Text("db: none", style="dim")
        style = "green" if state.startswith("saved") else "yellow" if state.startswith("saving") else "red"
        return Text.assemble("db ", safe(st.db_path.name, one_line=True), ": ", (state, style))
