"""Scores: the scorer's sections for the loaded runs — the evaluation matrices first (with each
value's percentile bootstrap CI and n), then every other section the scorer has (caption-proof,
evidence, recency, delivery, abstention, gates, …; agreement and oracle when a database is open) —
as tables you move in. `enter` on a matrix cell opens Items filtered to that backbone, method, mode
and (X, Y) cell, worst first (a message the app handles: tui.messages.OpenItems); on a row of any
other table that names a run, Items about that run (with its Y / X / task when the row has them).

Everything is computed by the scorer (scorer.scoring.build_context + run_sections, the code of
`memscope score`; no second implementation) on the benchmark and runs the app already holds in
memory — one context per recompute, no file re-read nor re-hashed (the inputs record reuses the
hashes taken at load, AppState.input_hashes) — in a thread worker, so the app stays
responsive; `R` recomputes (e.g. after new annotations). Sections are rendered generically: a
section the registry gains (scorer/sections/registry.py) shows here without a change to this screen.
"""

from __future__ import annotations

import re
from collections.abc import Mapping, Sequence
from typing import Any

from rich.text import Text
from textual import on, work
from textual.app import ComposeResult
from textual.binding import Binding
from textual.containers import Vertical, VerticalScroll
from textual.widgets import DataTable, Static

from scorer.errors import UserError
from scorer.report.fmt import cell_text, is_number, mark_of
from scorer.safe_text import plain
from tui.bases.screen import BaseScreen
from tui.messages import OpenItems
from tui.rows import Filter
from tui.text import safe

FIRST = ("matrix",)  # shown as soon as it is ready (fast); CIs follow, then every other section
SKIPPED = {"bootstrap": "paired comparisons need two methods named to compare; not computed here"}
NEEDS_DB = ("agreement", "oracle")  # read the annotation store
NO_DB = "needs an annotation database (none is open)"
MARKS = {"best": "bold underline", "second": "underline"}
CI_DECIMALS = 2


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


_FLAG_ALT = re.compile(r",? or --[a-z][a-z-]*(?: [A-Z][A-Z:]*)?")  # ", or --conditions FILE"
_FLAG_PAREN = re.compile(r"\s*\(--[a-z][a-z-]*[^)]*\)")  # " (--db)"
_FLAG = re.compile(r"--[a-z][a-z-]*(?: [A-Z][A-Z:]*)?")


def app_reason(reason: str) -> str:
    """A section's reason for being absent, as the app says it: the scorer's command-line hints
    (--db, --compare A:B, …) mean nothing on this screen and are left out."""
    text = _FLAG_PAREN.sub("", _FLAG_ALT.sub("", reason))
    return _FLAG.sub("the command line's option", text).strip()


def with_ci(text: str, ci) -> str:
    """`text` [low, high] n=…; the CI's n is the items behind the value."""
    if ci is None or ci.ci_low is None or ci.ci_high is None:
        return text
    return f"{text} [{ci.ci_low:.{CI_DECIMALS}f}, {ci.ci_high:.{CI_DECIMALS}f}] n={ci.n}"


def cell(table: Any, row: Mapping[str, Any], column: str, ci=None) -> Text:
    """One cell: the scorer's text for it (scorer.report.fmt), coloured by value, best/second marked."""
    value = row.get(column)
    text = cell_text(column, value, row)
    if not text:
        return Text("—", style="dim")
    if ci is not None:
        text = with_ci(text, ci)
    style = []
    if column != "n" and isinstance(value, float) and value == value and not column.startswith("n "):
        style.append(value_style(value))
    mark = mark_of(row, column)
    if mark in MARKS:
        style.append(MARKS[mark])
    return Text(plain(text), style=" ".join(style), justify="right" if is_number(value) else "left")


class ScoreTable(DataTable):
    """One scorer.sections.base.Table; `cis` (row index, column) → the CI shown beside a value."""

    def __init__(self, section: str, table: Any, backbone: str | None, **kw) -> None:
        super().__init__(cursor_type="cell", zebra_stripes=True, **kw)
        self.section = section
        self.table = table
        self.backbone = backbone  # a matrix table's backbone (None: not a matrix table)
        self.cis: dict[tuple[int, str], Any] = {}

    def on_mount(self) -> None:
        for c in self.table.columns:
            self.add_column(Text(plain(str(c)), style="bold"), key=str(c))
        self.fill()

    def fill(self) -> None:
        self.clear()
        cols = list(self.table.columns)
        for i, r in enumerate(self.table.rows):
            self.add_row(*[cell(self.table, r, c, self.cis.get((i, c))) for c in cols], key=str(i))

    def set_cis(self, cis: dict[tuple[int, str], Any]) -> None:
        self.cis = cis
        row, col = self.cursor_coordinate
        self.fill()
        self.move_cursor(row=row, column=col, animate=False)

    def current(self) -> tuple[Mapping[str, Any], str] | None:
        """(table row, column heading) under the cursor."""
        row, col = self.cursor_coordinate
        if not self.table.rows or not 0 <= row < len(self.table.rows):
            return None
        return self.table.rows[row], list(self.table.columns)[col]


