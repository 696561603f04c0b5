"""Overview: the benchmark at a glance — tasks, sessions, rounds, media by kind, items per (X, Y)
cell, the runs loaded (backbone × method × mode) and annotation progress."""

from __future__ import annotations

from collections import Counter

from rich.table import Table
from rich.text import Text
from textual import work
from textual.worker import get_current_worker
from textual.app import ComposeResult
from textual.containers import Horizontal, VerticalScroll
from textual.widgets import Static

from scorer.counts import benchmark_counts
from scorer.model import MEDIA_KINDS, X_LABELS, Y_LABELS
from tui.bases.screen import BaseScreen
from tui.state import AppState
from tui.text import cell, safe


def _t(v: object, style: str = "") -> Text:
    return Text(str(v), style=style)


def tasks_table(st: AppState) -> Table:
    t = Table(title="Tasks", title_justify="left", title_style="bold")
    for name, just in (("task", "left"), ("sessions", "right"), ("rounds", "right"), ("MCQ", "right"),
                       ("open", "right"), ("image", "right"), ("video", "right"), ("audio", "right"),
                       ("unans.", "right")):
        t.add_column(name, justify=just, no_wrap=name != "task")
    totals = Counter()
    for task in st.bench.tasks:
        media = Counter(m.kind for r in task.rounds for m in r.media)
        row = {
            "sessions": len(task.sessions), "rounds": len(task.rounds),
            "mcq": sum(i.mode == "mcq" for i in task.items), "open": sum(i.mode == "open" for i in task.items),
            **{k: media.get(k, 0) for k in MEDIA_KINDS},
            "unans": len({i.item_id for i in task.items if not i.answerable}),
        }
        totals.update(row)
        t.add_row(cell(task.name), *(_t(v) for v in row.values()))
    if len(st.bench.tasks) > 1:
        t.add_row(Text("all", style="bold"), *(_t(totals[k], "bold") for k in
                  ("sessions", "rounds", "mcq", "open", *MEDIA_KINDS, "unans")), end_section=True)
    return t


def cells_table(counts: dict) -> Table:
    t = Table(title="Items per (X, Y) cell", title_justify="left", title_style="bold")
    t.add_column("", style="bold")
    for x in X_LABELS:
        t.add_column(x, justify="right")
    t.add_column("any X", justify="right", style="dim")
    cells = counts["cells"]
    for y in Y_LABELS:
        vals = [cells.get(f"{x}_{y}", 0) for x in X_LABELS]
        t.add_row(Text(y), *(_t(v, "" if v else "dim") for v in vals), _t(sum(vals)))
    return t


def runs_table(st: AppState) -> Table | Text:
    if not st.run_refs:
        return Text("Runs: none loaded (memscope tui BENCH --runs DIR…)", style="dim")
    rows: Counter = Counter()
    for run in st.runs:
        rows[(run.backbone, run.method, run.mode)] += len(run.predictions)
    backbones = sorted({r.backbone for r in st.run_refs})
    methods = sorted({(r.display, r.method) for r in st.run_refs})
    t = Table(title=f"Runs loaded ({len(st.run_refs)}: backbone × method × mode; rows)",
              title_justify="left", title_style="bold")
    t.add_column("method")
    for b in backbones:
        t.add_column(cell(b, width=24), justify="right", no_wrap=True)
    for disp, method in methods:
        vals = []
        for b in backbones:
            parts = [f"{mode} {rows[(b, method, mode)]}" for mode in ("mcq", "open") if rows.get((b, method, mode))]
            vals.append(Text(" · ".join(parts) or "—", style="" if parts else "dim"))
        t.add_row(Text.assemble(safe(disp, "bold", one_line=True), " ", safe(method, "dim", one_line=True)), *vals)
    if st.join_problems:
        t.caption = f"{st.join_problems} prediction rows matched no item (memscope validate lists them)"
        t.caption_style = "yellow"
    return t


def unreadable_text(st: AppState) -> Text:
    """The run folders left out because a file in them could not be read (memscope validate lists
    them among everything else)."""
    n = len(st.unreadable_runs)
    out = Text(f"{n} run folder{'s' if n != 1 else ''} left out (unreadable):", style="yellow")
    for problem in st.unreadable_runs:
        out.append("\n  ")
        out.append(safe(problem, one_line=True))
    return out


