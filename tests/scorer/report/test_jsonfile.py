"""report.json values: rounded, NaN/inf as null, never -0.0, numpy and tuples made plain."""

from __future__ import annotations

import json

import numpy as np
import pandas as pd

from scorer.report.jsonfile import dumps, plain


def test_plain_values_in_rows_and_nested():
    row = {"a": 0.1234567891, "b": float("nan"), "c": -1e-9, "d": float("inf"), "e": True, "f": 3,
           "g": "x", "h": None, 7: np.float64(2.0000004), "i": np.int64(5), "j": (1, 2.5), "k": pd.NA,
           "l": np.bool_(False), "m": [float("-inf"), {"n": -0.0}]}
    want = {"a": 0.123457, "b": None, "c": 0.0, "d": None, "e": True, "f": 3, "g": "x", "h": None,
            "7": 2.0, "i": 5, "j": [1, 2.5], "k": None, "l": False, "m": [None, {"n": 0.0}]}
    got = plain([row, {"rows": [row]}])
    assert got == [want, {"rows": [want]}]
    assert all(type(got[0][k]) is type(want[k]) for k in want)
    text = dumps({"z": row})
    assert "-0.0" not in text and json.loads(text) == {"z": want}
