"""frame_checks.before_scoring finds the folders whose recorded judge / BLEU-1 fall outside [0, 1]
without splitting every folder (a million rows come in 20,000 folders): the same folders withheld,
with the same reasons, as checking each folder's scores one by one (scorer.metrics.scales.check_range)."""

from __future__ import annotations

import math

import numpy as np
import pandas as pd
import pytest

from scorer.metrics.scales import check_range
from scorer.scoring.frame_checks import CHECKED_FIELDS, before_scoring


def _frame() -> pd.DataFrame:
    rng = np.random.default_rng(7)
    rows = []
    for f in range(40):
        for i in range(25):
            judge, bleu = float(rng.random()), float(rng.random())
            if f == 3:
                judge = float(rng.integers(1, 6))  # a folder judged on a 1-5 scale
            if f == 11 and i == 7:
                bleu = 1.5  # one BLEU-1 out of range
            if f == 17:
                judge = [math.nan, math.inf, -math.inf, 0.5][i % 4]  # non-finite values are not checked
            if f == 23 and i == 1:
                judge = -0.2
            rows.append({"folder": f"runs/f{f:02d}", "line": i + 1, "mode": "open" if i % 5 else "mcq", "judge": judge,
                         "bleu_1": bleu})
    rows.append({"folder": "runs/f99", "line": 1, "mode": "mcq", "judge": 7.0, "bleu_1": 9.0})  # MCQ rows are not checked
    return pd.DataFrame(rows)


def _one_by_one(frame: pd.DataFrame, recompute_text: bool) -> dict:
    out: dict[str, dict[str, str]] = {}
    sub = frame[frame["mode"] == "open"]
    for folder, rows in sub.groupby("folder", sort=True):
        for name in CHECKED_FIELDS:
            if name == "bleu_1" and recompute_text:
                continue
            check = check_range(rows[name].to_numpy(dtype=float), guess=name == "judge")
            if not check.ok:
                out.setdefault(name, {})[folder] = check.describe()
    return out


@pytest.mark.parametrize("recompute_text", [False, True])
def test_the_folders_withheld_are_those_checked_one_by_one(recompute_text):
    frame = _frame()
    _, withheld, warnings, record = before_scoring(frame, [], None, recompute_text)
    want = _one_by_one(frame, recompute_text)
    got = record["withheld"]
    assert {n: sorted(f) for n, f in got.items()} == {n: sorted(f) for n, f in want.items()}
    assert sorted(got["judge"]) == ["runs/f03", "runs/f23"]
    assert ("bleu_1" in got) == (not recompute_text)
    for name, folders in want.items():
        for folder, describe in folders.items():
            assert describe in got[name][folder]
    assert any("--judge-scale 1-5" in w for w in warnings)
