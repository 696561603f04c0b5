"""The key bar at the bottom of every screen: each shown binding as `key description`, wrapping onto a
second or third line when the screen is narrow. One Static instead of Textual's Footer (a widget per key,
recomposed on every focus change): switching items and screens stays cheap."""

from __future__ import annotations

from rich.text import Text
from textual.widgets import Static


class KeyBar(Static):
    DEFAULT_CSS = """
    KeyBar { dock: bottom; height: auto; max-height: 3; background: $panel; color: $text-muted; padding: 0 1; }
    """

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
        entries: list[Text] = []
        seen: set[str] = set()
        palette = None
        for key, active in self.screen.active_bindings.items():
            b = active.binding
            if key == app.COMMAND_PALETTE_BINDING:
                palette = b
                continue
            if not b.show or not b.description or b.action in seen:
                continue
            seen.add(b.action)
            entries.append(Text.assemble((app.get_key_display(b), "bold" if active.enabled else "dim"), " ",
                                         (b.description, "" if active.enabled else "dim")))
        if palette is not None:
            entries.append(Text.assemble((app.get_key_display(palette), "bold"), " palette"))
        # packed by hand, so a line breaks only between entries, never inside one
        width = max(20, self.size.width - 2) if self.size.width else 118
        out, line = Text(no_wrap=True, overflow="ellipsis"), 0
        for e in entries:
            need = e.cell_len + (2 if line else 0)
            if line and line + need > width:
                out.append("\n")
                line, need = 0, e.cell_len
            elif line:
                out.append("  ")
            out.append_text(e)
            line += need
        self.update(out)
