"""The key bar at the bottom of every screen: each shown binding as `key description`, wrapping onto a
second or third line when the screen is narrow; on a short terminal (fewer than 30 rows, e.g. 80×24)
one line only, ending in "… ^p palette" when keys are left out (the palette lists every key). One
Static instead of Textual's Footer (a widget per key, recomposed on every focus change): switching
items and screens stays cheap."""

from __future__ import annotations

from rich.text import Text
from textual.widgets import Static


SHORT = 30  # terminal rows below which the key bar keeps to one line (the palette has the rest)


class KeyBar(Static):
    DEFAULT_CSS = """
    KeyBar { dock: bottom; height: auto; max-height: 3; background: $panel; color: $text-muted; padding: 0 1; }
    """

    _shown: tuple | None = None  # what the bar shows: its keys, width and rows (see _render_keys)

    def on_mount(self) -> None:
        self.screen.bindings_updated_signal.subscribe(self, self._changed)
        self._render_keys()

    def on_unmount(self) -> None:
        self.screen.bindings_updated_signal.unsubscribe(self)

    def _changed(self, screen) -> None:
        if screen is self.screen:
            self._render_keys()

    def on_resize(self) -> None:
        self._render_keys()

    def _render_keys(self) -> None:
        app = self.app
        seen: set[str] = set()
        palette = None
        shown: list[tuple[str, str, bool]] = []
        for key, active in self.screen.active_bindings.items():
            b = active.binding
            if key == app.COMMAND_PALETTE_BINDING:
                palette = b
                continue
            if not b.show or not b.description or b.action in seen:
                continue
            seen.add(b.action)
            shown.append((app.get_key_display(b), b.description, active.enabled))
        # packed by hand, so a line breaks only between entries, never inside one
        width = max(20, self.size.width - 2) if self.size.width else 118
        rows = 1 if app.size.height < SHORT else 3  # a short terminal keeps its lines for the content
        what = (tuple(shown), None if palette is None else app.get_key_display(palette), width, rows)
        if what == self._shown:
            return  # the same keys at the same width (a resize, a refocus): nothing to rebuild or relayout
        self._shown = what
        entries = [Text.assemble((k, "bold" if on else "dim"), " ", (d, "" if on else "dim")) for k, d, on in shown]
        tail = Text.assemble((app.get_key_display(palette), "bold"), " palette") if palette is not None else None
        out, line, row, all_shown = Text(no_wrap=True, overflow="ellipsis"), 0, 1, True
        for k, e in enumerate(entries):
            sep = 2 if line else 0
            if line and line + sep + e.cell_len > width:
                if row == rows:
                    all_shown = False
                    break
                out.append("\n")
                line, row, sep = 0, row + 1, 0
            if row == rows and tail is not None:  # the last row keeps room for "…  ^p palette"
                end = line + sep + e.cell_len
                rest = sum(x.cell_len + 2 for x in entries[k + 1:])
                if end + rest + 2 + tail.cell_len > width and end + 5 + tail.cell_len > width:
                    all_shown = False
                    break
            if sep:
                out.append("  ")
            out.append_text(e)
            line += sep + e.cell_len
        if tail is not None:
            if not all_shown:  # the keys left out are in the palette (ctrl+p), which lists every key
                tail = Text.assemble(("…", "dim"), "  ", tail)
            if line and line + 2 + tail.cell_len > width and row < rows:
                out.append("\n")
            elif line:
                out.append("  ")
            out.append_text(tail)
        out.rstrip()
        if self.styles.max_height is None or self.styles.max_height.value != rows:
            self.styles.max_height = rows  # one row on a short terminal, whatever Textual measures
        self.update(out)
