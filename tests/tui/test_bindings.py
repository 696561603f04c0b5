"""Every key of the app is a Binding with an id (DESIGN §7: one key map, remappable by id), shown in
the key bar, the help screen and the command palette as before; an id names one default key, so
remapping it moves that key everywhere it means the same thing."""

from __future__ import annotations

import importlib
import inspect
import pkgutil
import re

import pytest
from textual.binding import Binding

from tests.tui.apphelpers import SIZE, demo_app, settle
import tui
from tui.screens.help import HelpScreen
from tui.screens.item import ItemScreen
from tui.screens.items import ItemsScreen

ID = re.compile(r"[a-z]+(\.[a-z0-9-]+)?")


def declared_bindings() -> list[tuple[str, Binding]]:
    """(class, binding) for every binding a tui class declares itself."""
    out = []
    for m in pkgutil.walk_packages(tui.__path__, "tui."):
        module = importlib.import_module(m.name)
        for name, cls in inspect.getmembers(module, inspect.isclass):
            if cls.__module__ != module.__name__ or "BINDINGS" not in vars(cls):
                continue
            out += [(f"{cls.__module__}.{name}", b) for b in vars(cls)["BINDINGS"]]
    return out


def test_every_binding_is_a_binding_with_an_id() -> None:
    found = declared_bindings()
    assert len(found) > 50  # the app's keys, not an empty walk
    for where, b in found:
        assert isinstance(b, Binding), f"{where}: {b!r} is not a Binding"
        assert b.id and ID.fullmatch(b.id), f"{where}: the binding {b.key!r} → {b.action} has no usable id"


def test_one_id_one_default_key() -> None:
    keys: dict[str, set[str]] = {}
    for _, b in declared_bindings():
        keys.setdefault(b.id, set()).add(b.key)
    assert {i: k for i, k in keys.items() if len(k) > 1} == {}


@pytest.mark.needs_demo
async def test_a_key_map_moves_a_key_by_its_id(tmp_path) -> None:
    app = demo_app(tmp_path)
    async with app.run_test(size=SIZE) as pilot:
        app.set_keymap({"app.help": "f1", "items.open": "o"})
        await pilot.press("2")
        await settle(pilot)
        assert isinstance(app.screen, ItemsScreen)
        await pilot.press("o")
        await settle(pilot)
        assert isinstance(app.screen, ItemScreen)
        await pilot.press("f1")
        await settle(pilot)
        assert isinstance(app.screen, HelpScreen)


@pytest.mark.needs_demo
async def test_help_names_keys_as_they_are_typed(tmp_path) -> None:
    """The help screen and the palette's list name "!" as "!", not Textual's "exclamation_mark"."""
    from tui.widgets.keys import key_label, screen_commands

    app = demo_app(tmp_path)
    async with app.run_test(size=SIZE) as pilot:
        await pilot.press("2")
        await settle(pilot)
        assert isinstance(app.screen, ItemsScreen)
        keys = {d: k for d, k, *_ in screen_commands(app.screen)}
        assert keys["Failures"] == "!" and not any("_" in k for k in keys.values()), keys
        await pilot.press("question_mark")
        await settle(pilot)
        assert isinstance(app.screen, HelpScreen)
        shown = app.export_screenshot()
        assert "exclamation" not in shown and "question_mark" not in shown
    assert [key_label(k) for k in ("exclamation_mark", "left_square_bracket", "enter", "ctrl+p")] == \
        ["!", "[", "enter", "ctrl+p"]


@pytest.mark.needs_demo
async def test_a_mode_key_on_a_screen_above_its_first_goes_back_to_it(tmp_path) -> None:
    """`2` on the Item screen (opened from Items, in the items mode) goes back to the Items table,
    as `2` from any other mode goes there; it did nothing (a switch to the mode already current)."""
    app = demo_app(tmp_path)
    async with app.run_test(size=SIZE) as pilot:
        await pilot.press("2")
        await settle(pilot)
        await pilot.press("enter")
        await settle(pilot)
        assert isinstance(app.screen, ItemScreen)
        await pilot.press("2")
        await settle(pilot)
        assert isinstance(app.screen, ItemsScreen) and len(app.screen_stack) == 1
        await pilot.press("1")
        await settle(pilot)
        await pilot.press("2")
        await settle(pilot)
        assert isinstance(app.screen, ItemsScreen)
