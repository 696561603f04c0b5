"""Evaluation matrices (DESIGN.md §5 "Matrix"): per backbone, method × (Y, X) cell × metric.

Input: one row per scored prediction with columns backbone, method, mode, item_id, x, y (tuples of
labels) and the metric columns (em for MCQ, judge and bleu_1 for open). Several rows for the same
(backbone, method, mode, item) are averaged into one item score first, so an item is one unit
however often it was logged. An item with several X or Y labels counts in every cell of their
product, once per X marginal and once per Y marginal, as the upstream summariser does.

Aggregates, as DESIGN §6 `matrix` rows {backbone, method, mode, metric, x, y, agg, value, n}:
- `cell`     one (X, Y) cell: the mean over its items;
- `marginal` one X level (y = "all") or one Y level (x = "all"): the mean over its items;
- `macro`    the paper's `Avg.`: the mean of the non-empty cell values (coordinate-balanced), with
             `n` = distinct items behind it and `n_cells` = cells averaged;
- `micro`    the item-weighted mean over distinct items (named as such; not the paper's Avg.).
Best and second-best per row (same backbone, metric, x, y, agg) across methods are marked on values
rounded to the displayed precision (ties share the mark; second = the next distinct value).

Pure functions over pandas/numpy; vectorised (no Python loop per row).
"""

from __future__ import annotations

from typing import Iterable, Sequence

import numpy as np
import pandas as pd

METRICS: tuple[tuple[str, str], ...] = (("em", "mcq"), ("judge", "open"), ("bleu_1", "open"))
AGGS = ("cell", "marginal", "macro", "micro")
ALL = "all"
MARK_DECIMALS = 4  # the paper's precision: marks follow what the reader sees
ROW_COLUMNS = ("backbone", "method", "mode", "metric", "x", "y", "agg", "value", "n", "n_cells", "mark")


def macro_average(cell_values: Iterable[float | None]) -> float | None:
    """The paper's `Avg.`: mean of the non-empty cells (None/NaN cells are skipped)."""
    vals = [float(v) for v in cell_values if v is not None and v == v]
    return sum(vals) / len(vals) if vals else None


def item_cells(items: pd.DataFrame) -> pd.DataFrame:
    """(item_id, x, y) for every cell of every distinct item in `items` (columns item_id, x, y)."""
    first = items.drop_duplicates("item_id")[["item_id", "x", "y"]]
    cells = first.explode("x").explode("y")
    return cells[cells["x"].notna() & cells["y"].notna()].reset_index(drop=True)


def _item_scores(frame: pd.DataFrame, metric: str, mode: str, keys: Sequence[str]) -> pd.DataFrame:
    sub = frame.loc[(frame["mode"] == mode) & frame[metric].notna(), [*keys, "item_id", metric]]
    if sub.empty:
        return pd.DataFrame(columns=[*keys, "item_id", "value"])
    out = sub.groupby([*keys, "item_id"], sort=False, observed=True)[metric].mean().reset_index()
    return out.rename(columns={metric: "value"})


def _labels(frame: pd.DataFrame, mode: str) -> pd.DataFrame:
    return frame.loc[frame["mode"] == mode, ["item_id", "x", "y"]].drop_duplicates("item_id")


def _agg(df: pd.DataFrame, by: list[str]) -> pd.DataFrame:
    g = df.groupby(by, sort=False, observed=True)["value"]
    return pd.DataFrame({"value": g.mean(), "n": g.size()}).reset_index()


def metric_rows(frame: pd.DataFrame, metric: str, mode: str, keys: Sequence[str] = ("backbone", "method")) -> pd.DataFrame:
    """All aggregate rows of one metric (unmarked)."""
    keys = list(keys)
    scores = _item_scores(frame, metric, mode, keys)
    if scores.empty:
        return pd.DataFrame(columns=list(ROW_COLUMNS))
    cells = item_cells(_labels(frame, mode))
    long = scores.merge(cells, on="item_id", how="inner")
    parts = []
    cell = _agg(long, [*keys, "x", "y"])
    cell["agg"] = "cell"
    parts.append(cell)
    mx = _agg(long.drop_duplicates([*keys, "item_id", "x"]), [*keys, "x"])
    mx["y"], mx["agg"] = ALL, "marginal"
    my = _agg(long.drop_duplicates([*keys, "item_id", "y"]), [*keys, "y"])
    my["x"], my["agg"] = ALL, "marginal"
    parts += [mx, my]
    # Macro: mean of the cell values; n = distinct labelled items behind those cells.
    labelled = long.drop_duplicates([*keys, "item_id"])
    g = cell.groupby(keys, sort=False, observed=True)["value"]
    macro = pd.DataFrame({"value": g.mean(), "n_cells": g.size()}).reset_index()
    macro = macro.merge(labelled.groupby(keys, sort=False, observed=True).size().rename("n").reset_index(), on=keys)
    macro["x"], macro["y"], macro["agg"] = ALL, ALL, "macro"
    parts.append(macro)
    # Micro: every scored item once, labelled or not.
    micro = _agg(scores, keys)
    micro["x"], micro["y"], micro["agg"] = ALL, ALL, "micro"
    parts.append(micro)
    out = pd.concat(parts, ignore_index=True)
    out["metric"], out["mode"] = metric, mode
    out["n"] = out["n"].astype(int)
    out["n_cells"] = (out["n_cells"] if "n_cells" in out else pd.Series(pd.NA, index=out.index)).astype("Int64")
    return out


