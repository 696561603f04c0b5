"""What every memscope screen has: the status line on top, the key bar at the bottom."""

from __future__ import annotations

from textual.app import ComposeResult
from textual.screen import Screen

from tui.widgets.keybar import KeyBar
from tui.widgets.status import StatusLine


class BaseScreen(Screen):
    WHERE = ""  # the screen's name in the status line

    def compose(self) -> ComposeResult:
        yield StatusLine(self.WHERE)
        yield from self.body()
        yield KeyBar()

    def body(self) -> ComposeResult:  # pragma: no cover - every screen overrides it
        yield from ()

    @property
    def state(self):
        return self.app.state
