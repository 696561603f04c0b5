"""The memscope app: `make_app(...)` builds it (the CLI and the tests both use it); `launch(...)` runs it.

Screens are Textual modes — Overview (1), Items (2), Scores (3), Study (4) — each with its own stack,
so the Item screen opened from Items comes back to the same row. State (benchmark, runs, joined
index, annotator, store) lives in `app.state`, never in widgets.

The app is the hub: screens never import each other. A screen posts a message (tui/messages.py:
open an item, a round, search, side by side, a study; an annotation saved) and the handlers below
build the screen it asks for and push it.
"""

from __future__ import annotations

import gc
import os
import sys
import tempfile
import threading
import time
import traceback
from pathlib import Path
from typing import Any, Mapping, Sequence

from textual.app import App
from textual.binding import Binding
from textual.reactive import reactive
from textual.screen import ModalScreen

from scorer.errors import UserError
from scorer.safe_text import plain
from scorer.search import Hit, Searcher
from tui.bases.study import pending_study_screens
from tui.commands import MemscopeCommands, ObjectCommands, Palette
from tui.keymap import load_user_keymap
from tui.media.audio import Player
from tui.media.image import prepare
from tui.messages import AnnotationSaved, OpenCompare, OpenItem, OpenItems, OpenRound, OpenSearch, OpenStudy
from tui.preload import preload
from tui.screens.compare import CompareScreen
from tui.screens.help import HelpScreen
from tui.screens.item import ItemScreen
from tui.screens.items import ItemsScreen
from tui.screens.overview import OverviewScreen
from tui.screens.scores import ScoresScreen
from tui.screens.search import SearchScreen
from tui.screens.session import SessionScreen
from tui.screens.study_agreement import AgreementStudyScreen
from tui.screens.study_home import StudyHomeScreen
from tui.screens.study_labels import LabelStudyScreen
from tui.screens.study_oracle import OracleStudyScreen
from tui.screens.study_adjudicate import adjudicate_screen
from tui.screens.viewer import ViewerScreen
from tui.state import AppState, load_state
from tui.widgets.media_finder import media_on

DEFAULT_DB = Path("memscope.db")
STUDY_SCREENS = {"agreement": AgreementStudyScreen, "oracle": OracleStudyScreen, "labels": LabelStudyScreen,
                 "adjudicate": adjudicate_screen}  # by the kind it adjudicates
MEDIA_SCREENS = (ItemScreen, SessionScreen, CompareScreen, AgreementStudyScreen, OracleStudyScreen, LabelStudyScreen)
STUDY_ONLY = "This session is for the study only (started with --study); q quits."


