"""Session: step through a task's rounds in time order — user and assistant text, images inline,
video frame by frame, audio with its waveform and play/stop.

Open it with (task, round id) — e.g. from a clue in the Item screen, which posts
tui.messages.OpenRound for the app to push this screen — and `esc` goes back to where you came from. With the item passed, its clue rounds are marked (✓, ★ latest, ⟲ stale) in the list.
Text from the data is shown literally (tui.text.safe); media are opened only through tui.media,
which refuses paths outside the benchmark root.
"""

from __future__ import annotations

from rich.text import Text
from textual.app import ComposeResult
from textual.binding import Binding
from textual.containers import Horizontal, Vertical, VerticalScroll
from textual.widget import Widget
from textual.widgets import OptionList, Static
from textual.widgets.option_list import Option

from scorer.model import Item, Media, Round, Task
from tui.bases.screen import BaseScreen
from tui.media.audio import Player
from tui.messages import OpenSearch
from tui.text import safe
from tui.widgets.media import caption_line, media_label, media_widget
from tui.widgets.media_audio import MediaAudio
from tui.widgets.media_keys import MediaKeys


class _Body(VerticalScroll, can_focus=False):
    """The round's content; scrolled by the screen's keys so ←/→ and space stay media keys."""


class _Rounds(OptionList, can_focus=False):
    """The task's rounds by session; only visible lines are rendered, so long tasks stay cheap."""


def round_marks(task: Task, item: Item | None) -> dict[str, str]:
    """round id → mark for the rounds list: ✓ clue, ★ latest clue (Y3), ⟲ stale clue (Y3)."""
    if item is None:
        return {}
    marks = {c: "✓" for c in item.clue_rounds if task.has_round(c)}
    if "Y3" in item.y:
        latest = task.latest_clue(item)
        for rid in marks:
            if task.is_stale(item, rid):
                marks[rid] = "⟲"
        if latest is not None:
            marks[latest.round_id] = "★"
    return marks


def turn_text(r: Round) -> Text:
    """User and assistant text of a round, literal, with a blank line between them."""
    out = Text()
    for who, text, style in (("User", r.user, "bold cyan"), ("Assistant", r.assistant, "bold green")):
        if text:
            if out:
                out.append("\n\n")
            out.append(f"{who}  ", style=style)
            out.append_text(safe(text))
    return out or Text("(no text in this round)", style="dim")


