"""The long ("tidy") CSVs of the demo report load into pandas as they should: snake_case headers,
the same leading and trailing columns everywhere (and the same columns for every backbone of a
table), numeric value / n / ci columns, an empty value with a reason where the report had none,
one row per value of the wide table, and the matrix's values equal to report.json's records."""

from __future__ import annotations

import csv
import json
import re
from pathlib import Path

import pandas as pd
import pytest

from scorer.report.csvlong import LEAD, TAIL, snake, table_long
from scorer.sections.base import SectionResult, Table

pytestmark = pytest.mark.needs_demo
NUMERIC = ("value", "n", "ci_low", "ci_high")


@pytest.fixture
def report(demo_outputs) -> Path:
    return demo_outputs


def test_every_table_has_a_long_csv_with_numeric_columns(report):
    wide = sorted((report / "csv").glob("*.csv"))
    long = sorted((report / "csv" / "long").glob("*.csv"))
    assert len(wide) >= 35 and [p.name for p in long] == [p.name for p in wide]
    undefined = 0
    for p in long:
        df = pd.read_csv(p, dtype={c: str for c in ("backbone", "method", "mode", "metric", "x", "y", "agg",
                                                      "measure", "mark", "reason")})
        cols = list(df.columns)
        assert all(re.fullmatch(r"[a-z][a-z0-9_]*", c) for c in cols), (p.name, cols)
        assert tuple(cols[:len(LEAD)]) == LEAD and tuple(cols[-len(TAIL):]) == TAIL, (p.name, cols)
        for c in NUMERIC:  # (a table of text only, e.g. the abstention patterns, has no value rows)
            assert df[c].dtype.kind in "if" or len(df) == 0, (p.name, c, df[c].dtype)
        missing = df["value"].isna()
        assert (df.loc[missing, "reason"].fillna("") != "").all(), p.name  # every empty value says why
        assert df.loc[~missing, "reason"].fillna("n = ").str.startswith("n = ").all(), p.name  # or an n in words
        undefined += int((df["reason"] == "undefined").sum())
        assert not (df["ci_low"] > df["ci_high"]).any(), p.name
        # one row per value cell of the wide table (the matrix: per record, checked below)
        if not p.name.startswith("matrix__"):
            with (report / "csv" / p.name).open() as fh:
                rows = list(csv.DictReader(fh))
            numeric_cols = {c for c in rows[0] if not c.endswith((" low", " high", " mark", " n"))
                            and any(_is_num(r[c]) for r in rows)} - {c for c in rows[0] if c == "n" or c.startswith("n ")}
            assert len(df) == len(rows) * len(numeric_cols), (p.name, len(df), len(rows), sorted(numeric_cols))
    assert sum(1 for p in long if len(p.read_text().splitlines()) > 1) >= len(long) - 2  # text-only lists: none
    assert undefined > 0  # the demo's κ of a one-verdict cell is undefined: empty, with the reason


def _is_num(text: str) -> bool:
    try:
        float(text)
        return True
    except ValueError:
        return False


def test_backbones_share_columns_and_matrix_matches_report_json(report):
    long = report / "csv" / "long"
    data = json.loads((report / "report.json").read_text())["matrix"]
    backbones = sorted({r["backbone"] for r in data})
    assert len(backbones) == 2
    for prefix in ("matrix__main_", "matrix__bleu_", "matrix__marginals_", "position_bias__position_bias_"):
        frames = [pd.read_csv(long / f"{prefix}{b}.csv") for b in backbones]
        assert list(frames[0].columns) == list(frames[1].columns), prefix
        for b, df in zip(backbones, frames):
            assert set(df["backbone"]) == {b}, prefix
    for b in backbones:
        df = pd.read_csv(long / f"matrix__main_{b}.csv", keep_default_na=False, na_values=[""])
        want = {(r["method"], r["metric"], r["agg"], r["x"], r["y"]): (r["value"], r["n"]) for r in data
                if r["backbone"] == b and r["metric"] in ("em", "judge") and r["agg"] != "marginal"}
        got = {(r.method_id, r.metric, r.agg, r.x, r.y): (r.value, r.n) for r in df.itertuples()}
        assert set(got) == set(want)
        for k, (v, n) in want.items():
            assert got[k][1] == n and (pd.isna(got[k][0]) if v is None else abs(got[k][0] - v) < 1e-6), k


def test_melting_pairs_intervals_and_ns_and_defuses_text():
    rows = [{"Method": "=cmd|' /C calc'!A0", "Backbone": "bb", "n": 10, "Score": 0.5, "Score 95% CI": (0.25, 0.75),
             "n Y3": 4, "Latest": "undefined", "Chain Retr.": 0.2, "n Retr.": 7, "_marks": {"Score": "best"}},
            {"Method": "B", "Backbone": "bb", "n": 12, "Score": None, "Score 95% CI": (None, None),
             "n Y3": 5, "Latest": 0.125, "Chain Retr.": 0.4, "n Retr.": 9, "_n": {"Latest": 3}}]
    t = Table("demo_bb", "Demo", rows, ["Method", "Backbone", "n", "Score", "Score 95% CI", "n Y3", "Latest",
                                        "Chain Retr.", "n Retr."])
    text = table_long(SectionResult("demo", None, [t]), t, ["bb"])
    got = list(csv.DictReader(text.splitlines()))
    by = {(r["method"], r["measure"]): r for r in got}
    assert len(got) == 6 and list(got[0])[:7] == list(LEAD)
    first = by[("'=cmd|' /C calc'!A0", "Score")]  # csv_cell defused the formula
    assert (first["value"], first["n"], first["ci_low"], first["ci_high"], first["mark"]) == ("0.5", "10", "0.25", "0.75", "best")
    assert by[("'=cmd|' /C calc'!A0", "Latest")]["value"] == "" and by[("'=cmd|' /C calc'!A0", "Latest")]["reason"] == "undefined"
    assert by[("'=cmd|' /C calc'!A0", "Latest")]["n"] == "4"  # "n Y3" applies to the columns after it
    assert by[("B", "Latest")]["n"] == "3"  # a value's own n wins
    assert by[("B", "Chain Retr.")]["n"] == "9"  # "n Retr." goes with "Chain Retr.", before it
    assert by[("B", "Score")]["value"] == "" and by[("B", "Score")]["reason"] == "no value"
    assert snake("Δ Latest@K 95% CI") == "delta_latest_at_k_95_pct_ci" and snake("n (open)") == "n_open"
