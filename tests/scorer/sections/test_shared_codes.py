"""The caption-proof and matrix sections share the answer rows' codes within a process (issue 19,
ctx.memo): each section gives the same report whichever of them ran first, and the shortcuts on the
codes (method_table, pair_rows, the reference methods of the pairs' first rows, _no_label) give what
pandas gives on the whole frame. On the demo benchmark, read from its files."""

from __future__ import annotations

from pathlib import Path

import numpy as np
import pandas as pd
import pytest

from scorer.scoring.context import build_context
from scorer.sections import caption_proof, matrix
from scorer.sections.bootstrap import method_table
from scorer.sections.methods import (
    ANSWERABLE_CODES,
    answerable_codes,
    answerable_scores,
    pair_rows,
    reference_methods,
    unmarked_methods,
)

DEMO = Path(__file__).resolve().parents[3] / "fixtures" / "demo"


def context():
    ctx, _, _ = build_context(DEMO, [DEMO / "runs"], needs_raw=False, evidence=True)
    return ctx


@pytest.fixture(scope="module")
def ctx():
    return context()


def test_sections_agree_whichever_runs_first():
    first, second = context(), context()
    m1, c1 = matrix.build(first), caption_proof.build(first)
    assert ANSWERABLE_CODES in first.memo
    c2, m2 = caption_proof.build(second), matrix.build(second)
    assert m1.data == m2.data and c1.data == c2.data
    assert [t.rows for t in m1.tables] == [t.rows for t in m2.tables]
    assert len(c1.data) > 0 and len(m1.data) > 0


def test_shortcuts_on_codes_equal_pandas_on_the_frame(ctx):
    frame = answerable_scores(ctx.frame)
    codes = answerable_codes(ctx, frame)
    assert answerable_codes(ctx, frame) is codes  # once per context
    cols = ["backbone", "method", "display", "family"]
    meta = pair_rows(frame, codes, cols)
    pd.testing.assert_frame_equal(meta, frame.drop_duplicates(["backbone", "method"])[cols])
    assert reference_methods(meta) == reference_methods(frame) != frozenset()
    assert unmarked_methods(meta, ctx.options) == unmarked_methods(frame, ctx.options)
    assert method_table(frame, codes) == method_table(frame)
    shuffled = frame.iloc[np.random.default_rng(1).permutation(len(frame))]
    from scorer.metrics.row_codes import row_codes

    assert method_table(shuffled, row_codes(shuffled)) == method_table(shuffled)


def test_no_label_equals_the_row_loop():
    from scorer.sections.matrix import _no_label

    xs = [("X1",), (), ("X2", "X3"), (), ("X4",)]
    ys = [("Y1",), ("Y2",), (), None, ("Y1",)]  # an unsized y beside an empty x: `or` never reads it
    want = [len(x) == 0 or len(y) == 0 for x, y in zip(xs, ys)]
    assert _no_label(xs, ys).tolist() == want == [False, True, True, True, False]
    assert _no_label(xs[:3], ys[:3]).tolist() == want[:3]