def mark_best(rows: pd.DataFrame, group: Sequence[str], decimals: int = MARK_DECIMALS) -> pd.Series:
    """'best' / 'second' / '' per row, comparing `value` rounded to `decimals` within each group.
    Ties share a mark; a group with a single method, or where every method ties, has no second."""
    if rows.empty:
        return pd.Series([], dtype=object, index=rows.index)
    v = rows["value"].astype(float).round(decimals)
    keys = [rows[c] for c in group]
    best = v.groupby(keys, sort=False).transform("max")
    second = v.where(v < best).groupby(keys, sort=False).transform("max")
    members = v.groupby(keys, sort=False).transform("count")
    mark = np.where((members >= 2) & (v == best), "best", np.where((members >= 3) & (v == second), "second", ""))
    return pd.Series(mark, index=rows.index, dtype=object)


def evaluation_matrix(
    frame: pd.DataFrame,
    metrics: Sequence[tuple[str, str]] = METRICS,
    keys: Sequence[str] = ("backbone", "method"),
    decimals: int = MARK_DECIMALS,
) -> pd.DataFrame:
    """Every metric's rows, marked, in a stable order (keys, metric order, agg order, y, x).

    The mark group is every key but the last (e.g. per backbone, across methods)."""
    keys = list(keys)
    if frame.empty:
        return pd.DataFrame(columns=[*keys, *ROW_COLUMNS[2:]])
    # Group on integer codes: every groupby below would otherwise hash the key strings again.
    code = frame.groupby(keys, sort=False, observed=True, dropna=False).ngroup().to_numpy()
    first = pd.Series(np.arange(len(frame))).groupby(code).first()
    key_table = frame[keys].iloc[first.to_numpy()].reset_index(drop=True).assign(_k=first.index.to_numpy())
    item_code, item_ids = pd.factorize(frame["item_id"])
    work = pd.DataFrame({"_k": code, "item_id": item_code, "mode": frame["mode"].to_numpy(object),
                         "x": frame["x"].to_numpy(object), "y": frame["y"].to_numpy(object)})
    for m, _ in metrics:
        if m in frame:
            work[m] = frame[m].to_numpy(float)
    parts = [metric_rows(work, m, mode, ["_k"]) for m, mode in metrics if m in frame]
    parts = [p for p in parts if not p.empty]
    if not parts:
        return pd.DataFrame(columns=[*keys, *ROW_COLUMNS[2:]])
    out = pd.concat(parts, ignore_index=True).merge(key_table, on="_k", how="left").drop(columns="_k")
    out["mark"] = mark_best(out, [*keys[:-1], "metric", "agg", "x", "y"], decimals)
    order_metric = {m: i for i, (m, _) in enumerate(metrics)}
    order_agg = {a: i for i, a in enumerate(AGGS)}
    out["_m"] = out["metric"].map(order_metric)
    out["_a"] = out["agg"].map(order_agg)
    out["_x"] = out["x"].where(out["x"] != ALL, "~")  # "all" after the levels
    out["_y"] = out["y"].where(out["y"] != ALL, "~")
    out = out.sort_values([*keys, "_m", "_a", "_y", "_x"], kind="mergesort").drop(columns=["_m", "_a", "_x", "_y"])
    return out[[*keys, *[c for c in out.columns if c not in keys]]].reset_index(drop=True)


def wide(rows: pd.DataFrame, metric: str, agg: str = "cell") -> pd.DataFrame:
    """One backbone's rows of one metric as a (y, x) × method table of values (for display)."""
    sub = rows[(rows["metric"] == metric) & (rows["agg"] == agg)]
    return sub.pivot_table(index=["y", "x"], columns="method", values="value", aggfunc="first", sort=True)
