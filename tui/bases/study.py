"""What the three Study screens share: the queue header, progress bar, the line that says an act was
saved (only after the store has committed it), undo of the last act, notes and flags, browsing the
queue, and leaving. Each kind (tui/screens/study_agreement.py, study_oracle.py, study_labels.py)
renders its entry and turns its keys into one payload for `commit`.
"""

from __future__ import annotations

import time

from rich.text import Text
from textual.app import ComposeResult
from textual.binding import Binding
from textual.containers import Horizontal, VerticalScroll
from textual.widgets import Input, ProgressBar, Static

from scorer.errors import UserError
from tui.bases.screen import BaseScreen
from tui.messages import AnnotationSaved
from tui.modals.flag import FlagDialog, Flagged
from tui.modals.note import NoteDialog
from tui.study_session import Saved, StudySession
from tui.text import safe

# The app's mode keys, hidden from the study screens' key bar (the entry's own keys fill it). Started
# with --study, the app is for that study only and refuses them (MemscopeApp.action_switch_mode), so a
# blind or oracle protocol cannot be broken by a key; without --study they switch as usual.
MODE_KEYS = [Binding(k, f"app.switch_mode('{m}')", show=False, id=f"app.{m}")
             for k, m in (("1", "overview"), ("2", "items"), ("3", "scores"))]
LATENCY_KEEP = 10_000


class StudyBody(VerticalScroll, can_focus=False):
    """The entry's content; scrolled by the screen's keys, so no key is swallowed by a focus."""


