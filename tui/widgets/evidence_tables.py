"""One run's evidence as text: the ranked retrieved list, the delivered list with what packing
dropped, and the gold chain's completeness. Every round id / text from data is literal Text.

Plain Text grids rather than Rich tables: a Rich table measures every cell on every render, and the
Item screen re-renders these on each item change (next-item latency budget: 50 ms)."""

from __future__ import annotations

from typing import Sequence

from rich.text import Text

from tui.evidence import RunEvidence
from tui.text import safe

YES, NO, UNKNOWN = Text("✓", style="bold green"), Text("✗", style="bold red"), Text("?", style="dim")


def yn(v: bool | None, yes: Text = YES, no: Text = NO) -> Text:
    return UNKNOWN.copy() if v is None else (yes.copy() if v else no.copy())


def marks_text(gold: bool, stale: bool, latest: bool) -> Text:
    out = Text()
    if gold:
        out.append("✓ gold ", style="bold green")
    if latest:
        out.append("★ latest ", style="bold yellow")
    if stale:
        out.append("⟲ stale ", style="bold magenta")
    out.rstrip()
    return out


def grid(title: Text | str, header: Sequence[str], rows: Sequence[Sequence[Text]],
         right: Sequence[int] = (), gap: int = 2) -> Text:
    """A table as one Text: a bold title line, a dim header, then the rows, columns padded to fit."""
    widths = [len(h) for h in header]
    for row in rows:
        for i, c in enumerate(row):
            widths[i] = max(widths[i], c.cell_len)
    out = Text()
    out.append_text(title if isinstance(title, Text) else Text(title, style="bold"))

    def line(cells: Sequence[Text]) -> None:
        out.append("\n")
        for i, c in enumerate(cells):
            pad = " " * (widths[i] - c.cell_len)
            if i in right:
                out.append(pad)
                out.append_text(c)
            else:
                out.append_text(c)
                if i < len(cells) - 1:
                    out.append(pad)
            if i < len(cells) - 1:
                out.append(" " * gap)

    line([Text(h, style="bold dim") for h in header])
    for row in rows:
        line(row)
    return out


def chain_summary(ev: RunEvidence) -> Text:
    m = ev.marks
    n = len(m.chain)
    got_r = sum(1 for c in m.chain if c.retrieved)
    got_d = sum(1 for c in m.chain if c.delivered)
    out = Text("full chain  ", style="bold")
    if m.chain_retrieved is None:
        out.append("retrieved ? (not logged)", style="dim")
    else:
        out.append("retrieved ")
        out.append_text(yn(m.chain_retrieved))
        out.append(f" {got_r}/{n}")
    out.append("   ")
    if m.chain_delivered is None:
        out.append("delivered ? (not logged)", style="dim")
    else:
        out.append("delivered ")
        out.append_text(yn(m.chain_delivered))
        out.append(f" {got_d}/{n}")
    d = m.diagnosis
    if d is not None and d.temporal:
        out.append("\nY3 @%d  " % d.k, style="bold")
        out.append("latest ")
        out.append_text(yn(d.latest_hit))
        if d.latest_rank:
            out.append(f" (rank {d.latest_rank})")
        if d.stale_dominance:
            out.append("  stale dominates", style="bold magenta")
        if d.rank_inversion:
            out.append("  rank inversion", style="magenta")
    return out


def chain_table(ev: RunEvidence) -> Text:
    rows = [[safe(c.round_id, one_line=True), safe(c.role, one_line=True), safe(c.modality or "", one_line=True),
             yn(c.retrieved), yn(c.delivered)] for c in ev.marks.chain]
    return grid("gold chain", ("round", "role", "modality", "retrieved", "delivered"), rows)


def retrieved_table(ev: RunEvidence) -> Text:
    if not ev.retrieval_logged:
        why = {"full_context": "full context: every round before the question is delivered (minus FIFO truncation)",
               "clue_only": "clue-only oracle: the gold clue rounds are delivered"}.get(ev.history_source or "", "")
        return Text(f"retrieved: not logged by this run{' — ' + why if why else ''}", style="dim")
    m = ev.marks
    rows = []
    for r in m.rounds:
        style = "" if r.in_top_k else "dim"
        rid = safe(r.round_id, style, one_line=True)
        if not r.exists:
            rid.append(" (not in task)", style="red")
        rows.append([Text(str(r.rank), style=style), Text("—" if r.score is None else f"{r.score:.3f}", style=style),
                     rid, marks_text(r.gold, r.stale, r.latest), yn(r.delivered, YES, Text("✗ dropped", style="red"))])
    if not rows:
        return Text.assemble(("retrieved", "bold"), ("\n(retrieved nothing)", "dim"))
    title = Text.assemble(("retrieved", "bold"), (f" (ranked, best first; beyond top-{m.k} dimmed)", "dim"))
    return grid(title, ("rank", "score", "round", "marks", "delivered"), rows, right=(0, 1))


def delivered_table(ev: RunEvidence) -> Text:
    if ev.delivered is None:
        note = "delivered: not logged (unknown — not the same as retrieved)"
        if ev.history_source == "full_context":
            note = "delivered: full context — every round before the question (minus FIFO truncation)"
        return Text(note, style="dim")
    rows = []
    for d in ev.delivered:
        rid = safe(d.round_id, one_line=True)
        if not d.exists:
            rid.append(" (not in task)", style="red")
        rank = "—" if d.retrieved_rank is None else str(d.retrieved_rank)
        rows.append([rid, marks_text(d.gold, d.stale, d.latest), Text(rank)])
    title = Text.assemble(("delivered to the reader", "bold"), (f" ({len(ev.delivered)} rounds, dialogue order)", "dim"))
    parts: list = [grid(title, ("round", "marks", "retrieval rank"), rows, right=(2,))]
    if ev.retrieval_logged:
        if ev.dropped:
            dropped = Text("retrieved but dropped by packing: ", style="bold red")
            for i, r in enumerate(ev.dropped):
                if i:
                    dropped.append(", ")
                dropped.append_text(safe(r.round_id, one_line=True))
                dropped.append(f" (rank {r.rank}{', gold' if r.gold else ''}{', latest' if r.latest else ''})",
                               style="dim")
            parts.append(dropped)
        else:
            parts.append(Text("nothing retrieved was dropped by packing", style="dim"))
    extra = ev.marks.delivered_not_retrieved
    if extra:
        parts.append(Text.assemble(("delivered without being retrieved: ", "bold"),
                                   safe(", ".join(extra), one_line=True)))
    return Text("\n").join(parts)
