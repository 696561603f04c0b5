"""The first Enter on an item (issue 19: ≤ 150 ms, bench/app.py) does not pay for what could be ready
before it: the Item screen's CSS is parsed in a thread while the Items list is read (tui.preload.
warm_css; Textual drops its parse cache on every mode switch), the styles come out exactly as
without it, a theme changed meanwhile is not overwritten with stale rules; the freshly pushed Item
screen is not restyled a second time on its first resume, nor its gold side's cards when that side
takes the focus; the key bar is not rebuilt for nothing."""

from __future__ import annotations

import threading

import pytest
import textual.css.stylesheet as stylesheet_module
from textual import events
from textual.css.stylesheet import Stylesheet
from textual.widgets import DataTable

from tests.tui.apphelpers import SIZE, demo_app, settle
from tui.preload import WARM, warm_css
from tui.screens.item import ItemScreen
from tui.screens.items import ItemsScreen
from tui.widgets.keybar import KeyBar
from tui.widgets.thumbs import ThumbRow

pytestmark = [pytest.mark.needs_demo, pytest.mark.usefixtures("halfcell")]


def richest(app) -> int:
    """The Items row of the item with the most images (thumbnails, pictures: every widget class)."""
    keys = list(app.screen.keys)

    def n_images(key):
        it = app.state.bench.item(*key)
        return sum(len(r.images) for r in app.state.task(it).clue_chain(it)) + len(it.question_images)

    return keys.index(max(keys, key=n_images))


async def open_item(app, pilot, parses: list | None = None) -> None:
    await pilot.press("2")
    await settle(pilot)
    if app.screen.warming is not None:
        app.screen.warming.join()
        await settle(pilot)
    app.screen.query_one(DataTable).move_cursor(row=richest(app), animate=False)
    await pilot.pause()
    if parses is not None:
        parses.clear()  # count from the Enter on
    await pilot.press("enter")
    await settle(pilot)
    assert isinstance(app.screen, ItemScreen)


def rules_of(app) -> list:
    """The app's CSS rules as comparable values: selectors, declarations, origin and tie-breaker."""
    return [(repr(r.selector_set), repr(sorted(r.styles.get_rules().items())), r.is_default_rules, r.tie_breaker)
            for r in app.stylesheet.rules]


def counting_parse(monkeypatch) -> list:
    """Every CSS source Textual's stylesheet parses (instrumented, not replaced)."""
    parses: list = []
    real = stylesheet_module.parse
    monkeypatch.setattr(stylesheet_module, "parse",
                        lambda scope, css, read_from, **kw: parses.append(read_from) or real(scope, css, read_from, **kw))
    return parses


async def test_the_first_enter_parses_no_css_and_styles_as_without_warming(tmp_path, monkeypatch):
    parses = counting_parse(monkeypatch)
    app = demo_app(tmp_path)
    async with app.run_test(size=SIZE) as pilot:
        await open_item(app, pilot, parses)
        assert parses == []  # parsed while the Items list was read
        warmed = rules_of(app)
    # the control: without the warm-up the same Enter parses the run tabs' CSS and others on the UI thread
    monkeypatch.setattr(ItemsScreen, "_warm_item_css", lambda self: None)
    monkeypatch.setattr("tui.app.preload", lambda: [])
    cold = demo_app(tmp_path)
    async with cold.run_test(size=SIZE) as pilot:
        await open_item(cold, pilot, parses)
        assert any(name == "RunTabs.DEFAULT_CSS" for _, name in parses)
        assert rules_of(cold) == warmed  # the same rules, in the same order


async def test_rules_parsed_before_the_css_is_refreshed_are_not_stored(tmp_path):
    app = demo_app(tmp_path)
    async with app.run_test(size=SIZE) as pilot:
        await settle(pilot)
        sheet = app.stylesheet
        sheet._parse_cache.clear()
        done = []
        worker = threading.Thread(target=lambda: done.append(warm_css(app, WARM)))
        worker.start()
        worker.join()  # its results wait for the UI thread, which refreshes the CSS first (as a theme
        assert done and done[0] > 0  # change or a mode switch does: new variables)
        app.refresh_css(animate=False)
        await settle(pilot)
        names = {key[1][1] for key in sheet._parse_cache.keys()}
        assert "RunTabs.DEFAULT_CSS" not in names  # parsed with the old theme's colours: dropped
        # once the theme is in place, a warm-up is kept
        worker = threading.Thread(target=lambda: warm_css(app, WARM))
        worker.start()
        worker.join()
        await settle(pilot)
        assert "RunTabs.DEFAULT_CSS" in {key[1][1] for key in sheet._parse_cache.keys()}


async def test_the_item_screen_is_styled_once_when_opened(tmp_path, monkeypatch):
    styled: list = []
    real = Stylesheet.apply
    monkeypatch.setattr(Stylesheet, "apply", lambda self, node, *a, **k: styled.append(node) or real(self, node, *a, **k))
    app = demo_app(tmp_path)
    async with app.run_test(size=SIZE) as pilot:
        await pilot.press("2")
        await settle(pilot)
        styled.clear()
        await pilot.press("enter")
        await settle(pilot)
        screen = app.screen
        assert isinstance(screen, ItemScreen)
        focused = {screen.focused}  # the gold side (BlankScroll): restyled for :focus, alone (not its cards)
        assert screen.focused is screen.query_one("#gold")
        # every widget is styled once, as it is mounted; but the focused one, the active tab (Textual's
        # Tabs marks it -active once mounted) and the thumbnail rows (no longer .pending once their
        # thumbnails are mounted, after the first paint: ThumbRow.settle)
        again = [n for n in screen.walk_children(with_self=True)
                 if n not in focused and not isinstance(n, ThumbRow) and sum(1 for s in styled if s is n) > 1]
        assert [n.id for n in again] in ([], [screen.query_one("#runs").active]), [type(n).__name__ for n in again]
        # a later resume that asks for it (back from another mode: App.switch_mode) restyles as ever
        styled.clear()
        screen.post_message(events.ScreenResume())
        await settle(pilot)
        assert screen.query_one(KeyBar) in styled


async def test_the_key_bar_is_rebuilt_only_when_its_keys_or_width_change(tmp_path):
    app = demo_app(tmp_path)
    async with app.run_test(size=SIZE) as pilot:
        await settle(pilot)
        bar = app.screen.query_one(KeyBar)
        shown = bar.content
        bar._render_keys()  # a refocus or a resize that changes nothing
        assert bar.content is shown
        await pilot.resize_terminal(90, 40)
        await settle(pilot)
        assert bar.content is not shown  # narrower: packed again
        lines = str(bar.content).splitlines()
        assert lines and all(len(line) <= 90 - 2 for line in lines)
