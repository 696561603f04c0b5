"""The keys a screen offers, as one list: what the command palette (tui/commands.py) and the help
screen show. Listing the active bindings (rather than a second hand-written list) keeps the palette,
the key bar and the help screen in step: one binding, three places it shows."""

from __future__ import annotations

from typing import Any

from textual.app import App
from textual.keys import format_key
from textual.screen import Screen


def key_label(key: str) -> str:
    """A key as it is typed ("!", "?", "[", "ctrl+p"): Textual's own names for keys, "enter" in words."""
    return "enter" if key == "enter" else format_key(key)


def screen_commands(screen: Any) -> list[tuple[str, str, str, Any, str]]:
    """(description, key, action, namespace, tooltip) for each described, enabled binding of the
    screen and the app (a focused widget's own keys — scrolling, copying — are left out)."""
    found: dict[str, list] = {}  # action → [description, keys, action, namespace, tooltip]
    for key, active in screen.active_bindings.items():
        b = active.binding
        if not isinstance(active.node, (Screen, App)) or b.action.endswith("copy_text"):
            continue
        if not b.description or not active.enabled:
            continue
        if b.action in found:  # one action on several keys (q and ctrl+q): one line, both keys
            found[b.action][1].append(key_label(key))
            continue
        found[b.action] = [b.description, [key_label(key)], b.action, active.node, b.tooltip or ""]
    return [(d, "/".join(keys), a, n, t) for d, keys, a, n, t in found.values()]
