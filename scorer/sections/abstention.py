"""Report section `abstention`: per run group, the correct-abstention rate on unanswerable items,
the false-abstention rate on answerable ones and the answer score on answerable items only
(scorer.metrics.abstention), and the answer-vs-abstain trade-off figure.

A row's abstention is its logged `abstained` field, else detected from its text with the pattern
list (ctx.options.extra["abstain_patterns"] replaces the default list; the list used is printed with
the table). report.json rows: {backbone, method, display, mode, metric, value, n, n_text} where
n_text counts rows whose abstention was detected from text.
"""

from __future__ import annotations

from scorer.metrics.abstention import (
    DEFAULT_PATTERNS,
    abstention_rates,
    compile_patterns,
    prediction_abstention,
)
from scorer.sections import evidence_records
from scorer.sections.base import ScoreContext, SectionResult
from scorer.sections.evidence_records import by_group, collect, group_fields, joined_rows
from scorer.sections.evidence_tables import titled
from scorer.sections.registry import name_of

NAME = name_of(__name__)
prepare = evidence_records.prepare  # shared evidence records, computed before sections fork
METRICS = ("correct_abstention", "false_abstention", "answerable_score")
TITLES = {"correct_abstention": "Correct abst.", "n_unanswerable": "n unans.", "false_abstention": "False abst.",
          "answerable_score": "Score (answerable)", "n_answerable": "n ans.", "n_text": "From text",
          "pattern": "Pattern", "n_scored": "n scored"}
# each rate's own n (Score (answerable) counts the answerable items that have a score: unshown, in the long CSV)
N_FOR = {"correct_abstention": "n_unanswerable", "false_abstention": "n_answerable", "answerable_score": "n_scored",
         "n_text": None}


def patterns_of(ctx: ScoreContext) -> tuple[str, ...]:
    given = (ctx.options.extra or {}).get("abstain_patterns")
    if given is None:
        return DEFAULT_PATTERNS
    return (given,) if isinstance(given, str) else tuple(str(p) for p in given)


def build(ctx: ScoreContext) -> SectionResult:
    records, warnings = collect(ctx)
    if not records:
        return SectionResult.absent(NAME, "no prediction row joins to a benchmark item")
    # nothing to rate: every item answerable and no row logged `abstained` (the reader says so of
    # every row it read, or each record's row is read)
    if all(r.item.answerable for r in records) and (joined_rows(ctx).abstained_logged is False
                                                    or all(r.prediction.abstained is None for r in records)):
        return SectionResult.absent(NAME, "no unanswerable item was answered and no row logged `abstained`")
    patterns = patterns_of(ctx)
    rx = compile_patterns(patterns)
    rows, shown = [], []
    for recs in by_group(records).values():
        values, detected = zip(*(prediction_abstention(r.item, r.prediction, rx) for r in recs))
        rates = abstention_rates(values, [r.item.answerable for r in recs],
                                 [float("nan") if r.score is None else r.score for r in recs], detected)
        f = group_fields(recs)
        for m in METRICS:
            rate = getattr(rates, m)
            rows.append({**f, "metric": m, "value": rate.value, "n": rate.n, "n_text": rates.detected_from_text})
        shown.append({**f, "method": f["display"], "correct_abstention": rates.correct_abstention.value,
                      "n_unanswerable": rates.correct_abstention.n, "false_abstention": rates.false_abstention.value,
                      "answerable_score": rates.answerable_score.value, "n_answerable": rates.false_abstention.n,
                      "n_scored": rates.answerable_score.n, "n_text": rates.detected_from_text})
    shown.sort(key=lambda r: (r["mode"], r["backbone"], r["method"]))
    listed = "; ".join(f'"{p}"' for p in patterns) or "(none: detection off)"
    tables = [
        titled("abstention", "Abstention: correct on unanswerable, false on answerable", shown,
               ("method", "backbone", "mode", "correct_abstention", "n_unanswerable", "false_abstention",
                "answerable_score", "n_answerable", "n_text"),
               "Score (answerable) = MCQ EM / open judge over answerable items only. A row's `abstained` field is "
               "used when logged; otherwise its text (MCQ: each rotation's chosen option) is matched, case-"
               f"insensitively at word boundaries, against: {listed}. From text = rows decided that way.", TITLES,
               N_FOR),
        titled("abstention_patterns", "Abstention patterns used for rows without `abstained`",
               [{"pattern": p} for p in patterns], ("pattern",), "Configurable (abstain_patterns).", TITLES),
    ]
    return SectionResult(NAME, rows, tables, warnings=warnings)
