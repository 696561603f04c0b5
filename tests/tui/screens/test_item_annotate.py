"""Annotating from the Item screen outside any study, through the real app with Pilot: relabel, a
verdict on the open run, a note, a flag, undo — each in the store (study null) before the panel says
"saved", and the panel showing gold beside yours."""

from __future__ import annotations

from pathlib import Path

import pytest

from scorer.store import Store
from tests.paths import DEMO, RUNS
from tests.tui.apphelpers import SIZE, text_of
from tui.app import make_app
from tui.screens.item import ItemScreen

pytestmark = pytest.mark.usefixtures("halfcell")

KEY = ("Collectibles_Shelf_Assistant:2", "open")


async def open_item(pilot) -> ItemScreen:
    await pilot.app.push_screen(ItemScreen([KEY], KEY))
    for _ in range(100):
        await pilot.pause()
        if isinstance(pilot.app.screen, ItemScreen) and pilot.app.screen.shown_key == KEY:
            return pilot.app.screen
    raise AssertionError("the Item screen never showed the item")


@pytest.mark.needs_demo
async def test_relabel_verdict_note_flag_and_undo_from_the_item_screen(tmp_path: Path) -> None:
    db = tmp_path / "i.db"
    app = make_app(DEMO, [RUNS], db=db, annotator="adj")
    async with app.run_test(size=SIZE) as pilot:
        screen = await open_item(pilot)
        panel = lambda: text_of(screen, "#annotation-summary")
        assert "gold X3 · Y2" in panel() and "your verdicts  none" in panel()
        await pilot.press("l", "3", "2", "enter")  # gold X3·Y2 preselected: toggle X3 off, X2 on
        await pilot.pause()
        assert "✓ saved Collectibles_Shelf_Assistant:2 · labels X2 · Y2" in panel() and "adj X2 · Y2" in panel()
        run = screen.active_panel().ref
        await pilot.press("v", "r")
        await pilot.pause()
        assert f"{run.display} reject" in panel()
        await pilot.press("N", *"[b]odd[/b]", "enter")
        await pilot.pause()
        assert "last note: [b]odd[/b]" in panel() and "your notes  “[b]odd[/b]”" in panel()
        await pilot.press("f", "3", *"blurred", "enter")
        await pilot.pause()
        assert "flags 1 (bad_media)" in panel() and "your flags  bad_media — “blurred”" in panel()
        with Store(db) as store:
            (label,) = store.labels()
            (verdict,) = store.verdicts()
            assert (label["x"], label["y"], label["study"], label["mode"]) == (["X2"], ["Y2"], None, None)
            assert (verdict["run_key"], verdict["mode"], verdict["verdict"]) == (run.key, "open", "reject")
        await pilot.press("u")  # the flag: named exactly
        await pilot.pause()
        assert "↶ undone flag bad_media — “blurred” · Collectibles_Shelf_Assistant:2 (event " in panel()
        await pilot.press("u")  # then the note
        await pilot.pause()
        assert "notes 0 · flags 0" in panel() and "↶ undone note “[b]odd[/b]” · Collectibles_Shelf_Assistant:2" in panel()
        row = screen.state.row(KEY)
        assert row is not None and row.annotated  # the Items table knows the item is annotated
    with Store(db) as store:
        assert [e.kind for e in store.events(live_only=True)] == ["label", "verdict"]
        assert all(e.study is None for e in store.events())
