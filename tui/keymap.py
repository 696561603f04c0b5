"""The app's one key map (DESIGN §7): every binding id → its key, description and meaning, defined
here once. Screens build their bindings from it (`bind`), the help screen lists it, and a user may
remap keys in `keys.toml` (`load_user_keymap`; $XDG_CONFIG_HOME/memscope/keys.toml, else
~/.config/memscope/keys.toml), which the app applies with Textual's `App.set_keymap`.

A key means one thing on every screen where it exists. Several ids may share a meaning (the Item
screen's note and a study entry's note are both "note": `N`); such ids always have the same key, and
remapping one of them in keys.toml moves them all. The one exception is a *choice* key: where the
screen offers lettered or numbered choices (the oracle's options a–h, the label study's 1–7, the
flag dialog's 1–6), the letter or digit printed beside a choice picks it; those keys are listed as
choices and never take a key the same screen uses for anything else (`f` flags, so the oracle's
option F is shift+F).

    keys.toml:   "study.note" = "ctrl+t"     # or by meaning:  note = "ctrl+t"
"""

from __future__ import annotations

import os
import tomllib
from dataclasses import dataclass
from pathlib import Path

from textual.binding import Binding
from textual.keys import _normalize_key_list, format_key

from scorer.model.labels import OPTION_LETTERS, X_LABELS, Y_LABELS

FLAG_COUNT = 6  # scorer.store.FLAGS has six kinds: picked with 1–6 in the flag dialog


@dataclass(frozen=True)
class Key:
    key: str  # Textual key names; several keys comma-separated
    description: str
    tooltip: str = ""
    meaning: str = ""  # ids with one meaning share one key; "" = the id is its own meaning
    choice: bool = False  # a choice key: picks the choice printed beside it (see the module text)
    display: str | None = None  # how the key bar shows it, when not the key itself


# meaning → what it means wherever it exists (the help screen's list)
MEANINGS = {
    "back": "leave this screen or dialog (a study keeps your place; a dialog saves nothing)",
    "next": "the next one of what this screen steps through: item, round, study entry",
    "prev": "the previous one of what this screen steps through",
    "note": "write a note on this item or entry",
    "flag": "flag this item or entry (with a reason)",
    "undo": "undo your last act (the line says exactly which)",
    "confirm": "open the highlighted row, or save the choice made",
    "clear": "clear what you selected (labels, filters)",
    "reload": "read again from the database, or score again",
    "clue-round": "the clue's round in the Session screen",
    "right": "a video's next frame (the viewer pans right when zoomed in)",
    "left": "a video's previous frame (the viewer pans left when zoomed in)",
    "down": "move down: scroll, a list's highlight (the viewer pans when zoomed in)",
    "up": "move up: scroll, a list's highlight (the viewer pans when zoomed in)",
    "view": "the selected image or video full screen (z again closes it)",
    "export": "write case cards (Markdown + LaTeX) under exports/: this item, or every item shown",
    "help": "this help (? again closes it)",
}


def _choices() -> dict[str, Key]:
    out: dict[str, Key] = {}
    for i, v in enumerate((*X_LABELS, *Y_LABELS)):
        out[f"labels.toggle-{v.lower()}"] = Key(str(i + 1), v, f"toggle {v}", choice=True)
    for i in range(FLAG_COUNT):
        out[f"flag.pick-{i + 1}"] = Key(str(i + 1), str(i + 1), "pick the flag numbered so", choice=True)
    for L in OPTION_LETTERS:
        keys = L if L == "F" else f"{L.lower()},{L}"  # lower-case f is the flag key
        out[f"oracle.answer-{L.lower()}"] = Key(keys, L, f"answer option {L}", choice=True)
    return out


