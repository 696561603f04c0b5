"""The Item screen refills its widgets in place (issue 4's next-item budget): tui.widgets.prepared
(texts rendered ahead and kept per width) shows exactly what a Static shows for the same Text and
keeps data literal; tui.widgets.thumbs.ThumbRow reuses thumbnails (same medium, else same kind) in
the media's order and mounts the missing ones only in settle(); n/p land on the same screen as
opening the item afresh."""

from __future__ import annotations

from pathlib import Path

import pytest
from rich.text import Text
from textual.app import App
from textual.content import Content
from textual.widgets import DataTable, Static

from scorer.model import Media
from tests.builders.benchmarks import MARKUP, png
from tests.tui.apphelpers import SIZE, demo_app, screen_lines, settle
from tui.widgets.prepared import Prepared, PreparedCache, show_text
from tui.widgets.thumbs import ImageThumb, MediaThumb, ThumbRow

pytestmark = [pytest.mark.needs_demo, pytest.mark.usefixtures("halfcell")]


def sample_text() -> Text:
    out = Text("rank  score  ", style="bold dim")
    out.append(f"D1:2 {MARKUP} ", style="green")  # data that looks like markup stays literal
    out.append("a long line that has to wrap at the widget's width " * 3, style="italic")
    return out


class Two(App):
    CSS = "Static { width: 40; }"

    def compose(self):
        yield Static(id="plain")
        yield Static(id="prepared")


async def test_prepared_shows_what_a_static_shows_and_keeps_markup_literal():
    app = Two()
    async with app.run_test(size=(60, 20)) as pilot:
        plain, prepared = app.query_one("#plain", Static), app.query_one("#prepared", Static)
        text = sample_text()
        plain.update(text)
        show_text(prepared, Prepared(text))
        await pilot.pause()
        lines = screen_lines(app)
        h = plain.size.height
        assert h > 1 and prepared.size.height == h  # same measured height (it wrapped)
        assert lines[:h] == lines[h:2 * h]  # the same lines, cell for cell
        assert MARKUP in "".join(lines)


async def test_render_ahead_makes_the_later_paint_a_lookup(monkeypatch):
    app = Two()
    async with app.run_test(size=(60, 20)) as pilot:
        target = app.query_one("#prepared", Static)
        target.update(Prepared(Text("placeholder")))
        await pilot.pause()
        ahead = Prepared(sample_text())
        ahead.render_ahead(target)
        calls = []
        real = Content.render_strips
        monkeypatch.setattr(Content, "render_strips", lambda *a, **k: calls.append(1) or real(*a, **k))
        show_text(target, ahead)
        await pilot.pause()
        assert calls == []  # wrapped and styled ahead: the paint only looked the lines up
        assert "a long line" in "".join(screen_lines(app))


def test_prepared_cache_is_bounded_and_show_text_skips_equal_text():
    cache = PreparedCache(size=2)
    a = cache.get("a", lambda: Text("a"))
    assert cache.get("a", lambda: Text("other")) is a
    cache.get("b", lambda: Text("b"))
    cache.get("c", lambda: Text("c"))
    assert cache.get("a", lambda: Text("new")).text.plain == "new"  # "a" was evicted

    class Fake:
        content = Prepared(Text("same", style="bold"))
        updates = 0

        def update(self, _):
            self.updates += 1

    w = Fake()
    show_text(w, Prepared(Text("same", style="bold")))
    assert w.updates == 0
    show_text(w, Text("same", style="dim"))  # another style is another text
    assert w.updates == 1


async def test_thumb_row_reuses_by_medium_then_kind_in_order(tmp_path: Path):
    a, b, c = (png(tmp_path / f"{n}.png", col) for n, col in (("a", "red"), ("b", "blue"), ("c", "green")))
    ma, mb, mc = (Media("image", p.name, path=p) for p in (a, b, c))
    audio = Media("audio", "clip.wav", path=tmp_path / "clip.wav")
    app = demo_app(tmp_path)
    async with app.run_test(size=SIZE) as pilot:
        row = ThumbRow()
        await app.screen.mount(row)
        row.fill([ma, mb])
        assert "pending" in row.classes and not row.children  # nothing to reuse yet
        await row.settle()
        await settle(pilot)
        first = [w for w in row.children if w.display]
        assert [t.media for t in first] == [ma, mb] and "pending" not in row.classes
        thumb_b = first[1]
        row.fill([mb, audio, mc])  # B keeps its thumbnail, A's takes C; the audio waits for settle()
        assert [t.media for t in row.children if t.display] == [mb, mc] and first[1] is thumb_b
        await row.settle()
        await settle(pilot)
        shown = [w for w in row.children if w.display]
        assert [t.media for t in shown] == [mb, audio, mc]
        assert shown[0] is thumb_b and isinstance(shown[1], MediaThumb) and isinstance(shown[2], ImageThumb)
        row.fill([mc])  # spare thumbnails: images hidden (kept), the audio one dropped at settle()
        await row.settle()
        await settle(pilot)
        assert [t.media for t in row.children if t.display] == [mc]
        assert not any(isinstance(w, MediaThumb) for w in row.children)


async def test_stepping_shows_what_opening_the_item_shows(tmp_path):
    """n then p (thumbnails reused, texts rendered ahead) lands on the very screen a fresh open draws."""
    async def open_at(app, pilot, row: int):
        await pilot.press("2")
        await settle(pilot)
        app.screen.query_one(DataTable).move_cursor(row=row, animate=False)
        await pilot.press("enter")
        await settle(pilot)

    fresh = demo_app(tmp_path)
    async with fresh.run_test(size=SIZE) as pilot:
        await open_at(fresh, pilot, 3)
        expected = screen_lines(fresh)
    stepped = demo_app(tmp_path)
    async with stepped.run_test(size=SIZE) as pilot:
        await open_at(stepped, pilot, 0)
        for key in ("n", "n", "n", "n", "p"):
            await pilot.press(key)
            await settle(pilot)
        assert screen_lines(stepped) == expected
