"""Recorded text metrics against the ones upstream's functions give (issue 12, point 8).

A run records `exact_match`, `contains_gt`, `f1` and BLEU per row; `memscope score` reads `bleu_1`
(and the frame carries the others). This module recomputes them from the row's own `pred` and `gt`
with the MemEye runner's definitions (scorer.metrics.answers) and says where a recorded value
differs by more than TOLERANCE (booleans count as 0/1; a value the row does not record, or records
as something that is not a number, is not a difference).

- Open rows: exact_match and contains_gt (normalised equality, empty never matches; normalised gold
  inside the normalised prediction, empty gold never), em = 1.0 if exact else 0.0, f1 (Porter-stemmed
  token F1), bleu (4-gram), bleu_1, bleu_2 (weights (0.5, 0.5, 0, 0)). A missing pred or gt counts
  as empty text, as both run readers read it.
- MCQ rows (rotation and legacy): upstream does not score the text; it derives the fields from the
  row's own `em` and last `choice`: exact_match = (em == 1.0), f1 = em, contains_gt = (choice ==
  gt.strip().upper()), BLEU null. Those three are checked for consistency with the row's recorded
  `em` and `choice` (whether `em` itself agrees with the rotation choices is score_frame's check);
  BLEU on an MCQ row is not compared, and score never replaces an MCQ row's values.

Pure functions: no I/O, no printing.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from functools import lru_cache
from typing import TYPE_CHECKING, Any

import numpy as np

from scorer.metrics.answers import bleu, bleu_1, exact_and_contains, token_f1
from scorer.model.rows import finite_num, row_text

if TYPE_CHECKING:
    import pandas as pd

TOLERANCE = 1e-6
OPEN_METRICS = ("exact_match", "contains_gt", "em", "f1", "bleu", "bleu_1", "bleu_2")
# What `score --recompute-text-metrics` replaces (open rows): the frame's text-metric columns.
FRAME_METRICS = ("bleu_1", "f1", "exact_match", "contains_gt")
# What `score` compares without it: the values it publishes (BLEU-1) and those free to recompute.
# F1 needs Porter stems, and importing nltk costs seconds (more than the whole default report):
# score publishes no F1, so it is compared by `validate` and by `score --recompute-text-metrics`.
CHEAP_FRAME_METRICS = ("bleu_1", "exact_match", "contains_gt")


# Predictions repeat across backbones, methods and run copies: each distinct pair is scored once.
@lru_cache(maxsize=65536)
def _lexical(pred: str, gt: str) -> tuple[float, float, float]:
    """(exact_match, contains_gt, bleu_1): no stemming, so no nltk import."""
    exact, contains = exact_and_contains(pred, gt)
    return float(exact), float(contains), bleu_1(pred, gt)


@lru_cache(maxsize=65536)
def _f1(pred: str, gt: str) -> float:
    return token_f1(pred, gt)  # Porter stems: imports nltk on first use (seconds)


@lru_cache(maxsize=65536)
def _all_open(pred: str, gt: str) -> tuple[float, ...]:
    exact, contains, b1 = _lexical(pred, gt)
    return exact, contains, _f1(pred, gt), bleu(pred, gt), b1, bleu(pred, gt, (0.5, 0.5, 0, 0))


def upstream_open_metrics(pred: Any, gt: Any) -> dict[str, Any]:
    """What the upstream runner records for an open row with this pred and gt, typed as it writes
    them (exact_match / contains_gt booleans, the rest floats)."""
    exact, contains, f1, b4, b1, b2 = _all_open(row_text(pred), row_text(gt))
    return {"exact_match": bool(exact), "em": exact, "contains_gt": bool(contains), "f1": f1,
            "bleu": b4, "bleu_1": b1, "bleu_2": b2}  # in the runner's key order


def upstream_mcq_metrics(em: Any, choice: Any, gt: Any) -> dict[str, Any]:
    """What the upstream runner records beside an MCQ row's `em` and last `choice`: exact_match and
    f1 from em (omitted when em is not a number), contains_gt from the choice."""
    out: dict[str, Any] = {}
    e = finite_num(em)
    if e is not None:
        out["exact_match"] = e == 1.0
        out["f1"] = e
    out["contains_gt"] = choice == row_text(gt).strip().upper()
    return out


def recompute_row(row: Mapping[str, Any], mode: str | None = None) -> dict[str, float]:
    """Upstream's text metrics for one upstream row, as numbers (booleans 0/1). `mode` defaults to
    the row's own. A retrieval-only row (no answer) has none."""
    if row.get("retrieval_only") is True:
        return {}
    mode = mode if mode is not None else row.get("mode")
    if mode == "mcq":
        values = upstream_mcq_metrics(row.get("em"), row.get("choice"), row.get("gt"))
    else:
        values = upstream_open_metrics(row.get("pred"), row.get("gt"))
    return {k: float(v) for k, v in values.items()}


def row_differences(row: Mapping[str, Any], mode: str | None = None,
                    tolerance: float = TOLERANCE) -> dict[str, tuple[float, float]]:
    """{metric: (recorded, recomputed)} for every recorded text metric that differs from upstream's
    by more than `tolerance`."""
    out = {}
    for name, new in recompute_row(row, mode).items():
        old = finite_num(row.get(name))
        if old is not None and abs(old - new) > tolerance:
            out[name] = (old, new)
    return out


