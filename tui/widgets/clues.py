"""The gold clue chain in time order: one card per clue round with its role, date, text and a
thumbnail per media item; for Y3 items the latest clue and the stale ones marked. A cursor (`c`)
picks the clue that `g` jumps to in the Session screen.

A card is three flat widgets — its text (header and the round's dialogue), its row of thumbnails and
its caption line — that carry the card's classes (.latest / .stale / .selected), not a container
around them: every widget and every nesting level costs layout and compositing on each item change.
The cards are refilled in place from item to item (spare ones hidden), so the next-item keystroke
mounts and removes nothing (issue 4's 50 ms budget; bench/app.py)."""

from __future__ import annotations

from typing import Iterator

from rich.text import Text
from textual.app import ComposeResult
from textual.containers import Vertical
from textual.widget import Widget
from textual.widgets import Static

from scorer.model import Item, Media, Round, Task
from tui.evidence import latest_round, stale_clues
from tui.text import safe
from tui.widgets.prepared import PreparedCache, show_text
from tui.widgets.thumbs import ThumbRow

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


def captions_text(r: Round, captions_only: bool) -> Text:
    """The card's caption lines: every medium's caption, or "(none)" too when captions stand in for media."""
    return Text("\n").join(caption_text(m) for m in r.media if m.text or captions_only)


def _show(widget: Widget, shown: bool) -> None:
    if widget.display != shown:  # each change relayouts: only when it changes
        widget.display = shown


def head_text(texts: PreparedCache, r: Round, n: int, roles: list[str], latest: bool, stale: bool,
              selected: bool):
    """A card's first widget: its header line and the round's dialogue (cut at 400 characters)."""
    def build() -> Text:
        head = clue_header(r, n, roles, latest, stale, selected)
        body = round_text(r, 400)
        return Text.assemble(head, "\n", body) if body else head

    # rounds by identity: round ids repeat across tasks (the benchmark keeps the rounds alive)
    return texts.get(("head", id(r), n, tuple(roles), latest, stale, selected), build)


def caption_lines(texts: PreparedCache, r: Round, captions_only: bool):
    """A card's caption lines, or None when it has none to show."""
    if not any(m.text for m in r.media) and not (captions_only and r.media):
        return None
    return texts.get(("captions", id(r), captions_only), lambda: captions_text(r, captions_only))


MARKS = frozenset({"latest", "stale", "selected"})


class _Card:
    """One card's widgets (children of the ClueChain, in this order) and what they show."""

    def __init__(self) -> None:
        self.head = Static(classes="clue-head clue-part")
        self.row = ThumbRow(classes="clue-media clue-part")
        self.caption = Static(classes="clue-caption clue-part")
        self.round: Round | None = None
        self.n, self.roles, self.latest, self.stale = 0, [], False, False
        self.marks: frozenset[str] = frozenset()

    @property
    def widgets(self) -> tuple[Widget, Widget, Widget]:
        return self.head, self.row, self.caption

    def fill(self, texts: PreparedCache, r: Round, n: int, roles: list[str], latest: bool, stale: bool,
             selected: bool, media: bool, captions_only: bool) -> None:
        self.round, self.n, self.roles, self.latest, self.stale = r, n, roles, latest, stale
        self.mark(latest, stale, selected)
        _show(self.head, True)
        show_text(self.head, head_text(texts, r, n, roles, latest, stale, selected))
        thumbs = bool(r.media) and media and not captions_only
        if thumbs:
            self.row.fill(r.media)
        _show(self.row, thumbs)
        captions = caption_lines(texts, r, captions_only) if r.media and media else None
        if captions is not None:
            show_text(self.caption, captions)
        _show(self.caption, captions is not None)

    def mark(self, latest: bool, stale: bool, selected: bool) -> None:
        marks = frozenset(c for c, on in (("latest", latest), ("stale", stale), ("selected", selected)) if on)
        if marks == self.marks:
            return  # a class change restyles the widget's subtree: only when it changes
        self.marks = marks
        for w in (self.head, self.caption):
            if w.is_mounted:  # (a Static restyles itself alone)
                w.set_classes({*(set(w.classes) - MARKS), *marks})
            else:  # styled once, when mounted
                w.remove_class(*MARKS, update=False)
                w.add_class(*marks, update=False)
        self.row.set_marks({*(set(self.row.classes) - MARKS), *marks})

    def select(self, texts: PreparedCache, selected: bool) -> None:
        self.mark(self.latest, self.stale, selected)
        show_text(self.head, head_text(texts, self.round, self.n, self.roles, self.latest, self.stale, selected))

    def hide(self) -> None:
        for w in self.widgets:
            _show(w, False)
        self.round = None


