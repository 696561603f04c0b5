"""Texts rendered ahead of time: what lets the Item screen's next-item keystroke only swap lines in.

`Prepared` is a Textual Visual around one literal rich Text (converted to Textual Content once) that
keeps the lines it rendered, per width and style, and its heights. A `PreparedCache` keeps them under
keys that say what they show (the item, the rotation, the run, …); the widget that shows a text owns
the cache, so its prefetch and its display share them: while the user reads an item, the Item screen
renders the next item's texts at the widths of the widgets that will show them
(ItemScreen._prefetch), and the keystroke does no wrapping and no styling of text (issue 4: next
item < 50 ms).

A Static shows one as it shows any Visual: `Static.update(prepared)`; `show_text` skips the update
when the widget already shows the same text. Text selection (the mouse) renders afresh, uncached.
"""

from __future__ import annotations

from collections import OrderedDict
from typing import Callable, Hashable

from rich.text import Text
from textual.content import Content
from textual.css.styles import RulesMap
from textual.strip import Strip
from textual.style import Style
from textual.visual import RenderOptions, Visual

from tui.text import same_text

WIDTHS = 4  # renders kept per text (a width and a style each: e.g. with and without a scrollbar)


class Prepared(Visual):
    def __init__(self, text: Text) -> None:
        self.text = text  # literal: built by tui.text helpers from data, never parsed as markup
        self._content: Content | None = None
        self._lines: OrderedDict[tuple, list[Strip]] = OrderedDict()
        self._heights: dict[tuple, int] = {}

    @property
    def content(self) -> Content:
        if self._content is None:
            self._content = Content.from_rich_text(self.text)  # the running app's console resolves styles
        return self._content

    def get_optimal_width(self, rules: RulesMap, container_width: int) -> int:
        return self.content.get_optimal_width(rules, container_width)

    def get_minimal_width(self, rules: RulesMap) -> int:
        return self.content.get_minimal_width(rules)

    def get_height(self, rules: RulesMap, width: int) -> int:
        key = (width, rules.get("line_pad", 0), rules.get("text_overflow", "fold"), rules.get("text_wrap", "wrap"))
        height = self._heights.get(key)
        if height is None:
            height = self._heights[key] = self.content.get_height(rules, width)
        return height

    def render_strips(self, width: int, height: int | None, style: Style, options: RenderOptions) -> list[Strip]:
        if options.selection is not None or options.post_style is not None:
            return self.content.render_strips(width, height, style, options)
        rule = options.rules.get
        key = (width, style, rule("text_align", "left"), rule("text_overflow", "fold"), rule("text_wrap", "wrap"),
               rule("line_pad", 0))
        lines = self._lines.get(key)
        if lines is None:
            lines = self._lines[key] = self.content.render_strips(width, None, style, options)
            while len(self._lines) > WIDTHS:
                self._lines.popitem(last=False)
        else:
            self._lines.move_to_end(key)
        return lines if height is None else lines[:height]

    def render_ahead(self, widget, scroller=None) -> None:
        """Render (and measure) this text as `widget` (a Static, laid out) would show it now; and, when
        it is inside `scroller` (a scrolling box), as it would with that box's scrollbar shown if it is
        hidden now, or hidden if it is shown: the next item may need it or not."""
        width = widget.size.width
        if width <= 0:
            return
        widths = [width]
        if scroller is not None and (bar := scroller.styles.scrollbar_size_vertical):
            widths.append(width + bar if scroller.show_vertical_scrollbar else width - bar)
        for w in widths:
            if w > 0:
                self.get_height(widget.styles, w)
                Visual.to_strips(widget, self, w, None, widget.visual_style)


class PreparedCache:
    """A bounded LRU of Prepared texts by what they show; one per widget that shows them (its keys
    need only tell apart what that widget shows of one benchmark)."""

    def __init__(self, size: int = 128) -> None:
        self.size = size
        self._entries: OrderedDict[Hashable, Prepared] = OrderedDict()

    def get(self, key: Hashable, build: Callable[[], Text]) -> Prepared:
        hit = self._entries.get(key)
        if hit is not None:
            self._entries.move_to_end(key)
            return hit
        prepared = self._entries[key] = Prepared(build())
        while len(self._entries) > self.size:
            self._entries.popitem(last=False)
        return prepared

    def clear(self) -> None:
        self._entries.clear()



def show_text(widget, text: Text | Prepared) -> None:
    """`widget.update(text)` (a Static), skipped when it already shows the same text: an update
    re-wraps, repaints and relayouts, and many of the Item screen's lines stay the same."""
    old = widget.content
    if old is text:
        return
    a = old.text if isinstance(old, Prepared) else old
    b = text.text if isinstance(text, Prepared) else text
    if not same_text(a, b):
        widget.update(text)