def run_differences(rows: Sequence[tuple[int, str | None, Mapping[str, Any]]],
                    tolerance: float = TOLERANCE) -> dict[str, Any] | None:
    """Over one run's rows, given as (line, mode, row): None when every recorded value agrees, else
    {"rows": rows compared, "differ": rows with a difference, "differ_open": those that are open
    rows, "by_metric": {metric: rows}, "first": (line, mode, {metric: (recorded, recomputed)})}."""
    by_metric: dict[str, int] = {}
    differ = differ_open = 0
    first = None
    for line, mode, row in rows:
        diff = row_differences(row, mode, tolerance)
        if diff:
            mode = mode if mode is not None else row.get("mode")
            differ += 1
            differ_open += mode != "mcq"
            for name in diff:
                by_metric[name] = by_metric.get(name, 0) + 1
            if first is None:
                first = (line, mode, diff)
    if not differ:
        return None
    order = {m: i for i, m in enumerate(OPEN_METRICS)}
    return {"rows": len(rows), "differ": differ, "differ_open": differ_open, "first": first,
            "by_metric": dict(sorted(by_metric.items(), key=lambda kv: order.get(kv[0], len(order))))}


def _fmt(v: float) -> str:
    return f"{v:.6g}"


def describe(found: Mapping[str, Any]) -> str:
    """One sentence for run_differences' result (numbers with their n)."""
    line, mode, diff = found["first"]
    per = ", ".join(f"{m} in {n}" for m, n in found["by_metric"].items())
    shown = "; ".join(f"{m} recorded {_fmt(a)}, recomputed {_fmt(b)}" for m, (a, b) in diff.items())
    if mode == "mcq":
        shown += " (an MCQ row: upstream derives these from its em and last choice)"
    mcq = found["differ"] - found["differ_open"]
    kinds = (f"{found['differ_open']} open, {mcq} MCQ" if found["differ_open"] and mcq
             else "all MCQ" if mcq else "all open")
    tail = ("`memscope score --recompute-text-metrics` uses the recomputed ones for open rows"
            if found["differ_open"] else "`memscope score` reads none of them on MCQ rows")
    return (f"recorded text metrics differ from the ones recomputed from pred and gt (upstream's "
            f"definitions, tolerance {TOLERANCE:g}) in {found['differ']} of n={found['rows']} rows ({kinds}; "
            f"{per}); first at line {line}: {shown}; {tail}")


# ---------------------------------------------------------------------------------------------
# A scored frame (scorer.scoring.build_context)


def recompute_frame(frame: pd.DataFrame, use: bool) -> tuple[pd.DataFrame, dict[str, int]]:
    """Compare the open rows' recorded text metrics with upstream's, recomputed from the frame's
    `pred` and `gt`: CHEAP_FRAME_METRICS, and with `use` all of FRAME_METRICS, whose recomputed
    values then replace the recorded ones (where a row records a value or has prediction text: a
    row with neither stays missing). Returns (frame, counts): compared (open rows), differ (rows
    with any difference), differ_by_metric {metric: rows} over the metrics compared, recomputed
    (rows whose values were replaced). Each distinct (pred, gt) pair is scored once."""
    metrics = FRAME_METRICS if use else CHEAP_FRAME_METRICS
    counts: dict[str, Any] = {"compared": 0, "differ": 0, "differ_by_metric": {m: 0 for m in metrics},
                              "recomputed": 0}
    is_open = (frame["mode"] != "mcq").to_numpy() if len(frame) else np.zeros(0, dtype=bool)
    if not is_open.any():
        return frame, counts
    import pandas as pd

    sub = frame.loc[is_open, ["pred", "gt"]]
    pred_code, preds = pd.factorize(sub["pred"], use_na_sentinel=False)  # a missing text is a value too
    gt_code, gts = pd.factorize(sub["gt"], use_na_sentinel=False)
    preds, gts = np.asarray(preds, dtype=object), np.asarray(gts, dtype=object)
    width = max(len(gts), 1)
    pair_code, pairs = pd.factorize(pred_code.astype(np.int64) * width + gt_code)
    texts = [(row_text(preds[k // width]), row_text(gts[k % width])) for k in pairs.tolist()]
    columns = {"exact_match": 0, "contains_gt": 1, "bleu_1": 2, "f1": 3}
    table = np.array([_lexical(p, g) + ((_f1(p, g),) if use else ()) for p, g in texts], dtype=float)
    values = table.reshape(len(texts), 4 if use else 3)[pair_code]
    any_diff = np.zeros(len(sub), dtype=bool)
    recorded = {m: frame.loc[is_open, m].to_numpy(dtype=float) for m in metrics}
    for m in metrics:
        diff = ~np.isnan(recorded[m]) & (np.abs(recorded[m] - values[:, columns[m]]) > TOLERANCE)
        counts["differ_by_metric"][m] = int(diff.sum())
        any_diff |= diff
    counts["compared"] = len(sub)
    counts["differ"] = int(any_diff.sum())
    if not use:
        return frame, counts
    texted = np.array([isinstance(p, str) and bool(p.strip()) for p in preds], dtype=bool)[pred_code]
    out = frame.copy()
    replaced = np.zeros(len(sub), dtype=bool)
    for m in metrics:
        take = texted | ~np.isnan(recorded[m])
        out.loc[is_open, m] = np.where(take, values[:, columns[m]], recorded[m])
        replaced |= take
    counts["recomputed"] = int(replaced.sum())
    return out, counts


def frame_warning(counts: Mapping[str, Any]) -> str | None:
    """The score warning for recompute_frame's counts without --recompute-text-metrics."""
    if not counts.get("differ"):
        return None
    per = ", ".join(f"{m} in {n}" for m, n in counts["differ_by_metric"].items() if n)
    return (f"{counts['differ']} of n={counts['compared']} open row(s) record text "
            f"metrics that differ from the ones recomputed from pred and gt with upstream's normalisation "
            f"({per}); the recorded ones are used: --recompute-text-metrics uses the recomputed ones "
            "(`memscope validate` names the files, F1 included)")
