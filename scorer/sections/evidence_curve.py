"""Report section `evidence_curve`: Any-Clue, Coverage and Full-Clue Recall@K for K = 1…50 per run
group with a ranked retrieval list (answerable items with valid provenance), drawn as a PNG by
scorer.report.evidence_figures; the Markdown/LaTeX table shows K = 1, 5, 10, 50.

report.json rows: {backbone, method, display, mode, metric, k, value, n}.
"""

from __future__ import annotations

from scorer.metrics.evidence import RETRIEVAL_METRICS, clue_positions, dedupe, recall_curve
from scorer.sections import evidence_records
from scorer.sections.base import ScoreContext, SectionResult
from scorer.sections.evidence_records import (
    FOLD_NOTE,
    by_group,
    collect,
    fold_modes,
    group_fields,
    method_order,
    titled,
)
from scorer.sections.registry import name_of

NAME = name_of(__name__)
prepare = evidence_records.prepare  # shared evidence records, computed before sections fork
KS = tuple(range(1, 51))
SHOWN_KS = (1, 5, 10, 50)
SHORT = {"any_clue_recall": "Any", "coverage": "Cov", "full_clue_recall": "Full"}


def curve_rows(records, ks=KS) -> list[dict]:
    out = []
    for recs in by_group(records).values():
        positions = []
        for r in recs:
            retrieved = r.prediction.retrieved
            chain = r.task.clue_chain(r.item)
            if retrieved is None or not chain or not r.item.answerable:
                continue
            ids = [e.round_id for e in dedupe(retrieved)]
            positions.append(clue_positions(ids, [c.round_id for c in chain]))
        if not positions:
            continue
        curve = recall_curve(positions, ks)
        f = group_fields(recs)
        for m in RETRIEVAL_METRICS:
            for k, v in zip(curve["k"], curve[m]):
                out.append({**f, "metric": m, "k": int(k), "value": float(v), "n": len(positions)})
    return out


def build(ctx: ScoreContext) -> SectionResult:
    records, _ = collect(ctx)
    rows = curve_rows(records)
    if not rows:
        return SectionResult.absent(NAME, "no run logged a ranked retrieval list")
    table: dict[tuple, dict] = {}
    cols = ["method", "backbone", "mode", "n"]
    for m in RETRIEVAL_METRICS:
        cols += [f"{SHORT[m]}@{k}" for k in SHOWN_KS]
    for r in rows:
        if r["k"] not in SHOWN_KS:
            continue
        row = table.setdefault((r["display"], r["backbone"], r["mode"]),
                               {"method": r["display"], "method_name": r["method"], "backbone": r["backbone"],
                                "mode": r["mode"], "n": r["n"]})
        row[f"{SHORT[r['metric']]}@{r['k']}"] = r["value"]
    mirrored = evidence_records.mirrored(ctx)
    shown = fold_modes(sorted(table.values(), key=lambda r: (method_order(r["method"]), r["backbone"], r["mode"])),
                       mirrored)
    note = ("Answerable items with valid provenance; a list shorter than K counts what it has. "
            "The full curve (K = 1…50) is in report.json and figures/recall_at_k.png."
            + (FOLD_NOTE if mirrored else ""))
    return SectionResult(NAME, rows, [titled("evidence_curve", "Recall@K curve (Any-Clue / Coverage / Full-Clue)",
                                             shown, cols, note)])
