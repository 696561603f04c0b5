"""One key map (DESIGN §7, tui/keymap.py): every screen's keys, read from the code at test time (so a
binding added later is checked too), agree with the map, and a key means one thing on every screen
where it exists; a keys.toml file remaps a key everywhere it means the same thing, and a bad file is
one line, never a crash."""

from __future__ import annotations

import importlib
import io
import inspect
import pkgutil
import sys
from pathlib import Path

import pytest
from rich.console import Console
from textual.app import App
from textual.binding import Binding, BindingsMap
from textual.keys import _normalize_key_list
from textual.screen import Screen

import tui
from tests.tui.apphelpers import SIZE, new_study, settle, study_app, wait_ready
from tui.keymap import KEYMAP, check_remap, keys_file, load_user_keymap, meaning

# Digits that answer (the label study's X/Y toggles) may shadow the app's screen keys 1–4 there.
MAY_BE_SHADOWED_BY_CHOICES = {"app.overview", "app.items", "app.scores", "app.study"}


def tui_classes() -> list[type]:
    """Every Screen and App class the app defines (walked at test time: new screens are included)."""
    out = []
    for m in pkgutil.walk_packages(tui.__path__, "tui."):
        module = importlib.import_module(m.name)
        for _, cls in inspect.getmembers(module, inspect.isclass):
            if cls.__module__ == module.__name__ and issubclass(cls, (Screen, App)):
                out.append(cls)
    return out


def own_layers(cls: type) -> list[dict[str, list[Binding]]]:
    """The key → bindings of each class in cls's MRO that the app defines, base first (Textual's
    merge: a subclass's key replaces its base's)."""
    return [BindingsMap(vars(base)["BINDINGS"]).key_to_bindings for base in reversed(cls.__mro__)
            if base.__module__.startswith("tui.") and "BINDINGS" in vars(base)]


def effective(cls: type) -> dict[str, list[Binding]]:
    keys: dict[str, list[Binding]] = {}
    for layer in own_layers(cls):
        keys.update(layer)
    return keys


def where_keys_mean(classes: list[type]) -> dict[str, dict[str, set[str]]]:
    """key → meaning → the classes where it means that (choice keys left out)."""
    out: dict[str, dict[str, set[str]]] = {}
    for cls in classes:
        for key, bindings in effective(cls).items():
            for b in bindings:
                if b.id in KEYMAP and KEYMAP[b.id].choice:
                    continue
                m = meaning(b.id) if b.id in KEYMAP else f"{b.id or b.action} (not in tui/keymap.py)"
                out.setdefault(key, {}).setdefault(m, set()).add(f"{cls.__module__}.{cls.__name__}")
    return out


def meaning_conflicts(classes: list[type]) -> list[str]:
    return [f"{key!r}: " + "; ".join(f"{m} on {', '.join(sorted(w))}" for m, w in sorted(ms.items()))
            for key, ms in sorted(where_keys_mean(classes).items()) if len(ms) > 1]


def test_the_walk_finds_the_screens() -> None:
    names = {c.__name__ for c in tui_classes()}
    assert {"MemscopeApp", "ItemScreen", "ItemsScreen", "SessionScreen", "LabelStudyScreen", "OracleStudyScreen",
            "AgreementStudyScreen", "HelpScreen", "FlagDialog"} <= names


def test_every_binding_is_in_the_key_map_with_its_key() -> None:
    wrong = []
    for cls in tui_classes():
        for layer in own_layers(cls):
            for key, bindings in layer.items():
                for b in bindings:
                    if b.id not in KEYMAP:
                        wrong.append(f"{cls.__name__}: {key!r} → {b.action} has id {b.id!r}, not in tui/keymap.py")
                    elif key not in _normalize_key_list(KEYMAP[b.id].key).split(","):
                        wrong.append(f"{cls.__name__}: {b.id} is on {key!r}; the key map says "
                                     f"{KEYMAP[b.id].key!r}")
    assert wrong == []


def test_a_key_means_one_thing_on_every_screen() -> None:
    assert meaning_conflicts(tui_classes()) == []


def test_the_check_fails_on_a_conflicting_meaning() -> None:
    """A screen that gives `n` another meaning (as the study's note once did) is caught."""

    class NoteOnN(Screen):
        BINDINGS = [Binding("n", "note", "Note", id="study.note-old")]

    NoteOnN.__module__ = "tui.screens.fake"
    found = meaning_conflicts([*tui_classes(), NoteOnN])
    assert len(found) == 1 and found[0].startswith("'n': ") and "next on" in found[0], found


def test_choice_keys_never_hide_a_key_of_their_own_screen() -> None:
    hidden = []
    for cls in tui_classes():
        layers = own_layers(cls)
        for key, bindings in effective(cls).items():
            if not all(b.id in KEYMAP and KEYMAP[b.id].choice for b in bindings):
                continue
            for layer in layers:
                for b in layer.get(key, []):
                    if b.id in KEYMAP and not KEYMAP[b.id].choice and b.id not in MAY_BE_SHADOWED_BY_CHOICES:
                        hidden.append(f"{cls.__name__}: the choice key {key!r} hides {b.id}")
    assert hidden == []


def test_the_map_itself_gives_each_key_one_meaning() -> None:
    assert check_remap({}) == []
    by_meaning: dict[str, set[str]] = {}
    for i, k in KEYMAP.items():
        by_meaning.setdefault(meaning(i), set()).add(_normalize_key_list(k.key))
    assert {m: ks for m, ks in by_meaning.items() if len(ks) > 1} == {}  # one meaning, one key


