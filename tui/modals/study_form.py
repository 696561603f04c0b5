"""A new study of any kind, from the Study screen: the options of `memscope study new`, drawn from the
one list of them (scorer.store.builder.OPTIONS) with the same defaults, shown for the kind chosen.
Enter in a field (or the Create button) makes the study through the function the screen passes in
(the CLI's own, scorer.store.builder.make_study); a refusal is shown in the form, which stays open.
Returns the lines that describe the study made, or None (esc)."""

from __future__ import annotations

from collections.abc import Callable

from rich.text import Text
from textual.app import ComposeResult
from textual.containers import Horizontal, Vertical, VerticalScroll
from textual.widgets import Button, Checkbox, Input, Label, Select, Static

from scorer.errors import UserError
from scorer.store.builder import OPTIONS, StudySpec, check_spec, spec_from
from scorer.store.queues import STUDY_KINDS
from tui.modals.dialog import Dialog

_CSS = """
StudyForm > Vertical { width: 96; max-height: 90%; }
StudyForm VerticalScroll { height: auto; max-height: 30; }
StudyForm .form-row, StudyForm .form-opt { height: auto; }
StudyForm .form-row > Label { width: 20; padding-top: 1; }
StudyForm .form-row > Input, StudyForm .form-row > Select { width: 1fr; }
StudyForm .form-help { color: $text-muted; padding-left: 20; height: auto; }
StudyForm #form-error { color: $error; height: auto; }
"""


class StudyForm(Dialog[list[str]]):
    DEFAULT_CSS = Dialog.DEFAULT_CSS + _CSS

    def __init__(self, make: Callable[[StudySpec], list[str]], kind: str = "agreement") -> None:
        super().__init__()
        self.make = make
        self.kind = kind

    def compose(self) -> ComposeResult:
        with Vertical():
            yield Static(Text("New study (the options of `memscope study new`)"), classes="dialog-title")
            with VerticalScroll():
                with Horizontal(classes="form-row"):
                    yield Label("--kind")
                    yield Select([(k, k) for k in STUDY_KINDS], value=self.kind, allow_blank=False, id="form-kind")
                with Horizontal(classes="form-row"):
                    yield Label("--name")
                    yield Input(placeholder="the study's name in the database", id="form-name")
                for opt in OPTIONS:
                    with Vertical(classes=f"form-opt form-opt-{opt.field}", id=f"row-{opt.field}"):
                        with Horizontal(classes="form-row"):
                            yield Label(opt.flag)
                            if opt.switch:
                                yield Checkbox(value=bool(opt.default), id=f"form-{opt.field}")
                            elif opt.choices:
                                yield Select([(c, c) for c in opt.choices], allow_blank=True,
                                             prompt="default", id=f"form-{opt.field}")
                            else:
                                shown = "" if opt.default is None else str(opt.default)
                                yield Input(value=shown, placeholder="default" if opt.field not in
                                            {o.field for o in OPTIONS if o.required} else "required",
                                            id=f"form-{opt.field}")
                        yield Static(Text(opt.help), classes="form-help")
            yield Static(id="form-error")
            yield Button("Create", id="form-create", variant="primary")
            yield Static(Text("enter in a field or Create makes the study · esc cancels"), classes="dialog-hint")

    def on_mount(self) -> None:
        self._show_kind()
        self.query_one("#form-name", Input).focus()

    def on_select_changed(self, event: Select.Changed) -> None:
        if event.select.id == "form-kind":
            self.kind = str(event.value)
            self._show_kind()

    def _show_kind(self) -> None:
        for opt in OPTIONS:
            self.query_one(f"#row-{opt.field}").display = self.kind in opt.kinds

    def values(self) -> dict:
        """What the form says, as named values (empty = the default); only the kind's own options."""
        out: dict = {"kind": self.kind, "name": self.query_one("#form-name", Input).value}
        for opt in OPTIONS:
            if self.kind not in opt.kinds:
                continue
            widget = self.query_one(f"#form-{opt.field}")
            if isinstance(widget, Checkbox):
                out[opt.field] = widget.value
            elif isinstance(widget, Select):
                out[opt.field] = widget.value if isinstance(widget.value, str) else None  # blank: the default
            else:
                out[opt.field] = widget.value
        return out

    def on_input_submitted(self, event: Input.Submitted) -> None:
        event.stop()
        self.submit()

    def on_button_pressed(self, event: Button.Pressed) -> None:
        event.stop()
        self.submit()

    def submit(self) -> None:
        error = self.query_one("#form-error", Static)
        try:
            spec = check_spec(spec_from(self.values()))
            lines = self.make(spec)
        except UserError as err:
            error.update(Text(f"✗ not made: {err}"))
            return
        self.dismiss(lines)
