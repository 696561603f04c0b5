"""Adjudicate (DESIGN §7): an entry where annotators disagree (or their majority and the judge do),
unblinded — every annotator's act with their notes and flags side by side, the item with its gold
side, the prediction and the judge's score for verdicts, and the item's clue rounds with their
media — and the adjudicator's decision, recorded as an `adjudication` event (DESIGN §4) with a
reason, committed before it is shown saved. The decision becomes the entry's gold in the scorer.

One screen per kind adjudicated, each with that kind's own keys from the key map: verdicts `a` /
`r` / `b`; oracle answers the option letters (in the items' first rotation) or, for open items,
`i` to type the answer; labels `1`–`7` and enter. Each decision then asks for its reason (enter
with nothing typed saves without one; esc writes nothing).
"""

from __future__ import annotations

from rich.text import Text
from textual.app import ComposeResult
from textual.containers import Horizontal, Vertical
from textual.widget import Widget
from textual.widgets import Static

from scorer.errors import UserError
from scorer.metrics.constants import JUDGE_THRESHOLD
from scorer.metrics.constants import OPTION_LETTERS as LETTERS
from scorer.store.adjudicate import disputed_acts
from tui.acts import payload_text
from tui.bases.study import StudyScreen
from tui.keymap import bind
from tui.modals.reason import ReasonDialog
from tui.study_session import Saved
from tui.text import fmt_score, safe
from tui.widgets.clue_rounds import clue_widgets
from tui.widgets.labels import labels_str, toggle_bindings


