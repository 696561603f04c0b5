"""The app driven with Pilot through every screen and key, on the shipped demo (and its annotations
in a temp database): Overview, Items and its filters, Item and its keys, side by side, export, the
jump to Session, Scores, help, the command palette and the status line."""

from __future__ import annotations

import pytest
from textual.widgets import DataTable, Tab, Tabs

from scorer.counts import benchmark_counts
from scorer.model import X_LABELS, Y_LABELS
from tests.paths import DEMO
from tests.tui.apphelpers import SIZE, demo_app, demo_db, screen_text, settle
from tui.screens.compare import CompareScreen
from tui.screens.help import HelpScreen
from tui.screens.item import ItemScreen
from tui.screens.items import ItemsScreen
from tui.screens.overview import OverviewScreen
from tui.screens.scores import ScoresScreen
from tui.screens.session import SessionScreen
from tui.rows import Filter
from tui.widgets.clues import ClueChain
from tui.widgets.run_panel import RunPanel

pytestmark = pytest.mark.needs_demo
Y3_ITEM = ("Collectibles_Shelf_Assistant:6", "mcq")  # Y3, two clues, SRAG runs with retrieval logs


async def open_item(pilot, key) -> ItemScreen:
    """Items screen → cursor on `key` → Enter."""
    app = pilot.app
    await pilot.press("2")
    await settle(pilot)
    items = app.screen
    items.query_one(DataTable).move_cursor(row=items.keys.index(key), animate=False)
    await pilot.press("enter")
    await settle(pilot)
    assert isinstance(app.screen, ItemScreen) and app.screen.shown_key == key
    return app.screen


async def test_overview_counts_and_status_line(tmp_path):
    app = demo_app(tmp_path, db=demo_db(tmp_path), annotator="ann1")
    async with app.run_test(size=SIZE) as pilot:
        await settle(pilot)
        assert isinstance(app.screen, OverviewScreen)
        text = screen_text(app)
        counts = benchmark_counts(app.state.bench, app.state.runs)
        for t in app.state.bench.tasks:
            assert t.name in text
        row_y3 = next(line for line in text.splitlines() if line.strip().startswith("│ Y3"))
        assert [int(v) for v in row_y3.replace("│", " ").split()[1:5]] == [counts["cells"][f"{x}_Y3"] for x in X_LABELS]
        assert "FC(V)" in text and "qwen3-vl-8b" in text  # runs loaded, backbone × method
        prog = app.state.annotation_progress()
        assert f"{prog['items_annotated']}/{prog['items_total']}" in text and prog["items_annotated"] > 0
        status = text.splitlines()[0]
        assert "Overview" in status and "annotator ann1" in status and "demo.db: saved" in status


async def test_items_filters_each_key(tmp_path):
    app = demo_app(tmp_path, db=demo_db(tmp_path))
    async with app.run_test(size=SIZE) as pilot:
        await pilot.press("2")
        await settle(pilot)
        items = app.screen
        assert isinstance(items, ItemsScreen)
        table = items.query_one(DataTable)
        st = app.state
        assert table.row_count == len(st.rows) == len(items.keys)

        async def check(keys, expected: Filter):
            await pilot.press(*keys)
            await settle(pilot)
            assert items.filter == expected
            want = [r.key for r in st.filtered(expected)]
            assert items.keys == want and table.row_count == len(want)
            assert f"{len(want)} of {len(st.rows)} items" in screen_text(app)

        await check(["t", "enter"], Filter())  # the task picker: its first entry is "any task"
        await check(["t", *st.tasks[0], "enter"], Filter(task=st.tasks[0]))
        await check(["backspace", "x", "x"], Filter(x=X_LABELS[1]))  # keys: tui/keymap.py
        await check(["backspace", "y", "y", "y"], Filter(y=Y_LABELS[2]))
        await check(["M"], Filter(y="Y3", mode="mcq"))
        await check(["backspace", "A", "A"], Filter(answerable=False))
        ref = st.run_refs[0]  # the run picker: typed words narrow it
        await check(["backspace", "w", *f"{ref.display} {ref.backbone} {ref.mode}", "enter"],
                    Filter(wrong_run=ref.index, run=ref.index))
        await check(["backspace", "h"], Filter(annotated=True))
        await check(["h"], Filter(annotated=False))
        await check(["backspace", "j"], Filter(disagree=True))
        assert items.keys, "the demo's annotations disagree with the judge somewhere"
        for key in items.keys:  # each shown row really has a human verdict the judge contradicts
            verdicts = [v for v in st.store.verdicts() if (v["item_id"], v["mode"]) == key
                        and v["verdict"] in ("accept", "reject")]
            preds = {ref.key: p for ref, p in st.predictions(st.bench.item(*key))}
            assert any(preds[v["run_key"]].judge is not None and
                       (preds[v["run_key"]].judge >= 0.5) != (v["verdict"] == "accept") for v in verdicts)
        # search: typing waits for a pause, Enter applies at once, Escape clears
        await pilot.press("backspace", "slash", *"bookcase")
        await pilot.press("enter")
        await settle(pilot)
        assert items.filter == Filter(text="bookcase") and items.keys
        assert all("bookcase" in st.row(k).search for k in items.keys)
        await pilot.press("slash", "escape")
        await settle(pilot)
        assert items.filter == Filter() and table.row_count == len(st.rows)


