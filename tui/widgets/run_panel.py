"""One run's side of the Item screen: its answer and score, then its evidence — the ranked retrieved
list or the delivered list (`e` switches), and the gold chain's completeness."""

from __future__ import annotations

from collections import OrderedDict

from rich.text import Text
from textual.app import ComposeResult
from textual.containers import VerticalScroll
from textual.widgets import Static

from scorer.model import Item, Prediction, Task
from tui.evidence import RunEvidence, run_evidence
from tui.rows import RunRef, score_of
from tui.text import fmt_score, safe
from tui.widgets.evidence_tables import chain_summary, chain_table, delivered_table, retrieved_table
from tui.widgets.prepared import PreparedCache, show_text

VIEWS = ("retrieved", "delivered")
CACHE_SIZE = 256  # computed panels kept (n/p back and forth, switching runs): a few KB each


class PanelCache:
    """LRU of one (run, item, rotation)'s computed evidence and answer text, so stepping back to an
    item or a run does not recompute its marks. Keyed by object identity, the objects kept in the entry
    (so an id is never reused while its entry lives)."""

    def __init__(self, size: int = CACHE_SIZE) -> None:
        self.size = size
        self._entries: OrderedDict[tuple, tuple] = OrderedDict()

    def get(self, ref: RunRef, task: Task, item: Item, p: Prediction, rotation: int) -> tuple[RunEvidence, Text]:
        key = (ref, id(task), id(item), id(p), rotation)
        hit = self._entries.get(key)
        if hit is not None and hit[0] is task and hit[1] is item and hit[2] is p:
            self._entries.move_to_end(key)
            return hit[3], hit[4]
        ev, answer = run_evidence(task, item, p), answer_text(ref, p, item, rotation)
        self._entries[key] = (task, item, p, ev, answer)
        while len(self._entries) > self.size:
            self._entries.popitem(last=False)
        return ev, answer


PANELS = PanelCache()  # module-wide: every Item screen of the app shares it (the data is immutable)


def score_style(v: float | None) -> str:
    if v is None:
        return "dim"
    return "bold green" if v >= 0.75 else "bold yellow" if v >= 0.5 else "bold red"


def answer_text(ref: RunRef, p: Prediction, item: Item, rotation: int) -> Text:
    out = Text.assemble(
        (ref.display, "bold"), "  ", safe(ref.key, "dim", one_line=True),
        (f"  {ref.modality or 'modality ?'} · {ref.mode}", "dim"), "\n")
    if p.history_source:
        out.append("history: ", style="dim")
        out.append_text(safe(p.history_source, "dim", one_line=True))
        out.append("\n")
    score = score_of(p, item.mode)
    if item.mode == "mcq":
        rots = p.rotations
        out.append("EM ", style="bold")
        out.append(fmt_score(score), style=score_style(score))
        out.append(f" (mean over {len(rots)} rotations)\n" if rots else "\n", style="dim")
        for r in rots:
            shown = r.rotation_idx == rotation
            mark = "✓" if r.em and r.em >= 1 else "✗"
            out.append("▸ " if shown else "  ", style="bold cyan")
            out.append(f"rot {r.rotation_idx + 1}: gold {r.correct_position or '?'} chose ")
            out.append_text(safe(r.choice or "(invalid)", "bold" if r.choice else "red", one_line=True))
            out.append(f" {mark}", style="green" if mark == "✓" else "red")
            if r.pred and r.pred.strip() != (r.choice or ""):
                out.append("  ")
                out.append_text(safe(r.pred, "dim", one_line=True)[:60])
            out.append("\n")
        if not rots:
            out.append("choice ")
            out.append_text(safe(p.choice or "(none)", "bold", one_line=True))
            out.append("\n")
    shown_rot = next((r for r in p.rotations if r.rotation_idx == rotation), None) if item.mode == "mcq" else None
    if shown_rot is not None:  # the answer of the rotation shown beside it, not the row's last one
        out.append(f"prediction (rotation {rotation + 1}): ", style="bold")
        out.append_text(safe(shown_rot.pred or shown_rot.choice or "(none)"))
        if p.pred and all((p.pred or "").strip() != (r.pred or "").strip() for r in p.rotations):
            out.append("\nrow pred: ", style="dim")  # the row's own field, not any rotation's: shown too
            out.append_text(safe(p.pred))
    else:
        out.append("prediction: ", style="bold")
        out.append_text(safe(p.pred))
    out.append("\n")
    if item.mode == "open":
        out.append("judge ", style="bold")
        out.append(fmt_score(p.judge), style=score_style(p.judge))
        if p.bleu_1 is not None:
            out.append(f"   BLEU-1 {p.bleu_1:.2f}", style="dim")
        out.append("\n")
        if p.judge_reasoning:
            out.append("judge's reasoning: ", style="bold")
            out.append_text(safe(p.judge_reasoning, "italic"))
            out.append("\n")
    if p.abstained is not None:
        out.append(f"abstained: {'yes' if p.abstained else 'no'}\n", style="yellow" if p.abstained else "dim")
    out.rstrip()
    return out


