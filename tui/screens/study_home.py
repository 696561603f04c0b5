"""Study (key 4): the studies in the annotation database — each annotator's progress, the current
agreement of every two annotators and, in an agreement study, κ so far with its CI and n and about
how many more pairs reach the planned width (scorer.store.status, the text `memscope study list`
prints); enter opens one in its screen (agreement, oracle, labels or adjudicate: the app picks it by
the study's kind); ctrl+n makes a new study of any kind (tui/modals/study_form.py, the CLI's
options and function). `memscope tui … --study NAME` opens NAME directly."""

from __future__ import annotations

from rich.text import Text
from textual.app import ComposeResult
from textual.binding import Binding
from textual.widgets import OptionList, Static
from textual.widgets.option_list import Option

from scorer.errors import UserError
from tui.bases.screen import BaseScreen
from scorer.store.builder import RUNS_KINDS, make_study, summary
from scorer.store.status import status_lines, study_status
from tui.bases.study import MODE_KEYS
from tui.keymap import bind, shown_key
from tui.modals.study_form import StudyForm
from tui.messages import OpenStudy
from tui.study_session import StudySession
from tui.text import safe


class StudyHomeScreen(BaseScreen):
    WHERE = "Studies"
    CSS_PATH = "study.tcss"
    BINDINGS = MODE_KEYS + [
        Binding("enter", "open", "Open study", tooltip="work through the highlighted study", id="studies.open"),
        Binding("R", "reload", "Reload", tooltip="re-read the studies and progress from the database",
                id="studies.reload"),
        bind("studies.new", "new_study"),
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
            try:
                for text in status_lines(study_status(store, st.name, self.state.bench)):
                    line.append("\n")
                    line.append_text(safe(text, "dim", one_line=True))
            except UserError as err:
                line.append("\n")
                line.append_text(safe(f"  cannot read its status: {err}", "red", one_line=True))
            options.add_option(Option(line, id=f"study-{i}"))
            self.names.append(st.name)
        new = shown_key("studies.new", getattr(self.app, "user_keys", None))
        hint = (f"enter opens the highlighted study · {new} makes a new one (or `memscope study new`)" if studies
                else f"no studies yet: {new} makes one (or `memscope study new --kind agreement|oracle|labels|"
                     "adjudicate …`)")
        made = getattr(self, "made", None)  # what the form made last, until the next study is made
        self.query_one("#studies-hint", Static).update(
            safe(" · ".join(x.strip() for x in made), "green", one_line=True) if made else Text(hint, style="dim"))
        if studies:
            options.highlighted = 0
            options.focus()

    def action_new_study(self) -> None:
        store = self.state.store
        if store is None:
            self.notify("A study is kept in the annotation database: start the app with --db FILE.",
                        severity="error")
            return

        def make(spec) -> list[str]:
            runs = self.state.runs if spec.kind in RUNS_KINDS else []
            study, plan = make_study(spec, self.state.bench, runs, store)
            return summary(study, plan, str(self.state.db_path))

        def made(lines: list[str] | None) -> None:
            if not lines:
                return
            self.made = lines
            self.action_reload()
            self.notify(lines[0], timeout=4, markup=False)

        self.app.push_screen(StudyForm(make), made)

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
