"""The memscope app: `make_app(...)` builds it (the CLI and the tests both use it); `launch(...)` runs it.

Screens are Textual modes — Overview (1), Items (2), Scores (3) — each with its own stack, so the
Item screen opened from Items comes back to the same row. State (benchmark, runs, joined index,
annotator, store) lives in `app.state`, never in widgets.
"""

from __future__ import annotations

import gc
from pathlib import Path
from typing import Mapping, Sequence

from textual.app import App
from textual.binding import Binding
from textual.reactive import reactive

from scorer.errors import UserError
from tui.commands import MemscopeCommands
from tui.screens.help import HelpScreen
from tui.screens.items import ItemsScreen
from tui.screens.overview import OverviewScreen
from tui.screens.scores import ScoresScreen
from tui.screens.study_home import StudyHomeScreen
from tui.state import AppState, load_state

DEFAULT_DB = Path("memscope.db")


class MemscopeApp(App[int]):
    CSS_PATH = "app.tcss"
    TITLE = "memscope"
    COMMANDS = App.COMMANDS | {MemscopeCommands}
    MODES = {"overview": OverviewScreen, "items": ItemsScreen, "scores": ScoresScreen, "study": StudyHomeScreen}
    searcher = None  # scorer.search's index, built once by the first search (tui/screens/search.py)
    BINDINGS = [
        Binding("1", "switch_mode('overview')", "Overview", tooltip="the benchmark at a glance"),
        Binding("2", "switch_mode('items')", "Items", tooltip="the table of items, with filters"),
        Binding("3", "switch_mode('scores')", "Scores", tooltip="the scorer's matrices"),
        Binding("4", "switch_mode('study')", "Study", tooltip="annotation studies: agreement, oracle, labels"),
        Binding("question_mark", "help", "Help", key_display="?"),
        Binding("q", "quit", "Quit"),
    ]

    save_state: reactive[str] = reactive("no database")

    def __init__(self, state: AppState, start: str = "overview", study: str | None = None) -> None:
        super().__init__()
        self.state = state
        self.start_mode = "study" if study else start
        self.start_study = study  # opened by the Study screen when it first shows
        self.save_state = state.save_state

    def on_mount(self) -> None:
        self.switch_mode(self.start_mode)
        # Hundreds of thousands of long-lived objects are loaded (the benchmark, the runs); without
        # this every full collection the UI's allocations trigger walks them all (0.6 s at MOSAIC
        # scale: a frozen keystroke). Frozen again once the first screen's widgets exist.
        gc.freeze()
        self.call_after_refresh(gc.freeze)

    def action_help(self) -> None:
        if not isinstance(self.screen, HelpScreen):
            self.push_screen(HelpScreen(self.screen))

    def mark_saved(self) -> None:
        """For the annotation panel: call after a committed write so the status line says so."""
        self.state.mark_saved()
        self.save_state = self.state.save_state

    def on_unmount(self) -> None:
        gc.unfreeze()  # what the app froze can be collected again once it is gone (tests run many apps)
        if self.state.store is not None:
            self.state.store.close()


def make_app(bench: str | Path, runs: Sequence[str | Path] = (), db: str | Path | None = None,
             annotator: str = "annotator", allow_outside_root: bool = False,
             exports_dir: str | Path | None = None, names: Mapping[str, str] | None = None,
             start: str = "overview", study: str | None = None) -> MemscopeApp:
    """Load everything and build the app (not yet running). UserError on bad input."""
    state = load_state(bench, runs, db=db, annotator=annotator, allow_outside_root=allow_outside_root,
                       exports_dir=exports_dir, names=names)
    if study is not None:  # a bad study name is a one-line error before the app starts
        if state.store is None:
            raise UserError("--study needs the annotation database that holds it: --db FILE")
        state.store.study(study)
    return MemscopeApp(state, start=start, study=study)


def launch(bench: str | Path, runs: Sequence[str | Path] = (), db: str | Path | None = None,
           annotator: str = "annotator", allow_outside_root: bool = False, study: str | None = None) -> int:
    """What `memscope` / `memscope tui` run. The default database is ./memscope.db when it exists."""
    if db is None and DEFAULT_DB.is_file():
        db = DEFAULT_DB
    try:  # the image renderer must be chosen before App.run() (DESIGN §9)
        from tui.media.image import prepare
    except ImportError:  # pragma: no cover - the media package ships with the app
        prepare = None
    if prepare is not None:
        prepare()
    app = make_app(bench, runs, db=db, annotator=annotator, allow_outside_root=allow_outside_root, study=study)
    result = app.run()
    return int(result or 0)