class MemscopeApp(App[int]):
    # the viewer's rules read at start: pushed the first time, it would reparse all the app's CSS (~20 ms)
    CSS_PATH = ["app.tcss", "screens/viewer.tcss"]
    TITLE = "memscope"
    COMMANDS = App.COMMANDS | {MemscopeCommands, ObjectCommands}
    MODES = {"overview": OverviewScreen, "items": ItemsScreen, "scores": ScoresScreen, "study": StudyHomeScreen}
    BINDINGS = [
        Binding("1", "switch_mode('overview')", "Overview", tooltip="the benchmark at a glance", id="app.overview"),
        Binding("2", "switch_mode('items')", "Items", tooltip="the table of items, with filters", id="app.items"),
        Binding("3", "switch_mode('scores')", "Scores", tooltip="the scorer's matrices", id="app.scores"),
        Binding("4", "switch_mode('study')", "Study", tooltip="annotation studies: agreement, oracle, labels",
                id="app.study"),
        Binding("question_mark", "help", "Help", key_display="?", id="app.help"),
        Binding("q", "quit", "Quit", id="app.quit"),
        Binding("z", "view_media", "View", tooltip="the selected image or video full screen: zoom, pan, play",
                id="media.view"),
    ]

    save_state: reactive[str] = reactive("no database")

    def __init__(self, state: AppState, start: str = "overview", study: str | None = None,
                 player: Player | None = None, item: tuple[str, str] | None = None,
                 run: int | None = None) -> None:
        super().__init__()
        self.start_item, self.start_run = item, run  # --item / --run: opened once the first screen shows
        self.state = state
        self.player = player  # what every audio widget plays through (None: the process-wide player)
        self.searcher: Searcher | None = None  # scorer.search's index, built by the first search
        self.study_only = study is not None  # --study: the other modes (methods, judge scores) stay shut
        self.start_mode = "study" if study else ("items" if item is not None and start == "overview" else start)
        self.start_study = study  # opened by the Study screen when it first shows
        self.save_state = state.save_state
        self.crash_log: Path | None = None  # written by the first unexpected exception (see run_app)
        # the user's key remapping (tui/keymap.py: keys.toml); each bad entry is one line, never a crash
        self.user_keys, self.keymap_problems = load_user_keymap()
        # set once the preload worker is done: background checks (the Overview's media) wait for it,
        # so that they neither race it for the same imports nor slow the first screen
        self.preloaded = threading.Event()

    def _handle_exception(self, error: Exception) -> None:
        """Textual's hook for an unhandled exception (it sets return_code 1 and exits): the traceback
        goes to a crash log instead of the terminal, and run_app prints one line naming it."""
        if self.crash_log is None:
            self.crash_log = write_crash_log(error)
        super()._handle_exception(error)
        self._exit_renderables.clear()  # no screenful of traceback: the log has it

    def on_mount(self) -> None:
        if self.user_keys:
            self.set_keymap(self.user_keys)
        for problem in self.keymap_problems:
            self.notify(problem, severity="warning", timeout=8, markup=False)
        for problem in self.state.unreadable_runs:  # the Overview keeps saying it
            self.notify(problem, title="run file unreadable", severity="warning", timeout=15, markup=False)
        self.switch_mode(self.start_mode)
        if self.start_item is not None and not self.study_only:  # --item: the deep link
            key = self.start_item
            self.call_after_refresh(lambda: self.post_message(OpenItem([key], key, run=self.start_run)))
        # Hundreds of thousands of long-lived objects are loaded (the benchmark, the runs); without
        # this every full collection the UI's allocations trigger walks them all (0.6 s at MOSAIC
        # scale: a frozen keystroke). Frozen again once the first screen's widgets exist.
        gc.freeze()
        self.call_after_refresh(gc.freeze)
        # The Item screen's media modules, imported in a thread once the first screen is drawn (tui.preload)
        self.call_after_refresh(lambda: self.run_worker(self._preload, name="preload", group="preload", thread=True,
                                                        exit_on_error=False))

    def _preload(self) -> list[str]:
        """The preload (tui.preload), then the Overview's media check with the codecs it imported:
        both done while the first screen is read, neither on the first key."""
        from textual.worker import get_current_worker

        worker = get_current_worker()
        try:
            done = preload()
            self.state.check_media(cancelled=lambda: worker.is_cancelled)  # quitting does not wait for it
            return done
        finally:
            self.preloaded.set()

    def on_unmount(self) -> None:
        gc.unfreeze()  # what the app froze can be collected again once it is gone (tests run many apps)
        if self.state.store is not None:
            self.state.store.close()

    # -- actions -----------------------------------------------------------------------------------
    async def action_switch_mode(self, mode: str) -> None:
        if self.study_only and mode != "study":  # a blind or oracle protocol cannot be broken by a key
            self.notify(STUDY_ONLY, timeout=3)
            return
        if mode == self.current_mode:  # the mode's own key from a screen above it: back to its first screen
            while len(self.screen_stack) > 1 and not isinstance(self.screen, ModalScreen):
                await self.pop_screen()
            return
        await super().action_switch_mode(mode)

    def action_command_palette(self) -> None:
        """ctrl+p: Textual's palette with a crash worked around (tui.commands.Palette)."""
        if self.use_command_palette and not Palette.is_open(self):
            self.push_screen(Palette(id="--command-palette"))

    def check_action(self, action: str, parameters: tuple[object, ...]) -> bool | None:
        if action == "view_media":  # only where media are shown (and not in the viewer itself)
            return isinstance(self.screen, MEDIA_SCREENS)
        return True

    def action_view_media(self) -> None:
        """z: the viewer on the screen's selected image or video (tui/screens/viewer.py)."""
        found = media_on(self.screen) if isinstance(self.screen, MEDIA_SCREENS) else None
        if found is None:
            self.notify("no image or video on this screen", timeout=2)
            return
        self.push_screen(ViewerScreen(*found))

    async def action_quit(self) -> None:
        """q (and ctrl+q): quit, but first ask about a study choice made and not saved."""
        for screen in pending_study_screens(self):
            if screen.ask_pending("quitting", lambda _saved: self._quit_now()):
                return
        self.exit()

    async def _quit_now(self) -> None:
        self.exit()

    def action_help(self) -> None:
        if not isinstance(self.screen, HelpScreen):
            self.push_screen(HelpScreen(self.screen))

    def mark_saved(self) -> None:
        """After a committed write: the status line says so."""
        self.state.mark_saved()
        self.save_state = self.state.save_state

    # -- navigation: what the screens ask for --------------------------------------------------------
    def on_open_item(self, message: OpenItem) -> None:
        if gc.isenabled():  # no collection while the new screen is built (see ItemScreen.show_item)
            gc.disable()
            self.call_after_refresh(gc.enable)
        run = None if message.run is None else self.state.run_refs[message.run]
        self.push_screen(ItemScreen(message.keys, message.key, run=run))

    async def on_open_items(self, message: OpenItems) -> None:
        """The Items table with a filter (a Scores cell, a palette entry), cursor on its first row."""
        if self.study_only:
            self.notify(STUDY_ONLY, timeout=3)
            return
        await self.switch_mode("items")
        while not isinstance(self.screen, ItemsScreen) and len(self.screen_stack) > 1:
            self.pop_screen()
        if isinstance(self.screen, ItemsScreen):
            self.screen.show_filter(message.filter)

    def on_open_round(self, message: OpenRound) -> None:
        self.push_screen(SessionScreen(message.task, message.round_id, item=message.item))

    def on_open_search(self, message: OpenSearch) -> None:
        self.push_screen(SearchScreen(task=message.task), self._open_hit)

    def _open_hit(self, hit: Hit | None) -> None:
        """A search hit: a round opens its session, an item the Item screen."""
        if hit is None:
            return
        task = self.state.bench.task(hit.task)
        if hit.kind == "round" and task is not None:
            self.push_screen(SessionScreen(task.name, hit.ref))
            return
        keys = [r.key for r in self.state.rows if r.item.item_id == hit.ref]
        if keys:
            self.push_screen(ItemScreen(keys, keys[0]))

    def on_open_compare(self, message: OpenCompare) -> None:
        self.push_screen(CompareScreen(message.key, message.left, message.right))

    def on_open_study(self, message: OpenStudy) -> None:
        session = message.session
        self.push_screen(STUDY_SCREENS[session.study.kind](session))

    def on_annotation_saved(self, message: AnnotationSaved) -> None:
        self.mark_saved()


