"""At 80×24 (issue 15 point 3), on the demo: the Item screen's run tabs are whole and unambiguous
(no tab cut at an edge, so "SRAG(V) budget" never reads "SRAG(V)"; the active one always shown), and
the Items table keeps a readable question column on screen."""

from __future__ import annotations

import pytest
from textual.widgets import DataTable, Tab, Tabs

from tests.tui.apphelpers import demo_app, screen_lines, settle
from tui.screens.item import ItemScreen
from tui.widgets.run_tabs import unique_labels, window

pytestmark = pytest.mark.needs_demo
SMALL = (80, 24)


def visible_tabs(app, tabs) -> list[tuple[str, bool]]:
    """Each tab at least partly on screen: (the text the terminal shows of it, whether all of it)."""
    lines = screen_lines(app)
    clip = app.screen.region.intersection(tabs.query_one("#tabs-scroll").region)
    out = []
    for tab in tabs.query(Tab):
        r = tab.region.intersection(clip)  # what is on screen of it
        if not tab.display or r.width == 0:
            continue
        text = lines[r.y][r.x:r.right].strip()
        out.append((text, r.width == tab.outer_size.width and text == str(tab.label)))
    return out


async def open_first_item(pilot) -> None:
    """From the first screen: the Items table (2), then its first item (enter)."""
    await settle(pilot)
    await pilot.press("2")
    await settle(pilot)
    await pilot.press("enter")
    await settle(pilot)


async def test_run_tabs_whole_and_distinct_at_80x24(tmp_path):
    app = demo_app(tmp_path)
    async with app.run_test(size=SMALL) as pilot:
        await open_first_item(pilot)
        screen = app.screen
        assert isinstance(screen, ItemScreen)
        tabs = screen.query_one("#runs", Tabs)
        names = [str(t.label) for t in tabs.query(Tab)]
        assert "SRAG(V)" in names and "SRAG(V) budget" in names
        seen_right = False
        keys = ["right_square_bracket"] * (len(names) + 1) + ["left_square_bracket"] * (len(names) + 2)
        for key in keys:  # every tab made active in turn, both ways round (and wrapping at both ends)
            shown = visible_tabs(app, tabs)
            texts = [t for t, _ in shown]
            assert all(whole for _, whole in shown), shown  # no tab cut at an edge
            assert len(set(texts)) == len(texts), texts
            assert str(tabs.active_tab.label) in texts  # the active tab, whole
            line = screen_lines(app)[tabs.region.y]
            first, last = names.index(texts[0]), names.index(texts[-1])
            if last < len(names) - 1:
                seen_right = True
                assert f"{len(names) - 1 - last}›" in line  # a marker: how many more to the right
            if first > 0:
                assert f"‹{first}" in line
            await pilot.press(key)
            await settle(pilot)
        assert seen_right  # at 80 columns they do not all fit


def test_window_and_labels():
    widths = [7, 7, 11, 11, 9, 9, 16]
    assert window(widths, 0, 0, 100) == (0, 7)
    a, b = window(widths, 6, 0, 40)
    assert b == 7 and a <= 6 and sum(widths[a:b]) + (len(str(a)) + 2 if a else 0) <= 40
    a2, b2 = window(widths, 1, a, 40)  # back left: the window moves to hold it
    assert a2 <= 1 < b2 and sum(widths[a2:b2]) + len(str(7 - b2)) + 2 <= 40
    assert window(widths, 2, a2, 40) == (a2, b2)  # within the window: it stays put
    assert unique_labels(["A", "B", "A"], ["a1", "b", "a2"]) == ["A (a1)", "B", "A (a2)"]


async def test_items_question_column_readable_at_80x24(tmp_path):
    app = demo_app(tmp_path)
    async with app.run_test(size=SMALL) as pilot:
        await settle(pilot)
        await pilot.press("2")
        await settle(pilot)
        table = app.screen.query_one(DataTable)
        header = screen_lines(app)[table.region.y]
        start = header.find("question")
        assert start >= 0, header  # the column is on screen at all
        on_screen = min(app.size.width, table.region.right) - start
        assert on_screen >= 25 and table.columns["question"].width >= 25
        assert table.virtual_size.width <= table.size.width  # no sideways scrolling to reach it
        first = app.screen.state.bench.item(*app.screen.keys[0]).question
        assert first[:20] in screen_lines(app)[table.region.y + 1]
        ids = [str(table.get_row_at(i)[0]) for i in range(10)]
        assert len(set(ids)) == len(ids)  # cut ids stay distinct


async def test_labels_dialog_says_how_to_save_at_80x24(tmp_path):
    """The labels dialog's definitions run past 24 rows; its key hint (enter saves, esc cancels)
    stays on screen under the title instead of being cut off below them."""
    from tui.modals.labels import LabelDialog

    app = demo_app(tmp_path, db=tmp_path / "l.db")
    async with app.run_test(size=SMALL) as pilot:
        await open_first_item(pilot)
        await pilot.press("l")
        await settle(pilot)
        assert isinstance(app.screen, LabelDialog)
        shown = "\n".join(screen_lines(app))
        assert "enter saves" in shown and "esc cancels" in shown, shown
        assert "X1 Scene" in shown  # the definitions are there too
