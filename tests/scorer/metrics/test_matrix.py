"""Evaluation matrices: cells, marginals, macro (the paper's Avg.) and micro, marks, order invariance."""

from __future__ import annotations

import numpy as np
import pandas as pd
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from scorer.metrics.matrix import evaluation_matrix, macro_average, mark_best
from tests.builders import memeye_table as paper


def frame_from(rows: list[tuple]) -> pd.DataFrame:
    """rows: (backbone, method, mode, item_id, x tuple, y tuple, em, judge, bleu_1)."""
    return pd.DataFrame(rows, columns=["backbone", "method", "mode", "item_id", "x", "y", "em", "judge", "bleu_1"])


def paper_frame() -> pd.DataFrame:
    scores = paper.scores()
    rows = []
    for m in paper.METHODS:
        for item_id, x, y in paper.items():
            rows.append(("gpt-5.4-mini", m, "mcq", item_id, (x,), (y,), scores[(m, "em", item_id)], np.nan, np.nan))
            rows.append(("gpt-5.4-mini", m, "open", item_id, (x,), (y,), np.nan, scores[(m, "judge", item_id)], np.nan))
    return frame_from(rows)


@pytest.fixture(scope="module")
def paper_matrix() -> pd.DataFrame:
    return evaluation_matrix(paper_frame())


def _get(rows: pd.DataFrame, method: str, metric: str, agg: str, x: str = "all", y: str = "all") -> pd.Series:
    hit = rows[(rows.method == method) & (rows.metric == metric) & (rows["agg"] == agg) & (rows.x == x) & (rows.y == y)]
    assert len(hit) == 1, (method, metric, agg, x, y)
    return hit.iloc[0]


def test_macro_average_of_typed_cells_reproduces_the_papers_avg_row():
    """The Avg. row from the twelve published cell values (as printed, 4 decimals)."""
    cells, avg = paper.cells(), paper.averages()
    for metric in ("em", "judge"):
        for j, (expected, _) in enumerate(avg[metric]):
            twelve = [cells[(y, x, metric)][j][0] for (y, x) in paper.CELL_N]
            assert len(twelve) == 12
            # From rounded cells the mean can sit on a rounding edge (SM(T) EM 0.46515): within half a unit.
            assert macro_average(twelve) == pytest.approx(expected, abs=5.0001e-5)
    fc_t, srag_v, fc_v = 0, 8, 7
    em = [cells[(y, x, "em")] for (y, x) in paper.CELL_N]
    judge = [cells[(y, x, "judge")] for (y, x) in paper.CELL_N]
    assert round(macro_average(c[fc_t][0] for c in em), 4) == 0.5670
    assert round(macro_average(c[srag_v][0] for c in em), 4) == 0.6177
    assert round(macro_average(c[fc_v][0] for c in judge), 4) == 0.4391
    assert round(macro_average(c[srag_v][0] for c in judge), 4) == 0.4937


def test_item_level_data_gives_every_published_cell_and_avg(paper_matrix):
    cells, avg = paper.cells(), paper.averages()
    for (y, x, metric), vals in cells.items():
        for m, (v, _) in zip(paper.METHODS, vals):
            row = _get(paper_matrix, m, metric, "cell", x, y)
            assert round(row.value, 4) == v
            assert row.n == paper.CELL_N[(y, x)]
    for metric in ("em", "judge"):
        for m, (v, _) in zip(paper.METHODS, avg[metric]):
            row = _get(paper_matrix, m, metric, "macro")
            assert round(row.value, 4) == v, (m, metric)
            assert row.n == 371 and row.n_cells == 12
    # The item-weighted mean is a different number, named differently.
    fc_t = _get(paper_matrix, "full_context_text_only", "em", "micro")
    assert fc_t.n == 371 and round(fc_t.value, 4) != 0.5670


def test_marks_match_the_papers_best_and_second_cells(paper_matrix):
    cells, avg = paper.cells(), paper.averages()
    for (y, x, metric), vals in cells.items():
        for m, (_, mark) in zip(paper.METHODS, vals):
            assert _get(paper_matrix, m, metric, "cell", x, y).mark == mark, (y, x, metric, m)
    for metric in ("em", "judge"):
        for m, (_, mark) in zip(paper.METHODS, avg[metric]):
            assert _get(paper_matrix, m, metric, "macro").mark == mark


