"""`memscope validate`: a run folder whose recorded text metrics (exact_match, contains_gt, em, f1,
bleu, bleu_1, bleu_2) are not what upstream's functions give for its rows' pred and gt — one warning
per folder, at the first line that differs (definitions: scorer.metrics.text_metrics)."""

from __future__ import annotations

from scorer.metrics.text_metrics import describe, run_differences
from scorer.model import Run, RunProblem


def text_metric_problem(run: Run) -> RunProblem | None:
    found = run_differences([(p.line, p.mode, p.raw) for p in run.predictions])
    if found is None:
        return None
    return RunProblem(f"{run.folder / 'predictions.jsonl'}:{found['first'][0]}", "warning", describe(found),
                      "text_metrics")

