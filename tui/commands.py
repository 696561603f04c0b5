"""The command palette (ctrl+p): every key the current screen offers, searchable by name, and the
app's own objects — runs, tasks, items (by id and question words) and studies — each opening where
it belongs (Items about the run or task, the Item screen, the study), by the app's messages.

The keys are tui/widgets/keys.py's `screen_commands`, the list the help screen shows too.
`Palette` is Textual's palette with one crash worked around (see its docstring).
"""

from __future__ import annotations

from functools import partial
from typing import Any

from textual.command import CommandList, CommandPalette, DiscoveryHit, Hit, Hits, Provider
from textual.content import Content

from scorer.errors import UserError
from scorer.safe_text import plain
from tui.messages import OpenItem, OpenItems, OpenStudy
from tui.rows import Filter
from tui.study_session import StudySession
from tui.widgets.keys import screen_commands

MAX_ITEM_HITS = 40  # items offered for one query (type more words to narrow)


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


class ObjectCommands(Provider):
    """Runs, tasks, items and studies of the loaded benchmark, by name."""

    def _objects(self):
        """(text, help, callback) for runs, tasks and studies (items: see `_items`)."""
        st = self.app.state
        app = self.app
        for ref in st.run_refs:
            text = plain(f"run {ref.display} · {ref.backbone} · {ref.mode}")
            f = Filter(run=ref.index, mode=ref.mode, sort="score")
            tip = f"Items this run scored, worst first ({plain(ref.method)})"
            yield text, tip, partial(app.post_message, OpenItems(f))
        for name in st.tasks:
            yield plain(f"task {name}"), "Items of this task", partial(app.post_message, OpenItems(Filter(task=name)))
        if st.store is not None and not getattr(app, "study_only", False):
            for study in st.store.studies():
                yield (plain(f"study {study.name} ({study.kind})"), "work through this study",
                       partial(self._open_study, study.name))

    def _open_study(self, name: str) -> None:
        try:
            session = StudySession(self.app.state, name)
        except UserError as err:
            self.app.notify(str(err), severity="error", markup=False)
            return
        self.app.post_message(OpenStudy(session))

    def _items(self, query: str):
        """Items whose id, question, answer or options hold every word of `query`."""
        words = query.lower().split()
        if not words or getattr(self.app, "study_only", False):
            return
        found = 0
        for row in self.app.state.rows:
            if all(w in row.search for w in words):
                it = row.item
                text = plain(f"item {it.item_id} ({it.mode}): {it.question}")[:110]
                yield text, "open this item", partial(self.app.post_message, OpenItem([row.key], row.key))
                found += 1
                if found >= MAX_ITEM_HITS:
                    return

    async def discover(self) -> Hits:
        for text, tip, run in self._objects():
            yield DiscoveryHit(Content(text), run, help=tip)

    async def search(self, query: str) -> Hits:
        # every word matched on its own, in any order ("task home reno" finds task Home_Renovation_…;
        # one matcher over the whole query would want its spaces where the name has them)
        matchers = [self.matcher(w) for w in query.split()]
        if not matchers:
            return
        for text, tip, run in self._objects():
            scores = [m.match(text) for m in matchers]
            if all(s > 0 for s in scores):
                yield Hit(sum(scores) / len(scores), Content(text), run, help=tip)
        for text, tip, run in self._items(query):
            yield Hit(0.5, Content(text), run, help=tip)


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