def make_app(bench: str | Path, runs: Sequence[str | Path] = (), db: str | Path | None = None,
             annotator: str = "annotator", allow_outside_root: bool = False,
             exports_dir: str | Path | None = None, names: Mapping[str, str] | None = None,
             start: str = "overview", study: str | None = None, player: Player | None = None,
             item: str | None = None, mode: str | None = None, run: str | None = None,
             score_extra: Mapping[str, Any] | None = None) -> MemscopeApp:
    """Load everything and build the app (not yet running). UserError on bad input.

    `item` (+ `mode`, `run`): open the Item screen on that item, that run's tab first (the deep link a
    report row or a case card prints: `memscope tui BENCH --item ID --mode mcq --run BACKBONE/METHOD`).

    `player` plays the audio (tests pass a NullPlayer; None: the process-wide one, $MEMSCOPE_AUDIO)."""
    state = load_state(bench, runs, db=db, annotator=annotator, allow_outside_root=allow_outside_root,
                       exports_dir=exports_dir, names=names)
    state.score_extra = dict(score_extra or {})  # e.g. --conditions: ScoreOptions.extra of the Scores screen
    if study is not None:  # a bad study name is a one-line error before the app starts
        if state.store is None:
            raise UserError("--study needs the annotation database that holds it: --db FILE")
        state.store.study(study)
    key, run_index = deep_link(state, item, mode, run)
    return MemscopeApp(state, start=start, study=study, player=player, item=key, run=run_index)


