"""MOSAIC sections on tests/builders/mosaic.py's hand-made benchmark and runs: every value below is
computed on paper from the scores and lists written there (items 1–5 answerable, 6 not)."""

from __future__ import annotations

import json

import numpy as np
import pytest
from scipy import stats

from scorer.metrics.constants import DEFAULT_RESAMPLES, DEFAULT_SEED
from scorer.scoring import score
from scorer.sections.base import ScoreOptions
from tests.builders import mosaic

MOSAIC = ["mosaic_ladder", "mosaic_strata", "mosaic_sweep", "mosaic_carriers", "mosaic_composition"]


@pytest.fixture(scope="module")
def built(tmp_path_factory):
    root = tmp_path_factory.mktemp("mosaic")
    mosaic.write_bench(root / "bench")
    mosaic.write_runs(root / "runs")
    return root


@pytest.fixture(scope="module")
def report(built):
    rep = score(built / "bench", [built / "runs"], sections=MOSAIC)
    return {s.name: s for s in rep.sections}


def by(rows, **kw):
    out = [r for r in rows if all(r.get(k) == v for k, v in kw.items())]
    assert len(out) == 1, (kw, out)
    return out[0]


def test_ladder_score_and_chain_by_hand(report):
    s = report["mosaic_ladder"]
    assert s.reason is None
    lad = s.data["ladder"]
    assert [r["condition"] for r in lad] == ["gold_symbolic", "gold_native", "gold_generic_text", "retrieved_full",
                                             "retrieved_budget"]
    got = {r["condition"]: (r["n"], r["score"], r["n_chain"], r["chain"]) for r in lad}
    assert got["gold_symbolic"] == (5, pytest.approx(0.95), 5, 1.0)
    assert got["gold_native"] == (5, pytest.approx(0.75), 5, 1.0)
    assert got["gold_generic_text"] == (5, pytest.approx(0.60), 5, 1.0)
    assert got["retrieved_full"] == (5, pytest.approx(0.65), 5, pytest.approx(0.8))  # item 4 misses D3:1
    assert got["retrieved_budget"] == (5, pytest.approx(0.50), 5, pytest.approx(0.6))  # item 3 loses D1:1
    assert by(lad, condition="gold_native")["stage"] == "write"


def test_ladder_drops_by_hand(report):
    drops = report["mosaic_ladder"].data["drops"]
    assert [d["drop_name"] for d in drops] == ["perception_cost", "textification_cost", "retrieval_loss",
                                               "delivery_loss"]  # no structured / end-to-end run: no such rows
    expect = {  # name: (drop, wins, ties, losses, Δ chain)
        "perception_cost": (0.20, 2, 3, 0, 0.0),  # [0, .5, 0, .5, 0]
        "textification_cost": (0.15, 2, 3, 0, 0.0),  # [.5, 0, 0, .25, 0]
        "retrieval_loss": (0.10, 1, 4, 0, 0.2),  # [0, 0, .5, 0, 0]; chain lost on item 4
        "delivery_loss": (0.15, 2, 3, 0, 0.2),  # [.5, 0, 0, .25, 0]; chain lost on item 3
    }
    for d in drops:
        drop, w, t, l, chain = expect[d["drop_name"]]
        assert d["drop"] == pytest.approx(drop) and (d["wins"], d["ties"], d["losses"]) == (w, t, l)
        assert d["chain_drop"] == pytest.approx(chain) and d["n"] == d["n_chain"] == 5
        assert d["n_clusters"] == 2 and d["cluster_ci_low"] is not None


def test_drop_ci_is_scipys_percentile_bootstrap(report):
    upper = np.array(mosaic.RUNS["gold_facts__text_only"][1], dtype=float)
    lower = np.array(mosaic.RUNS["clue_only_context__multimodal"][1], dtype=float)
    ref = stats.bootstrap((upper, lower), lambda x, y, axis=-1: np.mean(x - y, axis=axis), paired=True,
                          vectorized=True, n_resamples=DEFAULT_RESAMPLES, method="percentile",
                          rng=np.random.default_rng(DEFAULT_SEED))
    d = by(report["mosaic_ladder"].data["drops"], drop_name="perception_cost")
    assert (d["ci_low"], d["ci_high"]) == pytest.approx((ref.confidence_interval.low, ref.confidence_interval.high),
                                                        abs=1e-12)