def annotations_text(st: AppState) -> Text:
    prog = st.annotation_progress()
    if prog is None:
        return Text("Annotations: no database open (memscope tui … --db FILE)", style="dim")
    kinds = ", ".join(f"{k} {n}" for k, n in sorted(prog["kinds"].items())) or "none yet"
    out = Text.assemble(("Annotations", "bold"), "  items with any annotation: ",
                        (f"{prog['items_annotated']}/{prog['items_total']}", "bold"),
                        f"  · yours ({st.annotator}): {prog['mine']}  · events: {kinds}")
    if prog["annotators"]:
        out.append("  · annotators: ")
        out.append(safe(", ".join(prog["annotators"]), one_line=True))
    return out


def media_problems(bad: list[tuple[str, str, str]] | None) -> Text:
    """The media line: `bad` as AppState.check_media gives it (None: the files are still being checked)."""
    if bad is None:
        return Text("Media: checking that every file decodes…", style="dim")
    if not bad:
        return Text("Media: every local reference resolves inside the benchmark root and decodes.", style="dim")
    out = Text(f"Media problems: {len(bad)} reference(s) cannot be shown, e.g. ", style="yellow")
    task, where, why = bad[0]
    out.append(safe(f"{task} {where}: {why}", one_line=True))
    out.append(" (memscope validate lists them all)", style="dim")
    return out


PRELOAD_WAIT_S = 10.0  # the media check starts after the preload, or after this long without it


class OverviewScreen(BaseScreen):
    WHERE = "Overview"

    def body(self) -> ComposeResult:
        st = self.state
        counts = benchmark_counts(st.bench, st.runs)
        with VerticalScroll(id="overview"):
            yield Static(tasks_table(st), id="ov-tasks")
            with Horizontal(id="ov-row"):
                yield Static(cells_table(counts), id="ov-cells")
                yield Static(self._summary(counts), id="ov-summary")
            yield Static(runs_table(st), id="ov-runs")
            if st.unreadable_runs:
                yield Static(unreadable_text(st), id="ov-unreadable")
            yield Static(annotations_text(st), id="ov-annotations")
            yield Static(media_problems(None), id="ov-media")

    def on_mount(self) -> None:
        self.check_media()

    @work(thread=True, exclusive=True, group="overview-media")
    def check_media(self) -> None:
        """Off the UI thread: wait for the app's preload worker, which decodes every media file after
        its imports (AppState.check_media), then say what cannot be shown."""
        worker = get_current_worker()
        preloaded = getattr(self.app, "preloaded", None)
        waited = 0.0
        while preloaded is not None and not preloaded.wait(0.1) and waited < PRELOAD_WAIT_S:
            if worker.is_cancelled:  # the app is quitting (before its preload even started)
                return
            waited += 0.1
        # done by the preload worker already, unless it never ran
        bad = self.state.check_media(cancelled=lambda: worker.is_cancelled)
        if bad is None:
            return
        try:
            self.app.call_from_thread(self._show_media, bad)
        except RuntimeError:  # the app stopped meanwhile (its loop closed): nothing left to show it on
            pass

    def _show_media(self, bad: list[tuple[str, str, str]]) -> None:
        if self.is_mounted:
            self.query_one("#ov-media", Static).update(media_problems(bad))

    def _summary(self, counts: dict) -> Text:
        media = counts["media"]
        return Text.assemble(
            ("Benchmark ", "bold"), safe(str(self.state.bench.root), one_line=True), "\n",
            f"{counts['tasks']} tasks · {counts['sessions']} sessions · {counts['rounds']} rounds\n",
            f"items: {counts['items']['mcq']} MCQ + {counts['items']['open']} open "
            f"({counts['distinct_items']} ids) · unanswerable {counts['unanswerable']}\n",
            f"media: {media.get('image', 0)} image · {media.get('video', 0)} video · "
            f"{media.get('audio', 0)} audio · remote {counts['remote_media']} · "
            f"question images {counts['question_images']}\n",
            ("2 Items · 3 Scores · ? help · ctrl+p commands", "dim"),
        )
