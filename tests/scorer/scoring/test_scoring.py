"""`memscope score` end to end, as a user runs it: benchmark + runs (+ annotations imported into a
store) → report.json / Markdown / CSV / LaTeX / PNG."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from scorer.cli import main
from scorer.metrics.comparisons import paired_many
from tests.builders import memeye_table as paper
from tests.builders.benchmarks import write_labelled_bench
from tests.builders.runs import mcq_row, open_row, write_labelled_run
from tests.paths import DEMO

TASK = "Study_Task"


def _report(out: Path) -> dict:
    return json.loads((out / "report.json").read_text())


# ---------------------------------------------------------------------------------------------
# The MemEye judge study: 71 compared pairs + 1 borderline → κ = 0.94


def _judge_study(tmp: Path) -> tuple[Path, Path, Path]:
    cells = [(f"X{x}", f"Y{y}") for y in (1, 2, 3) for x in (1, 2, 3, 4)]
    labels = [c for c in cells for _ in range(3)]  # 3 questions per (X, Y) cell: 36 items
    bench = write_labelled_bench(tmp / "bench", TASK, labels)
    # 72 (judge score, human verdict) pairs over two methods × 36 items, in a fixed shuffled order.
    outcomes = ([(1.0, "accept")] * 30 + [(0.75, "accept")] * 10 + [(0.0, "reject")] * 25 + [(0.25, "reject")] * 4
                + [(1.0, "reject"), (0.0, "accept"), (0.5, "borderline")])
    order = [(i * 29) % 72 for i in range(72)]  # 29 is coprime with 72: a permutation
    pairs = [outcomes[k] for k in order]
    runs = tmp / "runs"
    events = []
    for m, method in enumerate(("full_context_multimodal", "semantic_rag_multimodal")):
        rows = []
        for i in range(36):
            judge, verdict = pairs[m * 36 + i]
            rows.append(open_row(i + 1, judge))
            events.append({"ts": f"2026-11-29T19:{m:02d}:{i:02d}Z", "annotator": "ann1", "kind": "verdict",
                           "item_id": f"{TASK}:{i + 1}", "mode": "open", "run": f"gpt-5.4-mini/{method}",
                           "study": "judge-72", "payload": {"verdict": verdict}})
        write_labelled_run(runs, TASK, "gpt-5.4-mini", method, "multimodal", "open", rows)
    jsonl = tmp / "verdicts.jsonl"
    jsonl.write_text("".join(json.dumps(e) + "\n" for e in events))
    db = tmp / "study.db"
    assert main(["annotations", "import", str(jsonl), "--db", str(db)]) == 0
    return bench, runs, db


def test_the_71_pair_judge_study_gives_kappa_094(tmp_path):
    bench, runs, db = _judge_study(tmp_path)
    out = tmp_path / "out"
    assert main(["score", str(bench), "--runs", str(runs), "--db", str(db), "--study", "judge-72", "--out", str(out),
                 "--format", "json,md", "--resamples", "2000", "--sections", "matrix,agreement"]) == 0
    rows = _report(out)["agreement"]["judge_vs_human"]
    overall = [r for r in rows if r["stratum"] == "all" and r["human"] == "ann1"]
    assert len(overall) == 1
    r = overall[0]
    assert round(r["kappa"], 2) == 0.94 and r["n"] == 71 and r["excluded"] == 1 and r["excluded_borderline"] == 1
    assert (r["accept_accept"], r["reject_reject"], r["accept_reject"], r["reject_accept"]) == (40, 29, 1, 1)
    assert r["observed"] == pytest.approx(69 / 71, abs=1e-6)
    assert r["ci_low"] < r["kappa"] <= r["ci_high"] <= 1
    by_method = {x["method"]: x for x in rows if x["stratum"] == "method"}
    assert set(by_method) == {"FC(V)", "SRAG(V)"} and sum(x["n"] for x in by_method.values()) == 71
    assert len([x for x in rows if x["stratum"] == "cell" and x["human"] == "ann1"]) == 12
    md = (out / "report.md").read_text()
    assert "LLM judge vs human verdicts" in md and "| ann1 | 71 | 1 | 0.9718 | 0.9423 |" in md


def test_judge_levels_three_coerces_before_thresholding(tmp_path):
    """0.25 is a reject as recorded but becomes 0.5 (an accept) under the runner's coercion."""
    bench, runs, db = _judge_study(tmp_path)
    out = tmp_path / "out3"
    assert main(["score", str(bench), "--runs", str(runs), "--db", str(db), "--out", str(out), "--format", "json",
                 "--resamples", "200", "--judge-levels", "3", "--sections", "agreement"]) == 0
    r = [x for x in _report(out)["agreement"]["judge_vs_human"] if x["stratum"] == "all"][0]
    assert (r["accept_accept"], r["accept_reject"]) == (40, 5)


