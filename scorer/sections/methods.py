"""Shared by the score sections: method columns in the paper's order, and row helpers."""

from __future__ import annotations

from collections.abc import Iterable, Sequence
from typing import Any

import numpy as np
import pandas as pd

from scorer.metrics.row_codes import RowCodes, row_codes
from scorer.names import DEFAULT_REFERENCES, FAMILIES, is_reference

FAMILY_ORDER = FAMILIES  # table order: textual, multimodal, no visual input, other
FAMILY_TITLES = {"text": "Textual memory", "multimodal": "Multimodal memory", "no_visual": "No visual input",
                 "other": "Other"}
# The MemEye main table's column order; other methods follow, alphabetically, within their family.
PAPER_ORDER = ("FC(T)", "SRAG(T)", "Refl.", "Gen.Ag.", "MemOS", "A-Mem", "SM(T)",
               "FC(V)", "SRAG(V)", "MIRIX", "MMA", "M2A", "SM(V)")
METRIC_TITLES = {"em": "EM", "judge": "LLM-Judge", "bleu_1": "BLEU-1"}


def method_columns(frame: pd.DataFrame) -> list[tuple[str, str, str]]:
    """(method, column label, family) for the methods in `frame`, in display order. The label is
    the display name, or `display [method]` when two methods share a display name."""
    if frame.empty:
        return []
    meta = frame.drop_duplicates("method")[["method", "display", "family"]]
    counts = meta["display"].value_counts()
    out = []
    for m, d, f in meta.itertuples(index=False):
        label = d if counts[d] == 1 else f"{d} [{m}]"
        out.append((m, label, f))
    rank = {d: i for i, d in enumerate(PAPER_ORDER)}

    def key(t: tuple[str, str, str]) -> tuple:
        m, label, f = t
        fam = FAMILY_ORDER.index(f) if f in FAMILY_ORDER else len(FAMILY_ORDER)
        return fam, rank.get(label, len(rank)), label, m

    return sorted(out, key=key)


def reference_methods(frame: pd.DataFrame, references: frozenset[str] = DEFAULT_REFERENCES) -> frozenset[str]:
    """The methods of `frame` (columns method, display, family) that are reference baselines
    (scorer.names.is_reference: the clue-only oracle, question-only, every no_visual method and
    whatever the names file lists)."""
    if frame.empty:
        return frozenset()
    meta = frame.drop_duplicates("method")[["method", "display", "family"]]
    return frozenset(m for m, d, f in meta.itertuples(index=False) if is_reference(m, d, f, references))


def unmarked_methods(frame: pd.DataFrame, options: Any) -> frozenset[str]:
    """The one rule for best/second marks (DESIGN §5): the methods of `frame` shown but not marked —
    the reference baselines, or none with --mark-all (`options`: a ScoreOptions). Every section
    that marks passes this to scorer.metrics.matrix (evaluation_matrix / mark_best)."""
    if getattr(options, "mark_all", False):
        return frozenset()
    return reference_methods(frame, getattr(options, "references", DEFAULT_REFERENCES))


ANSWERABLE_CODES = "answerable_codes"  # ctx.memo key
SCORE_COLUMNS = ("run_key", "backbone", "method", "display", "family", "mode", "item_id", "x", "y", "cluster",
                 "em", "judge", "bleu_1")


def answerable_scores(frame: pd.DataFrame) -> pd.DataFrame:
    """The rows of answerable items, with only the columns answer-score tables use (answer scores
    exclude abstention controls, DESIGN §5). Selecting columns first avoids copying the rest."""
    cols = [c for c in SCORE_COLUMNS if c in frame]
    if frame.empty:
        return frame[cols]
    return frame.loc[frame["answerable"].to_numpy(bool), cols]


def answerable_codes(ctx: Any, frame: pd.DataFrame) -> RowCodes:
    """row_codes of `frame` = answerable_scores(ctx.frame) (`ctx`: a ScoreContext), computed once
    per context in this process (ctx.memo): the caption-proof and matrix sections share them."""
    hit = ctx.memo.get(ANSWERABLE_CODES)
    if hit is None or len(hit.mode) != len(frame):
        hit = ctx.memo[ANSWERABLE_CODES] = row_codes(frame)
    return hit


def pair_rows(frame: pd.DataFrame, codes: RowCodes, columns: Sequence[str]) -> pd.DataFrame:
    """frame.drop_duplicates(["backbone", "method"])[columns] (`codes`: row_codes(frame)): the first
    row of each (backbone, method), in row order, found on the codes."""
    if codes.pair is None:
        return frame.drop_duplicates(["backbone", "method"])[list(columns)]
    return frame[list(columns)].iloc[np.sort(np.unique(codes.pair, return_index=True)[1])]


def records(df: pd.DataFrame, columns: Iterable[str]) -> list[dict]:
    """Rows as plain dicts (missing values None, numbers as Python numbers), in `columns` order.
    Column-wise `tolist` is many times faster than DataFrame.to_dict on large tables."""
    cols = list(columns)
    lists = []
    for c in cols:
        values = df[c].tolist()
        if df[c].dtype.kind == "f":
            values = [None if v != v else v for v in values]
        elif df[c].hasnans if hasattr(df[c], "hasnans") else False:
            values = [None if v is pd.NA or v is None or v != v else v for v in values]
        lists.append(values)
    return [dict(zip(cols, row)) for row in zip(*lists)]


def n_summary(ns: Iterable[int | None]) -> tuple[Any, bool]:
    """(what the row's n column shows, whether values differ): the common n, or "lo–hi"."""
    vals = sorted({int(n) for n in ns if n is not None})
    if not vals:
        return None, False
    if len(vals) == 1:
        return vals[0], False
    return f"{vals[0]}–{vals[-1]}", True