async def test_items_filter_keeps_the_cursor_row(tmp_path):
    app = demo_app(tmp_path)
    async with app.run_test(size=SIZE) as pilot:
        await pilot.press("2")
        await settle(pilot)
        items = app.screen
        target = [r.key for r in app.state.rows if r.item.y == {"Y1"} and r.item.mode == "open"][3]
        before = items.keys.index(target)
        items.query_one(DataTable).move_cursor(row=before)
        await pilot.press("y")  # Y1: the row stays, at another position
        await settle(pilot)
        assert items.filter == Filter(y="Y1")
        assert items.keys.index(target) != before and items.current_key() == target


async def test_item_screen_keys(tmp_path):
    app = demo_app(tmp_path)
    async with app.run_test(size=SIZE) as pilot:
        item = await open_item(pilot, Y3_ITEM)
        text = screen_text(app)
        assert "★ latest" in text and "⟲ stale" in text and "Which cat figurine" in text
        tabs = item.query_one("#runs", Tabs)
        first = tabs.active
        # ] / [ switch runs; the one panel is refilled for that run
        await pilot.press("right_square_bracket")
        await settle(pilot)
        panel = item.active_panel()
        assert tabs.active != first and panel.shown[0] == Y3_ITEM[0]
        assert item._chosen[tabs.active][0] is panel.ref and len(item.query(RunPanel)) == 1
        await pilot.press("left_square_bracket")
        await settle(pilot)
        assert tabs.active == first
        # to SRAG(V): its retrieved list carries the marks; e switches to the delivered list
        srag = next(tid for tid in item._tab_ids if item._chosen[tid][0].display == "SRAG(V)")
        while tabs.active != srag:
            await pilot.press("right_square_bracket")
        await settle(pilot)
        text = screen_text(app)
        assert "retrieved (ranked" in text and "✓ gold ★ latest" in text and "⟲ stale" in text
        await pilot.press("e")
        await settle(pilot)
        assert "delivered to the reader" in screen_text(app) and item.active_panel().view == "delivered"
        await pilot.press("e")
        await settle(pilot)
        assert item.active_panel().view == "retrieved"
        # B: the other backbone's runs
        before = item.backbone
        await pilot.press("B")
        await settle(pilot)
        tabs = item.query_one("#runs", Tabs)  # a new tab bar for the other backbone's runs
        assert item.backbone != before and item.active_panel().ref.backbone == item.backbone
        assert all(item._chosen[t.id][0].backbone == item.backbone for t in tabs.query(Tab))
        # o: the next MCQ rotation
        await pilot.press("o")
        await settle(pilot)
        assert item.rotation == 1 and "rotation 2/4" in screen_text(app)
        # c / C move the clue cursor; it starts on the latest clue of a Y3 item
        chain = item.query_one(ClueChain)
        assert chain.selected.round_id == "D3:1"
        await pilot.press("c")
        assert chain.selected.round_id == "D2:1"
        await pilot.press("C")
        assert chain.selected.round_id == "D3:1"
        # n / p step through the list the screen was opened from
        i = item.keys.index(Y3_ITEM)
        await pilot.press("n")
        await settle(pilot)
        assert item.shown_key == item.keys[i + 1]
        await pilot.press("p")
        await settle(pilot)
        assert item.shown_key == Y3_ITEM
        await pilot.press("escape")
        await settle(pilot)
        assert isinstance(app.screen, ItemsScreen)


async def test_goto_clue_round_opens_session_and_comes_back(tmp_path):
    app = demo_app(tmp_path)
    async with app.run_test(size=SIZE) as pilot:
        item = await open_item(pilot, Y3_ITEM)
        await pilot.press("c")  # the stale clue D2:1
        await pilot.press("g")
        await settle(pilot)
        session = app.screen
        assert isinstance(session, SessionScreen) and session.current.round_id == "D2:1"
        assert "D2:1" in screen_text(app)
        await pilot.press("escape")
        await settle(pilot)
        assert app.screen is item