def deep_link(state: AppState, item: str | None, mode: str | None,
              run: str | None) -> tuple[tuple[str, str] | None, int | None]:
    """The (item id, mode) and run index `--item/--mode/--run` name; UserError naming what is wrong."""
    if item is None:
        if mode is not None or run is not None:
            raise UserError("--mode and --run go with --item ITEM_ID")
        return None, None
    modes = [m for m in ("mcq", "open") if state.bench.item(item, m) is not None]
    if not modes:
        raise UserError(f"--item {plain(item)}: no such item in {plain(str(state.bench.root))}")
    if mode is not None and mode not in modes:
        raise UserError(f"--item {plain(item)} has no {plain(mode)} form (it has: {', '.join(modes)})")
    key = (item, mode or modes[0])
    if run is None:
        return key, None
    refs = [r for r in state.run_refs if r.key == run and r.mode == key[1]]
    if not refs:
        known = sorted({r.key for r in state.run_refs if r.mode == key[1]})
        raise UserError(f"--run {plain(run)}: no {key[1]} run with that key (runs: {plain(', '.join(known)) or 'none'})")
    return key, refs[0].index


def crash_dir() -> Path:
    """Where crash logs go: $MEMSCOPE_CRASH_DIR, else $XDG_STATE_HOME/memscope (~/.local/state/memscope)."""
    if os.environ.get("MEMSCOPE_CRASH_DIR"):
        return Path(os.environ["MEMSCOPE_CRASH_DIR"])
    state = os.environ.get("XDG_STATE_HOME") or str(Path.home() / ".local" / "state")
    return Path(state) / "memscope"


def write_crash_log(error: BaseException) -> Path:
    """The traceback of `error` in a new crash log (the temporary folder when the usual one is not
    writable); its path."""
    text = "".join(traceback.format_exception(type(error), error, error.__traceback__))
    name = f"crash-{time.strftime('%Y%m%d-%H%M%S')}-{os.getpid()}.log"
    for folder in (crash_dir(), Path(tempfile.gettempdir())):
        try:
            folder.mkdir(parents=True, exist_ok=True)
            path = folder / name
            path.write_text(text, encoding="utf-8", errors="backslashreplace")
            return path
        except OSError:
            continue
    return Path(os.devnull)


def run_app(app: MemscopeApp, **run_options) -> int:
    """Run the app (App.run's options); its exit status. After an unexpected exception: 1, and one
    line on stderr naming the crash log."""
    result = app.run(**run_options)
    if app.crash_log is not None:
        error = app._exception
        what = plain(f"{type(error).__name__}: {error}") if error is not None else "unexpected error"
        print(f"memscope: the app stopped on an unexpected error ({what}); details in {plain(str(app.crash_log))}",
              file=sys.stderr)
        return app.return_code or 1
    return int(result or 0)


def launch(bench: str | Path, runs: Sequence[str | Path] = (), db: str | Path | None = None,
           annotator: str = "annotator", allow_outside_root: bool = False, study: str | None = None,
           item: str | None = None, mode: str | None = None, run: str | None = None,
           score_extra: Mapping[str, Any] | None = None) -> int:
    """What `memscope` / `memscope tui` run. The default database is ./memscope.db when it exists."""
    if db is None and DEFAULT_DB.is_file():
        db = DEFAULT_DB
    prepare()  # the image renderer must be chosen before App.run() (DESIGN §9)
    app = make_app(bench, runs, db=db, annotator=annotator, allow_outside_root=allow_outside_root, study=study,
                   item=item, mode=mode, run=run, score_extra=score_extra)
    for problem in (*app.state.unreadable_runs, *app.keymap_problems):  # also on screen once the app runs
        print(f"memscope: {plain(problem)}", file=sys.stderr)
    return run_app(app)