def test_strata_n_and_drops_by_hand(report):
    s = report["mosaic_strata"]
    rows = [r for r in s.data if r["drop_name"] == "perception_cost"]
    # perception per item [0, .5, 0, .5, 0]; image {1, 3}, video {2, 4}, audio {1, 4}
    mods = {r["stratum"]: (r["n"], r["drop"]) for r in rows if r["stratum_kind"] == "modality"}
    assert mods == {"image": (2, 0.0), "video": (2, pytest.approx(0.5)), "audio": (2, pytest.approx(0.25))}
    chs = {r["stratum"]: (r["n"], r["drop"]) for r in rows if r["stratum_kind"] == "challenge"}
    assert chs == {"fine_attribute": (1, 0.0), "background": (1, 0.0), "spatial": (1, 0.0),
                   "video_order": (1, pytest.approx(0.5)), "video_count": (1, pytest.approx(0.5)),
                   "prosody": (2, pytest.approx(0.25))}  # overlapping; no video_state item
    assert all(r["small"] and r["exploratory"] for r in s.data)
    assert any("fewer than 100 items" in w for w in s.warnings)
    assert any("no correction for multiple comparisons" in t.note for t in s.tables)


def test_sweep_points_by_hand(report):
    rows = report["mosaic_sweep"].data
    assert [r["budget"] for r in rows] == ["full", "2", "1"]  # loosest first
    got = [(r["n"], r["score"], r["chain"], r["coverage"], r["recall"], r["drop"]) for r in rows]
    a = pytest.approx
    assert got == [(5, a(0.65), a(0.8), a(14 / 15), a(14 / 15), None),
                   (5, a(0.50), a(0.6), a(25 / 30), a(14 / 15), a(0.15)),
                   (5, a(0.35), a(0.2), a(7 / 15), a(14 / 15), a(0.30))]
    assert all(r["ranking_changed_items"] == 0 for r in rows)
    assert report["mosaic_sweep"].warnings == []


def test_carrier_deltas_by_hand(report):
    rows = report["mosaic_carriers"].data
    got = {r["stratum"]: (r["n"], r["mean_a"], r["mean_b"], r["drop"]) for r in rows}
    a = pytest.approx
    # items with an image fact: 1 and 3; native [1, 1], OCR text [.5, .25]
    assert got == {"all": (2, a(1.0), a(0.375), a(0.625)), "fine_attribute": (1, a(1.0), a(0.5), a(0.5)),
                   "background": (1, a(1.0), a(0.25), a(0.75)), "spatial": (1, a(1.0), a(0.25), a(0.75))}
    assert {r["native_run"] for r in rows} == {"Oracle(V)"} and {r["variant"] for r in rows} == {"ocr_text"}


def test_composition_counts_with_overlapping_challenges(report):
    d = report["mosaic_composition"].data
    assert {r["challenge"]: (r["facts"], r["items"]) for r in d["challenges"]} == {
        "fine_attribute": (1, 1), "background": (1, 1), "spatial": (1, 1), "video_order": (1, 1),
        "video_count": (1, 1), "video_state": (0, 0), "prosody": (3, 2)}
    assert d["media"] == [{"modality": "image", "required": 3, "evidence": 1, "filler": 1, "total": 5},
                          {"modality": "video", "required": 1, "evidence": 0, "filler": 0, "total": 1},
                          {"modality": "audio", "required": 2, "evidence": 0, "filler": 1, "total": 3}]
    c = d["chains"][0]
    assert (c["n"], c["two_facts"], c["two_modalities"], c["unanswerable"]) == (5, 3, 2, 1)


def test_conditions_file_gives_the_same_tables(built, tmp_path):
    mosaic.write_runs(tmp_path / "runs", declare=False)
    none = score(built / "bench", [tmp_path / "runs"], sections=["mosaic_ladder"])
    assert none.sections[0].reason and "declares" in none.sections[0].reason
    cond = json.loads(mosaic.conditions_file(tmp_path / "c.json").read_text())
    opts = ScoreOptions(extra={"conditions": cond, "conditions_file": str(tmp_path / "c.json")})
    rep = score(built / "bench", [tmp_path / "runs"], options=opts, sections=MOSAIC)
    ref = score(built / "bench", [built / "runs"], sections=MOSAIC)
    for a, b in zip(rep.sections, ref.sections):
        assert a.data == b.data, a.name


