"""SVG snapshots of the app on the shipped demo at 120×40: Overview, Items, a Y3 item (its SRAG(V)
run's retrieved list with stale/latest marks), and the Session screen reached from one of its clues.
Images come through the half-cell renderer (the default under pytest); the app is settled (every
worker done) before the picture is taken, and nothing on these screens depends on the clock.

Update after an intended change: pytest tests/tui/test_app_snapshots.py --snapshot-update
"""

from __future__ import annotations

import pytest
from textual.widgets import DataTable

from tests.paths import REPO
from tests.tui.apphelpers import SIZE, settle
from tui.app import make_app
from tui.media import image as img
from tui.widgets.run_panel import RunPanel

pytestmark = pytest.mark.needs_demo
Y3_ITEM = ("Collectibles_Shelf_Assistant:6", "mcq")


@pytest.fixture
def app(monkeypatch):
    # relative paths: the Overview shows the benchmark's path, which must not depend on the checkout
    monkeypatch.chdir(REPO)
    img.prepare("halfcell")
    img.PICTURES.clear()
    return make_app("fixtures/demo", ["fixtures/demo/runs"], annotator="ann1")


async def to_item(pilot) -> None:
    await pilot.press("2")
    await settle(pilot)
    items = pilot.app.screen
    items.query_one(DataTable).move_cursor(row=items.keys.index(Y3_ITEM), animate=False)
    await pilot.press("enter")
    await settle(pilot)
    screen = pilot.app.screen
    while screen.active_panel().ref.display != "SRAG(V)":
        await pilot.press("right_square_bracket")
        await settle(pilot)
    assert isinstance(screen.active_panel(), RunPanel)


def test_snapshot_overview(snap_compare, app):
    assert snap_compare(app, terminal_size=SIZE, run_before=settle)


def test_snapshot_items(snap_compare, app):
    async def run_before(pilot):
        await pilot.press("2", "y", "y", "y")  # the Y3 items
        await settle(pilot)

    assert snap_compare(app, terminal_size=SIZE, run_before=run_before)


def test_snapshot_item_y3_retrieved(snap_compare, app):
    assert snap_compare(app, terminal_size=SIZE, run_before=to_item)


def test_snapshot_session_from_clue(snap_compare, app):
    async def run_before(pilot):
        await to_item(pilot)
        await pilot.press("c", "g")  # the stale clue's round
        await settle(pilot)

    assert snap_compare(app, terminal_size=SIZE, run_before=run_before)
