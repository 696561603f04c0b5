"""Scores: the scorer's tables for the loaded runs — the evaluation matrices first, then the
caption-proof gain and the evidence diagnostics — as coloured tables.

Everything is computed by scorer.scoring.score (the same code as `memscope score`; no second
implementation) in a thread worker, so the app stays responsive; `r` recomputes (e.g. after new
annotations).
"""

from __future__ import annotations

from typing import Any, Mapping, Sequence

from rich.measure import Measurement
from rich.table import Table as RichTable
from rich.text import Text
from textual import work
from textual.app import ComposeResult
from textual.binding import Binding
from textual.containers import Vertical, VerticalScroll
from textual.widgets import Static

from tui.screens.base import BaseScreen
from tui.text import safe

FIRST = ("matrix",)  # shown as soon as it is ready (the lean reader: fast)
THEN = ("caption_proof", "evidence")  # bootstrap CIs and raw-row diagnostics: slower
MARKS = {"best": "bold underline", "second": "underline"}


def value_style(v: float) -> str:
    """Red → yellow → green over [0, 1]; deltas (outside [0, 1]) by sign."""
    if v < 0 or v > 1:
        return "bold red" if v < 0 else "bold green"
    if v < 0.5:
        t = v / 0.5
        r, g = 220, int(70 + t * 130)
    else:
        t = (v - 0.5) / 0.5
        r, g = int(220 - t * 150), 200
    return f"rgb({r},{g},70)"


def fmt_cell(v: Any, mark: str | None = None, n: Any = None, number_style: bool = True) -> Text:
    if v is None or (isinstance(v, float) and v != v):
        return Text("—", style="dim")
    if isinstance(v, bool):
        return Text("yes" if v else "no")
    if isinstance(v, float):
        style = value_style(v) if number_style else ""
        if mark in MARKS:
            style = f"{style} {MARKS[mark]}".strip()
        out = Text(f"{v:.4f}" if abs(v) < 10 else f"{v:.1f}", style=style)
        if n is not None:
            out.append(f" n={n}", style="dim")
        return out
    return safe(v, one_line=True)


def rich_table(table: Any) -> RichTable:
    """One scorer.sections.base.Table as a coloured Rich table (best bold+underlined, second underlined)."""
    t = RichTable(title=safe(table.title, one_line=True), title_justify="left", title_style="bold",
                  caption=safe(table.note) if table.note else None, caption_justify="left", caption_style="dim",
                  header_style="bold", show_lines=False, pad_edge=False)
    columns: Sequence[str] = list(table.columns)
    numeric = {c for c in columns if any(isinstance(r.get(c), float) for r in table.rows)}
    for c in columns:
        t.add_column(safe(c, one_line=True), justify="right" if c in numeric or c == "n" else "left",
                     no_wrap=True)
    for row in table.rows:
        marks: Mapping[str, str] = row.get("_marks") or {}
        ns: Mapping[str, Any] = row.get("_n") or {}
        cells = [fmt_cell(row.get(c), marks.get(c), ns.get(c), number_style=c != "n") for c in columns]
        t.add_row(*cells, end_section=bool(row.get("_rule")))
    return t


class ScoresScreen(BaseScreen):
    WHERE = "Scores"
    BINDINGS = [Binding("r", "recompute", "Recompute", tooltip="score again (e.g. after new annotations)")]

    def body(self) -> ComposeResult:
        with VerticalScroll(id="scores"):
            yield Static(id="scores-status")
            yield Vertical(id="scores-tables")

    def on_mount(self) -> None:
        self.action_recompute()

    def action_recompute(self) -> None:
        st = self.state
        if not st.run_paths:
            self._status(Text("No runs loaded: nothing to score (memscope tui BENCH --runs DIR…).", style="dim"))
            return
        self._status(Text("computing the matrices… (scorer.scoring, in the background)", style="dim italic"))
        self.query_one("#scores-tables").remove_children()
        self.compute()

    def _status(self, text: Text) -> None:
        self.query_one("#scores-status", Static).update(text)

    @work(thread=True, exclusive=True, group="scores")
    def compute(self) -> None:
        from scorer.errors import UserError
        from scorer.scoring import score
        from scorer.sections.base import ScoreOptions

        st = self.state
        opts = ScoreOptions(names=dict(st.names))
        if st.score_resamples is not None:
            opts = ScoreOptions(names=dict(st.names), resamples=st.score_resamples)
        for sections, final in ((FIRST, False), (THEN, True)):
            try:
                report = score(st.bench_path, st.run_paths, db=st.db_path, options=opts, sections=sections,
                               allow_outside_root=st.allow_outside_root)
            except UserError as err:
                self.app.call_from_thread(self._status, safe(f"cannot score: {err}", "red"))
                return
            self.app.call_from_thread(self._show, report, final)

    def _show(self, report: Any, final: bool) -> None:
        box = self.query_one("#scores-tables", Vertical)
        widgets = []
        for section in report.sections:
            if section.reason:
                widgets.append(Static(Text.assemble((f"{section.name}: ", "bold"), safe(section.reason, "dim")),
                                      classes="score-absent"))
                continue
            for table in section.tables:
                rt = rich_table(table)
                static = Static(rt, classes="score-table")
                # as wide as the table wants (the screen scrolls sideways) rather than squeezed columns
                console = self.app.console
                static.styles.width = Measurement.get(console, console.options.update_width(1000), rt).maximum
                widgets.append(static)
        box.mount_all(widgets)
        rows = report.inputs.get("rows", {})
        status = Text.assemble(("Scores", "bold"), f" — {rows.get('scored', '?')} prediction rows scored; ",
                               ("best", MARKS["best"]), " / ", ("second", MARKS["second"]), " per row; colour: ",
                               ("0", value_style(0.0)), " → ", ("0.5", value_style(0.5)), " → ",
                               ("1", value_style(1.0)))
        if not final:
            status.append("   computing caption-proof gain and evidence diagnostics…", style="dim italic")
        for w in report.warnings[:3]:
            status.append("\n")
            status.append_text(safe(w, "yellow"))
        self._status(status)