class ClueChain(Vertical):
    """The cards of one item's clue rounds; `show` refills them, `move(step)` moves the cursor."""

    BLANK = True  # no border, background or content of its own: Textual skips painting its lines

    def __init__(self, media: bool = True, **kw) -> None:
        super().__init__(**kw)
        self.with_media = media
        self.rounds: list[Round] = []
        self.cursor = 0
        self._cards: list[_Card] = []
        self._texts = PreparedCache()  # the cards' texts, shown and prefetched (see prepare)
        self._empty = Static(Text("no clue rounds (an abstention control, or unlabelled)", style="dim"),
                             classes="clue-empty")
        self._missing = Static(classes="clue-missing")

    def compose(self) -> ComposeResult:
        for card in self._cards:  # filled by preload(), if it came first
            yield from card.widgets
        yield self._empty
        yield self._missing

    def preload(self, task: Task, item: Item, captions_only: bool = False) -> None:
        """Fill the cards for `item` before the chain is mounted: they are mounted (and styled) once,
        with the screen (the Item screen opening with this item)."""
        self._fill(task, item, captions_only)

    @staticmethod
    def _plan(task: Task, item: Item) -> tuple[list[Round], str | None, set[str], dict[str, list[str]], int]:
        rounds = list(task.clue_chain(item))
        latest = latest_round(task, item)
        cursor = len(rounds) - 1 if latest and rounds else 0
        return rounds, latest, stale_clues(task, item), round_roles(item), cursor

    async def show(self, task: Task, item: Item, captions_only: bool = False) -> None:
        """Show `item`'s clue rounds (the caller batches the repaint). The cursor starts on the latest
        clue of a Y3 item, else on the first clue. Thumbnails that could not be reused in place come
        with mount_media(), after the first paint."""
        async with self.lock:  # not while mount_media mounts the previous item's thumbnails
            new = self._fill(task, item, captions_only)
            if new and self.is_mounted:
                await self.mount_all(new, before=self._empty)

    def _fill(self, task: Task, item: Item, captions_only: bool) -> list[Widget]:
        """Fill the cards (new ones first filled, then returned to be mounted: styled once)."""
        self.rounds, latest, stale, roles, self.cursor = self._plan(task, item)
        missing = [c for c in item.clue_rounds if not task.has_round(c)]
        new: list[Widget] = []
        while len(self._cards) < len(self.rounds):
            card = _Card()
            self._cards.append(card)
            new.extend(card.widgets)
        for i, card in enumerate(self._cards):
            if i < len(self.rounds):
                r = self.rounds[i]
                card.fill(self._texts, r, i + 1, roles.get(r.round_id, []), r.round_id == latest,
                          r.round_id in stale, i == self.cursor, self.with_media, captions_only)
            elif card.round is not None:
                card.hide()
        _show(self._empty, not self.rounds)
        if missing:
            self._missing.update(Text.assemble(("clue ids not in the task: ", "red"),
                                               safe(", ".join(missing), one_line=True)))
        _show(self._missing, bool(missing))
        return new

    def prepare(self, task: Task, item: Item, captions_only: bool = False, scroller=None) -> Iterator[None]:
        """Render `item`'s card texts ahead, in the cards that will show them (a generator: one step
        per card, so the caller can yield to input between them); `scroller`: see Prepared.render_ahead."""
        rounds, latest, stale, roles, cursor = self._plan(task, item)
        # rendered as a card shown now with the same selection renders them (the selected card's
        # background is in its text's style; every card has the same width)
        shown = [c for c in self._cards if c.round is not None]
        heads = {("selected" in c.marks): c.head for c in shown}
        captions_in = {("selected" in c.marks): c.caption for c in shown if c.caption.display}
        for i, r in enumerate(rounds[: len(self._cards)]):
            head = head_text(self._texts, r, i + 1, roles.get(r.round_id, []), r.round_id == latest,
                             r.round_id in stale, i == cursor)
            if (like := heads.get(i == cursor)) is not None:
                head.render_ahead(like, scroller)
            captions = caption_lines(self._texts, r, captions_only) if r.media and self.with_media else None
            if captions is not None and (like := captions_in.get(i == cursor)) is not None:
                captions.render_ahead(like, scroller)
            yield

    async def mount_media(self) -> None:
        """Mount the thumbnails `show` could not reuse. Call it after the cards were painted (e.g. with
        call_after_refresh once the screen's batch is over), so the text shows first."""
        async with self.lock:
            for card in list(self._cards):
                await card.row.settle()

    def move(self, step: int) -> Round | None:
        if not self.rounds:
            return None
        old = self.cursor
        self.cursor = (self.cursor + step) % len(self.rounds)
        self._cards[old].select(self._texts, False)
        card = self._cards[self.cursor]
        card.select(self._texts, True)
        for w in reversed(card.widgets):  # the card's bottom, then its top: all of it when it fits
            if w.display:
                w.scroll_visible(animate=False)
        return self.rounds[self.cursor]

    @property
    def selected(self) -> Round | None:
        return self.rounds[self.cursor] if self.rounds else None
