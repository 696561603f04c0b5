"""Scores: the scorer's tables for the loaded runs — the evaluation matrices first, then the
caption-proof gain and the evidence diagnostics — as coloured tables.

Everything is computed by scorer.scoring.score (the same code as `memscope score`; no second
implementation) on the benchmark and runs the app has loaded, in a thread worker, so the app stays
responsive; `r` recomputes (e.g. after new annotations). Tables are drawn by the scorer's renderer
(scorer.report.terminal.table) in the app's look.
"""

from __future__ import annotations

from typing import Any

from rich.measure import Measurement
from rich.table import Table as RichTable
from rich.text import Text
from textual import work
from textual.app import ComposeResult
from textual.binding import Binding
from textual.containers import Vertical, VerticalScroll
from textual.widgets import Static

from scorer.errors import UserError
from scorer.report.terminal import Look
from scorer.report.terminal import table as scorer_table
from tui.bases.screen import BaseScreen
from tui.text import safe

FIRST = ("matrix",)  # shown as soon as it is ready (fast)
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


# The scorer's one Table → Rich renderer, in the app's look.
LOOK = Look(marks=MARKS, colour=value_style, missing="—", pad_edge=False, no_wrap=True)


def rich_table(table: Any) -> RichTable:
    """One scorer.sections.base.Table as a coloured Rich table (best bold+underlined, second underlined)."""
    return scorer_table(table, LOOK)


class ScoresScreen(BaseScreen):
    WHERE = "Scores"
    BINDINGS = [Binding("r", "recompute", "Recompute", tooltip="score again (e.g. after new annotations)",
                        id="scores.recompute")]

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
        # the scoring pipeline (~90 ms of imports: multiprocessing, the sections) on the first visit to
        # this screen, not at every start of the app; no cycle to dodge (scorer never imports tui)
        from scorer.scoring import score
        from scorer.sections.base import ScoreOptions

        st = self.state
        opts = ScoreOptions(names=dict(st.names))
        if st.score_resamples is not None:
            opts = ScoreOptions(names=dict(st.names), resamples=st.score_resamples)
        for sections, final in ((FIRST, False), (THEN, True)):
            try:
                report = score(st.bench, st.runs, db=st.db_path, options=opts, sections=sections)  # as loaded
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
