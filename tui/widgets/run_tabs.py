"""The Item screen's run tabs (issue 15): Textual's Tabs, but never a tab cut at an edge. Textual
scrolls a row too long for its width so the active tab is centred, leaving the tabs at both ends cut
("SRAG(V) budget" read as "SRAG(V)"). Here the row shows a window of WHOLE tabs holding the active
one (moving only when the active tab would leave it, as tmux's window list does), with "‹N" / "N›"
saying how many tabs lie beyond each side; [ ] / ← → still go through every tab. Labels are made
unique by `unique_labels` (two methods shown under one display name get their method name added)."""

from __future__ import annotations

from textual.app import ComposeResult
from textual.containers import Container, Horizontal, Vertical
from textual.widgets import Static, Tab, Tabs
from textual.widgets._tabs import Underline


def unique_labels(displays: list[str], methods: list[str]) -> list[str]:
    """The tab labels: each display name, with the method added where two tabs share one."""
    return [f"{d} ({m})" if displays.count(d) > 1 else d for d, m in zip(displays, methods)]


def marker_width(hidden: int) -> int:
    return 0 if hidden <= 0 else len(str(hidden)) + 2  # "‹3 " / " 3›"


def window(widths: list[int], active: int, start: int, avail: int) -> tuple[int, int]:
    """The tabs [a, b) shown: every tab if they fit; else whole tabs from `start` (the previous window's
    first tab) holding `active`, moved just enough to reach it, plus the room the markers need."""
    n = len(widths)
    if sum(widths) <= avail or n == 0:
        return 0, n

    def fits(a: int, b: int) -> bool:
        return sum(widths[a:b]) + marker_width(a) + marker_width(n - b) <= avail

    a = min(max(0, start), active)
    b = a + 1
    while b < n and fits(a, b + 1):
        b += 1
    if active >= b:  # gone off the right: end the window at the active tab
        a, b = active, active + 1
        while a > 0 and fits(a - 1, b):
            a -= 1
    while b < n and fits(a, b + 1):  # then use what room is left
        b += 1
    while a > 0 and fits(a - 1, b):
        a -= 1
    return a, b


class RunTabs(Tabs):
    DEFAULT_CSS = """
    RunTabs {
        & > #tabs-row { width: 100%; height: 2; }
        & #tabs-scroll { overflow: hidden; width: auto; height: 2; }
        & .tabs-more { width: auto; height: 1; color: $text-muted; text-style: bold; }
    }
    """

    def __init__(self, *tabs, **kw) -> None:
        super().__init__(*tabs, **kw)
        self._start = 0
        self.shown: tuple[int, int] = (0, len(tabs))  # the window of tabs on screen (tests)

    def compose(self) -> ComposeResult:
        with Horizontal(id="tabs-row"):
            yield Static(id="tabs-more-left", classes="tabs-more", markup=False)
            with Container(id="tabs-scroll"):
                with Vertical(id="tabs-list-bar"):
                    with Horizontal(id="tabs-list"):
                        yield from self._tabs
                    yield Underline()
            yield Static(id="tabs-more-right", classes="tabs-more", markup=False)

    def _scroll_active_tab(self) -> None:
        """(Textual calls this on each activation and resize.) Show the window of whole tabs."""
        tabs = list(self.query("#tabs-list > Tab").results(Tab))
        active = self.active_tab
        if not tabs or active is None or not self.size.width:
            return
        widths = [t.label.cell_length + t.styles.gutter.width for t in tabs]
        a, b = window(widths, tabs.index(active), self._start, self.size.width)
        self._start, self.shown = a, (a, b)
        for marker, hidden, text in (("#tabs-more-left", a, f"‹{a} "), ("#tabs-more-right", len(tabs) - b,
                                                                          f" {len(tabs) - b}›")):
            m = self.query_one(marker, Static)
            m.display = hidden > 0
            m.update(text)
        scroll = self.query_one("#tabs-scroll")
        scroll.styles.width = sum(widths[a:b]) if (a, b) != (0, len(tabs)) else "100%"
        x = sum(widths[:a])
        scroll.scroll_to(x=x, animate=False, force=True, immediate=True)
        # again once laid out at its new width (a narrower window's offset was clamped to the old one)
        self.call_after_refresh(scroll.scroll_to, x=x, animate=False, force=True, immediate=True)
