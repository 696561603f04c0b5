"""Judge-agreement study: the question, the gold answer and one anonymous prediction. `a` accept,
`r` reject, `b` borderline. The method is never shown (only the entry's blind id); the judge's score
is never shown before the annotator has committed, and after it only if the study was built with
--show-judge-after."""

from __future__ import annotations

from rich.text import Text
from textual.app import ComposeResult
from textual.containers import Vertical
from textual.widgets import Static

from scorer.metrics.constants import JUDGE_THRESHOLD
from tui.bases.study import StudyScreen
from tui.keymap import bind
from tui.study_session import Saved
from tui.text import fmt_score, safe
from tui.widgets.clue_rounds import mount_question_media

CRITERION = ("Accept when the prediction conveys the same information as the gold answer (the judge's "
             "criterion); reject when it does not; borderline when you cannot decide.")


class AgreementStudyScreen(StudyScreen):
    KIND = "judge agreement (blind)"
    CSS_PATH = "study.tcss"
    BINDINGS = [bind(f"verdict.{v}", f"verdict('{v}')")  # the ids of the Item screen's verdict dialog
                for v in ("accept", "reject", "borderline")]

    def entry_widgets(self) -> ComposeResult:
        yield Static(id="ag-question", classes="study-block")
        yield Static(id="ag-gold", classes="study-block")
        yield Static(id="ag-pred", classes="study-block study-answer")
        yield Static(id="ag-mine", classes="study-block")
        # the question's own images, which a verdict may turn on: after the prediction, so that the
        # question, gold and prediction stay on one screen at 80×24
        yield Vertical(id="ag-question-media")
        yield Static(Text(CRITERION, style="dim italic"), classes="study-block")

    async def render_entry(self) -> None:
        s = self.session
        item = s.item()
        pred = s.prediction()
        qmedia = self.query_one("#ag-question-media", Vertical)
        await qmedia.remove_children()
        if item is not None:
            await mount_question_media(qmedia, item, self.state, self.app.player)
        else:
            qmedia.display = False
        if item is None:
            q = Text.assemble(("item not in the benchmark: ", "bold red"), safe(s.entry.item_id, one_line=True))
            self.query_one("#ag-question", Static).update(q)
            self.query_one("#ag-gold", Static).update(Text(""))
        else:
            self.query_one("#ag-question", Static).update(Text.assemble(("Question\n", "bold cyan"),
                                                                        safe(item.question)))
            self.query_one("#ag-gold", Static).update(Text.assemble(("Gold answer\n", "bold green"),
                                                                    safe(item.answer)))
        head = Text.assemble(("Prediction ", "bold magenta"), safe(s.entry.blind_id, "bold", one_line=True), "\n")
        if pred is None:
            head.append("(this prediction is not in the runs the app loaded: open it with --runs DIR)",
                        style="bold red")
        elif not pred.pred.strip():
            head.append("(empty prediction)", style="dim italic")
        else:
            head.append_text(safe(pred.pred))
        self.query_one("#ag-pred", Static).update(head)
        mine = s.current_answer()
        self.query_one("#ag-mine", Static).update(
            Text.assemble(("your verdict: ", "bold"), (mine["verdict"], "bold green")) if mine else Text(""))

    def keys_text(self) -> Text:
        parts: list = []
        for v in ("accept", "reject", "borderline"):
            parts += [(self.key_shown(f"verdict.{v}"), "bold reverse"), f" {v}   "]
        return Text.assemble(*parts, *self.common_keys_text())

    def describe(self, payload: dict) -> str:
        return str(payload.get("verdict", ""))

    def saved_text(self, saved: Saved) -> Text:
        out = Text(saved.payload.get("verdict", ""), style="bold")
        if self.session.study.params.get("show_judge_after"):
            pred = self.session.prediction(saved.entry)
            if pred is not None and pred.judge is not None:
                verdict = "accept" if pred.judge >= JUDGE_THRESHOLD else "reject"
                out.append(f" · judge {fmt_score(pred.judge)} → {verdict}", style="dim")
        return out

    async def action_verdict(self, verdict: str) -> None:
        self.mark_key()
        await self.commit({"verdict": verdict})
