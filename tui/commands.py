"""The command palette (ctrl+p): every key the current screen offers, searchable by name.

The list is tui/widgets/keys.py's `screen_commands`, the one the help screen shows too.
"""

from __future__ import annotations

from functools import partial
from typing import Any

from textual.command import DiscoveryHit, Hit, Hits, Provider
from textual.content import Content

from tui.widgets.keys import screen_commands


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