class RunPanel(VerticalScroll):
    """Shows one (run, prediction) for the current item. The Item screen has one, refilled for the run
    whose tab is selected (`show` swaps the data in place): other runs cost nothing until chosen."""

    BLANK = True  # no border, background or content of its own (its Static paints): nothing to paint

    def __init__(self, ref: RunRef | None = None, **kw) -> None:
        super().__init__(**kw)
        self.ref = ref
        self.view = "retrieved"
        self.evidence: RunEvidence | None = None
        self.shown: tuple | None = None  # (item id, mode, rotation, view, run index) on display
        self._answer = Text()
        self._texts = PreparedCache()  # bodies shown and prefetched, by (run, item, rotation, view)

    def compose(self) -> ComposeResult:
        yield Static(classes="run-body")

    def show(self, ref: RunRef, task: Task, item: Item, p: Prediction, rotation: int, view: str) -> None:
        shown = (item.item_id, item.mode, rotation, view, ref.index)
        if shown == self.shown:
            return
        other = self.shown is None or shown[:2] != self.shown[:2] or ref.index != self.shown[4]
        self.shown = shown
        self.ref = ref
        self.view = view
        self.evidence, self._answer = PANELS.get(ref, task, item, p, rotation)
        self._show_view()
        if other and self.scroll_y:  # another run or item starts at its top
            self.scroll_home(animate=False)

    def set_view(self, view: str) -> None:
        self.view = view
        if self.shown is not None:
            self.shown = (*self.shown[:3], view, self.shown[4])
        self._show_view()

    def _show_view(self) -> None:
        if self.evidence is None or self.shown is None:
            return
        show_text(self.query_one(".run-body", Static), self._body(self.shown, self.evidence, self._answer))

    def _body(self, shown: tuple, ev: RunEvidence, answer: Text):
        # one Static, one Text (not a Group: Textual measures and wraps a Text natively, and keeps its
        # height): a run switch or an item change is one widget update
        return self._texts.get(shown, lambda: body_text(ev, answer, shown[3]))

    def prepare(self, ref: RunRef, task: Task, item: Item, p: Prediction, rotation: int, view: str) -> None:
        """Render what `show` would show ahead (the Item screen's prefetch of the next item)."""
        ev, answer = PANELS.get(ref, task, item, p, rotation)
        self._body((item.item_id, item.mode, rotation, view, ref.index), ev, answer).render_ahead(
            self.query_one(".run-body", Static), self)


def body_text(ev: RunEvidence, answer: Text, view: str) -> Text:
    """The panel: the run's answer and score, the chain's completeness, then the evidence list."""
    body = retrieved_table(ev) if view == "retrieved" else delivered_table(ev)
    head = Text.assemble(("evidence: ", "bold"), *(
        (f"[{v}]" if v == view else f" {v} ", "reverse bold" if v == view else "dim") for v in VIEWS),
        ("  (e switches)", "dim"))
    return Text("\n").join([answer, Text(), chain_summary(ev), Text(), head, body, Text(), chain_table(ev)])
