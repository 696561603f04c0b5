"""A scores frame's key columns as integer codes (issue 19): the sections that group or index
answer scores by item and by (backbone, method) factorize the key strings once, here, instead of
in every pandas groupby, merge and drop_duplicates on them. Numbered as pandas numbers them, so that
the groups, their order and every value computed on them stay the same.

Pure functions: no I/O, no printing.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np
import pandas as pd


@dataclass(frozen=True)
class RowCodes:
    """A scores frame's rows as integer codes, computed once for the dense tables and item labels of
    every metric and mode: `mode` the row's index into `modes` (−1: no mode); `item` its index into
    `items` (the sorted item ids), `pair` into `pairs` (the sorted (backbone, method) pairs). `item`
    and `pair` are None where a key is missing (NaN) on some row: the callers then use pandas itself."""

    mode: np.ndarray
    modes: list
    item: np.ndarray | None
    items: np.ndarray
    pair: np.ndarray | None
    pairs: list[tuple]

    def of_mode(self, mode: str) -> np.ndarray:
        """Boolean mask of the rows of `mode` (frame["mode"] == mode)."""
        if mode not in self.modes:
            return np.zeros(self.mode.size, dtype=bool)
        return self.mode == self.modes.index(mode)


def row_codes(frame: pd.DataFrame) -> RowCodes:
    """RowCodes of `frame` (columns mode, item_id, backbone, method). Sorted as pandas' factorize
    (sort=True) sorts the same values: the item codes' order is the ids' order, the pair codes'
    the (backbone, method) tuples' (the codes of two sorted columns combined, then ranked)."""
    mode, modes = pd.factorize(frame["mode"].to_numpy(object))
    item, items = pd.factorize(frame["item_id"].to_numpy(object), sort=True)
    b, bs = pd.factorize(frame["backbone"].to_numpy(object), sort=True)
    m, ms = pd.factorize(frame["method"].to_numpy(object), sort=True)
    if (item < 0).any():
        item = None
    if (b < 0).any() or (m < 0).any():
        return RowCodes(mode, list(modes), item, np.asarray(items, dtype=object), None, [])
    present, pair = np.unique(b.astype(np.int64) * max(len(ms), 1) + m, return_inverse=True)
    pairs = [(bs[c // max(len(ms), 1)], ms[c % max(len(ms), 1)]) for c in present.tolist()]
    return RowCodes(mode, list(modes), item, np.asarray(items, dtype=object), pair.reshape(-1).astype(np.int64), pairs)


def first_appearance(codes: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """(`codes` renumbered 0, 1, … in order of first appearance, as pandas' factorize and
    ngroup(sort=False) number, each new number's first row)."""
    present, first, inverse = np.unique(codes, return_index=True, return_inverse=True)
    order = np.argsort(first, kind="stable")
    rank = np.empty(len(present), dtype=np.int64)
    rank[order] = np.arange(len(present))
    return rank[inverse.reshape(-1)], first[order]