KEYMAP: dict[str, Key] = {
    # the app's keys (every screen)
    "app.overview": Key("1", "Overview", "the benchmark at a glance"),
    "app.items": Key("2", "Items", "the table of items, with filters"),
    "app.scores": Key("3", "Scores", "the scorer's matrices"),
    "app.study": Key("4", "Study", "annotation studies: agreement, oracle, labels"),
    "app.help": Key("question_mark", "Help", "the keys of this screen and the whole key map", "help", display="?"),
    "app.quit": Key("q", "Quit", "quit (asks first if a choice is not saved)"),
    "media.view": Key("z", "View", "the selected image or video full screen: zoom, pan, play", "view"),
    # leaving, moving
    "back": Key("escape", "Back", "back to where you came from", "back", display="esc"),
    "dialog.cancel": Key("escape", "Cancel", "close the dialog, saving nothing", "back", display="esc"),
    "help.close": Key("escape", "Close help", "", "back", display="esc"),
    "search.close": Key("escape", "Close", "back to where you were", "back", display="esc"),
    "study.leave": Key("escape", "Leave", "leave the study (your place is kept; asks first if a choice is "
                       "not saved)", "back", display="esc"),
    "item.next": Key("n", "Next", "next item in the Items list", "next"),
    "item.prev": Key("p", "Prev", "previous item in the Items list", "prev"),
    "session.next-round": Key("n", "Round", "the next round (across sessions)", "next"),
    "session.prev-round": Key("p", "Previous round", "the previous round", "prev"),
    "study.next": Key("n", "Next", "the next entry of your queue (asks first if a choice is not saved)", "next"),
    "study.prev": Key("p", "Prev", "the previous entry (asks first if a choice is not saved)", "prev"),
    "session.next-session": Key("right_curly_bracket", "Session", "the first round of the next session",
                                display="}"),
    "session.prev-session": Key("left_curly_bracket", "Previous session",
                                "the first round of this session, or of the previous one", display="{"),
    "scroll.down": Key("down", "Scroll down", "", "down"),
    "scroll.up": Key("up", "Scroll up", "", "up"),
    "picker.down": Key("down", "Down", "", "down"),
    "picker.up": Key("up", "Up", "", "up"),
    "scroll.page-down": Key("pagedown", "Page down"),
    "scroll.page-up": Key("pageup", "Page up"),
    # acts (Item screen and study entries)
    "annotate.note": Key("N", "Note", "write a note on this item", "note"),
    "study.note": Key("N", "Note", "write a note on this entry", "note"),
    "annotate.flag": Key("f", "Flag", "flag this item (ambiguous, leakage, bad media, wrong gold, …)", "flag"),
    "study.flag": Key("f", "Flag", "flag this entry (ambiguous, leakage, bad media, wrong gold, …)", "flag"),
    "annotate.undo": Key("u", "Undo", "undo your last act made on this screen", "undo"),
    "study.undo": Key("u", "Undo", "undo your last act in this study (the line names it)", "undo"),
    "annotate.relabel": Key("l", "Relabel", "set your X / Y labels for this item"),
    "annotate.verdict": Key("v", "Verdict", "accept / reject / borderline the open run's prediction"),
    "verdict.accept": Key("a", "Accept", "the prediction says what the gold answer says"),
    "verdict.reject": Key("r", "Reject", "it does not"),
    "verdict.borderline": Key("b", "Borderline", "you cannot decide (left out of κ, counted)"),
    "labels.save": Key("enter", "Save labels", "save the selected X and Y labels", "confirm"),
    "labels.clear": Key("backspace", "Clear", "clear the selection", "clear"),
    "oracle.type-answer": Key("i", "Type answer", "open-form study: type your answer, enter saves"),
    "pending.save": Key("enter", "Save", "save the choice and go on", "confirm"),
    "pending.discard": Key("d", "Discard", "drop the unsaved choice and go on"),
    # media
    "media.next-frame": Key("right", "Frame", "a video's next frame (← previous)", "right"),
    "media.prev-frame": Key("left", "Previous frame", "a video's previous frame", "left"),
    "media.play": Key("space", "Play/stop", "play or stop the audio or video"),
    "media.next": Key("m", "Media", "which video/audio ←/→ and space act on"),
    # Item screen
    "item.next-run": Key("right_square_bracket", "Next run", "the next run's tab", display="]"),
    "item.prev-run": Key("left_square_bracket", "Prev run", "the previous run's tab", display="["),
    "item.backbone": Key("B", "Backbone", "show the runs of the next backbone"),
    "item.evidence": Key("e", "Retr/Deliv", "switch the evidence list: retrieved ↔ delivered"),
    "item.rotation": Key("o", "Rotation", "cycle the MCQ rotation shown"),
    "item.next-clue": Key("c", "Clue", "highlight the next clue"),
    "item.prev-clue": Key("C", "Prev clue", "highlight the previous clue"),
    "item.goto-round": Key("g", "Go to round", "open the highlighted clue's round in Session", "clue-round"),
    "session.origin": Key("g", "Clue round", "back to the round this screen was opened at", "clue-round"),
    "item.compare": Key("S", "Side by side", "two runs side by side (e.g. FC(V) vs FC(T))"),
    "item.export": Key("E", "Export card", "write a case card (Markdown + LaTeX) under exports/", "export"),
    # Items, search
    "items.open": Key("enter", "Open", "open the highlighted item", "confirm"),
    "items.filter-text": Key("slash", "Search", "search id, question, answer, options", display="/"),
    "search.open": Key("s", "Search", "search rounds and items by meaning, jump to a hit"),
    "search.kind": Key("ctrl+r", "Rounds/items", "search rounds only, items only, or both"),
    "items.filter-task": Key("t", "Task", "filter by task (cycles)"),
    "items.filter-x": Key("x", "X", "filter by visual granularity X1–X4 (cycles)"),
    "items.filter-y": Key("y", "Y", "filter by reasoning depth Y1–Y3 (cycles)"),
    "items.filter-mode": Key("M", "Mode", "MCQ / open (cycles)"),
    "items.filter-answerable": Key("A", "Answerable", "answerable / abstention controls"),
    "items.filter-wrong": Key("w", "Wrong by", "items a given run got wrong (cycles runs)"),
    "items.filter-disagree": Key("j", "J≠H", "a human verdict disagrees with the judge"),
    "items.filter-annotated": Key("h", "Annotated", "annotated by a human or not (cycles)"),
    "items.clear": Key("backspace", "Clear", "clear every filter", "clear"),
    "items.filter-failure": Key("exclamation_mark", "Failures", "how the run failed, with counts (filters combine)",
                                display="!"),
    "items.sort": Key("O", "Order by", "sort by task, id, X, Y, score, judge, disagreement (cycles)"),
    "items.sort-reverse": Key("I", "Invert order", "reverse the order"),
    "items.export-cards": Key("E", "Export cards", "case cards of every item shown (Markdown + LaTeX)", "export"),
    "items.download-cards": Key("D", "Download cards",
                                "in a browser (memscope serve): the last exported cards as one zip"),
    # Scores, Studies, Side by side
    "scores.recompute": Key("R", "Recompute", "score again (e.g. after new annotations)", "reload"),
    "scores.open-cell": Key("enter", "Items", "the items behind the value under the cursor, worst first", "confirm"),
    "studies.open": Key("enter", "Open study", "work through the highlighted study", "confirm"),
    "studies.reload": Key("R", "Reload", "re-read the studies and progress from the database", "reload"),
    "studies.new": Key("ctrl+n", "New study", "make a study of any kind, with the options of `memscope study new`"),
    "compare.left": Key("less_than_sign", "Left run", "show the next run on the left", display="<"),
    "compare.right": Key("greater_than_sign", "Right run", "show the next run on the right", display=">"),
    "compare.swap": Key("W", "Swap", "swap the two sides"),
    # Viewer (tui/screens/viewer.py)
    "viewer.zoom-in": Key("plus,equals_sign", "Zoom in", "magnify: fit, 1×, 2×, 4×, 8× of the source pixels",
                          display="+/-"),
    "viewer.zoom-out": Key("minus", "Zoom out", "back down one zoom level"),
    "viewer.fit": Key("0", "Fit", "the whole picture in the screen"),
    "viewer.pan-left": Key("left", "Pan", "pan (at fit, ←/→ step a video's frames)", "left"),
    "viewer.pan-right": Key("right", "Pan right", "", "right"),
    "viewer.pan-up": Key("up", "Pan up", "", "up"),
    "viewer.pan-down": Key("down", "Pan down", "", "down"),
    "viewer.next-frame": Key("full_stop", "Frame", "the next frame (, the previous)", display=",/."),
    "viewer.prev-frame": Key("comma", "Previous frame", ""),
    **_choices(),
}