def test_ties_share_marks_and_second_is_the_next_distinct_value():
    rows = pd.DataFrame({"g": ["r"] * 5, "value": [0.55, 0.55, 0.45, 0.45, 0.30]})
    assert list(mark_best(rows, ["g"])) == ["best", "best", "second", "second", ""]
    # Values equal at the displayed precision tie.
    rows = pd.DataFrame({"g": ["r"] * 3, "value": [0.214285714, 0.21428571, 0.19]})
    assert list(mark_best(rows, ["g"])) == ["best", "best", "second"]
    # One method: nothing to compare; all tied: no second.
    assert list(mark_best(pd.DataFrame({"g": ["r"], "value": [0.4]}), ["g"])) == [""]
    assert list(mark_best(pd.DataFrame({"g": ["r", "r"], "value": [0.4, 0.4]}), ["g"])) == ["best", "best"]


def hand_frame() -> pd.DataFrame:
    b = "bb"
    return frame_from([
        # method a: item 1 in X1/Y1, item 2 in (X2, X3) × Y1, item 3 in X3/Y2, item 4 unlabelled on X
        (b, "a", "mcq", "T:1", ("X1",), ("Y1",), 1.0, np.nan, np.nan),
        (b, "a", "mcq", "T:2", ("X2", "X3"), ("Y1",), 0.5, np.nan, np.nan),
        (b, "a", "mcq", "T:3", ("X3",), ("Y2",), 0.0, np.nan, np.nan),
        (b, "a", "mcq", "T:4", (), ("Y2",), 0.25, np.nan, np.nan),
        (b, "a", "open", "T:1", ("X1",), ("Y1",), np.nan, 1.0, 0.5),
        (b, "a", "open", "T:2", ("X2", "X3"), ("Y1",), np.nan, 0.0, 0.25),
        # method c: the same MCQ items, logged twice for item 1 (averaged into one item score)
        (b, "c", "mcq", "T:1", ("X1",), ("Y1",), 0.0, np.nan, np.nan),
        (b, "c", "mcq", "T:1", ("X1",), ("Y1",), 1.0, np.nan, np.nan),
        (b, "c", "mcq", "T:2", ("X2", "X3"), ("Y1",), 0.5, np.nan, np.nan),
        (b, "c", "mcq", "T:3", ("X3",), ("Y2",), 0.5, np.nan, np.nan),
    ])


def test_hand_computed_cells_marginals_macro_micro():
    rows = evaluation_matrix(hand_frame())
    a = lambda metric, agg, x="all", y="all": _get(rows, "a", metric, agg, x, y)
    # An item with two X labels counts in both cells.
    assert (a("em", "cell", "X1", "Y1").value, a("em", "cell", "X1", "Y1").n) == (1.0, 1)
    assert (a("em", "cell", "X2", "Y1").value, a("em", "cell", "X2", "Y1").n) == (0.5, 1)
    assert (a("em", "cell", "X3", "Y1").value, a("em", "cell", "X3", "Y1").n) == (0.5, 1)
    assert (a("em", "cell", "X3", "Y2").value, a("em", "cell", "X3", "Y2").n) == (0.0, 1)
    # Macro = mean of the four non-empty cells; n = labelled items behind them.
    macro = a("em", "macro")
    assert macro.value == pytest.approx((1.0 + 0.5 + 0.5 + 0.0) / 4) and macro.n == 3 and macro.n_cells == 4
    # Micro = every scored item once (the X-unlabelled one too).
    micro = a("em", "micro")
    assert micro.value == pytest.approx((1.0 + 0.5 + 0.0 + 0.25) / 4) and micro.n == 4
    # Marginals: item 2 once in X2 and once in X3; Y1 counts items 1 and 2 once each.
    assert a("em", "marginal", "X3").value == pytest.approx(0.25) and a("em", "marginal", "X3").n == 2
    assert a("em", "marginal", y="Y1").value == pytest.approx(0.75) and a("em", "marginal", y="Y1").n == 2
    assert a("judge", "macro").value == pytest.approx((1.0 + 0.0 + 0.0) / 3)
    assert a("bleu_1", "cell", "X1", "Y1").value == 0.5
    # Duplicated rows of one item average into one item score.
    c11 = _get(rows, "c", "em", "cell", "X1", "Y1")
    assert (c11.value, c11.n) == (0.5, 1)
    assert set(rows.columns) >= {"backbone", "method", "mode", "metric", "x", "y", "agg", "value", "n", "mark"}
    assert set(rows["mode"][rows.metric == "em"]) == {"mcq"} and set(rows["mode"][rows.metric == "judge"]) == {"open"}


