"""Layouts that keep what matters on screen, in the real app on the demo: the oracle study's question
and options pinned (visible at 120×40 and 80×24 however far the clue rounds are scrolled), dialogs
showing the screen behind them dimmed (not blacked out), and the key bar keeping to one row at 80×24
with the keys left out still in the command palette. Plus an SVG snapshot of the oracle at 80×24."""

from __future__ import annotations

from pathlib import Path

import pytest

from tests.tui.apphelpers import (new_study, pictures_done, screen_lines, screen_text, settle, study_app,
                                  wait_ready)
from tui.widgets.picture import PictureView
from tui.widgets.keybar import KeyBar

pytestmark = [pytest.mark.usefixtures("halfcell"), pytest.mark.needs_demo]

SMALL = (80, 24)


def oracle_app(tmp_path: Path):
    db = tmp_path / "o.db"
    new_study(db, "oracle", "pinned", "1")
    return study_app(db, "pinned", "ann1")


def squash(text: str) -> str:
    return " ".join(text.split())


async def assert_question_visible(app, screen) -> None:
    item = screen.session.item()
    shown = squash(screen_text(app))
    # the first words of the question and each option, wherever the lines wrap
    assert squash(item.question)[:20] in shown
    for letter, option in item.rotations[screen.session.rotation()].options.items():
        assert f"{letter} {squash(option)[:10]}" in shown, (letter, option)


@pytest.mark.parametrize("size", [(120, 40), SMALL])
async def test_oracle_question_and_options_stay_on_screen(tmp_path, size):
    app = oracle_app(tmp_path)
    async with app.run_test(size=size) as pilot:
        screen = await wait_ready(pilot)
        await settle(pilot)
        body = screen.query_one("#study-body")
        assert body.virtual_size.height > body.size.height or size != SMALL  # the clues do not fit at 80×24
        await assert_question_visible(app, screen)
        for _ in range(6):  # the clue rounds scrolled to their end: the question has not moved away
            await pilot.press("pagedown")
        await settle(pilot)
        assert body.scroll_y > 0 or size != SMALL
        await assert_question_visible(app, screen)


async def test_dialog_dims_the_screen_behind(tmp_path):
    app = oracle_app(tmp_path)
    async with app.run_test(size=(120, 40)) as pilot:
        screen = await wait_ready(pilot)
        await settle(pilot)
        row = next(i for i, line in enumerate(screen_lines(app)) if "Clue round 1" in line)
        before = [seg for seg in app.screen._compositor.render_strips()[row] if "Clue round" in seg.text][0]
        await pilot.press("N")  # the note dialog
        await settle(pilot)
        assert app.screen is not screen and "Clue round 1" in screen_lines(app)[row]  # still there behind
        after = [seg for seg in app.screen._compositor.render_strips()[row] if "Clue round" in seg.text][0]
        b, a = before.style.color.triplet, after.style.color.triplet
        assert sum(a) < sum(b)  # and dimmed: the same text, darker
        await pilot.press("escape")
        await settle(pilot)
        assert app.screen is screen


async def test_key_bar_keeps_one_row_at_80x24(tmp_path):
    app = oracle_app(tmp_path)
    async with app.run_test(size=SMALL) as pilot:
        screen = await wait_ready(pilot)
        await settle(pilot)
        bar = screen.query_one(KeyBar)
        text = str(bar.content)
        assert "\n" not in text and bar.size.height == 1
        assert text.rstrip().endswith("palette") and "…" in text  # keys left out: in the palette
    (tmp_path / "wide").mkdir()
    async with oracle_app(tmp_path / "wide").run_test(size=(120, 40)) as pilot:
        screen = await wait_ready(pilot)
        await settle(pilot)
        assert "Undo" in str(screen.query_one(KeyBar).content)


def test_snapshot_oracle_at_80x24(snap_compare, tmp_path, monkeypatch):
    from tests.paths import REPO

    monkeypatch.chdir(REPO)
    db = tmp_path / "o.db"
    new_study(db, "oracle", "pinned", "1")

    async def run_before(pilot):
        screen = await wait_ready(pilot)
        await settle(pilot)
        await pictures_done(pilot, list(screen.query(PictureView)))  # the clue image drawn: a fixed height
        await settle(pilot)

    assert snap_compare(study_app(db, "pinned", "ann1"), terminal_size=SMALL, run_before=run_before)