def test_a_bad_declaration_in_metrics_json_is_a_warning_naming_file_and_key(built, tmp_path):
    mosaic.write_runs(tmp_path / "runs")
    metrics = next((tmp_path / "runs").rglob("*gold_facts__text_only/metrics.json"))
    metrics.write_text(json.dumps({**json.loads(metrics.read_text()), "condition": "gold_symbolik"}))
    rep = score(built / "bench", [tmp_path / "runs"], sections=["mosaic_ladder"])
    s = rep.sections[0]
    assert [w for w in s.warnings if str(metrics) in w and "condition 'gold_symbolik'" in w]
    assert "gold_symbolic" not in {r["condition"] for r in s.data["ladder"]}


def test_a_sweep_over_different_rankings_is_flagged(built, tmp_path):
    mosaic.write_runs(tmp_path / "runs")
    pred = next((tmp_path / "runs").rglob("*semantic_rag_budget1__multimodal/predictions.jsonl"))
    rows = [json.loads(x) for x in pred.read_text().splitlines()]
    rows[0]["retrieved"] = list(reversed(rows[0]["retrieved"]))
    pred.write_text("".join(json.dumps(r) + "\n" for r in rows))
    s = score(built / "bench", [tmp_path / "runs"], sections=["mosaic_sweep"]).sections[0]
    assert any("1 item(s) have a different logged ranking" in w for w in s.warnings)


def test_every_format_and_both_figures(built, tmp_path):
    from scorer.report.write import write_report

    rep = score(built / "bench", [built / "runs"], sections=MOSAIC)
    written = write_report(rep, tmp_path / "out", ["md", "csv", "json", "tex", "png"])
    names = {p.name for p in written}
    for t in ("mosaic_ladder__ladder", "mosaic_ladder__drops", "mosaic_strata__drops_by_modality",
              "mosaic_strata__drops_by_challenge", "mosaic_sweep__sweep", "mosaic_carriers__carriers",
              "mosaic_composition__challenges", "mosaic_composition__media", "mosaic_composition__chains"):
        assert f"{t}.csv" in names and f"{t}.tex" in names, t
    assert {"mosaic_ladder.png", "mosaic_sweep.png"} <= names
    for png in ("mosaic_ladder.png", "mosaic_sweep.png"):
        assert (tmp_path / "out" / "figures" / png).read_bytes()[:8] == b"\x89PNG\r\n\x1a\n"
    md = (tmp_path / "out" / "report.md").read_text()
    assert "| Gold symbolic facts | read | gold\\_facts\\_\\_text\\_only | 5 | 0.9500 | 5 | 1.0000 |" in md
    data = json.loads((tmp_path / "out" / "report.json").read_text())
    assert by(data["mosaic_ladder"]["drops"], drop_name="delivery_loss")["drop"] == pytest.approx(0.15)
    tex = (tmp_path / "out" / "report.tex").read_text()
    assert "figures/mosaic_ladder" in tex and "figures/mosaic_sweep" in tex  # the document includes both figures


def test_either_reader_gives_the_same_tables(built):
    a = score(built / "bench", [built / "runs"], sections=MOSAIC, lean=True).json_data()
    b = score(built / "bench", [built / "runs"], sections=MOSAIC, lean=False).json_data()
    assert a["inputs"]["runs"]["reader"] == "lean" and b["inputs"]["runs"]["reader"] == "full"
    for name in MOSAIC:
        assert a[name] == b[name], name


def test_memeye_data_has_no_mosaic_tables(tmp_path):
    from tests.builders.benchmarks import write_labelled_bench

    bench = write_labelled_bench(tmp_path / "b", "Plain_Task", [("X1", "Y1"), ("X2", "Y2")])
    rep = {s.name: s for s in score(bench, [], sections=MOSAIC).sections}
    assert all(rep[n].reason for n in MOSAIC), {n: rep[n].reason for n in MOSAIC}
    assert "chain" in rep["mosaic_composition"].reason and "condition" in rep["mosaic_ladder"].reason
