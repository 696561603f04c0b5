"""The joined predictions frame, scored as DESIGN §5 defines it, before any section reads it: the
published-values checks (frame_checks), MCQ EM from the rotation choices and the judge at the
chosen number of levels (scorer.metrics.answers.score_frame), recorded text metrics against
upstream's functions, one row per (backbone, method, mode, item), and each method's family."""

from __future__ import annotations

from collections.abc import Sequence
from typing import TYPE_CHECKING, Any

import numpy as np

from scorer.metrics import text_metrics
from scorer.metrics.answers import score_frame
from scorer.model import Benchmark, Run
from scorer.names import family_of
from scorer.scoring import frame_checks
from scorer.sections.base import ScoreOptions

if TYPE_CHECKING:  # imported where used: runs are read while pandas loads (scorer.scoring.pipeline)
    import pandas as pd


def rotation_answers(bench: Benchmark) -> dict[str, tuple[str, ...]]:
    return {it.item_id: tuple(r.answer for r in it.rotations) for it in bench.items("mcq") if it.rotations}


def dedupe(frame: pd.DataFrame) -> tuple[pd.DataFrame, int, str]:
    """Keep the last row per (backbone, method, mode, item); how many were dropped, and where the
    first repeat is (repeat_text). Integer keys: hashing four string columns of a million rows would
    cost seconds for what is nearly always no duplicate at all."""
    import pandas as pd

    if frame.empty:
        return frame, 0, ""
    key = np.zeros(len(frame), dtype=np.int64)
    for col in ("backbone", "method", "mode", "item_id"):
        code, uniques = pd.factorize(frame[col])
        key = key * max(len(uniques), 1) + code  # mixed radix: unique per combination
    dup = pd.Series(key).duplicated(keep="last").to_numpy()
    n = int(dup.sum())
    return (frame.loc[~dup].reset_index(drop=True), n, repeat_text(frame, key, dup)) if n else (frame, 0, "")


def repeat_text(frame: pd.DataFrame, key: np.ndarray, dup: np.ndarray) -> str:
    """Where the first repeated row is and which copy is used: the later line of one file, or the
    row of the folder read last."""
    first = int(np.flatnonzero(dup)[0])
    kept = int(np.flatnonzero(key == key[first])[-1])
    a, b = frame.iloc[first], frame.iloc[kept]
    if a["folder"] == b["folder"]:
        return (f"first: {a['folder']}/predictions.jsonl:{int(a['line'])} and :{int(b['line'])}, in one file; "
                "the later line is used")
    return (f"first: {a['folder']}/predictions.jsonl:{int(a['line'])} and {b['folder']}/predictions.jsonl:"
            f"{int(b['line'])}, several run folders for one task?; the row of the folder read last is used")


def score_answers(frame: pd.DataFrame, bench: Benchmark, runs: Sequence[Run], options: ScoreOptions,
                  unmatched: int = 0) -> tuple[pd.DataFrame, dict[str, Any], dict[str, Any], list[str]]:
    """(scored frame, inputs.rows — the counts, with the `unmatched` rows the join left out —,
    what the checks withheld and found — inputs.checks, less "judge_scale" for inputs.options —,
    warnings)."""
    import pandas as pd

    warnings: list[str] = []
    frame, withheld, found, checks = frame_checks.before_scoring(frame, runs, options.judge_scale,
                                                                 options.recompute_text_metrics)
    warnings += found
    frame, counts = score_frame(frame, rotation_answers(bench), options.judge_levels, rotations=options.rotations)
    if counts["em_recorded_differs"]:
        warnings.append(f"{counts['em_recorded_differs']} MCQ row(s) record an `em` that differs from the one "
                        "recomputed from their rotation choices; the recomputed value is used")
    # Recorded text metrics against upstream's functions (issue 12.8); --recompute-text-metrics uses these.
    frame, text_counts = text_metrics.recompute_frame(frame, options.recompute_text_metrics)
    if not options.recompute_text_metrics and (why := text_metrics.frame_warning(text_counts)):
        warnings.append(why)
    frame, found, more = frame_checks.after_scoring(frame, runs, withheld, options.rotations)
    warnings += found
    checks.update(more)
    frame, dropped, where = dedupe(frame)
    if dropped:
        warnings.append(f"{dropped} row(s) repeat an item already scored by the same backbone, method and mode "
                        f"({where})")
    per_method = {m: family_of(m, mod, d, options.families) for m, mod, d in
                  frame[["method", "modality", "display"]].drop_duplicates("method").itertuples(index=False)}
    frame["family"] = frame["method"].map(per_method) if len(frame) else pd.Series([], dtype=object)
    rows = {"scored": len(frame), "unmatched": int(unmatched), "duplicates_dropped": dropped,
            **{k: int(v) for k, v in counts.items()}, "text_metrics": text_counts}
    return frame, rows, checks, warnings
