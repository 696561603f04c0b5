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
         right: Sequence[int] = (), gap: int = 2, breaks: dict[int, Text] | None = None) -> Text:
    """A table as one Text: a bold title line, a dim header, then the rows, columns padded to fit;
    `breaks` puts a full line before the row of that index."""
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
    for i, row in enumerate(rows):
        if breaks and i in breaks:
            out.append("\n")
            out.append_text(breaks[i])
        line(row)
    return out


def chain_summary(ev: RunEvidence) -> Text:
    """The chain's completeness at K and the retrieval diagnostics: the per-item values of the
    report's evidence and delivery tables (scorer.metrics.evidence.item_evidence)."""
    m = ev.marks
    s = m.status
    out = Text("full chain  ", style="bold")

    def completeness(word: str, complete: bool | None, got: int | None) -> None:
        if s is None or got is None:
            out.append(f"{word} ? (not logged)", style="dim")
        elif complete is None:  # logged, but no chain fact names a round of the task
            out.append(f"{word} — (no chain round in the task)", style="dim")
        else:
            out.append(f"{word} ")
            out.append_text(yn(complete))
            out.append(f" {got}/{s.n_facts}")

    completeness(f"retrieved@{m.k}" if ev.retrieval_logged else "retrieved", m.chain_retrieved, s and s.n_retrieved)
    out.append("   ")
    completeness("delivered", m.chain_delivered, s and s.n_delivered)
    d = m.diagnosis
    if d is not None:
        out.append(f"\nclues in top-{d.k}  ", style="bold")
        out.append(f"{d.n_hit}/{d.n_clues}")
        out.append(f"  (coverage {d.coverage:.2f})", style="dim")
    if d is not None and d.temporal:
        out.append("\nY3 @%d  " % d.k, style="bold")
        out.append("latest ")
        out.append_text(yn(d.latest_hit))
        if d.latest_rank:
            out.append(f" (rank {d.latest_rank})")
        out.append(f"  stale in top-{d.k}: {d.n_stale}")
        if d.stale_dominance or d.rank_inversion:  # a line of their own: the panel is narrow
            out.append("\n        ")
            if d.stale_dominance:
                out.append("stale dominates", style="bold magenta")
            if d.rank_inversion:
                out.append("  rank inversion" if d.stale_dominance else "rank inversion", style="magenta")
    if not m.counted:
        out.append("\nabstention control: left out of the evidence tables", style="yellow")
    return out


DASH = Text("—", style="dim")


def chain_table(ev: RunEvidence) -> Text:
    rows = []
    for c in ev.marks.chain:
        row = [safe(c.round_id, one_line=True), safe(c.role, one_line=True), safe(c.modality or "", one_line=True)]
        if c.counted:
            row += [yn(c.retrieved), yn(c.delivered)]
        else:  # the round is not in the task: the chain metrics leave the fact out
            row += [DASH.copy(), DASH.copy(), Text("(not in task: not counted)", style="red")]
        rows.append(row)
    header = ("round", "role", "modality", f"retrieved@{ev.marks.k}", "delivered")
    if any(not c.counted for c in ev.marks.chain):
        header += ("",)
        rows = [r if len(r) == 6 else [*r, Text()] for r in rows]
    return grid("gold chain", header, rows)


def retrieved_table(ev: RunEvidence) -> Text:
    if not ev.retrieval_logged:
        why = {"full_context": "full context: every round before the question is delivered (minus FIFO truncation)",
               "clue_only": "clue-only oracle: the gold clue rounds are delivered"}.get(ev.history_source or "", "")
        return Text(f"retrieved: not logged by this run{' — ' + why if why else ''}", style="dim")
    m = ev.marks
    dropped = {r.round_id for r in ev.dropped}  # top-K rounds packing left out (the delivery tables' count)
    rows = []
    for r in m.rounds:
        style = "" if r.in_top_k else "dim"
        rid = safe(r.round_id, style, one_line=True)
        if not r.exists:
            rid.append(" (not in task)", style="red")
        if r.round_id in dropped:
            sent = Text("✗ dropped", style="red")  # retrieved, then left out by packing
        else:  # beyond the top K a round was never retrieved, so it is not "dropped"
            sent = yn(r.delivered, YES, Text("✗", style="dim"))
        rows.append([Text(str(r.rank), style=style), Text("—" if r.score is None else f"{r.score:.3f}", style=style),
                     rid, marks_text(r.gold, r.stale, r.latest), sent])
    if not rows:
        return Text.assemble(("retrieved", "bold"), ("\n(retrieved nothing)", "dim"))
    title = Text.assemble(("retrieved", "bold"), (f" (ranked, best first; top-{m.k} counted)", "dim"))
    beyond = next((i for i, r in enumerate(m.rounds) if not r.in_top_k), None)
    breaks = None
    if beyond is not None:
        breaks = {beyond: Text(f"┄┄ beyond top-{m.k}: candidates, not counted ┄┄", style="dim")}
    return grid(title, ("rank", "score", "round", "marks", "delivered"), rows, right=(0, 1), breaks=breaks)


def delivered_table(ev: RunEvidence) -> Text:
    if ev.delivered is None:
        note = "delivered: not logged (unknown — not the same as retrieved)"
        if ev.history_source == "full_context":
            note = "delivered: full context — every round before the question (minus FIFO truncation)"
        return Text(note, style="dim")
    rows = []
    top = {r.round_id for r in ev.marks.rounds if r.in_top_k}
    for d in ev.delivered:
        rid = safe(d.round_id, one_line=True)
        if not d.exists:
            rid.append(" (not in task)", style="red")
        rank = Text("—" if d.retrieved_rank is None else str(d.retrieved_rank))
        if d.retrieved_rank is not None and d.round_id not in top:
            rank.append(f" (beyond top-{ev.marks.k})", style="dim")
        rows.append([rid, marks_text(d.gold, d.stale, d.latest), rank])
    title = Text.assemble(("delivered to the reader", "bold"), (f" ({len(ev.delivered)} rounds, dialogue order)", "dim"))
    parts: list = [grid(title, ("round", "marks", "retrieval rank"), rows, right=(2,))]
    if ev.retrieval_logged:
        if ev.dropped:
            dropped = Text(f"retrieved (top-{ev.marks.k}) but dropped by packing: ", style="bold red")
            for i, r in enumerate(ev.dropped):
                if i:
                    dropped.append(", ")
                dropped.append_text(safe(r.round_id, one_line=True))
                dropped.append(f" (rank {r.rank}{', gold' if r.gold else ''}{', latest' if r.latest else ''})",
                               style="dim")
            parts.append(dropped)
        else:
            parts.append(Text(f"nothing retrieved (top-{ev.marks.k}) was dropped by packing", style="dim"))
    extra = ev.marks.delivered_not_retrieved
    if extra:
        parts.append(Text.assemble((f"delivered without being retrieved (top-{ev.marks.k}): ", "bold"),
                                   safe(", ".join(extra), one_line=True)))
    return Text("\n").join(parts)
