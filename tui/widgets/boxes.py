"""Layout boxes with nothing of their own to paint (no border, background or content): Textual skips
painting their lines (`BLANK`), which a screen redrawn on every keystroke (the Item screen) notices.
Give them padding at most: a border or a background on one would not be drawn."""

from __future__ import annotations

from textual.containers import Horizontal, Vertical, VerticalScroll


class BlankRow(Horizontal):
    BLANK = True


class BlankColumn(Vertical):
    BLANK = True


class BlankScroll(VerticalScroll):
    BLANK = True  # its scrollbar is a widget of its own, painted as usual

    def watch_has_focus(self, _has_focus: bool) -> None:
        """Restyle the box alone on focus and blur (Textual restyles every descendant): nothing styles
        what is inside a box by the box's focus (app.tcss), and the Item screen's gold side, focused as
        the screen opens, holds every clue card and thumbnail (issue 19: the first Enter)."""
        self.app.stylesheet.update_nodes([self])
