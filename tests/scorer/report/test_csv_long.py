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
            second = df["measure"].str.fullmatch(r".+ \(.*CI.*\)")  # a value's second interval (Table.ci_rows)
            assert len(df[~second]) == len(rows) * len(numeric_cols), (p.name, len(df), len(rows), sorted(numeric_cols))
            assert second.sum() in (0, len(rows)), p.name
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


# --- which n and which interval go with a value: declared, never guessed from column order ----------

def _long(report: Path, name: str) -> pd.DataFrame:
    return pd.read_csv(report / "csv" / "long" / f"{name}.csv", keep_default_na=False, na_values=[""])


def test_every_report_table_declares_the_n_and_intervals_column_order_would_guess(tmp_path):
    """A value's n or interval is ambiguous where a table has two n columns, an n column after the
    value, or two intervals that name no value: every such table of the demo (both benchmarks, with
    annotations and a --compare pair) says which goes with which (Table.n_for / ci_rows)."""
    from scorer.report.csvlong import undeclared_pairs
    from scorer.scoring import score
    from scorer.sections.base import ScoreOptions
    from scorer.cli import main as cli_main
    from tests.paths import DEMO

    db = tmp_path / "a.db"
    assert cli_main(["annotations", "import", str(DEMO / "annotations.jsonl"), "--db", str(db)]) == 0
    seen = 0
    pairs = {"runs": ("SRAG(V)", "FC(V)"), "runs-mosaic": ("semantic_rag_budget1600__multimodal", "gold_facts__text_only")}
    for runs, pair in pairs.items():
        report = score(DEMO, [DEMO / runs], db=db, options=ScoreOptions(resamples=20, compare=(pair,)))
        for s in report.sections:
            for t in s.tables:
                seen += 1
                assert undeclared_pairs(t) == [], (s.name, t.name, list(t.columns))
    assert seen >= 40


def test_abstention_rates_carry_their_own_n(report):
    """Correct abstention is over unanswerable items, false abstention over answerable ones, the
    answerable score over the answerable items with a score; "From text" is a count (no n)."""
    data = json.loads((report / "report.json").read_text())["abstention"]
    df = _long(report, "abstention__abstention")
    measure = {"correct_abstention": "Correct abst.", "false_abstention": "False abst.",
               "answerable_score": "Score (answerable)"}
    checked = 0
    for r in data:
        got = df[(df["backbone"] == r["backbone"]) & (df["method"] == r["display"]) & (df["mode"] == r["mode"])
                 & (df["measure"] == measure[r["metric"]])]
        assert len(got) == 1, r
        assert int(got["n"].iloc[0]) == r["n"], (r, got.to_dict("records"))
        checked += 1
    unans = df[df["measure"] == "Correct abst."]["n"].to_numpy()
    ans = df[df["measure"] == "False abst."]["n"].to_numpy()
    assert checked >= 6 and (unans != ans).all()  # the demo has fewer unanswerable items than answerable
    assert df[df["measure"] == "From text"]["n"].isna().all()


def test_delivery_values_carry_their_own_n(report):
    data = json.loads((report / "report.json").read_text())["delivery"]["runs"]
    df = _long(report, "delivery__delivery_runs")
    for r in data:
        got = df[(df["backbone"] == r["backbone"]) & (df["method"] == r["display"])
                 & (df["mode"].isin([r["mode"], "open = mcq"]))]
        if got.empty:  # a mirrored MCQ row, shown once as "open = mcq"
            continue
        n = dict(zip(got["measure"], got["n"]))
        assert n["Chain Deliv."] == r["n_delivered"] and n["Req.-Fact Recall"] == r["n_retrieved"], (r, n)
        assert n["Chain Retr."] == r["n_retrieved"] and n["Retrieved/item"] == r["n_retrieved_lists"]
        assert pd.isna(n["Retr. not deliv."]) and pd.isna(n["Req. facts not deliv."])  # totals


def test_a_second_interval_is_its_own_row_and_no_count_takes_an_interval():
    """A paired drop with an item CI and a cluster CI: the cluster CI is a row of its own (with the
    number of clusters as its n), never the CI of the loss count beside it."""
    rows = [{"Drop": "Perception", "n": 80, "Score upper": 0.7, "Score lower": 0.6, "Δ drop": 0.1,
             "95% CI": (0.05, 0.15), "W": 20, "T": 48, "L": 12, "Cluster 95% CI": (0.01, 0.19), "n clusters": 9}]
    cols = list(rows[0])
    loose = Table("drops", "Drops", rows, cols)
    from scorer.report.csvlong import undeclared_pairs

    assert undeclared_pairs(loose)[:2] == ["95% CI", "Cluster 95% CI"]  # and the values: two n columns
    values = ("Score upper", "Score lower", "Δ drop", "W", "T", "L")
    t = Table("drops", "Drops", rows, cols, n_for={**{v: "n" for v in values}, "Cluster 95% CI": "n clusters"},
              ci_rows={"Cluster 95% CI": "Δ drop"})
    assert undeclared_pairs(t) == []
    got = {r["measure"]: r for r in csv.DictReader(table_long(SectionResult("s", None, [t]), t, []).splitlines())}
    assert (got["L"]["ci_low"], got["L"]["ci_high"]) == ("", "")
    assert (got["Δ drop"]["ci_low"], got["Δ drop"]["ci_high"], got["Δ drop"]["n"]) == ("0.05", "0.15", "80")
    cluster = got["Δ drop (Cluster 95% CI)"]
    assert (cluster["value"], cluster["ci_low"], cluster["ci_high"], cluster["n"]) == ("0.1", "0.01", "0.19", "9")