# ---------------------------------------------------------------------------------------------
# The paper's main table, from item-level runs


def test_paper_avg_row_from_runs_through_the_cli(tmp_path):
    labels = [(x, y) for (y, x), n in paper.CELL_N.items() for _ in range(n)]
    bench = write_labelled_bench(tmp_path / "bench", "Paper_Task", labels)
    scores = paper.scores()
    picked = {0: "full_context_text_only", 7: "full_context_multimodal", 8: "semantic_rag_multimodal"}
    runs = tmp_path / "runs"
    for j, method in picked.items():
        mcq = [mcq_row(i, int(scores[(method, "em", item_id)] * 4)) for i, (item_id, _, _) in enumerate(paper.items(), 1)]
        opn = [open_row(i, scores[(method, "judge", item_id)]) for i, (item_id, _, _) in enumerate(paper.items(), 1)]
        write_labelled_run(runs, "Paper_Task", "gpt-5.4-mini", method, paper.MODALITY[j], "mcq", mcq)
        write_labelled_run(runs, "Paper_Task", "gpt-5.4-mini", method, paper.MODALITY[j], "open", opn)
    out = tmp_path / "out"
    assert main(["score", str(bench), "--runs", str(runs), "--out", str(out), "--format", "json,md,tex",
                 "--sections", "matrix"]) == 0
    rows = _report(out)["matrix"]
    macro = {(r["display"], r["metric"]): r for r in rows if r["agg"] == "macro"}
    avg = paper.averages()
    for j in picked:
        for metric in ("em", "judge"):
            assert round(macro[(paper.DISPLAY[j], metric)]["value"], 4) == avg[metric][j][0]
            assert macro[(paper.DISPLAY[j], metric)]["n"] == 371
    assert round(macro[("FC(T)", "em")]["value"], 4) == 0.5670
    assert round(macro[("SRAG(V)", "em")]["value"], 4) == 0.6177
    assert round(macro[("FC(V)", "judge")]["value"], 4) == 0.4391
    assert macro[("SRAG(V)", "em")]["mark"] == "best" and macro[("FC(V)", "em")]["mark"] == "second"
    assert {r["family"] for r in rows if r["display"] == "FC(T)"} == {"text"}
    md = (out / "report.md").read_text()
    assert "| Avg. | -- | EM | 371 | 0.5670 | *0.6038* | **0.6177** |" in md
    tex = (out / "tables" / "matrix__main_gpt-5.4-mini.tex").read_text()
    assert r"\multicolumn{1}{c}{Textual memory}" in tex and r"\multicolumn{2}{c}{Multimodal memory}" in tex
    assert r"\bestcell{0.618}" in tex and r"\secondcell{0.604}" in tex  # LaTeX: --decimals 3 by default
    assert r"\providecommand{\bestcell}" in (out / "memscope-preamble.tex").read_text()


# ---------------------------------------------------------------------------------------------
# The shipped demo, every format, twice


@pytest.mark.needs_demo
def test_demo_every_format_and_byte_identical_rerun(tmp_path):
    db = tmp_path / "demo.db"
    assert main(["annotations", "import", str(DEMO / "annotations.jsonl"), "--db", str(db)]) == 0
    args = ["score", str(DEMO), "--runs", str(DEMO / "runs"), "--db", str(db), "--resamples", "2000"]
    one, two = tmp_path / "one", tmp_path / "two"
    assert main([*args, "--out", str(one), "--format", "md,csv,json,tex,png"]) == 0
    for name in ("report.md", "report.json", "report.tex", "memscope-preamble.tex"):
        assert (one / name).is_file(), name
    assert list((one / "csv").glob("*.csv")) and list((one / "figures").glob("heatmap_*.png"))
    md = (one / "report.md").read_text()
    data = _report(one)
    assert {"inputs", "matrix", "agreement", "oracle", "evidence", "abstention"} <= set(data)
    backbones = sorted({r["backbone"] for r in data["matrix"]})
    for b in backbones:  # per backbone: the method × cell matrix with Avg.
        assert f"### {b}: EM (MCQ, mean over rotations) and LLM-Judge (open)" in md
    assert md.count("| Avg. | -- | EM |") == len(backbones)
    assert "### LLM judge vs human verdicts" in md and "| majority |" in md
    assert "κ_X" in md.replace("\\_", "_") and "| X | ann1 vs ann2 |" in md and "| Y | ann1 vs ann2 |" in md
    assert "### Human oracle accuracy (gold clue rounds only), by Y" in md and "| Majority-vote accuracy |" in md
    assert "### Caption-proof gain by X level" in md and "ΔJ 95% CI" in md
    jr = [r for r in data["agreement"]["judge_vs_human"] if r["stratum"] == "all"]
    assert all(r["n"] > 0 and r["ci_low"] is not None for r in jr)
    assert {r["y"] for r in data["oracle"]} >= {"Y1", "Y2", "Y3", "all"}
    assert all(r["ci_low"] is not None for r in data["caption_proof"] if r["n"] > 1)
    inputs = data["inputs"]
    assert inputs["options"]["seed"] == 20260430 and inputs["options"]["resamples"] == 2000
    assert all(len(f["sha256"]) == 64 for f in inputs["runs"]["files"] + inputs["benchmark"]["files"])
    assert inputs["annotations"]["acts"]["verdict"] > 0
    assert main([*args, "--out", str(two), "--format", "md,csv,json"]) == 0
    for rel in ["report.md", "report.json", *[f"csv/{p.name}" for p in (one / "csv").glob("*.csv")]]:
        assert (one / rel).read_bytes() == (two / rel).read_bytes(), rel