@settings(max_examples=20, deadline=None)
@given(st.lists(st.tuples(st.sampled_from(["X1", "X2", "X3", "X4"]), st.sampled_from(["Y1", "Y2", "Y3"]),
                          st.sampled_from([0.0, 0.25, 0.5, 0.75, 1.0]), st.sampled_from(["m1", "m2"])),
                min_size=1, max_size=40),
       st.randoms(use_true_random=False))
def test_macro_is_invariant_to_row_order(items, rnd):
    rows = [("b", m, "mcq", f"T:{i}", (x,), (y,), v, np.nan, np.nan) for i, (x, y, v, m) in enumerate(items)]
    shuffled = list(rows)
    rnd.shuffle(shuffled)
    one = evaluation_matrix(frame_from(rows))
    two = evaluation_matrix(frame_from(shuffled))
    key = ["backbone", "method", "metric", "agg", "x", "y"]
    one, two = one.sort_values(key).reset_index(drop=True), two.sort_values(key).reset_index(drop=True)
    assert list(one["n"]) == list(two["n"]) and list(one["mark"]) == list(two["mark"])
    np.testing.assert_allclose(one["value"].to_numpy(float), two["value"].to_numpy(float), rtol=0, atol=1e-12)


def test_many_rows_are_fast_enough():
    """400k rows (a large run set's shape) in well under the bench budget: vectorised."""
    import time

    rng = np.random.default_rng(1)
    n_items, methods = 2000, 50
    ids = [f"T:{i}" for i in range(n_items)]
    xs = [(f"X{1 + i % 4}",) for i in range(n_items)]
    ys = [(f"Y{1 + i % 3}",) for i in range(n_items)]
    f = pd.DataFrame({
        "backbone": np.repeat(["b1", "b2"], methods * n_items),
        "method": np.tile(np.repeat([f"m{k}" for k in range(methods)], n_items), 2),
        "mode": "mcq", "item_id": ids * (2 * methods), "x": xs * (2 * methods), "y": ys * (2 * methods),
        "em": rng.integers(0, 5, 2 * methods * n_items) / 4, "judge": np.nan, "bleu_1": np.nan,
    })
    t = time.perf_counter()
    rows = evaluation_matrix(f)
    assert time.perf_counter() - t < 10  # ~1 s unloaded; generous for a shared machine
    assert len(rows[rows["agg"] == "cell"]) == 2 * methods * 12


def test_one_key_grouping_equals_grouping_on_the_columns():
    """_mean_n groups one combined integer key: the same groups in the same (first-appearance) order
    and the same means, bit for bit, as pandas grouping on the key columns (unrounded BLEU-like
    values, where a different order of summation would show); _first_rows keeps what
    drop_duplicates keeps."""
    import numpy as np
    import pandas as pd

    from scorer.metrics.matrix import _first_rows, _mean_n

    rng = np.random.default_rng(2)
    keys = [rng.integers(0, 7, 5000), rng.integers(0, 300, 5000), rng.integers(0, 4, 5000)]
    values = rng.random(5000)
    g = pd.DataFrame({"a": keys[0], "b": keys[1], "c": keys[2]}).assign(v=values).groupby(["a", "b", "c"], sort=False)["v"]
    ref = pd.DataFrame({"value": g.mean(), "n": g.size()}).reset_index()
    got = _mean_n(keys, values, ["a", "b", "c"])
    assert got.equals(ref)
    assert _mean_n(keys[:1], values).columns.tolist() == ["k0", "value", "n"]
    frame = pd.DataFrame({"a": keys[0], "b": keys[1]})
    assert _first_rows(keys[:2]).tolist() == frame.drop_duplicates().index.tolist()


