"""The text a running app shows, line by line: what the user would read off the terminal."""

from __future__ import annotations


def screen_lines(app) -> list[str]:
    """Every row of the current screen (modal screens included) as plain text."""
    strips = app.screen._compositor.render_strips()
    return ["".join(seg.text for seg in strip) for strip in strips]


def screen_text(app) -> str:
    return "\n".join(screen_lines(app))
