"""The Scores screen scores what the app holds in memory (issue 17 point 1): a recompute (`R`) opens
no file under the benchmark's root (dialogs, media, run folders — the demo's runs are under it),
counted by a real audit hook on "open" events, and its tables and inputs record (file hashes and
digests included) are the ones the scorer gives when it hashes the files from disk."""

from __future__ import annotations

import os
import sys
from contextlib import contextmanager

import pytest

from scorer.scoring import build_context, run_sections
from scorer.sections.base import ScoreOptions
from scorer.sections.registry import SECTIONS
from tests.paths import DEMO
from tests.tui.apphelpers import SIZE, demo_app, demo_db, settle
from tui.screens.scores import SKIPPED, ScoresScreen, ScoreTable

pytestmark = pytest.mark.needs_demo
RESAMPLES = 50

_ROOT = os.path.abspath(DEMO) + os.sep
_opened: list[str] | None = None  # the files under the demo opened while recording (None: not recording)
_hooked = False


def _audit(event: str, args: tuple) -> None:
    if event != "open" or _opened is None:
        return
    path = args[0]
    if isinstance(path, int) or path is None:  # an already open descriptor
        return
    path = os.path.abspath(os.fsdecode(path))
    if path.startswith(_ROOT):
        _opened.append(path)


@contextmanager
def opens_under_demo():
    """Every file under the demo opened (by any thread) inside the block; an audit hook cannot be
    removed, so one is added once and records only here."""
    global _opened, _hooked
    if not _hooked:
        sys.addaudithook(_audit)
        _hooked = True
    _opened = []
    try:
        yield _opened
    finally:
        _opened = None


async def final(pilot) -> ScoresScreen:
    for _ in range(200):
        await settle(pilot)
        if isinstance(pilot.app.screen, ScoresScreen) and pilot.app.screen.final:
            return pilot.app.screen
    raise AssertionError("the Scores screen never finished")


def plain(rows):
    return repr(list(rows))  # NaN-safe equality (nan != nan)


async def test_recompute_reads_no_benchmark_file_and_scores_the_same(tmp_path):
    app = demo_app(tmp_path, db=demo_db(tmp_path))
    app.state.score_resamples = RESAMPLES
    async with app.run_test(size=SIZE) as pilot:
        await pilot.press("3")
        await final(pilot)
        with opens_under_demo() as opened:
            await pilot.press("R")
            scores = await final(pilot)
        assert opened == []  # no dialog, media or run file re-read nor re-hashed
        shown = {t.id: plain(t.table.rows) for t in scores.query(ScoreTable)}
        inputs = scores.inputs
    assert len(shown) > 10  # matrices, evidence, agreement, oracle, … all shown

    # the scorer on the same objects, hashing the files from disk: the same tables, the same record
    st = app.state
    opts = ScoreOptions(names=dict(st.names), extra=dict(st.score_extra), resamples=RESAMPLES)
    ctx, want, _ = build_context(st.bench, st.runs, st.db_path, opts)
    assert inputs == want
    assert inputs["benchmark"]["files"] and inputs["runs"]["files"]  # hashes recorded, not dropped
    results = run_sections(ctx, [s for s in SECTIONS if s.name not in SKIPPED])
    expected = {f"t-{r.name}-{i}": plain(t.rows) for r in results if not r.reason for i, t in enumerate(r.tables)}
    assert shown == expected
