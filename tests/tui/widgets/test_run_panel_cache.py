"""tui.widgets.run_panel.PanelCache: the Item screen's LRU of computed run panels gives what a fresh
computation gives, is keyed by rotation and by the very objects, and keeps at most its size."""

from __future__ import annotations

import pytest

from tui.evidence import run_evidence
from tui.widgets.run_panel import PanelCache, answer_text


def _mcq_pair(demo):
    for row in demo.rows:
        if row.item.mode == "mcq" and len(row.item.rotations) > 1 and demo.predictions(row.item):
            ref, p = demo.predictions(row.item)[0]
            return demo.task(row.item), row.item, ref, p
    pytest.fail("the demo has no MCQ item with rotations and a run: these tests would test nothing")


def test_cached_panel_equals_a_fresh_computation(demo):
    task, item, ref, p = _mcq_pair(demo)
    cache = PanelCache(size=4)
    ev, answer = cache.get(ref, task, item, p, 0)
    assert ev == run_evidence(task, item, p)
    assert answer.plain == answer_text(ref, p, item, 0).plain
    again = cache.get(ref, task, item, p, 0)
    assert again[0] is ev and again[1] is answer  # a hit: nothing recomputed
    other = cache.get(ref, task, item, p, 1)  # another rotation: another answer text
    assert other[1].plain == answer_text(ref, p, item, 1).plain != answer.plain


def test_cache_is_bounded_and_evicts_the_least_recent(demo):
    cache = PanelCache(size=2)
    task, item, ref, p = _mcq_pair(demo)
    first = cache.get(ref, task, item, p, 0)
    cache.get(ref, task, item, p, 1)
    cache.get(ref, task, item, p, 0)  # rotation 0 is now the most recent
    cache.get(ref, task, item, p, 2)  # evicts rotation 1
    assert len(cache._entries) == 2
    assert cache.get(ref, task, item, p, 0)[0] is first[0]
    assert cache.get(ref, task, item, p, 1)[0] is not first[0]  # recomputed (an equal value)
