"""Jumping from a clue to its round in the Session screen (tui/screens/session.py); esc comes back."""

from __future__ import annotations

from scorer.model import Item, Task


def open_session(app, task: Task, round_id: str, item: Item | None = None) -> None:
    from tui.screens.session import SessionScreen

    app.push_screen(SessionScreen(task.name, round_id, item=item))
