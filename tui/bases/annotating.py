"""Annotating from the Item screen, outside any study: relabel the item (`l`), a verdict on the run
in the open tab (`v`), a note (`N`), a flag (`f`), and undo of your last act made here (`u`). The
panel in the Item screen's #annotation-slot shows what the store holds on the item — the gold labels
beside yours and others', your verdicts per run, notes and flags — and says "saved" only once the
store has committed the write. Each key opens a dialog (tui/modals/) and writes its result.

`AnnotatingScreen` is the Item screen's base class; the Item screen calls `refresh_annotations()`
when it shows an item and provides `item` and `active_panel()` (whose `.ref` is the open run).
"""

from __future__ import annotations

from rich.text import Text
from textual.widgets import Static

from scorer.errors import UserError
from scorer.model import Item
from tui.acts import act_text, payload_text
from tui.bases.screen import BaseScreen
from tui.keymap import bind
from tui.messages import AnnotationSaved
from tui.modals.flag import FlagDialog, Flagged
from tui.modals.labels import LabelDialog, Labels
from tui.modals.note import NoteDialog
from tui.modals.verdict import VerdictDialog
from tui.text import safe
from tui.widgets.labels import labels_str
from tui.widgets.prepared import show_text


def annotation_text(state, item: Item) -> Text:
    """What the store holds on `item`, for the panel (all text from data literal)."""
    if state.store is None:
        return Text("annotations: no database open (start the app with --db FILE to annotate)", style="dim")
    me = state.annotator
    rows = state.item_annotations(item.item_id)  # indexed per store change, not scanned per keystroke
    out = Text.assemble(("annotate", "bold"), " as ", safe(me, "bold", one_line=True),
                        ("   l labels · v verdict on the open run · N note · f flag · u undo", "dim"))
    labels = rows.get("label", [])
    out.append("\nlabels  ", style="bold")
    out.append(f"gold {labels_str(item.x, item.y)}")
    for r in labels:
        out.append(" | ")
        out.append_text(safe(r["annotator"], "bold" if r["annotator"] == me else "", one_line=True))
        out.append(f" {labels_str(r['x'], r['y'])}")
        if r.get("study"):
            out.append(" (study ", style="dim")
            out.append_text(safe(r["study"], "dim", one_line=True))
            out.append(")", style="dim")
    names = {ref.key: ref.display for ref, _ in state.predictions(item)}
    mine = [r for r in rows.get("verdict", []) if r["mode"] == item.mode and r["annotator"] == me]
    out.append("\nyour verdicts  ", style="bold")
    if not mine:
        out.append("none", style="dim")
    for i, r in enumerate(mine):
        if i:
            out.append(" · ")
        out.append_text(safe(names.get(r["run_key"], r["run_key"]), one_line=True))
        out.append(f" {r['verdict']}", style="bold")
    notes = rows.get("note", [])
    flags = rows.get("flag", [])
    out.append(f"\nnotes {len(notes)} · flags {len(flags)}", style="bold")
    if flags:
        out.append(" (" + ", ".join(sorted({f["flag"] for f in flags})) + ")")
    if notes:
        out.append("\nlast note: ", style="dim")
        out.append_text(safe(notes[-1]["text"], "dim", one_line=True))
    # your own acts here in full: every note's text and every flag with its reason
    for kind, rows_ in (("note", notes), ("flag", flags)):
        mine_ = [r for r in rows_ if r["annotator"] == me]
        if mine_:
            out.append(f"\nyour {kind}s  ", style="bold")
            out.append_text(safe(" · ".join(payload_text(kind, r) for r in mine_), one_line=True))
    return out


