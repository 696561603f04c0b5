"""Study (key 4): the studies in the annotation database with your progress in each; enter opens one
in its screen (agreement, oracle or labels: the app picks it by the study's kind). `memscope tui …
--study NAME` opens NAME directly."""

from __future__ import annotations

from rich.text import Text
from textual.app import ComposeResult
from textual.binding import Binding
from textual.widgets import OptionList, Static
from textual.widgets.option_list import Option

from scorer.errors import UserError
from tui.bases.screen import BaseScreen
from tui.bases.study import MODE_KEYS
from tui.messages import OpenStudy
from tui.study_session import StudySession
from tui.text import safe


class StudyHomeScreen(BaseScreen):
    WHERE = "Studies"
    CSS_PATH = "study.tcss"
    BINDINGS = MODE_KEYS + [
        Binding("enter", "open", "Open study", tooltip="work through the highlighted study", id="studies.open"),
        Binding("r", "reload", "Reload", tooltip="re-read the studies and progress from the database",
                id="studies.reload"),
    ]

    def body(self) -> ComposeResult:
        yield Static(id="studies-head")
        yield OptionList(id="studies")
        yield Static(id="studies-hint")

    def on_mount(self) -> None:
        self.names: list[str] = []
        self.action_reload()
        start = self.app.start_study
        if start:
            self.app.start_study = None  # only the first time this screen shows
            self.open_study(start)

    def on_screen_resume(self) -> None:
        self.action_reload()

    def action_reload(self) -> None:
        store = self.state.store
        head = self.query_one("#studies-head", Static)
        options = self.query_one("#studies", OptionList)
        options.clear_options()
        self.names = []
        if store is None:
            head.update(Text("No annotation database is open: start the app with --db FILE.", style="bold red"))
            return
        studies = store.studies()
        head.update(Text.assemble(("Studies in ", "bold"), safe(str(self.state.db_path), one_line=True),
                                  " — your progress as ", safe(self.state.annotator, "bold", one_line=True)))
        mine = {}
        for st in studies:
            for p in store.progress(st.name):
                if p["annotator"] == self.state.annotator:
                    mine[st.name] = p["done"]
        for i, st in enumerate(studies):
            line = Text.assemble(safe(st.name, "bold", one_line=True), f"  {st.kind}",
                                 f"  {st.n_items} entries  ",
                                 (f"{mine.get(st.name, 0)}/{st.n_items} done by you", "green"))
            options.add_option(Option(line, id=f"study-{i}"))
            self.names.append(st.name)
        hint = ("enter opens the highlighted study · make one with `memscope study new`" if studies else
                "no studies yet: make one with `memscope study new --kind agreement|oracle|labels …`")
        self.query_one("#studies-hint", Static).update(Text(hint, style="dim"))
        if studies:
            options.highlighted = 0
            options.focus()

    def action_open(self) -> None:
        options = self.query_one("#studies", OptionList)
        if options.highlighted is None or not self.names:
            return
        self.open_study(self.names[options.highlighted])

    def on_option_list_option_selected(self, event: OptionList.OptionSelected) -> None:
        event.stop()
        self.action_open()

    def open_study(self, name: str) -> None:
        try:
            session = StudySession(self.state, name)
        except UserError as err:
            self.notify(str(err), severity="error", markup=False)
            return
        self.post_message(OpenStudy(session))
