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
rounded to the displayed precision (ties share the mark; second = the next distinct value), as the
MemEye tables mark them: among the methods that are ranked only (`unmarked` methods, the reference
baselines, are shown but neither marked nor counted), and with exactly two ranked methods in a row
the best alone.

Pure functions over pandas/numpy; vectorised (no Python loop per row).
"""

from __future__ import annotations

from collections.abc import Collection, Iterable, Sequence

import numpy as np
import pandas as pd

from scorer.metrics.row_codes import RowCodes, first_appearance

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


def _mean_n(keys: list[np.ndarray], values: np.ndarray, names: Sequence[str] | None = None) -> pd.DataFrame:
    """Mean and count of `values` per combination of non-negative integer key arrays, groups in
    order of first appearance: columns `names` (default k0, k1, …), value, n. The keys are combined
    into one integer first (pandas then groups one column: the same groups, in the same order, with
    the same members, so the same means as grouping on the columns)."""
    names = list(names) if names is not None else [f"k{i}" for i in range(len(keys))]
    grouped = _mean_n_arrays(keys, values)
    if grouped is None:  # would overflow: group on the columns
        keys = [np.asarray(k, dtype=np.int64) for k in keys]
        g = pd.DataFrame(dict(zip(names, keys))).assign(v=values).groupby(names, sort=False)["v"]
        return pd.DataFrame({"value": g.mean(), "n": g.size()}).reset_index()
    group_keys, mean, n = grouped
    return pd.DataFrame({**dict(zip(names, group_keys)), "value": mean, "n": n})


def _mean_n_arrays(keys: list[np.ndarray], values: np.ndarray) -> tuple[list[np.ndarray], np.ndarray, np.ndarray] | None:
    """_mean_n as arrays (each group's keys, mean, n), without building a frame; None where the
    combined key would overflow."""
    keys = [np.asarray(k, dtype=np.int64) for k in keys]
    sizes = [int(k.max()) + 1 if k.size else 1 for k in keys]
    if float(np.prod([float(x) for x in sizes])) >= 2.0**62:
        return None
    combined = np.zeros(len(values), dtype=np.int64)
    for k, size in zip(keys, sizes):
        combined = combined * size + k
    g = pd.Series(np.asarray(values, dtype=float)).groupby(combined, sort=False)
    mean, n = g.mean(), g.size()
    code = mean.index.to_numpy(np.int64)
    cols = []
    for size in reversed(sizes):
        cols.append(code % size)
        code = code // size
    return cols[::-1], mean.to_numpy(), n.to_numpy(np.int64)


def _groups(keys: list[np.ndarray], values: np.ndarray) -> tuple[list[np.ndarray], np.ndarray, np.ndarray]:
    """(each group's keys, mean, n) as _mean_n gives them, as arrays."""
    grouped = _mean_n_arrays(keys, values)
    if grouped is not None:
        return grouped
    frame = _mean_n(keys, values)
    return [frame[f"k{i}"].to_numpy(np.int64) for i in range(len(keys))], frame["value"].to_numpy(), \
        frame["n"].to_numpy(np.int64)


def _first_rows(keys: list[np.ndarray]) -> np.ndarray:
    """Row indices of the first occurrence of each combination of non-negative integer keys, in
    row order (what DataFrame.drop_duplicates keeps)."""
    keys = [np.asarray(k, dtype=np.int64) for k in keys]
    combined = np.zeros(len(keys[0]), dtype=np.int64)
    for k in keys:
        combined = combined * (int(k.max()) + 1 if k.size else 1) + k
    return np.sort(np.unique(combined, return_index=True)[1])


def _coded_cells(labels: pd.DataFrame) -> tuple[np.ndarray, np.ndarray, np.ndarray, list[str], list[str]]:
    """(item code, x code, y code) per cell of each item, and the x / y label lists."""
    triples = _string_cells(labels)
    if triples is not None:
        ci, cx, cy = triples
        xs, ys = sorted(set(cx)), sorted(set(cy))
        xcode, ycode = {v: i for i, v in enumerate(xs)}, {v: i for i, v in enumerate(ys)}
        return (np.asarray(ci, dtype=np.int64), np.fromiter(map(xcode.__getitem__, cx), np.int64, len(cx)),
                np.fromiter(map(ycode.__getitem__, cy), np.int64, len(cy)), xs, ys)
    cells = item_cells(labels)
    xs = sorted(set(cells["x"]))
    ys = sorted(set(cells["y"]))
    xc = cells["x"].map({v: i for i, v in enumerate(xs)}).to_numpy(np.int64)
    yc = cells["y"].map({v: i for i, v in enumerate(ys)}).to_numpy(np.int64)
    return cells["item_id"].to_numpy(np.int64), xc, yc, xs, ys


def _string_cells(labels: pd.DataFrame) -> tuple[list, list, list] | None:
    """item_cells(labels) as (item ids, x labels, y labels) lists, in its order, where every item's
    x and y are tuples of strings (what the loaders give); None otherwise (item_cells then does
    it). A loop over the items: the two pandas explodes took most of a metric's time (measured)."""
    ci: list = []
    cx: list[str] = []
    cy: list[str] = []
    seen: set = set()
    for i, xs, ys in zip(labels["item_id"].tolist(), labels["x"].tolist(), labels["y"].tolist()):
        if i in seen:
            continue
        seen.add(i)
        if type(xs) is not tuple or type(ys) is not tuple or not all(type(v) is str for v in (*xs, *ys)):
            return None
        for x in xs:
            for y in ys:
                ci.append(i)
                cx.append(x)
                cy.append(y)
    return ci, cx, cy


def _is_mode(modes: pd.Series, mode: str) -> np.ndarray:
    """(modes == mode) as a boolean array, compared in numpy (a fifth of pandas' time); pandas
    compares where a value cannot be compared in numpy (pd.NA)."""
    try:
        return np.asarray(modes.to_numpy(object) == mode, dtype=bool)
    except TypeError:
        return (modes == mode).to_numpy(bool)


def metric_rows(work: pd.DataFrame, metric: str, mode: str, n_items: int) -> pd.DataFrame:
    """All aggregate rows of one metric (unmarked) for `work` = evaluation_matrix's coded frame:
    `_k` (the keys' code), `item_id` (item code), mode, x, y and the metric column."""
    sel = _is_mode(work["mode"], mode) & work[metric].notna().to_numpy(bool)
    if not sel.any():
        return pd.DataFrame()
    k, item, v = work["_k"].to_numpy()[sel], work["item_id"].to_numpy()[sel], work[metric].to_numpy(float)[sel]
    # One score per (keys, item): duplicated rows of an item average into one unit.
    scores = _mean_n([k, item], v, ["_k", "item"])
    sk, si, sv = scores["_k"].to_numpy(), scores["item"].to_numpy(), scores["value"].to_numpy()
    # each item's first selected row (what drop_duplicates("item_id") keeps), in row order
    first = np.flatnonzero(sel)[np.sort(np.unique(item, return_index=True)[1])]
    labels = work[["item_id", "x", "y"]].iloc[first]
    ci, cx, cy, xs, ys = _coded_cells(labels)
    # Join item scores to their cells: for each cell row, the score rows of its item.
    order = np.argsort(si, kind="stable")
    starts = np.searchsorted(si[order], np.arange(n_items + 1))
    per_item = starts[1:] - starts[:-1]  # score rows per item code
    reps = per_item[ci]
    # the score rows of each cell's item, cell after cell: order[starts[i] : starts[i + 1]] for i in ci
    ends = np.cumsum(reps)
    take = order[np.repeat(starts[ci] - (ends - reps), reps) + np.arange(int(ends[-1]) if len(ends) else 0)]
    lk, li, lv = sk[take], si[take], sv[take]
    lx, ly = np.repeat(cx, reps), np.repeat(cy, reps)
    # Every aggregate's columns as arrays, one frame at the end (the frame concat of one frame per
    # aggregate gave: the same columns, in its order, with its dtypes).
    parts: list[tuple] = []  # (_k, value, n, x, y, agg, n_cells or None)
    (ck, cxc, cyc), cv, cn = _groups([lk, lx, ly], lv)
    xs_, ys_ = np.asarray(xs, dtype=object), np.asarray(ys, dtype=object)
    parts.append((ck, cv, cn, xs_[cxc], ys_[cyc], "cell", None))
    # Marginals: an item once per X (Y) label it carries.
    for axis, codes, names in (("x", lx, xs_), ("y", ly, ys_)):
        first = _first_rows([lk, li, codes]) if len(lk) else np.zeros(0, dtype=np.int64)
        (mk, mc), mv, mn = _groups([lk[first], codes[first]], lv[first])
        level, every = names[mc], np.full(len(mk), ALL, dtype=object)
        parts.append((mk, mv, mn, *((level, every) if axis == "x" else (every, level)), "marginal", None))
    # Macro: mean of the cell values; n = distinct labelled items behind those cells.
    g = pd.Series(cv).groupby(ck, sort=False)
    means, n_cells = g.mean(), g.size()
    macro_k = means.index.to_numpy(np.int64)
    first = _first_rows([lk, li]) if len(lk) else np.zeros(0, dtype=np.int64)
    labelled = np.bincount(lk[first].astype(np.int64), minlength=int(macro_k.max()) + 1 if len(macro_k) else 0)
    parts.append((macro_k, means.to_numpy(), labelled[macro_k].astype(np.int64), ALL, ALL, "macro",
                  n_cells.to_numpy(np.int64)))
    # Micro: every scored item once, labelled or not.
    (uk,), uv, un = _groups([sk], sv)
    parts.append((uk, uv, un, ALL, ALL, "micro", None))
    return _rows_frame(parts, metric, mode)


def _rows_frame(parts: list[tuple], metric: str, mode: str) -> pd.DataFrame:
    """metric_rows' frame from its aggregates' arrays: _k, value, n, x, y, agg, n_cells (Int64, <NA>
    but for macro rows), metric, mode."""
    sizes = [len(p[0]) for p in parts]

    def column(i: int, dtype) -> np.ndarray:
        return np.concatenate([np.asarray(p[i], dtype=dtype) if np.ndim(p[i]) else np.full(size, p[i], dtype=dtype)
                               for p, size in zip(parts, sizes)])

    n_cells = np.concatenate([np.zeros(size, dtype=np.int64) if p[6] is None else p[6] for p, size in zip(parts, sizes)])
    missing = np.concatenate([np.full(size, p[6] is None) for p, size in zip(parts, sizes)])
    x, y = column(3, object), column(4, object)
    if not sizes[0]:  # no cells: the frame concat kept the empty label columns' object dtype
        x, y = pd.Series(x, dtype=object), pd.Series(y, dtype=object)
    return pd.DataFrame({
        "_k": column(0, np.int64), "value": column(1, float), "n": column(2, np.int64), "x": x, "y": y,
        "agg": column(5, object), "n_cells": pd.arrays.IntegerArray(n_cells, missing), "metric": metric, "mode": mode,
    })


def mark_best(rows: pd.DataFrame, group: Sequence[str], decimals: int = MARK_DECIMALS,
              ranked: Sequence[bool] | np.ndarray | pd.Series | None = None) -> pd.Series:
    """'best' / 'second' / '' per row, comparing `value` rounded to `decimals` within each group.
    Ties share a mark; a group with a single method, or where every method ties, has no second; a
    group of exactly two methods marks the best only. `ranked` (per row, default all): rows outside
    it (reference baselines) get no mark and take no rank from the others."""
    if rows.empty:
        return pd.Series([], dtype=object, index=rows.index)
    v = rows["value"].astype(float).round(decimals)
    if ranked is not None:
        v = v.where(np.asarray(ranked, dtype=bool))
    # the groups numbered once (NaN where a key is missing: in no group, as grouping on the keys)
    keys = rows.groupby(list(group), sort=False).ngroup()
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
    unmarked: Collection[str] = (),
    codes: RowCodes | None = None,
) -> pd.DataFrame:
    """Every metric's rows, marked, in a stable order (keys, metric order, agg order, y, x).

    The mark group is every key but the last (e.g. per backbone, across methods); `unmarked` values
    of the last key (reference baselines) are shown but not marked (see mark_best). `codes`:
    scorer.metrics.row_codes.row_codes(frame), when the caller has them (keys backbone, method)."""
    keys = list(keys)
    empty = pd.DataFrame(columns=[*keys, *ROW_COLUMNS[2:]])
    if frame.empty:
        return empty
    # Group on integer codes: every groupby below would otherwise hash the key strings again.
    if (codes is not None and keys == ["backbone", "method"] and codes.pair is not None and codes.item is not None
            and len(codes.pair) == len(frame)):
        # the same numbers as ngroup / factorize give (in order of first appearance), from the codes
        code, first_rows = first_appearance(codes.pair)
        item_code, item_first = first_appearance(codes.item)
        key_table = frame[keys].iloc[first_rows].reset_index(drop=True).assign(_k=np.arange(len(first_rows)))
        item_ids = item_first
    else:
        code = frame.groupby(keys, sort=False, observed=True, dropna=False).ngroup().to_numpy()
        first = pd.Series(np.arange(len(frame))).groupby(code).first()
        key_table = frame[keys].iloc[first.to_numpy()].reset_index(drop=True).assign(_k=first.index.to_numpy())
        item_code, item_ids = pd.factorize(frame["item_id"])
    work = pd.DataFrame({"_k": code, "item_id": item_code, "mode": frame["mode"].to_numpy(object),
                         "x": frame["x"].to_numpy(object), "y": frame["y"].to_numpy(object)})
    for m, _ in metrics:
        if m in frame:
            work[m] = frame[m].to_numpy(float)
    parts = [metric_rows(work, m, mode, len(item_ids)) for m, mode in metrics if m in frame]
    parts = [p for p in parts if not p.empty]
    if not parts:
        return empty
    out = pd.concat(parts, ignore_index=True).merge(key_table, on="_k", how="left").drop(columns="_k")
    ranked = ~out[keys[-1]].isin(list(unmarked)).to_numpy(bool) if len(unmarked) else None
    out["mark"] = mark_best(out, [*keys[:-1], "metric", "agg", "x", "y"], decimals, ranked)
    rank = {**{m: i for i, (m, _) in enumerate(metrics)}, **{a: i for i, a in enumerate(AGGS)}}
    out["_m"] = [rank[v] for v in out["metric"].tolist()]
    out["_a"] = [rank[v] for v in out["agg"].tolist()]
    out["_x"] = ["~" if v == ALL else v for v in out["x"].tolist()]  # "all" after the levels
    out["_y"] = ["~" if v == ALL else v for v in out["y"].tolist()]
    out = out.sort_values([*keys, "_m", "_a", "_y", "_x"], kind="mergesort").drop(columns=["_m", "_a", "_x", "_y"])
    return out[[*keys, *[c for c in out.columns if c not in keys]]].reset_index(drop=True)


def wide(rows: pd.DataFrame, metric: str, agg: str = "cell") -> pd.DataFrame:
    """One backbone's rows of one metric as a (y, x) × method table of values (for display)."""
    sub = rows[(rows["metric"] == metric) & (rows["agg"] == agg)]
    return sub.pivot_table(index=["y", "x"], columns="method", values="value", aggfunc="first", sort=True)
