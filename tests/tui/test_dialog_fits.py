"""At 80×24 a dialog fits the screen: the pickers (`!` failures, `w` runs) and the other dialogs are
84 columns wide at most, never wider than the screen, and the hint line under a long list stays visible."""

from __future__ import annotations

import pytest
from textual.containers import Vertical

from tests.tui.apphelpers import demo_app, settle
from tui.modals.picker import Picker

pytestmark = pytest.mark.needs_demo


@pytest.mark.parametrize("size", [(80, 24), (120, 40)])
async def test_run_picker_fits_the_screen_with_its_hint_visible(tmp_path, size) -> None:
    app = demo_app(tmp_path)
    async with app.run_test(size=size) as pilot:
        await pilot.press("2")
        await settle(pilot)
        await pilot.press("w")  # the run picker: 28 runs, a long list
        await settle(pilot)
        assert isinstance(app.screen, Picker)
        box = app.screen.query_one(Vertical).region
        assert box.x >= 0 and box.y >= 0 and box.right <= size[0] and box.bottom <= size[1], box
        hint = app.screen.query_one(".dialog-hint").region
        assert hint.height >= 1 and box.contains_region(hint), (hint, box)
