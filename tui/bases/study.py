"""What the three Study screens share: the queue header, progress bar, the line that says an act was
saved (only after the store has committed it), the entry's trace (every act of yours on it, read
from the store), undo of the last act (named exactly), notes and flags, browsing the queue, and
leaving. Each kind (tui/screens/study_agreement.py, study_oracle.py, study_labels.py) renders its
entry and turns its keys into one payload for `commit`.

Nothing is discarded silently: a kind whose choice can be made and not yet saved (labels toggled,
an answer typed) says so in `pending()`; moving to another entry, leaving the study or quitting the
app then asks first (save / discard / stay: tui/modals/pending.py). A key pressed again before the
next entry shows says "already saved", and answering an entry again with the answer it has writes
nothing and says so.
"""

from __future__ import annotations

import time

from rich.text import Text
from textual.app import ComposeResult
from textual.containers import Horizontal, VerticalScroll
from textual.widgets import Input, ProgressBar, Static

from scorer.errors import UserError
from tui.acts import act_text
from tui.bases.screen import BaseScreen
from tui.keymap import bind, shown_key
from tui.messages import AnnotationSaved
from tui.modals.flag import FlagDialog, Flagged
from tui.modals.note import NoteDialog
from tui.modals.pending import DISCARD, SAVE, PendingDialog
from tui.study_lines import (discarded_line, not_taken_line, saved_line, trace_text, undone_line,
                             unchanged_line)
from tui.study_session import Saved, StudySession
from tui.text import safe

# The app's mode keys, hidden from the study screens' key bar (the entry's own keys fill it). Started
# with --study, the app is for that study only and refuses them (MemscopeApp.action_switch_mode), so a
# blind or oracle protocol cannot be broken by a key; without --study they switch as usual.
MODE_KEYS = [bind(f"app.{m}", f"app.switch_mode('{m}')", show=False) for m in ("overview", "items", "scores")]
LATENCY_KEEP = 10_000
ALREADY_WINDOW_S = 3.0  # a key within this long after a save, before the next entry shows: "already saved"


class StudyBody(VerticalScroll, can_focus=False):
    """The entry's content; scrolled by the screen's keys, so no key is swallowed by a focus."""


