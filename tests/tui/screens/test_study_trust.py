"""Studies an annotator can trust, driven through the real app on the demo with real keys: a choice
made and not saved is never dropped without a word (moving on, leaving, quitting ask first), a key
pressed again says "already saved", coming back to an entry shows every act made there (read from
the store), and `u` names exactly the act it undoes."""

from __future__ import annotations

from pathlib import Path

import pytest
from textual import events

from scorer.store import Store
from tests.tui.apphelpers import SIZE, new_study, saved_line, screen_text, study_app, text_of, wait_ready
from tui.modals.note import NoteDialog
from tui.modals.pending import PendingDialog

pytestmark = [pytest.mark.usefixtures("halfcell"), pytest.mark.needs_demo]


def stored(db: Path, kind: str, study: str) -> list[dict]:
    with Store(db) as store:
        return store.current(kind, study=study)


def n_events(db: Path) -> int:
    with Store(db) as store:
        return store.count()


async def until(pilot, cond, limit: int = 200) -> None:
    for _ in range(limit):
        if cond():
            return
        await pilot.pause()
    raise AssertionError("the app never got there")


async def test_unsaved_labels_on_next_ask_save_discard_or_stay(tmp_path: Path) -> None:
    db = tmp_path / "l.db"
    new_study(db, "labels", "lab", "1")
    app = study_app(db, "lab", "ann1", runs=False)
    async with app.run_test(size=SIZE) as pilot:
        screen = await wait_ready(pilot)
        first = screen.session.entry
        await pilot.press("3", "6")  # X3, Y2: chosen, not saved
        assert "not saved — enter saves; moving on, leaving or quitting asks first" in text_of(screen, "#lab-selection")
        await pilot.press("n")  # the next entry
        await until(pilot, lambda: isinstance(app.screen, PendingDialog))
        assert "your choice: labels X3 · Y2" in screen_text(app) and "enter save it and go on" in screen_text(app)
        await pilot.press("escape")  # stay
        await until(pilot, lambda: app.screen is screen)
        assert screen.session.entry == first and (screen.sel_x, screen.sel_y) == ({"X3"}, {"Y2"})
        assert stored(db, "label", "lab") == []
        await pilot.press("n")
        await until(pilot, lambda: isinstance(app.screen, PendingDialog))
        await pilot.press("enter")  # save it and go on
        screen = await wait_ready(pilot)
        await until(pilot, lambda: screen.session.pos == 1)
        (row,) = stored(db, "label", "lab")
        assert (row["item_id"], row["x"], row["y"]) == (first.item_id, ["X3"], ["Y2"])
        assert saved_line(screen).startswith(f"✓ saved {first.blind_id}")
        second = screen.session.entry
        assert second != first
        await pilot.press("1", "5")
        await pilot.press("p")  # back: asks too
        await until(pilot, lambda: isinstance(app.screen, PendingDialog))
        await pilot.press("d")  # discard it and go on
        await until(pilot, lambda: app.screen is screen and screen.session.pos == 0)
        assert saved_line(screen).startswith(f"✗ discarded (not saved) labels X1 · Y1 on {second.blind_id}")
        assert [r["item_id"] for r in stored(db, "label", "lab")] == [first.item_id]
        await pilot.press("n")  # nothing pending on the answered entry: no question
        await until(pilot, lambda: screen.session.pos == 1)
        assert app.screen is screen and (screen.sel_x, screen.sel_y) == (set(), set())