@pytest.mark.needs_demo
def test_lean_and_full_readers_give_the_same_frame():
    from scorer.load.frame import COLUMNS, predictions_frame
    from scorer.load.lean import frame_from_runs, read_frame
    from scorer.load.memeye import load_benchmark
    from scorer.load.runs import load_runs

    bench = load_benchmark(DEMO)
    runs = load_runs(DEMO / "runs")
    reference = predictions_frame(bench, runs)
    lean = read_frame(bench, DEMO / "runs")
    full, unmatched = frame_from_runs(bench, runs)
    assert len(reference) == len(lean.frame) == len(full) > 0 and unmatched == lean.unmatched
    for col in COLUMNS:
        assert reference[col].equals(lean.frame[col]), col
        assert reference[col].equals(full[col]), col
    assert lean.frame["choices"].tolist() == full["choices"].tolist()
    assert [(r.backbone, r.method, r.mode, r.task, r.modality) for r in lean.runs] == \
        [(r.backbone, r.method, r.mode, r.task, r.modality) for r in runs]


# ---------------------------------------------------------------------------------------------
# Absent data, bad input, comparisons


def test_absent_sections_and_compare(tmp_path, capsys):
    labels = [(f"X{1 + i % 4}", f"Y{1 + i % 3}") for i in range(24)]
    bench = write_labelled_bench(tmp_path / "bench", TASK, labels)
    runs = tmp_path / "runs"
    for k, method in enumerate(("full_context_text_only", "full_context_multimodal")):
        write_labelled_run(runs, TASK, "bb", method, "text" if k == 0 else "multimodal", "mcq",
                  [mcq_row(i, (i + k) % 5) for i in range(1, 25)])
        write_labelled_run(runs, TASK, "bb", method, "text" if k == 0 else "multimodal", "open",
                  [open_row(i, [0.0, 0.5, 1.0][(i + k) % 3]) for i in range(1, 25)])
    out = tmp_path / "out"
    assert main(["score", str(bench), "--runs", str(runs), "--out", str(out), "--format", "json,md,csv",
                 "--resamples", "500", "--compare", "FC(V):FC(T)", "--clustered"]) == 0
    data = _report(out)
    assert data["agreement"] == {"value": None, "reason": "no annotation database given (--db)"}
    assert data["oracle"]["value"] is None
    comp = data["bootstrap"]
    assert {r["slice"] for r in comp} == {"all", "Y1", "Y2", "Y3", "Y3-Y1"}
    # One cluster (the task): every clustered resample redraws it, so the CI collapses to the point.
    whole = [r for r in comp if r["slice"] == "all" and r["metric"] == "em"][0]
    assert whole["n"] == 24 and whole["n_clusters"] == 1 and whole["ci_low"] == whole["ci_high"] == whole["diff"]
    cp = [r for r in data["caption_proof"] if r["pair"] == "FC" and r["x"] == "all" and r["y"] == "all"]
    assert {r["metric"] for r in cp} == {"judge", "em"}
    assert all(r["delta"] == pytest.approx(r["score_v"] - r["score_t"], abs=2e-6) for r in cp)
    # Bad input: one line, non-zero exit, no traceback.
    for bad in (["--compare", "FC(V)"], ["--format", "pdf"], ["--db", str(tmp_path / "none.db")], ["--resamples", "0"]):
        assert main(["score", str(bench), "--runs", str(runs), "--out", str(out), *bad]) == 2
        err = capsys.readouterr().err
        assert err.startswith("memscope: ") and "Traceback" not in err and err.count("\n") == 1


