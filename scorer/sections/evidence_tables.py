"""How the evidence-side sections present their rows: the paper's column headings, the bootstrap note,
mirrored MCQ/open rows folded into one, and the MemEye table order of methods."""

from __future__ import annotations

from typing import Any, Iterable, Mapping, Sequence

import numpy as np

from scorer.sections.base import ScoreContext, Table
from scorer.sections.methods import PAPER_ORDER


def mean_or_none(values: Iterable[float | None]) -> tuple[float | None, int]:
    v = np.array([x for x in values if x is not None and x == x], dtype=float)
    return (float(v.mean()) if v.size else None), int(v.size)

def bootstrap_note(ctx: ScoreContext) -> str:
    o = ctx.options
    unit = "clusters (persona/conversation)" if o.clustered else "items"
    return f"percentile 95% CI, {o.resamples:,} resamples of {unit}, seed {o.seed}"

COLUMN_TITLES = {
    "method": "Method", "backbone": "Backbone", "mode": "Mode", "y": "Y", "x": "X", "task": "Task", "n": "n",
    "any_clue_recall": "Any-Clue", "coverage": "Coverage", "full_clue_recall": "Full-Clue", "n_y3": "n Y3",
    "latest_clue_recall": "Latest", "stale_dominance": "Stale-Dom.", "rank_inversion": "Rank-Inv.",
    "latest_miss": "Latest-Miss", "required_fact_recall": "Req.-Fact Recall", "chain_retrieved": "Chain Retr.",
    "chain_delivered": "Chain Deliv.", "n_retrieved": "n Retr.", "n_delivered": "n Deliv.",
}

def titled(name: str, title: str, rows: Sequence[Mapping[str, Any]], columns: Sequence[str], note: str = "",
           titles: Mapping[str, str] | None = None, n_for: Mapping[str, str | None] | None = None,
           ci_rows: Mapping[str, str] | None = None) -> Table:
    """A Table whose columns carry the paper's headings (row keys are the headings). `n_for` (row
    keys: value → its n, or None) becomes the Table's, in headings; an n it names that is not among
    `columns` is carried in the rows unshown (the long CSV gives it, the wide tables do not)."""
    mapping = {**COLUMN_TITLES, **(titles or {})}
    heads = [mapping.get(c, c) for c in columns]
    if len(set(heads)) != len(heads):
        raise ValueError(f"table {name}: repeated column headings {heads}")
    n_for = dict(n_for or {})
    unknown = [v for v in n_for if v not in columns]
    if unknown:
        raise ValueError(f"table {name}: n_for names value columns it does not have: {unknown}")
    hidden = sorted({c for c in n_for.values() if c is not None and c not in columns})
    keys = [*columns, *hidden]
    out = [{mapping.get(c, c): r.get(c) for c in keys} for r in rows]
    ns = {mapping.get(v, v): (None if c is None else mapping.get(c, c)) for v, c in n_for.items()}
    cis = {mapping.get(iv, iv): mapping.get(v, v) for iv, v in (ci_rows or {}).items()}
    return Table(name, title, out, heads, note, ns, cis)

def fold_modes(rows: Iterable[Mapping[str, Any]], mirrored: set[tuple[str, str]]) -> list[dict]:
    """Table rows (with `backbone`, `method_name`, `mode`) with mirrored MCQ rows dropped and the open
    row's mode shown as "open = mcq"."""
    out = []
    for r in rows:
        key = (r.get("backbone"), r.get("method_name"))
        if key in mirrored and r.get("mode") == "mcq":
            continue
        out.append({**r, "mode": "open = mcq"} if key in mirrored and r.get("mode") == "open" else dict(r))
    return out

FOLD_NOTE = " Mode \"open = mcq\": the MCQ and open runs logged identical lists, shown once."

def method_order(display: str) -> tuple[int, str]:
    """Sort key putting methods in the MemEye table order (others after, alphabetically)."""
    base = display.split(" ")[0]  # "SRAG(V) budget" sorts beside SRAG(V)
    return (PAPER_ORDER.index(base) if base in PAPER_ORDER else len(PAPER_ORDER), display)