@pytest.mark.parametrize("choice", ["save", "discard"])
async def test_quitting_with_unsaved_labels_asks_first(tmp_path: Path, choice: str) -> None:
    db = tmp_path / "q.db"
    new_study(db, "labels", "lab", "1")
    app = study_app(db, "lab", "ann1", runs=False)
    async with app.run_test(size=SIZE) as pilot:
        screen = await wait_ready(pilot)
        first = screen.session.entry
        await pilot.press("2", "7")
        await pilot.press("q")
        await until(pilot, lambda: isinstance(app.screen, PendingDialog))
        assert "before quitting" in screen_text(app)
        await pilot.press("escape")  # stay: still running, still chosen
        await until(pilot, lambda: app.screen is screen)
        assert app.return_code is None and screen.pending() is not None
        await pilot.press("q")
        await until(pilot, lambda: isinstance(app.screen, PendingDialog))
        await pilot.press("enter" if choice == "save" else "d")
        await until(pilot, lambda: app.return_code is not None)
    rows = stored(db, "label", "lab")
    if choice == "save":
        assert [(r["item_id"], r["x"], r["y"]) for r in rows] == [(first.item_id, ["X2"], ["Y3"])]
    else:
        assert rows == []


async def test_an_incomplete_choice_cannot_be_saved_on_the_way_out(tmp_path: Path) -> None:
    db = tmp_path / "i.db"
    new_study(db, "labels", "lab", "1")
    app = study_app(db, "lab", "ann1", runs=False)
    async with app.run_test(size=SIZE) as pilot:
        screen = await wait_ready(pilot)
        await pilot.press("4")  # X4 only: no Y yet
        await pilot.press("escape")  # leave the study: asks
        await until(pilot, lambda: isinstance(app.screen, PendingDialog))
        assert "incomplete: it cannot be saved as it is" in screen_text(app)
        await pilot.press("enter")  # refused, the question stays
        await pilot.pause()
        assert isinstance(app.screen, PendingDialog)
        await pilot.press("escape")
        await until(pilot, lambda: app.screen is screen)
        assert screen.sel_x == {"X4"} and stored(db, "label", "lab") == []


async def test_a_typed_oracle_answer_is_not_dropped_on_next(tmp_path: Path) -> None:
    db = tmp_path / "o.db"
    new_study(db, "oracle", "ora", "1", "--mode", "open")
    app = study_app(db, "ora", "ann1", runs=False)
    async with app.run_test(size=SIZE) as pilot:
        screen = await wait_ready(pilot)
        await pilot.press("i", *"blue mug", "escape")  # typed, left the box, not saved
        await pilot.press("n")
        await until(pilot, lambda: isinstance(app.screen, PendingDialog))
        assert "typed answer “blue mug”" in screen_text(app)
        first = screen.session.entry
        await pilot.press("enter")
        screen = await wait_ready(pilot)
        await until(pilot, lambda: screen.session.entry != first)
        assert [(r["item_id"], r["answer"]) for r in stored(db, "oracle", "ora")] == [(first.item_id, "blue mug")]


async def test_the_same_key_twice_says_already_saved(tmp_path: Path) -> None:
    db = tmp_path / "a.db"
    new_study(db, "agreement", "agr", "1", "--backbone", "gpt-5.4-mini", runs=True)
    app = study_app(db, "agr", "ann1")
    async with app.run_test(size=SIZE) as pilot:
        screen = await wait_ready(pilot)
        first = screen.session.entry
        before = n_events(db)
        # both keys in one read from the terminal, as a quick double press arrives: the second one
        # is handled before the next entry is painted
        app.post_message(events.Key("a", "a"))
        app.post_message(events.Key("a", "a"))
        await until(pilot, lambda: "already" in saved_line(screen))
        assert saved_line(screen).startswith(f"✓ already saved {first.blind_id} (entry {first.position}) · accept")
        assert "that key was not taken" in saved_line(screen)
        screen = await wait_ready(pilot)
        assert n_events(db) == before + 1 and screen.session.n_done == 1
        await pilot.press("p")  # back to the answered entry: the same answer again writes nothing
        await until(pilot, lambda: screen.session.entry == first)
        await wait_ready(pilot)
        assert "verdict accept" in text_of(screen, "#study-trace")
        await pilot.press("a")
        await pilot.pause()
        assert saved_line(screen).startswith(f"✓ already saved {first.blind_id} (entry {first.position}) · accept")
        assert "unchanged, nothing written" in saved_line(screen)
        assert n_events(db) == before + 1