class AdjudicateScreen(StudyScreen):
    """What every kind shares; subclasses set OF and turn their keys into a decision."""

    KIND = "adjudication (unblinded)"
    CSS_PATH = ["study.tcss", "study_adjudicate.tcss"]
    OF = ""

    def __init__(self, session) -> None:
        super().__init__(session)
        self.disputes: dict = {}

    def entry_widgets(self) -> ComposeResult:
        yield Static(id="adj-item", classes="study-block")
        yield Horizontal(id="adj-acts")
        yield Static(id="adj-mine", classes="study-block study-answer")
        yield Static(Text("Clue rounds (the gold evidence)", style="bold"), classes="study-block")
        yield Vertical(id="adj-clues")

    async def on_mount(self) -> None:
        self._read_disputes()
        await super().on_mount()

    def _read_disputes(self) -> None:
        try:
            self.disputes = disputed_acts(self.session.store, self.session.study)
        except UserError as err:
            self.disputes = {}
            self.notify(str(err), severity="error", markup=False)

    def where_text(self, entry=None) -> Text:
        e = entry or self.session.entry
        out = Text.assemble(safe(e.item_id, "bold", one_line=True))
        if e.run_key:
            out.append(" · ")
            out.append_text(safe(e.run_key, one_line=True))
        out.append(f" (entry {e.position})")
        return out

    def describe(self, payload: dict) -> str:
        decision = payload.get("decision", payload)
        text = f"decided {payload_text(self.OF, decision)}"
        if payload.get("reason"):
            text += f" — “{payload['reason']}”"
        return text

    # -- showing ------------------------------------------------------------------------------------
    async def render_entry(self) -> None:
        s = self.session
        e = s.entry
        item = s.item()
        acts = self.query_one("#adj-acts", Horizontal)
        await acts.remove_children()
        clues = self.query_one("#adj-clues", Vertical)
        await clues.remove_children()
        self.query_one("#adj-item", Static).update(self.item_text(item))
        by = self.disputes.get((e.item_id, e.mode, e.run_key), {})
        boxes: list[Widget] = [Static(self.act_text(a, by[a]), classes="adj-act") for a in sorted(by)]
        if not boxes:
            boxes.append(Static(Text("no annotator's act on this entry is in the database any more", style="bold red")))
        await acts.mount_all(boxes)
        if item is not None:
            chain = self.state.task(item).clue_chain(item)
            widgets: list[Widget] = []
            for n, r in enumerate(chain, 1):
                widgets += clue_widgets(r, n, len(chain), self.state, self.app.player)
            await clues.mount_all(widgets or [Static(Text("this item has no gold clue rounds", style="dim"))])
        self.show_decision()

    def item_text(self, item) -> Text:
        s = self.session
        e = s.entry
        if item is None:
            return Text.assemble(("item not in the benchmark: ", "bold red"), safe(e.item_id, one_line=True))
        out = Text.assemble(("Question  ", "bold cyan"), safe(item.question, "bold"),
                            ("\nGold answer  ", "bold green"), safe(item.answer),
                            ("\nGold labels  ", "bold"), labels_str(item.x, item.y))
        if item.rotations:
            out.append("\nOptions (first rotation)", style="bold")
            for letter, text in item.rotations[0].options.items():
                out.append(f"\n {letter} ", style="bold reverse")
                out.append(" ")
                out.append_text(safe(text))
        if e.run_key:
            pred = s.prediction()
            out.append("\nRun  ", style="bold magenta")
            out.append_text(safe(e.run_key, one_line=True))
            if pred is None:
                out.append("\n(this prediction is not in the runs the app loaded: open it with --runs DIR)",
                           style="bold red")
            else:
                out.append("\nPrediction  ", style="bold magenta")
                out.append_text(safe(pred.pred) if pred.pred.strip() else Text("(empty)", style="dim italic"))
                if pred.judge is not None:
                    said = "accept" if pred.judge >= JUDGE_THRESHOLD else "reject"
                    out.append(f"\nJudge  {fmt_score(pred.judge)} → {said}", style="bold")
        return out

    def act_text(self, annotator: str, did: dict) -> Text:
        out = Text.assemble(safe(annotator, "bold underline", one_line=True), "\n")
        act = did.get("act")
        if act is None:
            out.append("no act of this kind", style="dim")
        else:
            out.append_text(safe(payload_text(self.OF, act), "bold"))
            item = self.session.item()
            if self.OF == "oracle" and act.get("choice") and item is not None:
                rot = act.get("rotation") or 0
                if 0 <= rot < len(item.rotations):
                    text = item.rotations[rot].options.get(act["choice"])
                    if text is not None:
                        out.append("\n= ")
                        out.append_text(safe(text))
        for note in did.get("notes", ()):
            out.append("\nnote ", style="cyan")
            out.append_text(safe(note.get("text") or ""))
        for flag in did.get("flags", ()):
            out.append(f"\nflag {flag.get('flag')}", style="yellow")
            if flag.get("text"):
                out.append(" ")
                out.append_text(safe(flag["text"]))
        return out

    def show_decision(self) -> None:
        mine = self.session.current_answer()
        out = Text.assemble(("your decision: ", "bold"))
        if mine is None:
            out.append("none yet", style="dim")
        else:
            out.append_text(safe(self.describe(mine), "bold green"))
        extra = self.pending()
        if extra is not None:
            out.append("\nchosen, not saved: ", style="bold yellow")
            out.append_text(extra)
        self.query_one("#adj-mine", Static).update(out)

    # -- deciding -----------------------------------------------------------------------------------
    def decide(self, decision: dict) -> None:
        """Ask for the reason, then write {"of", "decision", "reason"} (nothing on esc)."""
        self.mark_key()
        if not self.ready:
            self._already_saved()
            return

        async def write(reason: str | None) -> None:
            if reason is None:
                self.notify("Nothing written (cancelled).", timeout=2)
                return
            await self.commit({"of": self.OF, "decision": decision, "reason": reason})

        title = Text.assemble("Reason for deciding ", safe(payload_text(self.OF, decision), "bold"), " on ",
                              self.where_text())
        self.app.push_screen(ReasonDialog(title), write)

    def saved_text(self, saved: Saved) -> Text:
        return Text(self.describe(saved.payload), style="bold")


class AdjudicateVerdictsScreen(AdjudicateScreen):
    OF = "verdict"
    BINDINGS = [bind("verdict.accept", "verdict('accept')"), bind("verdict.reject", "verdict('reject')"),
                bind("verdict.borderline", "verdict('borderline')")]

    def keys_text(self) -> Text:
        return Text.assemble((f"{self.key_shown('verdict.accept')}/{self.key_shown('verdict.reject')}/"
                              f"{self.key_shown('verdict.borderline')}", "bold reverse"),
                             " decide accept/reject/borderline   ", *self.common_keys_text())

    def action_verdict(self, verdict: str) -> None:
        self.decide({"verdict": verdict})