def test_section_warns_of_items_without_an_x_or_y_label():
    """The matrix section counts the distinct scored items that have no X or no Y label (they
    are in the item-weighted mean only), however many rows each has: on the demo with some items'
    labels taken away, the count a plain loop over the rows gives."""
    from dataclasses import replace

    from scorer.scoring import build_context
    from scorer.sections import matrix as section
    from scorer.sections.methods import answerable_scores
    from tests.paths import DEMO, RUNS

    ctx, _, _ = build_context(DEMO, [RUNS])
    assert section.build(ctx).warnings == ()
    f = ctx.frame.copy()
    ids = sorted(f["item_id"].unique())
    f["x"] = [() if i in ids[:5] else x for i, x in zip(f["item_id"], f["x"])]
    f["y"] = [() if i in ids[3:9] else y for i, y in zip(f["item_id"], f["y"])]
    a = answerable_scores(f)
    want = len({i for i, x, y in zip(a["item_id"], a["x"], a["y"]) if not x or not y})
    assert want >= 5
    res = section.build(replace(ctx, frame=f))
    assert res.warnings == (f"{want} scored item(s) have no X or no Y label: they count in the item-weighted "
                            "mean only, not in cells, marginals or Avg.",)


def test_matrix_on_row_codes_and_label_loop_equal_pandas():
    """evaluation_matrix on row codes (issue 19) equals it without, value for value and row for row
    (unrounded BLEU-like values, where another order of summation would show); the cells of tuple
    labels (a loop) equal pandas' explode of them; labels that are not tuples of strings take the
    explode itself."""
    from scorer.metrics.matrix import _coded_cells, _string_cells, item_cells
    from scorer.metrics.row_codes import row_codes

    rng = np.random.default_rng(7)
    rows = []
    for i in range(300):
        item, b, m = f"T{rng.integers(1, 4)}:{rng.integers(0, 60)}", f"b{rng.integers(0, 2)}", f"m{rng.integers(0, 5)}"
        x = tuple(str(v) for v in rng.choice(["X1", "X2", "X3", "X4"], rng.integers(0, 3), replace=False))
        y = tuple(str(v) for v in rng.choice(["Y1", "Y2", "Y3"], rng.integers(0, 3), replace=False))
        mode = "mcq" if rng.random() < 0.5 else "open"
        v = rng.random()
        rows.append((b, m, mode, item, x, y, v if mode == "mcq" else np.nan, v if mode == "open" else np.nan,
                     rng.random() if mode == "open" else np.nan))
    f = frame_from(rows)
    pd.testing.assert_frame_equal(evaluation_matrix(f, codes=row_codes(f)), evaluation_matrix(f), check_exact=True)
    labels = f[["item_id", "x", "y"]].assign(item_id=pd.factorize(f["item_id"])[0])  # item codes, as metric_rows has
    cells = item_cells(labels)
    ci, cx, cy = _string_cells(labels)
    assert (ci, cx, cy) == (cells["item_id"].tolist(), cells["x"].tolist(), cells["y"].tolist())
    odd = labels.assign(x=[["X1"]] + labels["x"].tolist()[1:])  # a list, not a tuple
    assert _string_cells(odd) is None
    ids, xc, yc, xs, ys = _coded_cells(odd)
    cells = item_cells(odd)
    assert ids.tolist() == cells["item_id"].tolist() and [xs[c] for c in xc] == cells["x"].tolist()
    assert [ys[c] for c in yc] == cells["y"].tolist()