def meaning(binding_id: str) -> str:
    k = KEYMAP[binding_id]
    return k.meaning or binding_id


def key_of(binding_id: str) -> str:
    return KEYMAP[binding_id].key


def bind(binding_id: str, action: str, *, show: bool = True, priority: bool = False,
         description: str | None = None, tooltip: str | None = None, key_display: str | None = None) -> Binding:
    """The Binding with id `binding_id`: its key, description and tooltip from the map."""
    k = KEYMAP[binding_id]
    return Binding(k.key, action, k.description if description is None else description, show=show,
                   key_display=key_display if key_display is not None else k.display, priority=priority,
                   tooltip=k.tooltip if tooltip is None else tooltip, id=binding_id)


def shown_key(binding_id: str, remap: dict[str, str] | None = None) -> str:
    """The key as the screens print it ("n", "esc", "?"), after the user's remapping."""
    if remap and binding_id in remap:
        return "/".join(_display(k) for k in remap[binding_id].split(","))
    k = KEYMAP[binding_id]
    return k.display or "/".join(_display(one) for one in k.key.split(","))


def _display(key: str) -> str:
    return {"backspace": "backspace"}.get(key, format_key(key))


def keys(binding_id: str) -> list[str]:
    return _normalize_key_list(KEYMAP[binding_id].key).split(",")


