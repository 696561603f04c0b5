"""SVG snapshots of failure review at 120×40 on the shipped demo: the Scores screen with each matrix
value's CI and n, and Items with a failure filter (SRAG(V) on qwen3-vl-8b, MCQ: stale dominates),
worst first. Seeded bootstrap: the same picture every run.

Update after an intended change: pytest tests/tui/screens/test_review_snapshots.py --snapshot-update
"""

from __future__ import annotations

import pytest

from tests.paths import REPO
from tests.tui.apphelpers import SIZE, settle
from tui.app import make_app
from tui.screens.scores import ScoresScreen
from tui.rows import Filter

pytestmark = pytest.mark.needs_demo


@pytest.fixture
def app(monkeypatch):
    monkeypatch.chdir(REPO)  # relative paths: nothing on screen depends on the checkout's place
    app = make_app("fixtures/demo", ["fixtures/demo/runs"], annotator="ann1")
    app.state.score_resamples = 500
    return app


def test_snapshot_scores_with_cis(snap_compare, app):
    async def run_before(pilot):
        await pilot.press("3")
        for _ in range(200):
            await settle(pilot)
            if isinstance(pilot.app.screen, ScoresScreen) and pilot.app.screen.final:
                break
        await settle(pilot)  # the last sections' widgets laid out (the scroll bar's size depends on them)
        await pilot.pause(0.1)
        await settle(pilot)

    assert snap_compare(app, terminal_size=SIZE, run_before=run_before)


def test_snapshot_items_with_a_failure_filter(snap_compare, app):
    async def run_before(pilot):
        await pilot.press("2")
        await settle(pilot)
        st = pilot.app.state
        ref = next(r for r in st.run_refs if (r.display, r.backbone, r.mode) == ("SRAG(V)", "qwen3-vl-8b", "mcq"))
        pilot.app.screen.show_filter(Filter(run=ref.index, failures=("stale_dominance",), sort="score"))
        await settle(pilot)

    assert snap_compare(app, terminal_size=SIZE, run_before=run_before)
