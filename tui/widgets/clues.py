"""The gold clue chain in time order: one card per clue round with its role, date, text and a
thumbnail per media item; for Y3 items the latest clue and the stale ones marked. A cursor (`c`)
picks the clue that `g` jumps to in the Session screen."""

from __future__ import annotations

from rich.text import Text
from textual.app import ComposeResult
from textual.containers import Horizontal, Vertical
from textual.widget import Widget
from textual.widgets import Static

from scorer.model import Item, Media, Round, Task
from tui.evidence import latest_round, stale_clues
from tui.text import safe
from tui.widgets.thumbs import media_thumb

ROLE_STYLE = {"answer": "bold green", "select": "bold cyan", "narrow": "bold blue"}


def round_roles(item: Item) -> dict[str, list[str]]:
    roles: dict[str, list[str]] = {}
    for f in item.chain:
        roles.setdefault(f.round_id, []).append(f.role)
    return roles


def clue_header(r: Round, n: int, roles: list[str], latest: bool, stale: bool, selected: bool) -> Text:
    out = Text("▶ " if selected else "  ", style="bold cyan")
    out.append(f"{n}. ", style="bold")
    out.append_text(safe(r.round_id, "bold", one_line=True))
    if r.date:
        out.append(" · ")
        out.append_text(safe(r.date, "dim", one_line=True))
    for role in roles:
        out.append(" · ")
        out.append_text(safe(role, ROLE_STYLE.get(role, "bold"), one_line=True))
    kinds = sorted({m.kind for m in r.media})
    if kinds:
        out.append(" · " + ", ".join(kinds), style="dim")
    if latest:
        out.append("  ★ latest", style="bold yellow")
    if stale:
        out.append("  ⟲ stale", style="bold magenta")
    return out


def round_text(r: Round, limit: int | None = None) -> Text:
    out = Text()
    for who, text in (("user", r.user), ("assistant", r.assistant)):
        if not text:
            continue
        if len(out):
            out.append("\n")
        body = text if limit is None or len(text) <= limit else text[: limit - 1] + "…"
        out.append(f"{who}: ", style="bold dim")
        out.append_text(safe(body))
    return out


def caption_text(m: Media) -> Text:
    """What a text-only method saw in place of the medium: its caption or transcript."""
    label = {"image": "caption", "video": "video caption", "audio": "transcript"}.get(m.kind, "text")
    out = Text(f"{label}: ", style="bold dim")
    out.append_text(safe(m.text, "italic") if m.text else Text("(none)", style="dim"))
    return out


class ClueCard(Vertical):
    def __init__(self, r: Round, n: int, roles: list[str], latest: bool, stale: bool, media: bool = True,
                 captions_only: bool = False, selected: bool = False, **kw) -> None:
        classes = " ".join(c for c in ("clue-card", "latest" if latest else "", "stale" if stale else "",
                                       "selected" if selected else "") if c)
        super().__init__(classes=classes, **kw)
        self.round = r
        self.n, self.roles, self.latest, self.stale = n, roles, latest, stale
        self.with_media = media
        self.captions_only = captions_only
        self.selected = selected

    def compose(self) -> ComposeResult:
        # few widgets per card (header and text in one Static, captions in one): an item change
        # mounts every card anew, and each widget costs style resolution and layout
        yield Static(self.header(self.selected), classes="clue-head")
        if not self.round.media or not self.with_media:
            return
        captions = Text("\n").join(caption_text(m) for m in self.round.media if m.text or self.captions_only)
        if not self.captions_only:
            # the thumbnails are mounted just after the card is first painted (see on_mount): the
            # item's text shows at once, the pictures fill in (their row keeps its height meanwhile)
            yield Horizontal(classes="clue-media pending")
        if captions:
            yield Static(captions, classes="clue-caption")

    def on_mount(self) -> None:
        if self.with_media and not self.captions_only and self.round.media:
            self.call_after_refresh(self._mount_media)

    async def _mount_media(self) -> None:
        if not self.is_attached:
            return  # the card was replaced before it was painted
        row = self.query_one(".clue-media", Horizontal)
        await row.mount_all([media_thumb(m, self.app.state) for m in self.round.media])
        row.remove_class("pending")

    def header(self, selected: bool) -> Text:
        head = clue_header(self.round, self.n, self.roles, self.latest, self.stale, selected)
        body = round_text(self.round, 400)
        return Text.assemble(head, "\n", body) if body else head

    def select(self, selected: bool) -> None:
        self.selected = selected
        self.set_class(selected, "selected")
        self.query_one(".clue-head", Static).update(self.header(selected))


class ClueChain(Vertical):
    """The cards of one item's clue rounds; `select(i)` moves the cursor."""

    def __init__(self, **kw) -> None:
        super().__init__(**kw)
        self.rounds: list[Round] = []
        self.cursor = 0

    async def show(self, task: Task, item: Item, captions_only: bool = False) -> None:
        """Replace the cards (the caller batches the repaint). The cursor starts on the latest clue of a
        Y3 item, else on the first clue."""
        self.rounds = list(task.clue_chain(item))
        latest = latest_round(task, item)
        stale = stale_clues(task, item)
        roles = round_roles(item)
        missing = [c for c in item.clue_rounds if not task.has_round(c)]
        self.cursor = len(self.rounds) - 1 if latest and self.rounds else 0
        cards: list[Widget] = []
        if not self.rounds:
            cards.append(Static(Text("no clue rounds (an abstention control, or unlabelled)", style="dim")))
        for n, r in enumerate(self.rounds, start=1):
            cards.append(ClueCard(r, n, roles.get(r.round_id, []), r.round_id == latest, r.round_id in stale,
                                  captions_only=captions_only, selected=n - 1 == self.cursor))
        if missing:
            cards.append(Static(Text.assemble(("clue ids not in the task: ", "red"),
                                              safe(", ".join(missing), one_line=True))))
        await self.remove_children()
        await self.mount_all(cards)

    def move(self, step: int) -> Round | None:
        if not self.rounds:
            return None
        cards = list(self.query(ClueCard))
        old = self.cursor
        self.cursor = (self.cursor + step) % len(self.rounds)
        if len(cards) == len(self.rounds):
            cards[old].select(False)
            cards[self.cursor].select(True)
            cards[self.cursor].scroll_visible(animate=False)
        return self.rounds[self.cursor]

    @property
    def selected(self) -> Round | None:
        return self.rounds[self.cursor] if self.rounds else None