def _metric_rows_by_concat(work: pd.DataFrame, metric: str, mode: str, n_items: int) -> pd.DataFrame:
    """metric_rows as it was built before issue 19: one pandas frame per aggregate, explode for the
    cells, drop_duplicates for the labels, then a frame concat (the reference for the arrays)."""
    from scorer.metrics.matrix import ALL, _first_rows, _mean_n, item_cells

    sel = ((work["mode"] == mode).to_numpy(bool)) & work[metric].notna().to_numpy(bool)
    k, item, v = work["_k"].to_numpy()[sel], work["item_id"].to_numpy()[sel], work[metric].to_numpy(float)[sel]
    scores = _mean_n([k, item], v, ["_k", "item"])
    sk, si, sv = scores["_k"].to_numpy(), scores["item"].to_numpy(), scores["value"].to_numpy()
    cells = item_cells(work.loc[sel, ["item_id", "x", "y"]].drop_duplicates("item_id"))
    xs, ys = sorted(set(cells["x"])), sorted(set(cells["y"]))
    cx = cells["x"].map({v: i for i, v in enumerate(xs)}).to_numpy(np.int64)
    cy = cells["y"].map({v: i for i, v in enumerate(ys)}).to_numpy(np.int64)
    ci = cells["item_id"].to_numpy(np.int64)
    order = np.argsort(si, kind="stable")
    starts = np.searchsorted(si[order], np.arange(n_items + 1))
    reps = (starts[1:] - starts[:-1])[ci]
    ends = np.cumsum(reps)
    take = order[np.repeat(starts[ci] - (ends - reps), reps) + np.arange(int(ends[-1]) if len(ends) else 0)]
    lk, li, lv, lx, ly = sk[take], si[take], sv[take], np.repeat(cx, reps), np.repeat(cy, reps)
    cell = _mean_n([lk, lx, ly], lv, ["_k", "xc", "yc"])
    cell["x"], cell["y"], cell["agg"] = np.asarray(xs, dtype=object)[cell["xc"]], np.asarray(ys, dtype=object)[cell["yc"]], "cell"
    parts = [cell.drop(columns=["xc", "yc"])]
    for axis, codes, names in (("x", lx, xs), ("y", ly, ys)):
        first = _first_rows([lk, li, codes]) if len(lk) else np.zeros(0, dtype=np.int64)
        m = _mean_n([lk[first], codes[first]], lv[first], ["_k", "c"])
        m[axis] = np.asarray(names, dtype=object)[m["c"]]
        m["y" if axis == "x" else "x"] = ALL
        m["agg"] = "marginal"
        parts.append(m.drop(columns=["c"]))
    g = cell.groupby("_k", sort=False)["value"]
    macro = pd.DataFrame({"value": g.mean(), "n_cells": g.size()}).reset_index()
    first = _first_rows([lk, li]) if len(lk) else np.zeros(0, dtype=np.int64)
    labelled = np.bincount(lk[first].astype(np.int64), minlength=int(macro["_k"].max()) + 1 if len(macro) else 0)
    macro["n"] = labelled[macro["_k"].to_numpy(np.int64)].astype(np.int64)
    macro["x"], macro["y"], macro["agg"] = ALL, ALL, "macro"
    micro = _mean_n([sk], sv, ["_k"])
    micro["x"], micro["y"], micro["agg"] = ALL, ALL, "micro"
    out = pd.concat([*parts, macro, micro], ignore_index=True)
    out["metric"], out["mode"] = metric, mode
    out["n"] = out["n"].astype(np.int64)
    out["n_cells"] = out["n_cells"].astype("Int64")
    return out


def test_metric_rows_equal_the_frame_concat():
    """metric_rows assembles its aggregates from arrays (issue 19): the same frame, value for value
    (unrounded values) and dtype for dtype, as building a frame per aggregate and concatenating,
    also where no item has a cell, where labels are not strings and where an item has two rows."""
    from scorer.metrics.matrix import metric_rows

    rng = np.random.default_rng(9)
    rows = [("b", f"m{rng.integers(0, 3)}", "mcq", f"T:{rng.integers(0, 40)}",
             tuple(str(v) for v in rng.choice(["X1", "X2", "X3"], rng.integers(0, 3), replace=False)),
             tuple(str(v) for v in rng.choice(["Y1", "Y2"], rng.integers(0, 3), replace=False)),
             rng.random(), np.nan, np.nan) for _ in range(200)]
    cases = [rows, [r[:4] + ((), ("Y1",)) + r[6:] for r in rows[:5]],  # no cells
             [r[:4] + ((1,), (2,)) + r[6:] for r in rows[:5]], rows[:1] * 2]
    for case in cases:
        f = frame_from(case)
        item, ids = pd.factorize(f["item_id"])
        work = pd.DataFrame({"_k": f.groupby(["backbone", "method"], sort=False).ngroup().to_numpy(), "item_id": item,
                             "mode": f["mode"].to_numpy(object), "x": f["x"].to_numpy(object),
                             "y": f["y"].to_numpy(object), "em": f["em"].to_numpy(float)})
        pd.testing.assert_frame_equal(metric_rows(work, "em", "mcq", len(ids)),
                                      _metric_rows_by_concat(work, "em", "mcq", len(ids)), check_exact=True)
