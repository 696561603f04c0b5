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


def _pandas_labels(f: pd.DataFrame, mode: str) -> pd.DataFrame:
    """item_labels as pandas gives them: the first row of each item among the mode's rows."""
    lab = f.loc[f["mode"] == mode, ["item_id", "x", "y"]].drop_duplicates("item_id")
    return lab.assign(x=lab["x"].map(lambda v: v if isinstance(v, tuple) else ()),
                      y=lab["y"].map(lambda v: v if isinstance(v, tuple) else ()))


def test_dense_scores_on_row_codes_equal_the_pandas_path():
    """dense_scores and item_labels on row codes (issue 19) give what factorizing the kept rows with
    pandas gives: the same ids, pairs, columns and labels (index included), also where an item's
    labels differ between its rows (the first one counts), where a key is missing (NaN: the pandas
    path itself) and where an item has several rows."""
    from scorer.metrics.comparisons import _dense_scores_pandas, row_codes

    f = frame()
    f.loc[5, "x"] = ("X4",)  # a later row of the same item with other labels: the first counts
    f.loc[f["item_id"] == "T1:2", "x"] = None  # not a tuple: no labels
    g = f.copy()
    g.loc[9, "backbone"] = np.nan  # a missing key: no pair codes
    for data in (f, g, f.iloc[::-1]):
        codes = row_codes(data)
        for metric, mode in (("judge", "open"), ("em", "mcq")):
            pd.testing.assert_frame_equal(item_labels(data, mode, codes), _pandas_labels(data, mode))
            keep = ((data["mode"] == mode) & data[metric].notna()).to_numpy(bool)
            ref = _dense_scores_pandas(data, metric, mode, keep, None)
            got = dense_scores(data, metric, mode, codes=codes)
            assert list(got.ids) == list(ref.ids)
            assert list(got.columns) == list(ref.columns)
            for k in ref.columns:
                assert np.array_equal(got.columns[k], ref.columns[k], equal_nan=True)
            pd.testing.assert_frame_equal(got.labels, ref.labels)
    assert row_codes(g).pair is None


def test_plan_groups_share_no_buffer():
    """PairedPlan reuses one set of arrays for every number of units in turn (issue 19): each
    group's results equal those of a plan holding that group alone (the same products, so equal
    bit for bit), whatever the order of the groups and with clustered comparisons among them."""
    rng = np.random.default_rng(11)

    def jobs(n, k, clustered=False):
        return [(rng.integers(0, 13, n) / 12, rng.integers(0, 13, n) / 12,
                 [f"c{i % 7}" for i in range(n)] if clustered else None) for _ in range(k)]

    # by number of units; 7: seven items, and 60 items in seven clusters
    groups = {300: jobs(300, 3), 9: jobs(9, 2), 80: jobs(80, 4), 7: jobs(7, 2) + jobs(60, 2, True)}
    together = PairedPlan(2000, 3)
    for name in (9, 300, 7, 80):
        for j, (a, b, cl) in enumerate(groups[name]):
            together.add((name, j), a, b, cl)
    got = together.run()
    for name, group in groups.items():
        alone = PairedPlan(2000, 3)
        for j, (a, b, cl) in enumerate(group):
            alone.add((name, j), a, b, cl)
        for key, ci in alone.run().items():
            assert got[key] == ci, key


def test_percentile_rows_in_place_equal_on_a_copy():
    from scorer.metrics.resample import percentile_rows

    dist = np.random.default_rng(2).integers(0, 37, (5, 1001)) / 37
    before = dist.copy()
    want = percentile_rows(dist.copy())
    got = percentile_rows(dist, in_place=True)
    assert all(np.array_equal(w, g) for w, g in zip(want, got))
    # partitioned where it lies: each row's values kept, the order statistics the quantiles read in place
    ordered = np.sort(before, axis=1)
    assert np.array_equal(np.sort(dist, axis=1), ordered) and not np.array_equal(dist, before)
    for k in (25, 26, 975, 976):  # 0.025 × 1000 and 0.975 × 1000, and the next
        assert np.array_equal(dist[:, k], ordered[:, k])
    fortran = np.asfortranarray(np.random.default_rng(3).random((4, 99)))
    kept = fortran.copy()
    percentile_rows(fortran, in_place=True)  # not C-contiguous: a partitioned copy, the array untouched
    assert np.array_equal(fortran, kept)


def test_plan_in_chunks_equals_plan_in_one():
    """Where the products come in several chunks (a small max_cells), each chunk's columns land
    at their resamples in the reused distribution array: on quarter scores (exact sums, so no
    summation order can show) the CIs equal those computed from one chunk, and paired_diff_ci's."""
    from scorer.metrics.bootstrap import paired_diff_ci

    rng = np.random.default_rng(12)
    pairs = [(rng.integers(0, 5, n) / 4, rng.integers(0, 5, n) / 4) for n in (50, 50, 13, 120)]
    one, chunked = PairedPlan(3000, 8), PairedPlan(3000, 8, max_cells=7_000)
    for j, (a, b) in enumerate(pairs):
        one.add(j, a, b)
        chunked.add(j, a, b)
    got, want = chunked.run(), one.run()
    assert got == want
    for j, (a, b) in enumerate(pairs):
        ref = paired_diff_ci(a, b, resamples=3000, seed=8)
        assert (got[j].ci_low, got[j].ci_high, got[j].n) == (ref.ci_low, ref.ci_high, ref.n)


def test_paired_plan_in_cache_sized_blocks_equals_one_product(monkeypatch):
    """PairedPlan multiplies the multiplicity counts PRODUCT_BLOCK_CELLS at a time (issue 19: a
    block stays in the CPU cache between its copy and its product); every CI is exactly the one a
    single product of all the resamples gives, for item and cluster units, where the last block
    is short too."""
    from scorer.metrics import comparisons

    rng = np.random.default_rng(12)

    def plan() -> PairedPlan:
        p = PairedPlan(resamples=3_001, seed=5)
        for n, keys in ((371, 6), (15, 9), (116, 4)):
            for k in range(keys):
                a, b = rng.choice([0.0, 0.25, 0.5, 1.0], n), rng.choice([0.0, 1.0], n)
                p.add(("items", n, k), a, b)
                p.add(("clusters", n, k), a, b, clusters=[f"c{i % 7}" for i in range(n)])
        return p

    state = rng.bit_generator.state
    blocked = plan().run()
    assert all(3_001 * n > comparisons.PRODUCT_BLOCK_CELLS for n in (371, 116))  # several blocks there
    rng.bit_generator.state = state
    monkeypatch.setattr(comparisons, "PRODUCT_BLOCK_CELLS", 1 << 40)
    whole = plan().run()
    assert blocked.keys() == whole.keys() and all(blocked[k] == whole[k] for k in whole)
