"""The question's own image in the study screens: in the oracle study above the clue rounds (it is
part of the question, and had been mounted below every clue), and in the agreement study after the
prediction (it had not been shown at all, though a verdict may turn on it). The demo has two items
with one (Collectibles_Shelf_Assistant:9, Home_Renovation_Journal:13); a study of every item
reaches them."""

from __future__ import annotations

from pathlib import Path

import pytest
from textual.widgets import Static

from tests.tui.apphelpers import SIZE, new_study, settle, study_app, wait_ready

pytestmark = [pytest.mark.usefixtures("halfcell"), pytest.mark.needs_demo]


async def _to_question_image(pilot, screen):
    """Step the session to the first entry whose item has a question image; that item."""
    s = screen.session
    for pos in range(len(s.queue)):
        item = s.item(s.queue[pos])
        if item is not None and item.question_images:
            s.pos = pos
            await screen.show_entry()
            await settle(pilot)
            return item
    raise AssertionError("no entry with a question image in the study")


def _names(box) -> str:
    return "\n".join(str(w.content) for w in box.query(Static))


@pytest.mark.parametrize(("kind", "box_id", "extra"), [
    ("oracle", "#or-question-media", ()),
    ("agreement", "#ag-question-media", ("--backbone", "gpt-5.4-mini"))])
async def test_the_question_image_is_shown_with_the_question(tmp_path: Path, kind: str, box_id: str,
                                                             extra: tuple[str, ...]) -> None:
    db = tmp_path / "q.db"
    runs = bool(extra)
    new_study(db, kind, "q", "100", *extra, runs=runs)
    app = study_app(db, "q", "ann1", runs=runs)
    async with app.run_test(size=SIZE) as pilot:
        screen = await wait_ready(pilot)
        item = await _to_question_image(pilot, screen)
        box = screen.query_one(box_id)
        assert box.display
        text = _names(box)
        assert "Question image (part of the question)" in text
        assert item.question_images[0].path.name in text, text
        if kind == "oracle":  # above the first clue round, in the scrolling entry pane
            clues = screen.query_one("#or-clues")
            assert box.region.y < clues.region.y or box.virtual_region.y < clues.virtual_region.y
        # and an entry without one hides the box
        s = screen.session
        s.pos = next(p for p in range(len(s.queue)) if s.item(s.queue[p]) and not s.item(s.queue[p]).question_images)
        await screen.show_entry()
        await settle(pilot)
        assert not box.display