# -- keys.toml ---------------------------------------------------------------------------------------


def test_keys_file_follows_xdg(monkeypatch, tmp_path) -> None:
    monkeypatch.setenv("XDG_CONFIG_HOME", str(tmp_path / "cfg"))
    assert keys_file() == tmp_path / "cfg" / "memscope" / "keys.toml"
    monkeypatch.delenv("XDG_CONFIG_HOME")
    monkeypatch.setenv("HOME", str(tmp_path / "home"))
    assert keys_file() == tmp_path / "home" / ".config" / "memscope" / "keys.toml"


def write_keys(tmp_path: Path, monkeypatch, text: str) -> Path:
    monkeypatch.setenv("XDG_CONFIG_HOME", str(tmp_path / "cfg"))
    path = tmp_path / "cfg" / "memscope" / "keys.toml"
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(text, encoding="utf-8")
    return path


def test_a_remap_moves_every_id_of_the_meaning_and_bad_entries_are_one_line_each(tmp_path, monkeypatch) -> None:
    path = write_keys(tmp_path, monkeypatch, '"study.note" = "ctrl+t"\nnowhere = "k"\nflag = "n"\nundo = 3\n')
    remap, problems = load_user_keymap()
    assert remap == {"annotate.note": "ctrl+t", "study.note": "ctrl+t"}
    assert len(problems) == 3 and all(p.startswith(f"{path}: ") and "\n" not in p for p in problems)
    assert "'nowhere' is no binding id or meaning" in problems[0]
    assert "flag = 'n' left out: 'n' would mean" in problems[1] and "next" in problems[1]
    assert "'undo' must be a key name" in problems[2]


@pytest.mark.parametrize("text", ["this is = = not toml", "\ufffe\x00[", '[keys]\n"study.note" = "t"\n'])
def test_a_bad_keys_file_is_one_line(tmp_path, monkeypatch, text) -> None:
    path = write_keys(tmp_path, monkeypatch, text)
    remap, problems = load_user_keymap()
    assert remap == {} and len(problems) == 1 and problems[0].startswith(str(path)) and "\n" not in problems[0]


@pytest.mark.needs_demo
async def test_a_keys_file_remaps_the_note_key_in_the_running_app(tmp_path, monkeypatch) -> None:
    from tui.modals.note import NoteDialog

    write_keys(tmp_path, monkeypatch, 'note = "ctrl+t"\nbogus = "k"\n')
    db = tmp_path / "k.db"
    new_study(db, "labels", "keys", "1")
    app = study_app(db, "keys", "ann1", runs=False)
    assert app.user_keys["study.note"] == "ctrl+t" and len(app.keymap_problems) == 1
    async with app.run_test(size=SIZE) as pilot:
        screen = await wait_ready(pilot)
        await settle(pilot)
        assert any("'bogus' is no binding id" in n.message for n in app._notifications)  # said on screen
        await pilot.press("N")  # the default key no longer notes
        await pilot.pause()
        assert app.screen is screen
        await pilot.press("ctrl+t")
        await pilot.pause()
        assert isinstance(app.screen, NoteDialog)
        await pilot.press(*"remapped", "enter")
        await pilot.pause()
        assert "note “remapped”" in str(screen.query_one("#study-saved").content)
        assert "ctrl+t note" in str(screen.query_one("#study-keys").content)  # the key legend follows the map
        assert app.return_code is None


@pytest.mark.needs_demo
def test_a_bad_keys_file_never_stops_the_app_start(tmp_path, monkeypatch, capsys) -> None:
    """launch() prints each problem on stderr as one line before the app runs."""
    import tui.app as app_module

    path = write_keys(tmp_path, monkeypatch, "[[[")
    monkeypatch.setattr(app_module, "run_app", lambda app: 0)
    monkeypatch.setattr(app_module, "prepare", lambda: None)
    from tests.paths import DEMO

    assert app_module.launch(DEMO) == 0
    err = capsys.readouterr().err.strip().splitlines()
    assert len(err) == 1 and err[0].startswith(f"memscope: {path}: not valid TOML"), err
    assert "Traceback" not in "".join(err) and sys.exc_info() == (None, None, None)


@pytest.mark.needs_demo
async def test_the_help_screen_shows_the_key_map_with_the_remapping(tmp_path, monkeypatch) -> None:
    from tests.tui.apphelpers import demo_app, text_of
    from tui.screens.help import HelpScreen

    write_keys(tmp_path, monkeypatch, 'flag = "ctrl+f"\n')
    app = demo_app(tmp_path)
    async with app.run_test(size=SIZE) as pilot:
        await pilot.press("question_mark")
        await settle(pilot)
        assert isinstance(app.screen, HelpScreen)
        console = Console(width=200, record=True, file=io.StringIO())
        console.print(app.screen.query_one("#help-keymap").content)  # the table the screen holds
        table = console.export_text()
        keymap_file = text_of(app.screen, "#help-keymap-file")
        assert "2 binding(s) remapped" in keymap_file and str(keys_file()) in keymap_file
        lines = {line.split()[0]: line for line in table.splitlines() if line.strip()}
        assert "flag this item or entry" in lines["ctrl+f"] and "f" not in lines  # the remapped key, not f
        assert "the next one of what this screen steps through" in lines["n"]
        await pilot.press("question_mark")  # ? again closes it
        await pilot.pause()
        assert not isinstance(app.screen, HelpScreen)
