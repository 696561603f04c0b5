"""The command palette (ctrl+p): every key the current screen offers, searchable by name.

The list is tui/widgets/keys.py's `screen_commands`, the one the help screen shows too.
`Palette` is Textual's palette with one crash worked around (see its docstring).
"""

from __future__ import annotations

from functools import partial
from typing import Any

from textual.command import CommandList, CommandPalette, DiscoveryHit, Hit, Hits, Provider
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


class Palette(CommandPalette):
    """Textual's command palette, safe against a page key before its list is laid out.

    ctrl+p and PageDown (or PageUp) in one burst — both keys in one read from the terminal — reach the
    palette after its list has options and a highlight but before its first layout: Textual 8.2's
    OptionList._move_page then looks the highlight up in an empty line map (KeyError: 0) and the app
    dies. A page key is ignored until the list has lines for its highlight (it is not shown yet, so
    there is no page to move by); every other key, and every page key after that, goes to Textual."""

    def _action_command_list(self, action: str) -> None:
        if action in ("page_down", "page_up"):
            commands = self.query_one(CommandList)
            if commands.highlighted is not None and commands.highlighted not in commands._index_to_line:
                return
        super()._action_command_list(action)
