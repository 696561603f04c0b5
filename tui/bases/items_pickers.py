"""The Items screen's pickers (tui.screens.items): filter by task, by the run that got items wrong,
and by how a run failed (tui.failures' kinds, each with its count, A right / B wrong, judge ≠ human,
flags, notes). A mixin of the screen: it reads and sets the screen's `filter` and `state`."""

from __future__ import annotations

from tui.failures import KINDS
from tui.modals.picker import Choice, Picker
from tui.rows import run_label

ANY = ("any",)  # a picker's "any" entry (esc gives None)
RIGHT_WRONG = "right-wrong"  # the failure picker's "A right / B wrong" entry
CLEAR = "clear"


class ItemsPickers:
    """Picker actions of the Items screen (which has `state`, `filter`, `app`, `notify`, `run_worker`
    and `action_toggle_disagree`)."""

    def _run_choices(self, mode: str | None = None, count=None) -> list[Choice]:
        refs = self.state.refs_for_mode(mode)
        return [Choice(f"{r.display} · {r.backbone} · {r.mode}", r.index, None if count is None else count(r.index),
                       hint=r.method) for r in refs]

    def action_pick_task(self) -> None:
        st = self.state
        base = self.filter.with_(task=None)
        counts = {}
        for r in st.filtered(base.with_(sort=None)):
            counts[r.item.task] = counts.get(r.item.task, 0) + 1
        choices = [Choice("any task", ANY, sum(counts.values()))]
        choices += [Choice(t, t, counts.get(t, 0)) for t in st.tasks]
        self.app.push_screen(Picker("Filter by task", choices), self._picked_task)

    def _picked_task(self, task) -> None:
        if task is not None:
            self.filter = self.filter.with_(task=None if task is ANY else task)

    def action_pick_wrong(self) -> None:
        st = self.state
        if not st.run_refs:
            self.notify("No runs loaded.", severity="warning")
            return
        base = self.filter.with_(wrong_run=None, sort=None)
        rows = st.filtered(base)
        choices = [Choice("any run", ANY)] + self._run_choices(
            self.filter.mode, lambda i: sum(1 for r in rows if r.wrong(i)))
        self.app.push_screen(Picker("Items a run got wrong", choices), self._picked_wrong)

    def _picked_wrong(self, run) -> None:
        if run is None:
            return
        f = self.filter
        if run is ANY:
            self.filter = f.with_(wrong_run=None)
            return
        keep_run = f.run if f.run is not None and self.state.run_refs[f.run].mode == self.state.run_refs[run].mode \
            else None
        self.filter = f.with_(wrong_run=run, run=keep_run if keep_run is not None else run,
                              failures=f.failures if keep_run is not None else ())

    def action_pick_failure(self) -> None:
        """Which run failed (when the list is about none yet), then how: each kind with its count."""
        if self.filter.run is None:
            if not self.state.run_refs:
                self.notify("No runs loaded: no failures to filter by.", severity="warning")
                return
            self.app.push_screen(Picker("Failures of which run?", self._run_choices(self.filter.mode)),
                                 self._failure_run)
            return
        self._with_failures(self.filter.run, self._failure_menu)

    def _failure_run(self, run) -> None:
        if run is None:
            return
        self.filter = self.filter.with_(run=run, failures=(), right_run=None, wrong_run=None)
        self._with_failures(run, self._failure_menu)

    def _with_failures(self, run: int, then) -> None:
        """`then()` once the run's failure kinds are known: at once when computed before, else after a
        thread worker computed them (the scorer's per-item functions over every item it answered)."""
        if self.state.has_failures(run):
            then()
            return
        self.notify(f"Finding how {run_label(self.state.run_refs[run])} failed…", timeout=2)

        def work() -> None:
            self.state.failures(run)
            self.app.call_from_thread(then)

        self.run_worker(work, thread=True, group="failures", exclusive=True)

    def failure_choices(self) -> list[Choice]:
        """The failure picker's entries, each with the number of items it would leave (the current
        filter and it combined)."""
        st, f = self.state, self.filter
        shown = {r.key for r in st.filtered(f.with_(sort=None))}
        ids = {k[0] for k in shown}
        found = st.failures(f.run)
        out = []
        for kind in KINDS:
            on = kind.name in f.failures
            out.append(Choice(kind.label, ("kind", kind.name), len(shown & found[kind.name]),
                              hint="✓ on (pick again: off)" if on else ""))
        out.append(Choice(f"{st.run_refs[f.run].display} right / another run wrong", (RIGHT_WRONG, None),
                          hint="then pick the run that got it wrong"))
        disagree = sum(1 for r in st.filtered(f.with_(sort=None)) if r.disagree)
        out.append(Choice("judge ≠ human", ("disagree", None), disagree,
                          hint="" if st.store is not None else "no annotation database open"))
        flags, notes = st.flags()
        out.append(Choice("flagged (any kind)", ("flag", ""), len(ids & frozenset().union(*flags.values()))))
        for name, flagged in flags.items():
            out.append(Choice(f"flagged: {name}", ("flag", name), len(ids & flagged)))
        out.append(Choice("with a note", ("noted", None), len(ids & notes)))
        out.append(Choice("clear the failure filters", (CLEAR, None)))
        return out

    def _failure_menu(self) -> None:
        ref = self.state.run_refs[self.filter.run]
        self.app.push_screen(Picker(f"How {run_label(ref)} failed (counts: items left with this filter too)",
                                    self.failure_choices()), self._picked_failure)

    def _picked_failure(self, value) -> None:
        if value is None:
            return
        what, arg = value
        f = self.filter
        if what == "kind":
            kinds = tuple(k for k in f.failures if k != arg) if arg in f.failures else (*f.failures, arg)
            self.filter = f.with_(failures=kinds)
        elif what == RIGHT_WRONG:
            mode = self.state.run_refs[f.run].mode
            base = f.with_(right_run=f.run, wrong_run=None, sort=None)
            rows = self.state.filtered(base)
            choices = [c for c in self._run_choices(mode, lambda i: sum(1 for r in rows if r.wrong(i)))
                       if c.value != f.run]
            self.app.push_screen(Picker(f"{self.state.run_refs[f.run].display} right, and wrong by…", choices),
                                 self._picked_b)
        elif what == "disagree":
            self.action_toggle_disagree()
        elif what == "flag":
            self.filter = f.with_(flag=None if f.flag == arg else arg)
        elif what == "noted":
            self.filter = f.with_(noted=not f.noted)
        elif what == CLEAR:
            self.filter = f.with_(failures=(), right_run=None, wrong_run=None, flag=None, noted=False,
                                  disagree=False)

    def _picked_b(self, run) -> None:
        if run is None:
            return
        self.filter = self.filter.with_(right_run=self.filter.run, wrong_run=run)
