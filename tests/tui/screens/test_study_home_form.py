"""The Study screen (issue 16 points 5 and 6): the form (ctrl+n) makes a study of any kind through
the CLI's own function — the same entries as `memscope study new` with the same options — and shows
a refusal in the form; the list shows each annotator's progress, their pairwise agreement and, on a
scripted agreement study, κ so far with its CI and n and the pairs to go to the planned width."""

from __future__ import annotations

from pathlib import Path

import pytest
from textual.widgets import Input, OptionList, Select

from scorer.store import Store
from tests.paths import DEMO, RUNS
from tui.app import make_app
from tui.cli import main
from tui.modals.study_form import StudyForm
from tui.screens.study_home import StudyHomeScreen

pytestmark = [pytest.mark.needs_demo, pytest.mark.usefixtures("halfcell")]


async def _home(app, pilot) -> StudyHomeScreen:
    while not isinstance(app.screen, StudyHomeScreen):
        await pilot.pause()
    return app.screen


async def _fill(app, pilot, values: dict) -> StudyForm:
    await pilot.press("ctrl+n")
    while not isinstance(app.screen, StudyForm):
        await pilot.pause()
    form = app.screen
    form.query_one("#form-kind", Select).value = values.pop("kind")
    await pilot.pause()
    for field, value in values.items():
        widget = form.query_one(f"#form-{field}")
        widget.value = value
    await pilot.pause()
    return form


def _entries(db: Path, name: str) -> list[tuple]:
    with Store(db) as store:
        st = store.study(name)
        return [(st.kind, st.seed, st.params.get("of"))] + [
            (i.position, i.item_id, i.mode, i.run_key, i.stratum) for i in store.study_items(name)]


CASES = [
    ({"kind": "adjudicate", "name": "adj", "of": "verdicts", "include_judge": True},
     ["--kind", "adjudicate", "--of", "verdicts", "--include-judge", "--name", "adj"], True),
    ({"kind": "labels", "name": "lab", "per_cell": "1-2", "seed": "7"},
     ["--kind", "labels", "--per-cell", "1-2", "--seed", "7", "--name", "lab"], False),
    ({"kind": "agreement", "name": "ag", "per_cell": "1", "backbone": "gpt-5.4-mini", "half_width": "0.1"},
     ["--kind", "agreement", "--per-cell", "1", "--backbone", "gpt-5.4-mini", "--half-width", "0.1", "--name", "ag"],
     True),
    ({"kind": "oracle", "name": "or", "per_cell": "2"}, ["--kind", "oracle", "--per-cell", "2", "--name", "or"], False),
]


@pytest.mark.parametrize(("form_values", "argv", "runs"), CASES)
async def test_the_form_makes_what_the_cli_makes(tmp_path: Path, form_values: dict, argv: list[str], runs: bool) -> None:
    by_cli, by_form = tmp_path / "cli.db", tmp_path / "form.db"
    for db in (by_cli, by_form):
        assert main(["annotations", "import", str(DEMO / "annotations.jsonl"), "--db", str(db)]) == 0
    assert main(["study", "new", *argv, "--db", str(by_cli), str(DEMO), *(["--runs", str(RUNS)] if runs else [])]) == 0
    name = form_values["name"]
    app = make_app(DEMO, [RUNS], db=by_form, annotator="ann1", start="study")
    async with app.run_test(size=(140, 50)) as pilot:
        home = await _home(app, pilot)
        form = await _fill(app, pilot, dict(form_values))
        form.query_one("#form-name", Input).focus()
        await pilot.press("enter")
        for _ in range(200):
            if not isinstance(app.screen, StudyForm):
                break
            await pilot.pause()
        assert not isinstance(app.screen, StudyForm), str(form.query_one("#form-error").content)
        assert name in home.names
        assert f"study {name!r}" in str(home.query_one("#studies-hint").content)
    assert _entries(by_form, name) == _entries(by_cli, name)


async def test_the_form_shows_a_refusal_and_stays_open(tmp_path: Path) -> None:
    db = tmp_path / "f.db"
    Store(db).close()
    app = make_app(DEMO, [RUNS], db=db, annotator="ann1", start="study")
    async with app.run_test(size=(140, 50)) as pilot:
        await _home(app, pilot)
        form = await _fill(app, pilot, {"kind": "agreement", "name": "x", "per_cell": "1"})
        assert not form.query_one("#row-of").display and form.query_one("#row-methods").display
        form.submit()
        await pilot.pause()
        assert isinstance(app.screen, StudyForm)
        error = str(form.query_one("#form-error").content)
        assert "not made" in error and "--backbone" in error  # the demo's methods ran on two backbones
        form.query_one("#form-kind", Select).value = "adjudicate"
        await pilot.pause()
        assert form.query_one("#row-of").display and not form.query_one("#row-per_cell").display
        form.submit()
        await pilot.pause()
        assert "needs --of" in str(form.query_one("#form-error").content)
    with Store(db) as store:
        assert store.studies() == []


async def test_the_list_shows_progress_agreement_and_kappa_so_far(tmp_path: Path) -> None:
    db = tmp_path / "s.db"
    store = Store(db)
    entries = [(f"T:{i}", "open", "bb/m", "X1_Y1") for i in range(40)]
    judge = [1.0 if i % 3 else 0.0 for i in range(40)]
    store.create_study("ag", "agreement", 7, {"judge_scores": judge, "plan": {"half_width": 0.2}}, entries)
    for ann in ("ann1", "ann2"):
        store.annotator_queue("ag", ann)
    for i, (item, mode, run, _) in enumerate(entries[:12]):
        j = "accept" if judge[i] >= 0.5 else "reject"
        store.verdict("ann1", item, mode, run, "reject" if i == 4 else j, study="ag")
        store.verdict("ann2", item, mode, run, j, study="ag")
    from scorer.store.status import status_lines, study_status

    expected = status_lines(study_status(store, "ag"))
    store.close()
    app = make_app(DEMO, [RUNS], db=db, annotator="ann1", start="study")
    async with app.run_test(size=(160, 50)) as pilot:
        home = await _home(app, pilot)
        shown = str(home.query_one("#studies", OptionList).get_option_at_index(0).prompt)
    assert "12/40 done by you" in shown
    for line in expected:  # the same words as `memscope study list`
        assert line in shown, line
    assert "ann2: 12/40 (30%)" in shown and "agreement ann1 vs ann2 on verdict" in shown
    assert "κ so far, judge vs ann1" in shown and "more pairs to ± 0.2" in shown
