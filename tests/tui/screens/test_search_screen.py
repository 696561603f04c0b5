"""Search by meaning in the app (`s`): the real all-MiniLM-L6-v2 model when the embed extra is there,
plain word search otherwise; a hit on a round opens its session, a hit on an item opens the item."""

from __future__ import annotations

import pytest

from scorer.search import TextSearch
from tests.tui.apphelpers import demo_app, settle
from tui.screens.item import ItemScreen
from tui.screens.search import SearchScreen
from tui.screens.session import SessionScreen


@pytest.fixture(autouse=True)
def private_cache(tmp_path, monkeypatch):
    monkeypatch.setenv("XDG_CACHE_HOME", str(tmp_path / "cache"))


async def _search(pilot, query: str) -> SearchScreen:
    await pilot.press("2")
    await settle(pilot)
    await pilot.press("s")
    await settle(pilot, rounds=200)  # the index: the model loads on a cold cache
    screen = pilot.app.screen
    assert isinstance(screen, SearchScreen)
    for ch in query:
        await pilot.press("space" if ch == " " else ch)
    await pilot.press("enter")
    await settle(pilot, rounds=100)
    return screen


async def test_meaning_search_opens_a_round_in_its_session(tmp_path) -> None:
    pytest.importorskip("sentence_transformers", reason="the embed extra is not installed")
    app = demo_app(tmp_path)
    async with app.run_test(size=(120, 40)) as pilot:
        screen = await _search(pilot, "smoke alarm battery beeping")
        assert app.searcher is not None and app.searcher.semantic
        assert {h.kind for h in screen.hits} == {"round", "item"}
        await pilot.press("ctrl+r")  # rounds only
        await settle(pilot, rounds=100)
        assert screen.kind == "round" and screen.hits and all(h.kind == "round" for h in screen.hits)
        top = screen.hits[0]
        assert "alarm" in top.text.lower() or "beep" in top.text.lower()
        await pilot.press("enter")
        await settle(pilot)
        assert isinstance(app.screen, SessionScreen)
        assert app.screen.task_name == top.task


async def test_item_hit_opens_the_item(tmp_path) -> None:
    app = demo_app(tmp_path)
    async with app.run_test(size=(120, 40)) as pilot:
        app.searcher = TextSearch([])  # replaced below by the real plain-text index of the demo
        from scorer.search import documents

        app.searcher = TextSearch(documents(app.state.bench))
        screen = await _search(pilot, "accent wall colour")
        assert not app.searcher.semantic
        await pilot.press("ctrl+r")  # rounds only
        await pilot.press("ctrl+r")  # items only
        await settle(pilot)
        assert screen.kind == "item" and screen.hits and all(h.kind == "item" for h in screen.hits)
        await pilot.press("enter")
        await settle(pilot)
        assert isinstance(app.screen, ItemScreen)
