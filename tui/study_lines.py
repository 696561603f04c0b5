"""The Study screens' lines, as Rich texts (tui/bases/study.py shows them): an entry's trace, and the
one line that says an act was saved, was already saved, was undone or was discarded. Data text goes
through tui.text.safe, never read as markup.

No Textual here.
"""

from __future__ import annotations

from collections.abc import Sequence

from rich.text import Text

from tui.acts import act_text
from tui.study_session import Saved
from tui.text import safe


def _one_line(line: Text) -> Text:
    line.no_wrap, line.overflow = True, "ellipsis"
    return line


def trace_text(acts: Sequence, answer_kind: str) -> Text:
    """Every act of the annotator on an entry (store events, oldest first); answers replaced by a later
    one are dimmed and say so."""
    latest = max((ev.id for ev in acts if ev.kind == answer_kind), default=None)
    out = Text("your acts on this entry", style="bold underline")
    for ev in acts:
        replaced = ev.kind == answer_kind and ev.id != latest
        out.append("\n· ", style="dim" if replaced else "")
        out.append_text(safe(act_text(ev.kind, dict(ev.payload)), "dim" if replaced else "bold"))
        out.append(f"  (event {ev.id}, {ev.ts[:19].replace('T', ' ')})", style="dim")
        if replaced:
            out.append(" replaced by a later answer", style="dim italic")
    return out


def saved_line(saved: Saved, what: Text) -> Text:
    line = Text("✓ saved ", style="bold green")
    line.append_text(safe(saved.entry.blind_id, "bold", one_line=True))
    line.append(f" (entry {saved.entry.position}, event {saved.event_id}) · ")
    line.append_text(what)
    line.append(f" · write {saved.seconds * 1000:.1f} ms", style="dim")
    return _one_line(line)


def unchanged_line(where: Text, described: str, event_id) -> Text:
    """An answer equal to the one the entry has: nothing written."""
    line = Text("✓ already saved ", style="bold green")
    line.append_text(where)
    line.append(" · ")
    line.append_text(safe(described, one_line=True))
    line.append(f" (event {event_id}) — unchanged, nothing written", style="dim")
    return _one_line(line)


def not_taken_line(where: Text, what: Text, event_id) -> Text:
    """A key pressed after a save and before the next entry is painted."""
    line = Text("✓ already saved ", style="bold green")
    line.append_text(where)
    line.append(" · ")
    line.append_text(what)
    line.append(f" (event {event_id}) — that key was not taken: the next entry is not shown yet", style="dim")
    return _one_line(line)


def undone_line(act, undo, where: Text) -> Text:
    line = Text("↶ undone ", style="bold yellow")
    line.append_text(safe(act_text(act.kind, dict(act.payload)), one_line=True))
    line.append(" on ")
    line.append_text(where)
    line.append(f" (event {act.id}, undo event {undo.id})", style="dim")
    return _one_line(line)


def discarded_line(what: Text, where: Text) -> Text:
    line = Text("✗ discarded (not saved) ", style="bold yellow")
    line.append_text(what)
    line.append(" on ")
    line.append_text(where)
    return line