class SessionScreen(MediaKeys, BaseScreen):
    WHERE = "Session"
    CSS_PATH = "session.tcss"
    BINDINGS = [
        # pairs share one footer entry ("n/p Round"); each key is still its own binding, in the help
        # screen and the command palette
        Binding("n", "round(1)", "Round", key_display="n/p", tooltip="the next round (across sessions)",
                id="session.next-round"),
        Binding("p", "round(-1)", "Previous round", show=False, tooltip="the previous round",
                id="session.prev-round"),
        Binding("right_curly_bracket", "session(1)", "Session", key_display="{/}", tooltip="the first round of the next session",
                id="session.next-session"),
        Binding("left_curly_bracket", "session(-1)", "Previous session", show=False,
                tooltip="the first round of this session, or of the previous one", id="session.prev-session"),
        Binding("right", "frame(1)", "Frame", key_display="←/→", priority=True,
                tooltip="the video's next frame (← the previous)", id="media.next-frame"),
        Binding("left", "frame(-1)", "Previous frame", key_display="←", priority=True, show=False,
                tooltip="the video's previous frame", id="media.prev-frame"),
        Binding("space", "play", "Play/stop", priority=True, tooltip="play or stop the round's audio or video",
                id="media.play"),
        Binding("m", "next_media", "Media", tooltip="which video/audio ←/→ and space act on", id="media.next"),
        Binding("g", "origin", "Clue round", tooltip="back to the round this screen was opened at",
                id="session.origin"),
        Binding("s", "meaning", "Search", tooltip="search rounds and items by meaning, jump to a hit",
                id="search.open"),
        Binding("escape", "back", "Back", key_display="esc", tooltip="back to where you came from", id="back"),
        Binding("down", "scroll(1)", "Scroll down", show=False, id="scroll.down"),
        Binding("up", "scroll(-1)", "Scroll up", show=False, id="scroll.up"),
        Binding("pagedown", "scroll(10)", show=False, id="scroll.page-down"),
        Binding("pageup", "scroll(-10)", show=False, id="scroll.page-up"),
    ]

    def __init__(self, task: str, round_id: str | None = None, item: Item | None = None,
                 player: Player | None = None) -> None:
        super().__init__()
        self.task_name = task
        self.origin = round_id
        self.item = item
        self._player = player
        self.bench_task: Task | None = None
        self.rounds: list[Round] = []
        self.pos = 0
        self.marks: dict[str, str] = {}
        self._showing = self._show_wanted = False

    # -- layout -----------------------------------------------------------------------------------
    def body(self) -> ComposeResult:
        yield Static(id="session-head")
        with Horizontal(id="session-main"):
            yield _Rounds(id="session-rounds")
            with _Body(id="session-body"):
                yield Static(id="session-turn", classes="turn")
                yield Vertical(id="session-media")

    def on_mount(self) -> None:
        self.bench_task = self.state.bench.task(self.task_name)
        if self.bench_task is None:
            self.query_one("#session-head", Static).update(
                Text.assemble("no such task: ", safe(self.task_name, one_line=True)))
            return
        self.rounds = sorted(self.bench_task.rounds, key=lambda r: r.order)
        self.marks = round_marks(self.bench_task, self.item)
        ids = [r.round_id for r in self.rounds]
        if self.origin is not None and self.origin not in ids:
            self.notify(f"round {self.origin!r} is not in this task; showing the first round",
                        severity="warning", markup=False)
            self.origin = None
        self.pos = ids.index(self.origin) if self.origin is not None else 0
        self._fill_list()
        self._request_show()

    @property
    def current(self) -> Round | None:
        return self.rounds[self.pos] if self.rounds else None

    @property
    def player(self) -> Player | None:
        return self._player or self.app.player

    # -- showing a round --------------------------------------------------------------------------
    def _request_show(self) -> None:
        """Show the round at `pos`. Keys pressed faster than rounds mount coalesce: the loop below
        runs until it has shown the latest position, so nothing is cancelled half-mounted."""
        self._show_wanted = True
        if not self._showing:
            self._showing = True
            self.run_worker(self._show_loop(), group="round")

    async def _show_loop(self) -> None:
        try:
            while self._show_wanted:
                self._show_wanted = False
                await self._show()
        finally:
            self._showing = False

    async def _show(self) -> None:
        r = self.current
        if r is None:
            return
        self._head(r)
        rounds = self.query_one(_Rounds)
        rounds.highlighted = self._option_of[self.pos]
        self.query_one("#session-turn", Static).update(turn_text(r))
        media = self.query_one("#session-media", Vertical)
        for w in media.query(MediaAudio):
            w.stop()
        if media.children:  # remount only what changes: most rounds are text only
            await media.remove_children()
        if r.media:
            await media.mount_all(self._media_widgets_of(r))
        self.query_one("#session-body", _Body).scroll_home(animate=False)
        # No focus change here: ←/→ and space act on the first video/audio unless `m` picked another,
        # and every focus change makes the footer rebuild its keys (the costliest part of a step).

    def _media_widgets_of(self, r: Round) -> list[Widget]:
        out: list[Widget] = []
        root = self.state.bench.root
        allow = self.state.allow_outside_root
        counts = {k: sum(m.kind == k for m in r.media) for k in ("image", "video", "audio")}
        seen = {k: 0 for k in counts}
        for i, m in enumerate(r.media):
            seen[m.kind] = seen.get(m.kind, 0) + 1
            out.append(self._media_block(m, i, seen[m.kind], counts.get(m.kind, 0), root, allow))
        return out

    def _media_block(self, m: Media, i: int, n: int, of: int, root, allow) -> Widget:
        label = media_label(m, n, of)
        cap = caption_line(m)
        if cap is not None:
            label.append("\n")
            label.append_text(cap)
        return Vertical(Static(label, classes="media-label"),
                        media_widget(m, root, allow, player=self.player),
                        classes=f"media-block media-{m.kind}")

    def _head(self, r: Round) -> None:
        assert self.bench_task is not None
        sess = next((s for s in self.bench_task.sessions if s.session_id == r.session_id), None)
        n_in = len(sess.rounds) if sess is not None else 0
        head = Text()
        head.append_text(safe(self.bench_task.name, "bold", one_line=True))
        head.append(" · session ")
        head.append_text(safe(r.session_id, "bold", one_line=True))
        date = r.date or (sess.date if sess is not None else None)
        if date:
            head.append(" · ")
            head.append_text(safe(date, one_line=True))
        head.append(" · round ")
        head.append_text(safe(r.round_id, "bold", one_line=True))
        head.append(f" ({r.position}/{n_in} in session, {self.pos + 1}/{len(self.rounds)} in task)")
        mark = self.marks.get(r.round_id)
        if mark and self.item is not None:
            what = {"✓": "clue", "★": "latest clue", "⟲": "stale clue"}[mark]
            head.append(f"  {mark} {what} of item {self.item.index} ({self.item.mode})", style="bold yellow")
        head.no_wrap, head.overflow = True, "ellipsis"
        self.query_one("#session-head", Static).update(head)

    def _fill_list(self) -> None:
        """The rounds list, built once: a header per session, one line per round with its marks."""
        options: list[Option] = []
        self._option_of: list[int] = []
        last_session = None
        for r in self.rounds:
            if r.session_id != last_session:
                head = safe(r.session_id, "bold underline", one_line=True)
                if r.date:
                    head.append(" ")
                    head.append_text(safe(r.date, "dim", one_line=True))
                options.append(Option(head, disabled=True))
                last_session = r.session_id
            line = Text("  ")
            line.append_text(safe(r.round_id, one_line=True))
            mark = self.marks.get(r.round_id)
            if mark:
                line.append(f" {mark}", style="bold yellow")
            kinds = "".join(sorted({m.kind[0] for m in r.media}))  # a/i/v: which media it holds
            if kinds:
                line.append(f" {kinds}", style="dim")
            self._option_of.append(len(options))
            options.append(Option(line))
        self.query_one(_Rounds).set_options(options)

    def on_option_list_option_selected(self, event: OptionList.OptionSelected) -> None:
        """A click on a round in the list opens it."""
        event.stop()
        if event.option_index in self._option_of:
            self.pos = self._option_of.index(event.option_index)
            self._request_show()

    # -- actions ----------------------------------------------------------------------------------
    def check_action(self, action: str, parameters: tuple[object, ...]) -> bool | None:
        if action == "origin" and self.origin is None:
            return False  # opened without a round: nothing to jump back to, so no key in the footer
        return True

    def media_widgets(self) -> list[Widget]:
        return list(self.query_one("#session-media", Vertical).query("MediaVideo, MediaAudio"))

    def action_round(self, delta: int) -> None:
        new = max(0, min(self.pos + delta, len(self.rounds) - 1))
        if new != self.pos:
            self.pos = new
            self._request_show()

    def action_session(self, delta: int) -> None:
        r = self.current
        if r is None:
            return
        ids = [x.session_id for x in self.rounds]
        k = self.pos
        if delta > 0:
            while k < len(ids) and ids[k] == r.session_id:
                k += 1
        else:  # to the first round of the previous session (or of this one, when past its start)
            start = ids.index(r.session_id)
            k = start if self.pos > start else (ids.index(ids[start - 1]) if start > 0 else 0)
        if 0 <= k < len(ids) and k != self.pos:
            self.pos = k
            self._request_show()

    def action_origin(self) -> None:
        if self.origin is None:
            return
        self.pos = [r.round_id for r in self.rounds].index(self.origin)
        self._request_show()

    def action_meaning(self) -> None:
        self.post_message(OpenSearch(task=self.task_name))

    def action_scroll(self, lines: int) -> None:
        body = self.query_one("#session-body", _Body)
        body.scroll_relative(y=lines, animate=False)

    def action_back(self) -> None:
        for w in self.query(MediaAudio):
            w.stop()
        if len(self.app.screen_stack) > 1:
            self.app.pop_screen()
        else:
            self.notify("nothing to go back to", markup=False)
