"""Joined predictions as one pandas DataFrame: the table every scorer section starts from.

One row per (run, prediction row) that joins to a benchmark item, with the item's labels, the
run's identity and the recorded scores: the full reader's frame. The lean reader
(scorer.load.lean) builds the same columns straight from the files.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Mapping, Sequence

import numpy as np

if TYPE_CHECKING:  # imported where used: `memscope score` reads runs while pandas loads
    import pandas as pd

from scorer.load.join import Joiner, logged_question, question_matches
from scorer.model import X_LABELS, Y_LABELS, Benchmark, Run
from scorer.names import DEFAULT_DISPLAY_NAMES, display_name

COLUMNS = (
    "run_key", "backbone", "method", "display", "modality", "mode", "task", "item_id", "idx",
    "x", "y", "answerable", "cluster", "em", "judge", "bleu_1", "f1", "exact_match", "contains_gt",
    "valid_choice", "abstained", "question_ok", "pred", "gt", "line", "folder",
)


def _f(v: float | None) -> float:
    return np.nan if v is None else v


def predictions_frame(
    bench: Benchmark, runs: Sequence[Run], names: Mapping[str, str] = DEFAULT_DISPLAY_NAMES
) -> pd.DataFrame:
    """Rows that match an item; `question_ok` is False where the row's question text differs."""
    joiner = Joiner(bench)
    records = []
    for run, p, item in joiner.pairs(runs):
        if p.raw.get("retrieval_only") is True:  # no answer to score (memscope retrieve's runs)
            continue
        records.append((
            run.key, run.backbone, run.method, display_name(run.method, names), run.modality, p.mode,
            item.task, item.item_id, p.idx,
            tuple(sorted(x for x in item.x if x in X_LABELS)),
            tuple(sorted(y for y in item.y if y in Y_LABELS)),
            item.answerable, item.cluster,
            _f(p.em), _f(p.judge), _f(p.bleu_1), _f(p.f1), _f(p.exact_match), _f(p.contains_gt),
            p.valid_choice, p.abstained,
            not p.question or question_matches(p.question, item.question, logged_question(item)),
            p.pred, p.gt, p.line, str(run.folder),
        ))
    import pandas as pd

    return pd.DataFrame.from_records(records, columns=list(COLUMNS))
