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
        super().__init__(classes=self._card_classes(latest, stale, selected), **kw)
        self.round = r
        self.n, self.roles, self.latest, self.stale = n, roles, latest, stale
        self.with_media = media
        self.captions_only = captions_only
        self.selected = selected

    @staticmethod
    def _card_classes(latest: bool, stale: bool, selected: bool) -> str:
        return " ".join(c for c in ("clue-card", "latest" if latest else "", "stale" if stale else "",
                                    "selected" if selected else "") if c)

    def _captions(self, r: Round, captions_only: bool) -> Text:
        return Text("\n").join(caption_text(m) for m in r.media if m.text or captions_only)

    def _shape(self, r: Round, captions_only: bool) -> tuple[bool, bool]:
        """(has a thumbnail row, has a caption line): which widgets a card for `r` holds."""
        if not r.media or not self.with_media:
            return False, False
        return not captions_only, bool(self._captions(r, captions_only))

    def compose(self) -> ComposeResult:
        # few widgets per card (header and text in one Static, captions in one): each widget costs
        # style resolution and layout on every item change
        yield Static(self.header(self.selected), classes="clue-head")
        row, caption = self._shape(self.round, self.captions_only)
        if row:
            # the thumbnails are mounted just after the card is first painted (see mount_media): the
            # item's text shows at once, the pictures fill in (their row keeps its height meanwhile)
            yield Horizontal(classes="clue-media pending")
        if caption:
            yield Static(self._captions(self.round, self.captions_only), classes="clue-caption")

    async def reset(self, r: Round, n: int, roles: list[str], latest: bool, stale: bool,
                    captions_only: bool, selected: bool) -> bool:
        """Show another round in this card, in place (no unmount/mount: the next-item keystroke's
        budget). False, changing nothing, when `r` needs another set of widgets."""
        if self._shape(r, captions_only) != self._shape(self.round, self.captions_only):
            return False
        same_media = r.media == self.round.media and captions_only == self.captions_only
        self.round = r
        self.n, self.roles, self.latest, self.stale = n, roles, latest, stale
        self.captions_only, self.selected = captions_only, selected
        classes = self._card_classes(latest, stale, selected)
        if set(classes.split()) != set(self.classes):  # a class change restyles the card's subtree
            self.set_classes(classes)
        self.query_one(".clue-head", Static).update(self.header(selected))
        row, caption = self._shape(r, captions_only)
        if caption:
            self.query_one(".clue-caption", Static).update(self._captions(r, captions_only))
        if row and not same_media:
            media_row = self.query_one(".clue-media", Horizontal)
            if media_row.children:
                await media_row.remove_children()
            media_row.add_class("pending")  # mount_media fills it after the first paint
        return True

    async def mount_media(self) -> None:
        """Mount the thumbnails (once); the owner calls it after the card's first paint."""
        if not self.is_attached or self.captions_only or not self.with_media or not self.round.media:
            return
        row = self.query_one(".clue-media", Horizontal)
        if "pending" not in row.classes:
            return
        row.remove_class("pending")
        await row.mount_all([media_thumb(m, self.app.state) for m in self.round.media])

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
        old = list(self.children)
        old_cards = [c for c in old if isinstance(c, ClueCard)]
        gone: list[Widget] = [c for c in old if not isinstance(c, ClueCard)] + old_cards[len(self.rounds):]
        tail: list[Widget] = []
        if not self.rounds:
            tail.append(Static(Text("no clue rounds (an abstention control, or unlabelled)", style="dim")))
        # the cards already mounted show the new rounds in place where their widgets fit; new cards
        # only where they do not (or when this item has more rounds)
        for n, r in enumerate(self.rounds, start=1):
            args = (r, n, roles.get(r.round_id, []), r.round_id == latest, r.round_id in stale)
            selected = n - 1 == self.cursor
            if n <= len(old_cards):
                card = old_cards[n - 1]
                if await card.reset(*args, captions_only=captions_only, selected=selected):
                    continue
                await self.mount(ClueCard(*args, captions_only=captions_only, selected=selected), before=card)
                gone.append(card)
            else:
                tail.append(ClueCard(*args, captions_only=captions_only, selected=selected))
        if missing:
            tail.append(Static(Text.assemble(("clue ids not in the task: ", "red"),
                                             safe(", ".join(missing), one_line=True))))
        if gone:
            await self.remove_children(gone)
        if tail:
            await self.mount_all(tail)

    async def mount_media(self) -> None:
        """Fill in every card's thumbnails. Call it after the cards were painted (e.g. with
        call_after_refresh once the screen's batch is over), so the text shows first."""
        for card in list(self.query(ClueCard)):
            await card.mount_media()

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