class StudyScreen(BaseScreen):
    """A study kind's screen: subclasses set KIND and CSS_PATH and render their entry."""

    WHERE = "Study"
    BINDINGS = MODE_KEYS + [
        bind("study.undo", "undo"),
        bind("study.note", "note"),
        bind("study.flag", "flag"),
        bind("study.next", "browse(1)"),
        bind("study.prev", "browse(-1)"),
        bind("study.leave", "leave"),
        bind("scroll.down", "scroll(1)", show=False),
        bind("scroll.up", "scroll(-1)", show=False),
        bind("scroll.page-down", "scroll(10)", show=False, description=""),
        bind("scroll.page-up", "scroll(-10)", show=False, description=""),
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
        self.last_saved: tuple[Saved, Text, float] | None = None  # the last answer saved, its words, when
        self._asking = False  # a save / discard / stay question is open

    # -- layout ------------------------------------------------------------------------------------
    def body(self) -> ComposeResult:
        yield Static(id="study-head")
        with Horizontal(id="study-progress-row"):
            yield ProgressBar(total=max(1, self.session.total), show_eta=False, id="study-progress")
            yield Static(id="study-count")
        with Horizontal(id="study-main"):
            with StudyBody(id="study-body"):
                yield Static(id="study-trace", classes="study-block")
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
        self.show_trace()
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

    def key_shown(self, binding_id: str) -> str:
        return shown_key(binding_id, getattr(self.app, "user_keys", None))

    def common_keys_text(self, clear: bool = False) -> tuple:
        """The keys every kind has, as Text.assemble parts, from the key map (remapping included)."""
        parts: list = []
        ids = ((("labels.clear", "clear"),) if clear else ()) + (
            ("study.undo", "undo"), ("study.note", "note"), ("study.flag", "flag"))
        for binding_id, word in ids:
            parts += [(self.key_shown(binding_id), "bold"), f" {word}  "]
        parts += [(f"{self.key_shown('study.next')}/{self.key_shown('study.prev')}", "bold"), " next/prev entry"]
        return tuple(parts)

    def where_text(self, entry=None) -> Text:
        e = entry or self.session.entry
        return Text.assemble(safe(e.blind_id, "bold", one_line=True), f" (entry {e.position})")

    def show_trace(self) -> None:
        """Every act of yours on this entry, from the store: the answer standing, notes, flags."""
        box = self.query_one("#study-trace", Static)
        try:
            acts = self.session.trace()
        except UserError as err:
            box.update(Text(f"cannot read your acts on this entry: {err}", style="bold red"))
            box.display = True
            return
        if not acts:
            box.update(Text(""))
            box.display = False
            return
        box.update(trace_text(acts, self.session.event_kind))
        box.display = True

    def saved_text(self, saved: Saved) -> Text:
        """What the saved line says about an answer (kinds add e.g. the judge or the gold labels)."""
        return Text(self.describe(saved.payload))

    def describe(self, payload: dict) -> str:
        """The study's answer in words (an answer's payload, not a note or a flag)."""
        return act_text(self.session.event_kind, payload)

    # -- what is chosen and not yet saved --------------------------------------------------------------
    def pending(self) -> Text | None:
        """The choice made on this entry and not saved (kinds that have one override this), or None."""
        return None

    def pending_savable(self) -> bool:
        """Whether the pending choice is complete enough to save as it is."""
        return False

    async def save_pending(self, then=None) -> bool:
        """Save the pending choice (kinds that have one override this); True once it is saved."""
        return False

    def discard_pending(self) -> None:
        """Forget the pending choice (kinds that have one override this)."""

    def ask_pending(self, going: str, go) -> bool:
        """If a choice is pending, ask save / discard / stay before `go()` (an async callable taking
        whether the choice was saved); True if it asked. `going` says where to, for the question."""
        what = self.pending()
        if what is None:
            return False
        if self._asking:
            return True

        async def answered(choice: str | None) -> None:
            self._asking = False
            if choice == SAVE:
                if await self.save_pending(then="stay"):
                    await go(True)
            elif choice == DISCARD:
                self.discard_pending()
                self.query_one("#study-saved", Static).update(discarded_line(what, self.where_text()))
                await go(False)

        self._asking = True
        self.app.push_screen(PendingDialog(what, self.where_text(), going, self.pending_savable()), answered)
        return True

    # -- writing -----------------------------------------------------------------------------------
    def mark_key(self) -> None:
        self._t_key = time.perf_counter()

    async def commit(self, payload: dict, then: str = "next") -> Saved | None:
        """Write the answer; once the store has committed it, say "saved" (painted first, on its
        own), then show the next open entry (`then="stay"`: this one). Keys that answer are ignored
        until that entry is painted, so a typed-ahead key never answers an entry nobody has seen:
        such a key says "already saved" about the answer it followed. An answer equal to the one the
        entry has is not written again: the line says it is already saved."""
        if not self.ready:
            self._already_saved()
            return None
        t0 = self._t_key if self._t_key is not None else time.perf_counter()
        self._t_key = None
        same = self.session.same_as_current(payload)
        if same is not None:
            line = unchanged_line(self.where_text(), self.describe(payload), same["event_id"])
            self.query_one("#study-saved", Static).update(line)
            if then == "next":
                await self.action_browse(1, ask=False)
            return None
        try:
            saved = self.session.answer(payload)
        except UserError as err:
            self.query_one("#study-saved", Static).update(Text(f"✗ NOT saved: {err}", style="bold red"))
            self.notify(str(err), severity="error", markup=False)
            return None
        what = self.saved_text(saved)
        self._saved_line(saved, what)
        self.last_saved = (saved, what, time.monotonic())
        if then == "next":
            self.session.advance()
        self.ready = False
        self.call_after_refresh(self._painted, t0)
        self.call_after_refresh(self._show_next)
        return saved

    def _already_saved(self) -> None:
        """A key that would answer before the next entry is painted: say what was saved, not just beep."""
        self.app.bell()
        if self.last_saved is None or time.monotonic() - self.last_saved[2] > ALREADY_WINDOW_S:
            self.notify("Not ready: the entry is still being shown.", timeout=1.5)
            return
        saved, what, _ = self.last_saved
        self.query_one("#study-saved", Static).update(not_taken_line(self.where_text(saved.entry), what, saved.event_id))

    async def _show_next(self) -> None:
        if not self.is_attached:  # left the study meanwhile (saved on the way out)
            return
        await self.show_entry()
        self.call_after_refresh(self._set_ready)

    def _set_ready(self) -> None:
        self.ready = True

    def _painted(self, t0: float) -> None:
        if len(self.latencies) < LATENCY_KEEP:
            self.latencies.append(time.perf_counter() - t0)

    def _saved_line(self, saved: Saved, what: Text) -> None:
        self.query_one("#study-saved", Static).update(saved_line(saved, what))
        self.post_message(AnnotationSaved())

    # -- actions -----------------------------------------------------------------------------------
    async def action_undo(self) -> None:
        try:
            target = self.session.last_act()  # what `u` was pressed for, even if the choice is saved first
        except UserError as err:
            self.notify(str(err), severity="error", markup=False)
            return

        async def go(_saved: bool) -> None:
            await self._undo(target)

        if not self.ask_pending("undoing your last act", go):
            await self._undo(target)

    async def _undo(self, target) -> None:
        try:
            done = self.session.undo(target) if target is not None else None
        except UserError as err:
            self.notify(str(err), severity="error", markup=False)
            return
        if done is None:
            self.notify("Nothing of yours to undo in this study.", timeout=2)
            return
        act, undo = done  # the session went to the act's entry: where_text names it
        self.query_one("#study-saved", Static).update(undone_line(act, undo, self.where_text()))
        self.post_message(AnnotationSaved())
        await self.show_entry()

    def action_note(self) -> None:
        self.app.push_screen(NoteDialog(self.where_text()), self._noted)

    def _noted(self, text: str | None) -> None:
        if text is None:
            return
        self._extra(lambda: self.session.note(text), safe(act_text("note", {"text": text}), one_line=True))

    def action_flag(self) -> None:
        self.app.push_screen(FlagDialog(self.where_text()), self._flagged)

    def _flagged(self, result: Flagged | None) -> None:
        if result is None:
            return
        flag, text = result
        what = safe(act_text("flag", {"flag": flag, "text": text}), one_line=True)
        self._extra(lambda: self.session.flag(flag, text), what)

    def _extra(self, write, what: Text) -> None:
        try:
            saved = write()
        except UserError as err:
            self.query_one("#study-saved", Static).update(Text(f"✗ NOT saved: {err}", style="bold red"))
            return
        self._saved_line(saved, what)
        self.show_trace()

    async def action_browse(self, delta: int, ask: bool = True) -> None:
        s = self.session
        target = max(0, min(s.pos + delta, len(s.queue) - 1))
        if target == s.pos:
            self.notify("End of the queue." if delta > 0 else "Start of the queue.", timeout=1.5)
            return

        async def go(_saved: bool) -> None:
            s.pos = target
            await self.show_entry()
            if not self.ready:
                self.call_after_refresh(self._set_ready)

        if ask and self.ask_pending("the next entry" if delta > 0 else "the previous entry", go):
            return
        await go(False)

    def action_scroll(self, lines: int) -> None:
        self.query_one("#study-body", StudyBody).scroll_relative(y=lines, animate=False)

    def action_leave(self) -> None:
        if isinstance(self.focused, Input):  # esc in a text box leaves the box, not the study
            self.set_focus(None)
            return

        async def go(_saved: bool) -> None:
            if len(self.app.screen_stack) > 1:
                self.app.pop_screen()
            else:
                self.app.switch_mode("overview")

        if not self.ask_pending("leaving the study", go):
            self.call_later(go, False)


def pending_study_screens(app) -> list[StudyScreen]:
    """The study screens, in any mode's stack, holding a choice not yet saved (the current one first)."""
    stacks = [app.screen_stack] + [list(s) for s in getattr(app, "_screen_stacks", {}).values()]
    out: list[StudyScreen] = []
    for stack in stacks:
        for screen in reversed(stack):
            if isinstance(screen, StudyScreen) and screen not in out and screen.is_attached \
                    and screen.pending() is not None:
                out.append(screen)
    return out
