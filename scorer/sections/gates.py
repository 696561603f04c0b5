"""Report section `gates`: MemEye's validation gates recomputed from ablation runs
(scorer.metrics.gates): per-item gate outcomes, pass rates by (X, Y) cell, and the items to revisit
(the same `items_to_revisit` the app flags items with).

Options (ctx.options.extra): `gate_methods` {gate: [method or display names, or "re:<regex>"]},
`gate_solved` (default 1.0: every rotation right), `gate_unsolved` (default 0.25), `gate_panel`
("all" | "any" backbones).

report.json: {"outcomes": [{item_id, gate, flagged, backbones, ems, reason}], "pass_rates": [{x, y,
gate, passed, n, rate}], "revisit": [{item_id, reasons}]}.
"""

from __future__ import annotations

from scorer.errors import UserError
import numpy as np

from scorer.metrics.gates import (GATES, SOLVED, UNSOLVED, gate_outcomes, observations_of, pass_rates_by_cell,
                                  structure_findings)
from scorer.model import X_LABELS, Y_LABELS
from scorer.sections.base import ScoreContext, SectionResult, Table
from scorer.sections.evidence_records import joined_rows
from scorer.sections.registry import name_of

NAME = name_of(__name__)
COLUMNS = {"question_only": "Question-only", "no_visual": "No-visual clue", "caption_only": "Caption-only clue",
           "oracle": "Oracle (visual)", "all": "All gates"}


def settings(ctx: ScoreContext) -> tuple[dict | None, float, float, str]:
    extra = ctx.options.extra or {}
    try:
        solved = float(extra.get("gate_solved", SOLVED))
        unsolved = float(extra.get("gate_unsolved", UNSOLVED))
    except (TypeError, ValueError):
        raise UserError("gate_solved / gate_unsolved must be numbers") from None
    panel = str(extra.get("gate_panel", "all"))
    if panel not in ("all", "any"):
        raise UserError("gate_panel must be 'all' or 'any'")
    return extra.get("gate_methods"), solved, unsolved, panel


def observations(ctx: ScoreContext, methods: dict | None, ignored: list | None = None) -> list:
    """scorer.metrics.gates.gate_observations of the context's runs, from the rows they were read
    into (each MCQ row with the item the gates join it to: by task and idx)."""
    j = joined_rows(ctx)
    rows: dict[int, list[int]] = {}
    for i, r in zip(np.nonzero(j.gate >= 0)[0].tolist(), j.run[j.gate >= 0].tolist()):
        rows.setdefault(r, []).append(i)
    items, gate = j.items, j.gate

    def of_run(r: int):
        return ((j.prediction(i), items[gate[i]]) for i in rows.get(r, ()))

    return observations_of(((run, of_run(r)) for r, run in enumerate(ctx.runs)), methods, ctx.options.names,
                           ignored)


def build(ctx: ScoreContext) -> SectionResult:
    methods, solved, unsolved, panel = settings(ctx)
    ignored: list[tuple[str, int]] = []
    try:
        obs = observations(ctx, methods, ignored)
    except ValueError as err:
        raise UserError(f"gate_methods: {err}") from None
    outcomes = gate_outcomes(obs, solved, unsolved, panel)
    structure = structure_findings(ctx.bench)
    if not outcomes and not structure:
        return SectionResult.absent(NAME, "no ablation run (question-only, no-visual, caption-only, oracle) and no "
                                          "clue-structure finding")
    revisit: dict[str, list[str]] = {}
    for o in outcomes:
        if o.flagged:
            revisit.setdefault(o.item_id, []).append(o.reason)
    for item_id, reasons in structure.items():
        revisit.setdefault(item_id, []).extend(reasons)
    items = {i.item_id: i for i in ctx.bench.items()}
    order = {item_id: n for n, item_id in enumerate(items)}  # benchmark order: task, then index
    rates = pass_rates_by_cell(outcomes, items.values())
    data = {
        "outcomes": [{"item_id": o.item_id, "gate": o.gate, "flagged": o.flagged, "backbones": list(o.backbones),
                      "ems": list(o.ems), "reason": o.reason} for o in outcomes],
        "pass_rates": [{"x": r.x, "y": r.y, "gate": r.gate, "passed": r.passed, "n": r.n, "rate": r.rate}
                       for r in rates],
        "revisit": [{"item_id": k, "reasons": revisit[k]} for k in sorted(revisit, key=lambda k: order.get(k, -1))],
        "settings": {"solved": solved, "unsolved": unsolved, "panel": panel},
    }
    tables = []
    if rates:
        tables.append(_rate_table(rates, solved, unsolved, panel))
    tables.append(Table(
        "gates_revisit", f"Items to revisit ({len(revisit)})",
        [{"Item": k, "X": "/".join(sorted(items[k].x)) if k in items else "", "Y": "/".join(sorted(items[k].y))
          if k in items else "", "Reasons": "; ".join(revisit[k])} for k in sorted(revisit, key=lambda k: order.get(k, -1))],
        ["Item", "X", "Y", "Reasons"],
        "Flagged by a gate, or by the taxonomy-structure audit (a Y2/Y3 item needs two or more existing clue "
        "rounds). The app shows these as flags on the items."))
    warnings = [] if not ignored else [
        f"{sum(n for _, n in ignored)} recorded em value(s) outside [0, 1] in {len(ignored)} MCQ row(s) "
        f"left out (first: {ignored[0][0]}): such a rotation is scored by its choice where it logs its correct "
        "position, else left out with the row — `memscope validate` lists them"]
    if ignored:
        data["ignored_ems"] = sum(n for _, n in ignored)
    return SectionResult(NAME, data, tables, warnings=warnings)


def _rate_table(rates, solved: float, unsolved: float, panel: str) -> Table:
    present = [g for g in (*GATES, "all") if any(r.gate == g for r in rates)]
    cells: dict[tuple[str, str], dict] = {}
    for r in rates:
        row = cells.setdefault((r.y, r.x), {"Y": r.y, "X": r.x, "_n": {}})
        row[COLUMNS[r.gate]] = r.rate
        row["_n"][COLUMNS[r.gate]] = r.n
        if r.gate == "all":
            row["n"] = r.n
    for row in cells.values():  # show a column's n only where it differs from the row's
        row["_n"] = {c: n for c, n in row["_n"].items() if n != row.get("n")}
    order = [(y, x) for y in Y_LABELS for x in X_LABELS]
    rows = [cells[c] for c in sorted(cells, key=lambda c: (order.index(c) if c in order else len(order), c))]
    cols = ["Y", "X", "n", *[COLUMNS[g] for g in present]]
    return Table("gates_pass_rates", "Validation gates: pass rate by (X, Y) cell", rows, cols,
                 f"MCQ items. Shortcut gates fail an item solved under every rotation (rotation-averaged EM ≥ "
                 f"{solved:g}); the oracle gate fails one left unsolved (EM ≤ {unsolved:g}); with several backbones "
                 f"an item fails when {'every' if panel == 'all' else 'any'} backbone meets the condition. n = items "
                 "put through at least one gate (a column's own n is shown where it differs).")
