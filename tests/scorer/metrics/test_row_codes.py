"""Row codes (issue 19): the integer codes the caption-proof and matrix sections group on number
items, (backbone, method) pairs and modes exactly as pandas' factorize / ngroup number them, and
give up (None) where a key is missing, so that the callers fall back to pandas itself."""

from __future__ import annotations

import numpy as np
import pandas as pd

from scorer.metrics.row_codes import first_appearance, row_codes


def scores() -> pd.DataFrame:
    rng = np.random.default_rng(4)
    n = 400
    items = [f"T{t}:{i}" for t in (10, 2, 1) for i in range(9)]  # string order ≠ first appearance
    return pd.DataFrame({
        "backbone": rng.choice(["gpt", "Gemini", "b-2"], n),
        "method": rng.choice(["SRAG(V)", "FC(T)", "fc(t)", "MIRIX"], n),
        "mode": rng.choice(["open", "mcq"], n),
        "item_id": rng.choice(items, n),
    }).astype({"backbone": "string", "method": "string", "mode": "string", "item_id": "string"})


def test_codes_number_as_pandas_does():
    f = scores()
    codes = row_codes(f)
    item, items = pd.factorize(f["item_id"], sort=True)
    assert list(codes.items) == list(items) == sorted(set(f["item_id"]))
    assert np.array_equal(codes.item, item)
    pair, pairs = pd.MultiIndex.from_arrays([f["backbone"], f["method"]]).factorize(sort=True)
    assert codes.pairs == [tuple(p) for p in pairs]
    assert np.array_equal(codes.pair, pair)
    for mode in ("open", "mcq", "none"):
        assert np.array_equal(codes.of_mode(mode), (f["mode"] == mode).to_numpy(bool))


def test_a_missing_key_gives_no_codes():
    f = scores()
    f.loc[3, "item_id"] = pd.NA
    f.loc[5, "method"] = pd.NA
    f.loc[7, "mode"] = pd.NA
    codes = row_codes(f)
    assert codes.item is None and codes.pair is None
    assert np.array_equal(codes.of_mode("open"), (f["mode"] == "open").fillna(False).to_numpy(bool))


def test_first_appearance_numbers_as_factorize_and_ngroup():
    rng = np.random.default_rng(5)
    codes = rng.integers(0, 50, 3000)
    renumbered, first = first_appearance(codes)
    assert np.array_equal(renumbered, pd.factorize(codes)[0])
    frame = pd.DataFrame({"c": codes})
    assert np.array_equal(renumbered, frame.groupby("c", sort=False).ngroup().to_numpy())
    assert first.tolist() == frame.drop_duplicates("c").index.tolist()
