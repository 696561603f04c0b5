"""What a cell of the Scores screen's matrices stands for, and its CI: plain Python over the scorer's
own outputs (no Textual), so it is tested and timed on its own.

- `cell_cis`: the percentile bootstrap CI (scorer.metrics.bootstrap.mean_ci, the scorer's bootstrap,
  its seed and resamples) of every `matrix` row that is a mean over items (a cell, a marginal, the
  item-weighted mean), from the context's scored frame: one value per item (rows of the same item
  averaged, as the matrix does; in item-id order, so the CI does not depend on the frame's row order),
  answerable items only. The `Avg.` (a mean of cell means) has none.
- `matrix_index`: (table name, table row, column) → the `matrix` data row behind it, so that `enter`
  on a cell knows its backbone, method, mode and (X, Y).
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Any

from scorer.metrics.bootstrap import BootstrapCI, mean_ci
from scorer.metrics.matrix import ALL
from scorer.sections.methods import METRIC_TITLES, answerable_scores

MEANS_OVER_ITEMS = ("cell", "marginal", "micro")
AGG_OF_LABEL = {"Avg.": "macro", "Item-weighted mean": "micro"}


def row_key(r: Mapping[str, Any]) -> tuple:
    return (r["backbone"], r["method"], r["mode"], r["metric"], r["agg"], r["x"], r["y"])


def cell_cis(frame, matrix_rows: Sequence[Mapping[str, Any]], resamples: int, seed: int) -> dict[tuple, BootstrapCI]:
    """row_key(matrix row) → its CI, for the rows that are a mean over items."""
    data = answerable_scores(frame)
    wanted = [r for r in matrix_rows if r["agg"] in MEANS_OVER_ITEMS and r.get("value") is not None]
    if data.empty or not wanted:
        return {}
    groups: dict[tuple, dict[str, list]] = {}
    metrics = sorted({r["metric"] for r in wanted})
    cols = ["backbone", "method", "mode", "item_id", "x", "y", *[m for m in metrics if m in data]]
    for row in data[cols].itertuples(index=False):
        b, m, mode, item_id, x, y, *vals = row
        for metric, v in zip([m for m in metrics if m in data], vals):
            if v != v or v is None:  # NaN: no score of this metric
                continue
            g = groups.setdefault((b, m, mode, metric), {})
            entry = g.get(item_id)
            if entry is None:
                g[item_id] = [float(v), 1, tuple(x), tuple(y)]
            else:
                entry[0] += float(v)
                entry[1] += 1
    out: dict[tuple, BootstrapCI] = {}
    for r in wanted:
        items = groups.get((r["backbone"], r["method"], r["mode"], r["metric"]))
        if not items:
            continue
        x, y = r["x"], r["y"]
        values = [s / n for _, (s, n, xs, ys) in sorted(items.items())  # by item id: one order, one CI
                  if (x == ALL or x in xs) and (y == ALL or y in ys)]
        if values:
            out[row_key(r)] = mean_ci(values, resamples=resamples, seed=seed)
    return out


def column_labels(rows: Sequence[Mapping[str, Any]]) -> dict[tuple[str, str], str]:
    """(backbone, method) → its column label in the backbone's tables (the display name, or
    `display [method]` when two of the backbone's methods share one: scorer.sections.methods)."""
    out: dict[tuple[str, str], str] = {}
    by_backbone: dict[str, dict[str, str]] = {}
    for r in rows:
        by_backbone.setdefault(r["backbone"], {})[r["method"]] = r["display"]
    for b, methods in by_backbone.items():
        counts: dict[str, int] = {}
        for d in methods.values():
            counts[d] = counts.get(d, 0) + 1
        for m, d in methods.items():
            out[(b, m)] = d if counts[d] == 1 else f"{d} [{m}]"
    return out


def matrix_index(matrix_rows: Sequence[Mapping[str, Any]]) -> dict[tuple, Mapping[str, Any]]:
    """(backbone, column label, metric title, agg, y, x) → the matrix row, to find a table cell's row
    from what the table shows: a main table row (Y, X, Metric) or a marginal one (Axis, Level, Metric)."""
    labels = column_labels(matrix_rows)
    return {(r["backbone"], labels[(r["backbone"], r["method"])], METRIC_TITLES.get(r["metric"], r["metric"]),
             r["agg"], r["y"], r["x"]): r for r in matrix_rows}


def backbone_of(table_name: str) -> str | None:
    """The backbone of a matrix table ("main_<backbone>", "bleu_…", "marginals_…"), else None."""
    head, _, rest = table_name.partition("_")
    return rest if head in ("main", "bleu", "marginals") and rest else None


def cell_of(index: Mapping[tuple, Mapping[str, Any]], backbone: str, table_row: Mapping[str, Any],
            column: str) -> Mapping[str, Any] | None:
    """The matrix row behind one cell of a matrix table of `backbone` (None: not a method's value)."""
    metric = table_row.get("Metric")
    if "Axis" in table_row:
        axis, level = table_row["Axis"], table_row["Level"]
        x, y = (level, ALL) if axis == "X" else (ALL, level)
        return index.get((backbone, column, metric, "marginal", y, x))
    label = table_row.get("Y")
    agg = AGG_OF_LABEL.get(label, "cell")
    if agg == "cell":
        return index.get((backbone, column, metric, "cell", label, table_row.get("X")))
    return index.get((backbone, column, metric, agg, ALL, ALL))