class AnnotatingScreen(BaseScreen):
    # Not in the key bar (the Item screen's own keys fill it): the annotation panel lists these keys,
    # and the help screen and the command palette show them with their descriptions.
    BINDINGS = [
        bind("annotate.relabel", "relabel", show=False),
        bind("annotate.verdict", "verdict", show=False),
        bind("annotate.note", "item_note", show=False),
        bind("annotate.flag", "item_flag", show=False),
        bind("annotate.undo", "item_undo", show=False),
    ]

    def __init__(self, *args, **kw) -> None:
        super().__init__(*args, **kw)
        self.acts: list[int] = []  # event ids written from this screen, newest last (what `u` undoes)
        self.saved_line: Text | None = None

    # -- panel ---------------------------------------------------------------------------------------
    def refresh_annotations(self) -> None:
        text = annotation_text(self.state, self.item)
        if self.saved_line is not None:
            text.append("\n")
            text.append_text(self.saved_line)
        show_text(self.query_one("#annotation-summary", Static), text)

    def _where(self, run=None) -> Text:
        out = safe(self.item.item_id, "bold", one_line=True)
        if run is not None:
            out.append(" · ")
            out.append_text(safe(run.display, "bold", one_line=True))
        return out

    def _write(self, what: Text, write) -> None:
        if self.state.store is None:
            self.notify("No annotation database is open: start the app with --db FILE.", severity="warning")
            return
        try:
            ev = write(self.state.store)
        except UserError as err:
            self.saved_line = Text(f"✗ NOT saved: {err}", style="bold red")
        else:  # committed: now it may say so
            self.acts.append(ev.id)
            self.saved_line = Text.assemble(("✓ saved ", "bold green"), safe(ev.item_id, one_line=True), " · ",
                                            what, (f" (event {ev.id})", "dim"))
            self.post_message(AnnotationSaved())
            self.state.refresh_rows()
        self.refresh_annotations()

    # -- actions -------------------------------------------------------------------------------------
    def action_relabel(self) -> None:
        item = self.item
        store = self.state.store
        mine = [r for r in store.labels() if r["item_id"] == item.item_id
                and r["annotator"] == self.state.annotator] if store is not None else []
        x, y = (set(mine[-1]["x"]), set(mine[-1]["y"])) if mine else (set(item.x), set(item.y))

        def done(result: Labels | None) -> None:
            if result is not None:
                xs, ys = result
                self._write(Text(f"labels {labels_str(xs, ys)}"),
                            lambda s: s.label(self.state.annotator, item.item_id, xs, ys))

        self.app.push_screen(LabelDialog(self._where(), x, y), done)

    def action_verdict(self) -> None:
        panel = self.active_panel()
        if panel is None:
            self.notify("No run answered this item: nothing to give a verdict on.", severity="warning")
            return
        item, ref = self.item, panel.ref

        def done(verdict: str | None) -> None:
            if verdict is not None:
                what = Text.assemble(f"{verdict} on ", safe(ref.display, one_line=True))
                self._write(what, lambda s: s.verdict(self.state.annotator, item.item_id, item.mode, ref.key, verdict))

        self.app.push_screen(VerdictDialog(self._where(ref)), done)

    def action_item_note(self) -> None:
        item = self.item

        def done(text: str | None) -> None:
            if text is not None:
                self._write(safe(act_text("note", {"text": text}), one_line=True),
                            lambda s: s.note(self.state.annotator, item.item_id, text))

        self.app.push_screen(NoteDialog(self._where()), done)

    def action_item_flag(self) -> None:
        item = self.item

        def done(result: Flagged | None) -> None:
            if result is not None:
                flag, text = result
                self._write(safe(act_text("flag", {"flag": flag, "text": text}), one_line=True),
                            lambda s: s.flag(self.state.annotator, item.item_id, flag, text))

        self.app.push_screen(FlagDialog(self._where()), done)

    def action_item_undo(self) -> None:
        store = self.state.store
        while self.acts and store is not None:
            event_id = self.acts.pop()
            try:
                ev = store.event(event_id)
                store.undo(self.state.annotator, event_id)
            except UserError:
                continue  # already undone (e.g. from another screen): try the one before
            what = act_text(ev.kind, dict(ev.payload))
            if ev.kind == "verdict":  # which run's prediction it was about
                names = {ref.key: ref.display for ref, _ in self.state.predictions(self.item)}
                what += f" on {names.get(ev.run_key, ev.run_key)}"
            self.saved_line = Text.assemble(("↶ undone ", "bold yellow"), safe(what, one_line=True), " · ",
                                            safe(ev.item_id, one_line=True), (f" (event {ev.id})", "dim"))
            self.post_message(AnnotationSaved())
            self.state.refresh_rows()
            self.refresh_annotations()
            return
        self.notify("Nothing of yours to undo from this screen.", timeout=2)