def test_png_without_matplotlib_is_one_clear_line(tmp_path, capsys, monkeypatch):
    from scorer.report import figures

    bench = write_labelled_bench(tmp_path / "bench", TASK, [("X1", "Y1")])
    runs = tmp_path / "runs"
    write_labelled_run(runs, TASK, "bb", "full_context_multimodal", "multimodal", "open", [open_row(1, 1.0)])
    monkeypatch.setattr(figures, "available", lambda: False)
    assert main(["score", str(bench), "--runs", str(runs), "--out", str(tmp_path / "o"), "--format", "md,png"]) == 2
    err = capsys.readouterr().err
    assert "matplotlib" in err and err.count("\n") == 1 and not (tmp_path / "o").exists()


def test_terminal_view_treats_data_as_text(tmp_path, capsys):
    labels = [("X1", "Y1"), ("X2", "Y2")]
    bench = write_labelled_bench(tmp_path / "bench", TASK, labels)
    runs = tmp_path / "runs"
    write_labelled_run(runs, TASK, "[bold red]evil\x1b[2J", "full_context_multimodal", "multimodal", "open",
              [open_row(1, 1.0), open_row(2, 0.0)])
    assert main(["score", str(bench), "--runs", str(runs), "--sections", "matrix"]) == 0
    out = capsys.readouterr().out
    assert "[bold red]evil\\x1b[2J" in out and "\x1b[2J" not in out


def test_paired_many_equals_paired_diff_ci():
    import numpy as np

    from scorer.metrics.bootstrap import paired_diff_ci

    rng = np.random.default_rng(3)
    a, b = rng.random((40, 3)), rng.random((40, 3))
    clusters = rng.integers(0, 6, 40)
    for cl in (None, clusters):
        many = paired_many(a, b, cl, resamples=3000, seed=11)
        for j in range(3):
            ref = paired_diff_ci(a[:, j], b[:, j], cl, resamples=3000, seed=11)
            assert many[j].estimate == pytest.approx(ref.estimate, abs=1e-12)
            assert many[j].ci_low == pytest.approx(ref.ci_low, abs=1e-12)
            assert many[j].ci_high == pytest.approx(ref.ci_high, abs=1e-12)
            assert many[j].n_clusters == ref.n_clusters and many[j].n == 40


# ---------------------------------------------------------------------------------------------
# Sections by name (the registry), and scoring what is already loaded (the app)


def test_an_unknown_section_is_one_line_naming_the_known_ones(tmp_path, capsys):
    bench = write_labelled_bench(tmp_path / "bench", TASK, [("X1", "Y1")])
    runs = tmp_path / "runs"
    write_labelled_run(runs, TASK, "bb", "full_context_multimodal", "multimodal", "open", [open_row(1, 1.0)])
    assert main(["score", str(bench), "--runs", str(runs), "--sections", "matrix,evidnce"]) == 2
    err = capsys.readouterr().err
    assert err.count("\n") == 1 and "Traceback" not in err
    assert "evidnce" in err and "matrix, position_bias, agreement" in err and "gates" in err


def test_a_section_module_missing_from_the_install_is_an_error():
    from scorer.sections.registry import Section

    with pytest.raises(ImportError, match="scorer.sections.nowhere is missing"):
        Section("nowhere", "scorer.sections.nowhere", "Nowhere").load()


@pytest.mark.needs_demo
def test_score_takes_a_loaded_benchmark_and_runs():
    from scorer.load.memeye import load_benchmark
    from scorer.load.runs import load_runs
    from scorer.scoring import score
    from scorer.sections.base import ScoreOptions

    opts = ScoreOptions(resamples=200, compare=(("SRAG(V)", "FC(V)"),))
    from_files = score(DEMO, [DEMO / "runs"], options=opts).json_data()
    bench = load_benchmark(DEMO)
    loaded = score(bench, load_runs(DEMO / "runs", benchmark=bench), options=opts).json_data()
    assert from_files.keys() == loaded.keys() and from_files["evidence"] and from_files["matrix"]
    for key in from_files:
        if key != "inputs":
            assert from_files[key] == loaded[key], key
    a, b = from_files["inputs"], loaded["inputs"]
    assert a["benchmark"]["files"] == b["benchmark"]["files"] and a["rows"] == b["rows"]
    assert a["runs"]["folders"] == b["runs"]["folders"] and a["options"] == b["options"]
    assert sorted(f["sha256"] for f in a["runs"]["files"]) == sorted(f["sha256"] for f in b["runs"]["files"])
