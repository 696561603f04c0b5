"""The evaluation matrices (DESIGN §5 "Matrix", §6 `matrix` rows), on answerable items only.

Tables per backbone, laid out like the MemEye main table: rows Y / X / metric with the `Avg.` (macro)
and item-weighted rows last, one column per method (textual family first, then multimodal), best and
second-best per row marked among memory methods (reference baselines shown, not marked, unless
--mark-all: `unmarked_methods`), the table notes saying so (`marks_note`); BLEU-1 in its own table;
marginals by X and by Y.

Table rows carry two optional keys the renderers understand: `_marks` {column: "best"|"second"}
and `_n` {column: n} for a value whose n differs from the row's `n`.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence

import numpy as np

from scorer.metrics.matrix import ALL, METRICS, evaluation_matrix
from scorer.model import X_LABELS, Y_LABELS
from scorer.sections.base import ScoreContext, SectionResult, Table
from scorer.sections.methods import (
    FAMILY_ORDER,
    METRIC_TITLES,
    answerable_codes,
    answerable_scores,
    method_columns,
    n_summary,
    pair_rows,
    records,
    reference_methods,
    unmarked_methods,
)
from scorer.sections.registry import name_of

NAME = name_of(__name__)
FIELDS = ("backbone", "method", "display", "family", "mode", "metric", "x", "y", "agg", "value", "n", "n_cells", "mark",
          "reference", "ranked")  # reference: a reference baseline; ranked: took part in the best/second marks


def build(ctx: ScoreContext) -> SectionResult:
    frame = ctx.frame
    if frame.empty:
        return SectionResult.absent(NAME, "no prediction row joins to a benchmark item")
    answerable = answerable_scores(frame)
    if answerable.empty:
        return SectionResult.absent(NAME, "no answerable item has a prediction (answer scores exclude abstention controls)")
    codes = answerable_codes(ctx, answerable)
    # each (backbone, method)'s first row; a method's first row among them is its first row in
    # `answerable`, so the reference and unmarked methods of `meta` are those of `answerable`
    meta = pair_rows(answerable, codes, ["backbone", "method", "display", "family"])
    unmarked = unmarked_methods(meta, ctx.options)
    rows = evaluation_matrix(answerable, METRICS, unmarked=unmarked, codes=codes)
    if rows.empty:
        return SectionResult.absent(NAME, "no prediction has an EM, judge or BLEU-1 score")
    refs = reference_methods(meta, ctx.options.references)
    meta = meta.assign(reference=meta["method"].isin(refs), ranked=~meta["method"].isin(unmarked))
    rows = rows.merge(meta, on=["backbone", "method"], how="left")
    data = records(rows, FIELDS)
    by_backbone: dict[str, list[dict]] = {}
    for r in data:
        by_backbone.setdefault(r["backbone"], []).append(r)
    tables = []
    for backbone in sorted(by_backbone):
        cols = method_columns(meta[meta["backbone"] == backbone])
        tables += _backbone_tables(backbone, by_backbone[backbone], cols)
    warnings = []
    no_label = _no_label(answerable["x"].tolist(), answerable["y"].tolist())
    unlabelled = answerable.loc[no_label, "item_id"].nunique() if no_label.any() else 0
    if unlabelled:
        warnings.append(f"{unlabelled} scored item(s) have no X or no Y label: they count in the item-weighted "
                        "mean only, not in cells, marginals or Avg.")
    return SectionResult(NAME, data, tables, warnings=tuple(warnings))


def _no_label(xs: list, ys: list) -> np.ndarray:
    """Per row: no X or no Y label (len(x) == 0 or len(y) == 0), the lengths taken in C."""
    try:
        return (np.fromiter(map(len, xs), np.int64, len(xs)) == 0) | (np.fromiter(map(len, ys), np.int64, len(ys)) == 0)
    except TypeError:  # a label without a length where the other is empty: as `or` does, y then unread
        return np.fromiter((len(x) == 0 or len(y) == 0 for x, y in zip(xs, ys)), dtype=bool, count=len(xs))


def marks_note(rows: Sequence[Mapping], labels: Mapping[str, str]) -> str:
    """What a matrix table's note (and the LaTeX caption) says about its marks, from the `matrix`
    rows behind the table (with `reference` and `ranked`) and its columns {method: label}, in order."""
    refs = {r["method"] for r in rows if r.get("reference")}
    ref_labels = ", ".join(label for m, label in labels.items() if m in refs)
    mark_all = any(r.get("reference") and r.get("ranked") for r in rows)
    if not refs:
        text = "Best / second per row marked (ties share a mark)."
    elif mark_all:
        text = ("Best / second per row marked among all methods (ties share a mark), reference baselines included "
                f"(--mark-all): {ref_labels}.")
    else:
        text = ("Best / second per row marked among memory methods (ties share a mark); reference baselines, "
                f"shown but not marked: {ref_labels}.")
    ranked: dict[tuple, int] = {}
    for r in rows:
        if r.get("ranked", True) and r["value"] is not None:
            key = (r["metric"], r["agg"], r["x"], r["y"])
            ranked[key] = ranked.get(key, 0) + 1
    if 2 in ranked.values():
        text += " A row with only two methods to rank marks the best only."
    return text


def _index(rows: list[dict]) -> dict[tuple, dict]:
    return {(r["metric"], r["agg"], r["y"], r["x"], r["method"]): r for r in rows}


def _row(idx: dict, cols, metric: str, agg: str, y: str, x: str, head: dict) -> dict | None:
    found = [(label, idx.get((metric, agg, y, x, m))) for m, label, _ in cols]
    if not any(r for _, r in found):
        return None
    shown, differs = n_summary(r["n"] for _, r in found if r)
    row = dict(head)
    row["n"] = shown
    marks, ns = {}, {}
    for label, r in found:
        row[label] = None if r is None else r["value"]
        if r is not None and r["mark"]:
            marks[label] = r["mark"]
        if r is not None and differs:
            ns[label] = r["n"]
    row["_marks"], row["_n"] = marks, ns
    return row


def _backbone_tables(backbone: str, sub: list[dict], cols) -> list[Table]:
    idx = _index(sub)
    labels = [label for _, label, _ in cols]
    seen_y, seen_x, seen_m = {r["y"] for r in sub}, {r["x"] for r in sub}, {r["metric"] for r in sub}
    ys = [y for y in Y_LABELS if y in seen_y] + sorted(seen_y - set(Y_LABELS) - {ALL})
    xs = [x for x in X_LABELS if x in seen_x] + sorted(seen_x - set(X_LABELS) - {ALL})
    main_metrics = [m for m in ("em", "judge") if m in seen_m]
    bleu = ["bleu_1"] if "bleu_1" in seen_m else []
    label_of = {m: label for m, label, _ in cols}
    families = " | ".join(f"{f}: " + ", ".join(label for _, label, fam in cols if fam == f)
                          for f in FAMILY_ORDER if any(fam == f for *_, fam in cols))
    tables = []
    for metrics, name, what in ((main_metrics, "main", "EM (MCQ, mean over rotations) and LLM-Judge (open)"),
                                (bleu, "bleu", "BLEU-1 (open)")):
        if not metrics:
            continue
        out = []
        note_rows = [r for r in sub if r["metric"] in metrics and r["agg"] != "marginal"]
        for y in ys:
            for x in xs:
                for m in metrics:
                    r = _row(idx, cols, m, "cell", y, x, {"Y": y, "X": x, "Metric": METRIC_TITLES[m]})
                    if r:
                        out.append(r)
        for agg, label in (("macro", "Avg."), ("micro", "Item-weighted mean")):
            for m in metrics:
                r = _row(idx, cols, m, agg, ALL, ALL, {"Y": label, "X": "--", "Metric": METRIC_TITLES[m]})
                if r:
                    r["_rule"] = agg == "macro" and m == metrics[0]
                    out.append(r)
        tables.append(Table(
            name=f"{name}_{backbone}", title=f"{backbone}: {what}; n = items per cell",
            rows=out, columns=["Y", "X", "Metric", "n", *labels],
            note=("Avg. = mean of the non-empty cell values (coordinate-balanced, as the MemEye tables); "
                  "Item-weighted mean = mean over distinct items. " + marks_note(note_rows, label_of) + " "
                  + families),
        ))
    marg = []
    for axis, levels in (("X", xs), ("Y", ys)):
        for level in levels:
            for m in [*main_metrics, *bleu]:
                x, y = (level, ALL) if axis == "X" else (ALL, level)
                r = _row(idx, cols, m, "marginal", y, x, {"Axis": axis, "Level": level, "Metric": METRIC_TITLES[m]})
                if r:
                    marg.append(r)
    if marg:
        tables.append(Table(name=f"marginals_{backbone}", title=f"{backbone}: marginals by X and by Y",
                            rows=marg, columns=["Axis", "Level", "Metric", "n", *labels],
                            note="Each item counts once per X (Y) label it carries. "
                            + marks_note([r for r in sub if r["agg"] == "marginal"], label_of)))
    return tables