class ScoresScreen(BaseScreen):
    WHERE = "Scores"
    CSS_PATH = "scores.tcss"
    BINDINGS = [
        Binding("R", "recompute", "Recompute", tooltip="score again (e.g. after new annotations)",
                id="scores.recompute"),
        Binding("enter", "open_cell", "Items", tooltip="the items behind the value under the cursor, worst first",
                id="scores.open-cell"),
    ]

    def __init__(self) -> None:
        super().__init__()
        self.matrix_rows: list[dict] = []  # the `matrix` section's data (report.json rows)
        self._index: dict = {}  # tui.score_cells.matrix_index of those rows
        self.cis: dict[tuple, Any] = {}  # score_cells.row_key → BootstrapCI
        self.final = False  # every section shown (tests and the bench wait for it)
        self.status_text = Text()
        self.ci_note: Text | None = None
        self.inputs: dict = {}  # the inputs record of what is shown (scorer.scoring.inputs)

    def body(self) -> ComposeResult:
        yield Static(id="scores-status")
        with VerticalScroll(id="scores"):
            yield Vertical(id="scores-tables")

    def on_mount(self) -> None:
        self.action_recompute()

    def action_recompute(self) -> None:
        st = self.state
        self.final = False
        self.ci_note = None
        if not st.runs:
            self._status(Text("No runs loaded: nothing to score (start the app with run folders).", style="dim"))
            self.final = True
            return
        self._status(Text("computing the matrices… (the scorer, in the background)", style="dim italic"))
        self.query_one("#scores-tables").remove_children()
        self.compute()

    def _status(self, text: Text) -> None:
        self.status_text = text
        shown = text if self.ci_note is None else Text.assemble(text, "\n", self.ci_note)
        self.query_one("#scores-status", Static).update(shown)

    # -- computing (a thread worker) ---------------------------------------------------------------
    @work(thread=True, exclusive=True, group="scores")
    def compute(self) -> None:
        # the scoring pipeline (~90 ms of imports: the sections, pandas) on the first visit to this
        # screen, not at every start of the app; no cycle to dodge (scorer never imports tui)
        from scorer.scoring import build_context, run_sections
        from scorer.sections.base import ScoreOptions
        from scorer.sections.registry import SECTIONS
        from tui.score_cells import cell_cis

        st = self.state
        kw = {} if st.score_resamples is None else {"resamples": st.score_resamples}
        opts = ScoreOptions(names=dict(st.names), extra=dict(st.score_extra), **kw)
        call = self.app.call_from_thread
        try:
            # the objects the app holds and their files' hashes taken at load: no file re-read nor
            # re-hashed; one context for every stage below
            ctx, inputs, warnings = build_context(st.bench, st.runs, st.db_path, opts, hashes=st.input_hashes)
            if st.unreadable_runs:  # said first, in one line: the status shows three warnings
                more = len(st.unreadable_runs) - 1
                warnings = [f"not scored: {st.unreadable_runs[0]}"
                            + (f" (and {more} more run folder(s): the Overview lists them)" if more else ""), *warnings]
            first = [s for s in SECTIONS if s.name in FIRST]
            results = run_sections(ctx, first)
            call(self._show, results, inputs, warnings, False)
            matrix = next((r for r in results if r.name == "matrix" and not r.reason), None)
            if matrix is not None:
                cis = cell_cis(ctx.frame, matrix.data, opts.resamples, opts.seed)
                call(self._show_cis, cis, opts)
            rest, absent = [], []
            for s in SECTIONS:
                if s.name in FIRST:
                    continue
                if s.name in SKIPPED:
                    absent.append((s.name, SKIPPED[s.name]))
                elif s.name in NEEDS_DB and st.store is None:
                    absent.append((s.name, NO_DB))
                else:
                    rest.append(s)
            results = run_sections(ctx, rest)
        except UserError as err:
            call(self._status, safe(f"cannot score: {err}", "red"))
            return
        call(self._show, results, inputs, warnings, True, absent)

    # -- showing -----------------------------------------------------------------------------------
    def _show(self, results: Sequence[Any], inputs: dict, warnings: Sequence[str], final: bool,
              absent: Sequence[tuple[str, str]] = ()) -> None:
        from scorer.sections.registry import title_of
        from tui.score_cells import backbone_of, matrix_index

        self.inputs = inputs
        box = self.query_one("#scores-tables", Vertical)
        widgets = []
        for section in results:
            if section.name == "matrix" and not section.reason:
                self.matrix_rows = list(section.data)
                self._index = matrix_index(self.matrix_rows)
            widgets.append(Static(Text(plain(title_of(section.name)), style="bold underline"), classes="score-section"))
            if section.reason:
                widgets.append(Static(Text.assemble("not available: ", safe(app_reason(section.reason), "dim")),
                                      classes="score-absent"))
                continue
            for i, table in enumerate(section.tables):
                widgets.append(Static(Text(plain(table.title), style="bold"), classes="score-title"))
                backbone = backbone_of(table.name) if section.name == "matrix" else None
                widgets.append(ScoreTable(section.name, table, backbone, classes="score-table",
                                          id=f"t-{section.name}-{i}"))
                if table.note:
                    widgets.append(Static(Text(plain(table.note), style="dim"), classes="score-note"))
        for name, reason in absent:
            widgets.append(Static(Text.assemble((plain(title_of(name)), "bold"), ": ", (reason, "dim")),
                                  classes="score-absent"))
        box.mount_all(widgets)
        rows = inputs.get("rows", {})
        status = Text.assemble(("Scores", "bold"), f" — {rows.get('scored', '?')} prediction rows scored; ",
                               ("best", MARKS["best"]), " / ", ("second", MARKS["second"]), " per row; colour: ",
                               ("0", value_style(0.0)), " → ", ("0.5", value_style(0.5)), " → ",
                               ("1", value_style(1.0)), "; enter: the items behind a value")
        if not final:
            status.append("\n   computing CIs and the other sections…", style="dim italic")
        for w in warnings[:3]:
            status.append("\n")
            status.append_text(safe(w, "yellow"))
        self._status(status)
        if final:
            self.final = True
        first = self.query(ScoreTable).first() if self.query(ScoreTable) else None
        if first is not None and not any(t.has_focus for t in self.query(ScoreTable)):
            first.focus()

    def _show_cis(self, cis: dict[tuple, Any], opts) -> None:
        """Each matrix value gets its CI and n (percentile, the scorer's resamples and seed)."""
        from tui.score_cells import cell_of, row_key

        self.cis = cis
        index = self._index
        for t in self.query(ScoreTable):
            if t.backbone is None:
                continue
            shown = {}
            for i, r in enumerate(t.table.rows):
                for c in t.table.columns:
                    m = cell_of(index, t.backbone, r, c)
                    if m is not None and row_key(m) in cis:
                        shown[(i, c)] = cis[row_key(m)]
            t.set_cis(shown)
        self.ci_note = Text(f"matrix values: mean [95% percentile bootstrap CI, {opts.resamples:,} resamples of "
                            f"items, seed {opts.seed}] n = items behind it", style="dim")
        self._status(self.status_text)

    # -- from a cell to its items ------------------------------------------------------------------
    def action_open_cell(self) -> None:
        table = self.focused if isinstance(self.focused, ScoreTable) else None
        if table is None:
            return
        f = self.filter_of(table)
        if f is None:
            self.notify("No items to list behind this cell (not a run's value).", timeout=2)
            return
        self.post_message(OpenItems(f))

    @on(DataTable.CellSelected)
    def _cell_selected(self, event: DataTable.CellSelected) -> None:
        event.stop()
        if isinstance(event.data_table, ScoreTable):
            event.data_table.focus()
            self.action_open_cell()

    def filter_of(self, table: ScoreTable) -> Filter | None:
        """The Items filter behind the cell under `table`'s cursor: a matrix value → its run, mode,
        (X, Y) and answerable items, worst first; a row naming a run → that run (Y / X / task too)."""
        from tui.score_cells import cell_of

        here = table.current()
        if here is None:
            return None
        row, column = here
        st = self.state
        if table.backbone is not None:
            m = cell_of(self._index, table.backbone, row, column)
            if m is None:
                return None
            ref = next((r for r in st.run_refs if (r.backbone, r.method, r.mode) == (m["backbone"], m["method"],
                                                                                      m["mode"])), None)
            if ref is None:
                return None
            return Filter(run=ref.index, mode=ref.mode, answerable=True, x=None if m["x"] == "all" else m["x"],
                          y=None if m["y"] == "all" else m["y"], sort="score")
        return generic_filter(st, row)


def generic_filter(st, row: Mapping[str, Any]) -> Filter | None:
    """A row of any table that names a run (Backbone, Method = its display name, Mode): Items about
    that run, with the row's Y / X / Task when it has them; worst first."""
    def field(*names):
        for n in names:
            v = row.get(n)
            if isinstance(v, str) and v and v != "all":
                return v
        return None

    backbone, method, mode = field("Backbone", "backbone"), field("Method", "method"), field("Mode", "mode")
    if backbone is None or method is None:
        return None
    if mode == "open = mcq":
        mode = "open"
    refs = [r for r in st.run_refs if r.backbone == backbone and method in (r.display, r.method)
            and (mode is None or r.mode == mode)]
    if len(refs) != 1:
        return None
    ref = refs[0]
    tasks = set(st.tasks)
    task = field("Task", "task")
    return Filter(run=ref.index, mode=ref.mode, y=field("Y", "y") if field("Y", "y") in ("Y1", "Y2", "Y3") else None,
                  x=field("X", "x") if (field("X", "x") or "").startswith("X") else None,
                  task=task if task in tasks else None, sort="score")
