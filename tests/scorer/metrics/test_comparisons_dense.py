"""Dense item scores for the caption-proof plan (issue 19): `dense_scores` + `add_dense_slices` put
exactly the comparisons into a PairedPlan that `scores_by_method` + `add_slices` put there (same
keys, same item order, same values, same cluster labels), also where an item has several rows (their
mean) or a method skipped items; PairedPlan's results are unchanged by its shortcuts."""

from __future__ import annotations

import numpy as np
import pandas as pd

from scorer.metrics.comparisons import (
    PairedPlan,
    Slice,
    add_dense_slices,
    add_slices,
    caption_slices,
    dense_scores,
    item_labels,
    scores_by_method,
    slice_members,
)


def frame() -> pd.DataFrame:
    rng = np.random.default_rng(8)
    rows = []
    items = [f"T{t}:{i}" for t in (2, 10, 1) for i in range(12)]  # string order ≠ numeric order
    for backbone in ("b1", "b2"):
        for method in ("m_text", "m_vis", "m_other"):
            for n, item in enumerate(items):
                if method == "m_other" and n % 4 == 0:
                    continue  # a method that skipped items
                x = (f"X{1 + n % 4}",) if n % 5 else ()
                y = (f"Y{1 + n % 3}",)
                for mode, metric in (("open", "judge"), ("mcq", "em")):
                    value = float(rng.choice([0, 0.25, 0.5, 1 / 3, 1.0]))
                    if method == "m_vis" and n == 3 and mode == "open":
                        value = np.nan  # unscored
                    row = {"backbone": backbone, "method": method, "item_id": item, "mode": mode, "x": x, "y": y,
                           "judge": value if metric == "judge" else np.nan, "em": value if metric == "em" else np.nan,
                           "cluster": f"c{n % 5}"}
                    rows.append(row)
                    if method == "m_text" and n == 7 and mode == "mcq":  # an item with two rows: their mean
                        rows.append({**row, "em": 0.75})
    return pd.DataFrame(rows)


def test_dense_plan_equals_series_plan():
    f = frame()
    clusters = dict(zip(f["item_id"], f["cluster"]))
    for metric, mode in (("judge", "open"), ("em", "mcq")):
        labels = item_labels(f, mode)
        slices = caption_slices(["X1", "X2", "X3", "X4"], ["Y1", "Y2", "Y3"])
        series, members = scores_by_method(f, metric, mode), slice_members(labels, slices)
        dense = dense_scores(f, metric, mode)
        assert list(dense.ids) == sorted(f["item_id"].unique())
        masks = {sl: sl.members(dense.labels) for sl in slices}
        dense_clusters = np.array([clusters.get(i, i) for i in dense.ids], dtype=object)
        for cl in (None, clusters):
            old, new = PairedPlan(300, 4), PairedPlan(300, 4)
            for backbone in ("b1", "b2"):
                for a, b in (("m_vis", "m_text"), ("m_other", "m_vis")):
                    key = ("cp", backbone, a, b)
                    k_old = add_slices(old, key, series[(backbone, a)], series[(backbone, b)], members, cl)
                    k_new = add_dense_slices(new, key, dense.columns[(backbone, a)], dense.columns[(backbone, b)],
                                             masks, None if cl is None else dense_clusters)
                    assert k_old == k_new
            assert list(old.jobs) == list(new.jobs)
            for k in old.jobs:
                jo, jn = old.jobs[k], new.jobs[k]
                for x, y in ((jo.a, jn.a), (jo.b, jn.b), (jo.sums, jn.sums), (jo.sizes, jn.sizes)):
                    assert np.array_equal(x, y) and x.dtype == y.dtype
                assert jo.n_clusters == jn.n_clusters
            assert old.run() == new.run()
    # the item with two MCQ rows has their mean, as item_scores takes it
    mcq = dense_scores(f, "em", "mcq")
    i = list(mcq.ids).index("T2:7")
    two = f[(f["item_id"] == "T2:7") & (f["method"] == "m_text") & (f["backbone"] == "b1") & (f["mode"] == "mcq")]
    assert len(two) == 2 and mcq.columns[("b1", "m_text")][i] == two["em"].mean()
    assert np.isnan(dense_scores(f, "judge", "open").columns[("b1", "m_vis")][list(mcq.ids).index("T2:3")])
    assert Slice("all", "all").members(mcq.labels).all()


def test_pooled_mean_equals_pandas_row_mean():
    from scorer.sections.caption_proof import _row_mean

    rng = np.random.default_rng(3)
    for pairs in (2, 3, 4):
        cols = [rng.choice([0, 0.25, 1 / 3, 0.5, 2 / 3, 1.0], 500) for _ in range(pairs)]
        ref = pd.concat([pd.Series(c) for c in cols], axis=1).mean(axis=1).to_numpy()
        assert np.array_equal(_row_mean(cols), ref)


def test_slice_masks_equal_each_slices_members():
    """slice_masks (each label's membership once) gives every slice the mask Slice.members gives,
    on items with no, one and several X / Y labels."""
    from scorer.metrics.comparisons import slice_masks

    f = frame()
    f.loc[f.index % 7 == 0, "x"] = [("X1", "X3")] * int((f.index % 7 == 0).sum())
    f.loc[f.index % 11 == 0, "y"] = [("Y2", "Y3")] * int((f.index % 11 == 0).sum())
    for mode in ("open", "mcq"):
        labels = item_labels(f, mode)
        slices = caption_slices(["X1", "X2", "X3", "X4"], ["Y1", "Y2", "Y3"])
        got = slice_masks(labels, slices)
        assert list(got) == slices
        for sl in slices:
            want = sl.members(labels)
            assert got[sl].dtype == bool and np.array_equal(got[sl], want), sl
        assert 0 < got[Slice("low", "all")].sum() < len(labels)
