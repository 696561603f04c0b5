"""Report section `evidence_curve`: Any-Clue, Coverage and Full-Clue Recall@K for K = 1…50 per run
group with a ranked retrieval list (answerable items with valid provenance), drawn as a PNG by
scorer.report.evidence_figures; the Markdown/LaTeX table shows K = 1, 5, 10, 50.

report.json rows: {backbone, method, display, mode, metric, k, value, n}.
"""

from __future__ import annotations

from scorer.metrics.evidence import RETRIEVAL_METRICS, recall_from_hits
from scorer.metrics.evidence_flat import FlatEvidence
from scorer.metrics.evidence_at_k import clue_hits
from scorer.sections import evidence_records
from scorer.sections.base import ScoreContext, SectionResult
from scorer.sections.evidence_records import collect, group_fields
from scorer.sections.evidence_tables import FOLD_NOTE, fold_modes, method_order, titled
from scorer.sections.registry import name_of

NAME = name_of(__name__)
prepare = evidence_records.prepare  # shared evidence records, computed before sections fork
KS = tuple(range(1, 51))
SHOWN_KS = (1, 5, 10, 50)
SHORT = {"any_clue_recall": "Any", "coverage": "Cov", "full_clue_recall": "Full"}


def curve_rows(records, fe: FlatEvidence, groups, ks=KS) -> list[dict]:
    """Per run group, the curve over its answerable items with valid provenance (a logged ranking,
    at least one existing clue round)."""
    out = []
    counted = fe.has_ret & (fe.chain_len > 0) & fe.answerable
    for idx in groups.values():
        rows = idx[counted[idx]]
        if not len(rows):
            continue
        hits, n_clues = clue_hits(fe, rows, ks)
        curve = recall_from_hits(hits, n_clues, ks)
        f = group_fields([records[idx[0]]])
        for m in RETRIEVAL_METRICS:
            for k, v in zip(curve["k"].tolist(), curve[m].tolist()):
                out.append({**f, "metric": m, "k": k, "value": v, "n": len(rows)})
    return out


def build(ctx: ScoreContext) -> SectionResult:
    records, _ = collect(ctx)
    rows = curve_rows(records, evidence_records.flat(ctx), evidence_records.group_rows(ctx))
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
