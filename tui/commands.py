"""The command palette (ctrl+p): every key the current screen offers, searchable by name.

Listing the active bindings (rather than a second hand-written list) keeps the palette, the footer
and the help screen in step: one binding, three places it shows.
"""

from __future__ import annotations

from functools import partial
from typing import Any

from textual.command import DiscoveryHit, Hit, Hits, Provider
from textual.content import Content


def key_label(key: str) -> str:
    return {"question_mark": "?", "slash": "/", "left_square_bracket": "[", "right_square_bracket": "]",
            "escape": "esc", "enter": "enter"}.get(key, key)


def screen_commands(screen: Any) -> list[tuple[str, str, str, Any, str]]:
    """(description, key, action, namespace, tooltip) for each described, enabled binding of the
    screen and the app (a focused widget's own keys — scrolling, copying — are left out)."""
    from textual.app import App
    from textual.screen import Screen

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


class MemscopeCommands(Provider):
    """Commands from the bindings of the screen the palette was opened on."""

    async def _run(self, action: str, namespace: Any) -> None:
        await self.app.run_action(action, namespace)

    def _hits(self):
        for desc, key, action, node, tip in screen_commands(self.screen):
            yield desc, key, partial(self._run, action, node), tip

    async def discover(self) -> Hits:
        for desc, key, run, tip in self._hits():
            yield DiscoveryHit(Content(f"{desc}  ({key})"), run, help=tip or None)

    async def search(self, query: str) -> Hits:
        matcher = self.matcher(query)
        for desc, key, run, tip in self._hits():
            text = f"{desc}  ({key})"
            score = matcher.match(text)
            if score > 0:
                yield Hit(score, matcher.highlight(text), run, help=tip or None)