async def test_side_by_side_shows_captions_for_the_text_run(tmp_path):
    app = demo_app(tmp_path)
    async with app.run_test(size=SIZE) as pilot:
        await open_item(pilot, Y3_ITEM)
        await pilot.press("S")
        await settle(pilot)
        cmp = app.screen
        assert isinstance(cmp, CompareScreen)
        refs = {r.index: r for r in app.state.run_refs}
        left, right = (refs[i] for i in cmp.sides)
        assert (left.display, right.display) == ("FC(V)", "FC(T)")
        right_side = cmp.query_one("#cmp-side-1")
        assert right_side.query(".clue-caption") and not right_side.query(".thumb")  # captions, no images
        assert cmp.query_one("#cmp-side-0").query(".thumb")
        await pilot.press("W")
        await settle(pilot)
        assert [refs[i].display for i in cmp.sides] == ["FC(T)", "FC(V)"]
        await pilot.press("less_than_sign")
        await settle(pilot)
        assert refs[cmp.sides[0]].display != "FC(T)"
        await pilot.press("greater_than_sign")
        await settle(pilot)
        await pilot.press("escape")
        assert isinstance(app.screen, ItemScreen)


async def test_export_case_card_writes_files_and_says_where(tmp_path):
    app = demo_app(tmp_path)
    async with app.run_test(size=SIZE) as pilot:
        await open_item(pilot, Y3_ITEM)
        await pilot.press("E")
        await settle(pilot)
        folder = tmp_path / "exports" / "Collectibles_Shelf_Assistant_6_mcq"
        assert (folder / "case.md").is_file() and (folder / "case.tex").is_file()
        assert len(list((folder / "img").glob("*"))) == 2
        assert str((folder / "case.md").resolve()) in "".join(n.message for n in app._notifications)


async def test_scores_screen_shows_the_scorer_matrices(tmp_path):
    from scorer.scoring import score

    app = demo_app(tmp_path)
    app.state.score_resamples = 200  # the bootstrap sections' CIs are not what this test checks
    async with app.run_test(size=SIZE) as pilot:
        await pilot.press("3")
        await settle(pilot)
        assert isinstance(app.screen, ScoresScreen)
        text = screen_text(app)
        assert "EM (MCQ, mean over rotations)" in text and "FC(T)" in text
        # the first cell shown is the scorer's own value for it (no second implementation)
        report = score(DEMO, [DEMO / "runs"], sections=["matrix"])
        row = next(r for r in report.section("matrix").data if r["backbone"] == "gpt-5.4-mini"
                   and r["display"] == "FC(T)" and r["agg"] == "cell" and r["x"] == "X1" and r["y"] == "Y1"
                   and r["metric"] == "em")
        line = next(line for line in text.splitlines() if line.split()[:3] == ["Y1", "X1", "EM"])
        assert f"{row['value']:.4f}" in line
        tables = len(app.screen.query(".score-table"))
        await pilot.press("R")
        await settle(pilot)
        assert len(app.screen.query(".score-table")) == tables


@pytest.mark.parametrize("mode", ["1", "2", "3"])
async def test_help_lists_the_screen_keys(tmp_path, mode):
    app = demo_app(tmp_path)
    app.state.score_resamples = 50  # the Scores screen computes in the background meanwhile
    async with app.run_test(size=(120, 70)) as pilot:  # tall enough to show the whole help
        await pilot.press(mode)
        await settle(pilot)
        under = app.screen
        await pilot.press("question_mark")
        await settle(pilot)
        assert isinstance(app.screen, HelpScreen)
        text = screen_text(app)
        for b in type(under).__dict__.get("BINDINGS", []):
            if b.description:
                assert b.description in text
        assert "stale" in text and "half-cell" in text
        await pilot.press("escape")
        assert app.screen is under


async def test_command_palette_runs_a_screen_key(tmp_path):
    app = demo_app(tmp_path)
    async with app.run_test(size=SIZE) as pilot:
        await open_item(pilot, Y3_ITEM)
        await pilot.press("ctrl+p")
        await settle(pilot)
        await pilot.press(*"side by side")
        await settle(pilot)
        assert "Side by side" in screen_text(app)
        await pilot.press("enter")
        await settle(pilot)
        assert isinstance(app.screen, CompareScreen)


async def test_key_bar_lists_the_screen_keys(tmp_path):
    app = demo_app(tmp_path)
    async with app.run_test(size=SIZE) as pilot:
        await open_item(pilot, Y3_ITEM)
        bar = "\n".join(screen_text(app).splitlines()[-3:])
        for word in ("esc Back", "n Next", "] Next run", "e Retr/Deliv", "g Go to round", "E Export card"):
            assert word in bar


def test_bad_benchmark_is_one_line_not_a_traceback(tmp_path, capsys):
    from tui.cli import main

    assert main(["tui", str(tmp_path / "nowhere")]) == 2
    err = capsys.readouterr().err.strip().splitlines()
    assert len(err) == 1 and "nowhere" in err[0]