class StudyScreen(BaseScreen):
    """A study kind's screen: subclasses set KIND and CSS_PATH and render their entry."""

    WHERE = "Study"
    BINDINGS = MODE_KEYS + [
        Binding("u", "undo", "Undo", tooltip="undo your last act in this study (answer, note or flag)",
                id="study.undo"),
        Binding("n", "note", "Note", tooltip="write a note on this entry", id="study.note"),
        Binding("f", "flag", "Flag", tooltip="flag this entry (ambiguous, leakage, bad media, wrong gold, …)",
                id="study.flag"),
        Binding("right_square_bracket", "browse(1)", "Next", key_display="]",
                tooltip="the next entry of your queue (to review; answering again replaces your answer)",
                id="study.next"),
        Binding("left_square_bracket", "browse(-1)", "Prev", key_display="[", tooltip="the previous entry",
                id="study.prev"),
        Binding("escape", "leave", "Leave", key_display="esc", tooltip="leave the study (your place is kept)",
                id="study.leave"),
        Binding("down", "scroll(1)", "Scroll down", show=False, id="scroll.down"),
        Binding("up", "scroll(-1)", "Scroll up", show=False, id="scroll.up"),
        Binding("pagedown", "scroll(10)", show=False, id="scroll.page-down"),
        Binding("pageup", "scroll(-10)", show=False, id="scroll.page-up"),
    ]
    KIND = ""
    AUTO_FOCUS = ""  # nothing focused: every key reaches the screen's bindings (a text box would eat them)

    def __init__(self, session: StudySession) -> None:
        super().__init__()
        self.session = session
        self.shown_at = time.monotonic()
        self.latencies: list[float] = []  # key handled → "saved" painted, seconds
        self._t_key: float | None = None
        self.ready = False  # the current entry is painted and may be answered

    # -- layout ------------------------------------------------------------------------------------
    def body(self) -> ComposeResult:
        yield Static(id="study-head")
        with Horizontal(id="study-progress-row"):
            yield ProgressBar(total=max(1, self.session.total), show_eta=False, id="study-progress")
            yield Static(id="study-count")
        with Horizontal(id="study-main"):
            with StudyBody(id="study-body"):
                yield from self.entry_widgets()
            yield from self.side_widgets()
        yield Static(id="study-keys")
        yield Static(Text("nothing saved yet in this session", style="dim"), id="study-saved")

    def entry_widgets(self) -> ComposeResult:  # pragma: no cover - every kind overrides it
        yield from ()

    def side_widgets(self) -> ComposeResult:
        yield from ()

    async def on_mount(self) -> None:
        await self.show_entry()
        self.call_after_refresh(self._set_ready)

    # -- showing -----------------------------------------------------------------------------------
    async def show_entry(self) -> None:
        s = self.session
        self._head()
        self.query_one("#study-progress", ProgressBar).update(total=max(1, s.total), progress=s.n_done)
        self.query_one("#study-count", Static).update(Text(f" {s.n_done}/{s.total} done", style="bold"))
        await self.render_entry()
        self.query_one("#study-keys", Static).update(self.keys_text())
        self.query_one("#study-body", StudyBody).scroll_home(animate=False)
        self.shown_at = time.monotonic()

    def _head(self) -> None:
        s = self.session
        e = s.entry
        head = Text()
        head.append_text(safe(s.name, "bold", one_line=True))
        head.append(f" · {self.KIND}", style="bold cyan")
        head.append(f" · entry {e.position}/{s.total} · ")
        head.append_text(safe(e.blind_id, "bold", one_line=True))
        if s.finished:
            head.append("  study complete", style="bold green")
        if s.is_done(e):
            head.append("  ✓ answered (a new answer replaces it)", style="green")
        head.no_wrap, head.overflow = True, "ellipsis"
        self.query_one("#study-head", Static).update(head)

    async def render_entry(self) -> None:  # pragma: no cover - every kind overrides it
        pass

    def keys_text(self) -> Text:  # pragma: no cover - every kind overrides it
        return Text()

    def where_text(self) -> Text:
        e = self.session.entry
        return Text.assemble(safe(e.blind_id, "bold", one_line=True), f" (entry {e.position})")

    def saved_text(self, saved: Saved) -> Text:
        """What the saved line says about an answer (kinds add e.g. the judge or the gold labels)."""
        return Text(self.describe(saved.payload))

    def describe(self, payload: dict) -> str:
        return ", ".join(f"{k} {v}" for k, v in payload.items())

    # -- writing -----------------------------------------------------------------------------------
    def mark_key(self) -> None:
        self._t_key = time.perf_counter()

    async def commit(self, payload: dict) -> Saved | None:
        """Write the answer; once the store has committed it, say "saved" (painted first, on its
        own), then show the next entry. Keys that answer are ignored until that entry is painted,
        so a typed-ahead key never answers an entry nobody has seen."""
        if not self.ready:
            self.app.bell()
            return None
        t0 = self._t_key if self._t_key is not None else time.perf_counter()
        self._t_key = None
        try:
            saved = self.session.answer(payload)
        except UserError as err:
            self.query_one("#study-saved", Static).update(Text(f"✗ NOT saved: {err}", style="bold red"))
            self.notify(str(err), severity="error", markup=False)
            return None
        self._saved_line(saved, self.saved_text(saved))
        self.session.advance()
        self.ready = False
        self.call_after_refresh(self._painted, t0)
        self.call_after_refresh(self._show_next)
        return saved

    async def _show_next(self) -> None:
        await self.show_entry()
        self.call_after_refresh(self._set_ready)

    def _set_ready(self) -> None:
        self.ready = True

    def _painted(self, t0: float) -> None:
        if len(self.latencies) < LATENCY_KEEP:
            self.latencies.append(time.perf_counter() - t0)

    def _saved_line(self, saved: Saved, what: Text) -> None:
        line = Text("✓ saved ", style="bold green")
        line.append_text(safe(saved.entry.blind_id, "bold", one_line=True))
        line.append(f" (entry {saved.entry.position}, event {saved.event_id}) · ")
        line.append_text(what)
        line.append(f" · write {saved.seconds * 1000:.1f} ms", style="dim")
        line.no_wrap, line.overflow = True, "ellipsis"
        self.query_one("#study-saved", Static).update(line)
        self.post_message(AnnotationSaved())

    # -- actions -----------------------------------------------------------------------------------
    async def action_undo(self) -> None:
        try:
            done = self.session.undo()
        except UserError as err:
            self.notify(str(err), severity="error", markup=False)
            return
        if done is None:
            self.notify("Nothing of yours to undo in this study.", timeout=2)
            return
        act, _ = done
        line = Text("↶ undone ", style="bold yellow")
        line.append(f"{act.kind} ")
        line.append_text(safe(self.describe(dict(act.payload)), one_line=True))
        line.append(" on ")
        line.append_text(self.where_text())
        self.query_one("#study-saved", Static).update(line)
        self.post_message(AnnotationSaved())
        await self.show_entry()

    def action_note(self) -> None:
        self.app.push_screen(NoteDialog(self.where_text()), self._noted)

    def _noted(self, text: str | None) -> None:
        if text is None:
            return
        self._extra(lambda: self.session.note(text), Text.assemble("note ", safe(text, one_line=True)))

    def action_flag(self) -> None:
        self.app.push_screen(FlagDialog(self.where_text()), self._flagged)

    def _flagged(self, result: Flagged | None) -> None:
        if result is None:
            return
        flag, text = result
        what = Text(f"flag {flag}")
        if text:
            what.append(" · ")
            what.append_text(safe(text, one_line=True))
        self._extra(lambda: self.session.flag(flag, text), what)

    def _extra(self, write, what: Text) -> None:
        try:
            saved = write()
        except UserError as err:
            self.query_one("#study-saved", Static).update(Text(f"✗ NOT saved: {err}", style="bold red"))
            return
        self._saved_line(saved, what)

    async def action_browse(self, delta: int) -> None:
        before = self.session.pos
        self.session.step(delta)
        if self.session.pos == before:
            self.notify("End of the queue." if delta > 0 else "Start of the queue.", timeout=1.5)
            return
        await self.show_entry()

    def action_scroll(self, lines: int) -> None:
        self.query_one("#study-body", StudyBody).scroll_relative(y=lines, animate=False)

    def action_leave(self) -> None:
        if isinstance(self.focused, Input):  # esc in a text box leaves the box, not the study
            self.set_focus(None)
            return
        if len(self.app.screen_stack) > 1:
            self.app.pop_screen()
        else:
            self.app.switch_mode("overview")