async def test_the_whole_trace_on_return_and_undo_names_the_act(tmp_path: Path) -> None:
    db = tmp_path / "t.db"
    new_study(db, "labels", "lab", "1")
    app = study_app(db, "lab", "ann1", runs=False)
    async with app.run_test(size=SIZE) as pilot:
        screen = await wait_ready(pilot)
        first = screen.session.entry
        where = f"{first.blind_id} (entry {first.position})"
        assert not screen.query_one("#study-trace").display  # nothing done here yet
        await pilot.press("N")
        await until(pilot, lambda: isinstance(app.screen, NoteDialog))
        await pilot.press(*"two readings", "enter")
        await until(pilot, lambda: app.screen is screen)
        await pilot.press("f", "1", *"unclear", "enter")  # ambiguous, with its reason
        await until(pilot, lambda: "flag" in saved_line(screen))
        await pilot.press("3", "6", "enter")
        screen = await wait_ready(pilot)
        await until(pilot, lambda: screen.session.entry != first)
        # away and back: every act made there, from the store
        await pilot.press("p")
        await until(pilot, lambda: screen.session.entry == first)
        trace = text_of(screen, "#study-trace")
        for act in ("note “two readings”", "flag ambiguous — “unclear”", "labels X3 · Y2"):
            assert act in trace, trace
        assert trace.index("note") < trace.index("flag") < trace.index("labels")  # in the order made
        # a flag made here, then away: u goes back to it and names it exactly
        await pilot.press("n")
        await until(pilot, lambda: screen.session.entry != first)
        await pilot.press("u")  # the last act: the labels
        await until(pilot, lambda: saved_line(screen).startswith("↶"))
        assert screen.session.entry == first
        line = saved_line(screen)
        assert line.startswith(f"↶ undone labels X3 · Y2 on {where} (event "), line
        await pilot.press("u")
        await until(pilot, lambda: "flag" in saved_line(screen))
        assert saved_line(screen).startswith(f"↶ undone flag ambiguous — “unclear” on {where} (event ")
        assert "flag flag" not in saved_line(screen)
        trace = text_of(screen, "#study-trace")
        assert "note “two readings”" in trace and "flag" not in trace and "labels" not in trace
    assert stored(db, "label", "lab") == [] and stored(db, "flag", "lab") == []
    assert [r["text"] for r in stored(db, "note", "lab")] == ["two readings"]


async def test_undo_with_unsaved_labels_asks_and_undoes_the_act_it_was_pressed_for(tmp_path: Path) -> None:
    db = tmp_path / "u.db"
    new_study(db, "labels", "lab", "1")
    app = study_app(db, "lab", "ann1", runs=False)
    async with app.run_test(size=SIZE) as pilot:
        screen = await wait_ready(pilot)
        first = screen.session.entry
        await pilot.press("1", "5", "enter")  # entry 1 saved
        screen = await wait_ready(pilot)
        await until(pilot, lambda: screen.session.entry != first)
        second = screen.session.entry
        await pilot.press("2", "6")  # chosen on entry 2, not saved
        await pilot.press("u")
        await until(pilot, lambda: isinstance(app.screen, PendingDialog))
        assert "before undoing your last act" in screen_text(app)
        await pilot.press("enter")  # save entry 2's labels, then undo what u was pressed for: entry 1's
        await until(pilot, lambda: saved_line(screen).startswith("↶"))
        assert saved_line(screen).startswith(f"↶ undone labels X1 · Y1 on {first.blind_id} (entry {first.position})")
        assert [(r["item_id"], r["x"], r["y"]) for r in stored(db, "label", "lab")] == [(second.item_id, ["X2"], ["Y2"])]