class AdjudicateOracleScreen(AdjudicateScreen):
    OF = "oracle"
    BINDINGS = [bind(f"oracle.answer-{L.lower()}", f"choice('{L}')", show=False) for L in LETTERS] + [
        bind("oracle.type-answer", "type_answer")]

    def check_action(self, action: str, parameters: tuple[object, ...]) -> bool | None:
        is_open = self.session.entry.mode == "open"
        if action == "choice":
            return not is_open
        if action == "type_answer":
            return is_open
        return True

    def keys_text(self) -> Text:
        item = self.session.item()
        if self.session.entry.mode == "open" or item is None or not item.rotations:
            first = Text.assemble((self.key_shown("oracle.type-answer"), "bold reverse"), " type the answer   ")
        else:
            letters = "/".join(("F" if L == "F" else L.lower()) for L in item.rotations[0].options)
            first = Text.assemble((letters, "bold reverse"), " decide the option (first rotation)   ")
        return Text.assemble(first, *self.common_keys_text())

    def action_choice(self, letter: str) -> None:
        item = self.session.item()
        if item is None or not item.rotations or letter not in item.rotations[0].options:
            self.notify(f"No option {letter} on this item.", severity="warning", timeout=2)
            return
        self.decide({"choice": letter, "rotation": 0})

    def action_type_answer(self) -> None:
        async def typed(text: str | None) -> None:
            if text:
                self.decide({"answer": text})

        self.app.push_screen(ReasonDialog(Text.assemble("The answer, on ", self.where_text()), "the answer",
                                          required=True), typed)


class AdjudicateLabelsScreen(AdjudicateScreen):
    OF = "label"
    BINDINGS = toggle_bindings() + [bind("labels.save", "save"), bind("labels.clear", "clear")]

    def __init__(self, session) -> None:
        super().__init__(session)
        self.sel_x: set[str] = set()
        self.sel_y: set[str] = set()

    async def render_entry(self) -> None:
        mine = self.session.current_answer()
        decision = (mine or {}).get("decision") or {}
        self.sel_x, self.sel_y = set(decision.get("x", ())), set(decision.get("y", ()))
        await super().render_entry()

    def keys_text(self) -> Text:
        return Text.assemble(("1–4", "bold reverse"), " X1–X4   ", ("5–7", "bold reverse"), " Y1–Y3   ",
                             (self.key_shown("labels.save"), "bold reverse"), " decide   ",
                             *self.common_keys_text(clear=True))

    def pending(self) -> Text | None:
        mine = self.session.current_answer()
        decision = (mine or {}).get("decision") or {}
        if (self.sel_x, self.sel_y) == (set(decision.get("x", ())), set(decision.get("y", ()))):
            return None
        return Text(f"labels {labels_str(self.sel_x, self.sel_y)}")

    def pending_savable(self) -> bool:
        return bool(self.sel_x and self.sel_y)

    async def save_pending(self, then=None) -> bool:
        if not self.pending_savable():
            return False
        decision = {"x": sorted(self.sel_x), "y": sorted(self.sel_y)}
        return await self.commit({"of": self.OF, "decision": decision, "reason": ""},
                                 then=then or "next") is not None

    def discard_pending(self) -> None:
        mine = self.session.current_answer()
        decision = (mine or {}).get("decision") or {}
        self.sel_x, self.sel_y = set(decision.get("x", ())), set(decision.get("y", ()))
        self.show_decision()

    def action_toggle(self, label: str) -> None:
        (self.sel_x if label.startswith("X") else self.sel_y).symmetric_difference_update({label})
        self.show_decision()

    def action_clear(self) -> None:
        self.sel_x.clear()
        self.sel_y.clear()
        self.show_decision()

    def action_save(self) -> None:
        if not self.pending_savable():
            self.notify("Pick at least one X (1–4) and one Y (5–7) first.", severity="warning", timeout=3)
            return
        self.decide({"x": sorted(self.sel_x), "y": sorted(self.sel_y)})


ADJUDICATE_SCREENS = {"verdict": AdjudicateVerdictsScreen, "oracle": AdjudicateOracleScreen,
                      "label": AdjudicateLabelsScreen}


def adjudicate_screen(session) -> AdjudicateScreen:
    """The screen for an adjudication study, by the kind it adjudicates."""
    return ADJUDICATE_SCREENS[session.study.params.get("of", "verdict")](session)