# -- the user's remapping -------------------------------------------------------------------------------
def keys_file() -> Path:
    """$XDG_CONFIG_HOME/memscope/keys.toml, else ~/.config/memscope/keys.toml."""
    base = os.environ.get("XDG_CONFIG_HOME") or str(Path.home() / ".config")
    return Path(base) / "memscope" / "keys.toml"


def _meaning_ids() -> dict[str, list[str]]:
    out: dict[str, list[str]] = {}
    for i in KEYMAP:
        out.setdefault(meaning(i), []).append(i)
    return out


def check_remap(remap: dict[str, str]) -> list[str]:
    """Problems with `remap` (id → key) against the rest of the map: a key that would then mean two
    things (choices aside)."""
    effective = {i: remap.get(i, k.key) for i, k in KEYMAP.items()}
    by_key: dict[str, set[str]] = {}
    for i, key in effective.items():
        if KEYMAP[i].choice:
            continue
        for one in _normalize_key_list(key).split(","):
            by_key.setdefault(one, set()).add(meaning(i))
    out = []
    for key, meanings in sorted(by_key.items()):
        if len(meanings) > 1:
            out.append(f"{key!r} would mean {' and '.join(sorted(meanings))}")
    return out


def load_user_keymap(path: Path | None = None) -> tuple[dict[str, str], list[str]]:
    """The user's remapping (binding id → keys, every id of a remapped meaning included) and the
    problems found, each one line naming the file; a bad file or entry is reported and left out,
    never raised. A missing file is no remapping."""
    path = path or keys_file()
    try:
        text = path.read_text(encoding="utf-8")
    except FileNotFoundError:
        return {}, []
    except (OSError, UnicodeDecodeError) as err:
        return {}, [f"{path}: cannot read the key map ({err}); default keys used"]
    try:
        data = tomllib.loads(text)
    except tomllib.TOMLDecodeError as err:
        return {}, [f"{path}: not valid TOML ({err}); default keys used"]
    groups = _meaning_ids()
    remap: dict[str, str] = {}
    problems: list[str] = []
    for name, value in data.items():
        ids = groups.get(name) or (groups.get(meaning(name)) if name in KEYMAP else None)
        if not ids:
            problems.append(f"{path}: {name!r} is no binding id or meaning (see ? for the key map); left out")
            continue
        if not isinstance(value, str) or not value.strip() or any(not p.strip() for p in value.split(",")):
            problems.append(f"{path}: {name!r} must be a key name such as \"t\" or \"ctrl+t\"; left out")
            continue
        keys_ = _normalize_key_list(value.replace(" ", ""))
        trial = {**remap, **dict.fromkeys(ids, keys_)}
        clash = check_remap(trial)
        if clash:
            problems.append(f"{path}: {name} = {value!r} left out: {clash[0]}")
            continue
        remap = trial
    return remap, problems
