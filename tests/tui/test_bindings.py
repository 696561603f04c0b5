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
