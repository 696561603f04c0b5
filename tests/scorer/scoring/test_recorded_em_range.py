"""A recorded MCQ `em` that cannot be an exact match (7, −1) was published as it stood when the row
logs no choices to recompute it from (a cell of EM 7.0 in the matrix). Now that row's EM is withheld
with a warning naming it (rows whose EM is recomputed from their choices stay published); the gates
do not average a rotation's recorded em outside [0, 1] either (they score its choice, as when no em
is logged). And a judge score recorded on an open row with no gold answer is withheld too."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from scorer.cli import main
from tests.builders.benchmarks import write_mini_bench
from tests.builders.runs import write_mini_run

Q1, Q2 = "What colour is the hall wall now?", "What number is on the key tag?"


def _runs(root: Path, em1: float, method: str = "semantic_rag__multimodal", rotations=None) -> Path:
    rows = [{"idx": 1, "mode": "mcq", "question": Q1, "em": em1, **({"rotations": rotations} if rotations else {})},
            {"idx": 2, "mode": "mcq", "question": Q2, "em": 1.0}]
    write_mini_run(root / "runs" / "Mini_Task" / f"20240101_000000_gpt-5.4-mini_{method}", "mcq", rows,
                   method=method, backbone="gpt-5.4-mini")
    good = [{"idx": 1, "mode": "mcq", "question": Q1, "em": 0.0}, {"idx": 2, "mode": "mcq", "question": Q2, "em": 1.0}]
    write_mini_run(root / "runs" / "Mini_Task" / f"20240101_000001_qwen3-vl-8b_{method}", "mcq", good,
                   method=method, backbone="qwen3-vl-8b")
    return root / "runs"


def _report(tmp_path: Path, runs: Path, capsys) -> tuple[dict, str]:
    bench = write_mini_bench(tmp_path / "bench")
    rc = main(["score", str(bench), "--runs", str(runs), "--format", "json", "--out", str(tmp_path / "rep")])
    err = capsys.readouterr().err
    assert rc == 0, err
    return json.loads((tmp_path / "rep" / "report.json").read_text()), err


@pytest.mark.parametrize("em1", [7.0, -1.0, 1.5])
def test_recorded_mcq_em_out_of_range_is_withheld(tmp_path, capsys, em1):
    report, err = _report(tmp_path, _runs(tmp_path, em1), capsys)
    ems = [r for r in report["matrix"] if r["metric"] == "em" and r["value"] is not None]
    assert all(0 <= r["value"] <= 1 for r in ems), [r["value"] for r in ems]
    warning = next(w for w in report["warnings"] if w.startswith("em withheld"))
    assert "1 row(s) in 1 run folder(s)" in warning and "gpt-5.4-mini" in warning and "outside [0, 1]" in warning
    assert report["inputs"]["checks"]["withheld_rows"]["em"]["rows"] == 1
    # the folder's other row (em 1.0, in range) is still published
    cell = [r for r in report["matrix"] if r["metric"] == "em" and r["backbone"] == "gpt-5.4-mini"
            and r["agg"] == "cell" and r["value"] is not None]
    assert [(r["x"], r["value"], r["n"]) for r in cell] == [("X4", 1.0, 1)]


def test_in_range_recorded_em_is_published_as_before(tmp_path, capsys):
    report, _ = _report(tmp_path, _runs(tmp_path, 0.5), capsys)
    cell = [r for r in report["matrix"] if r["metric"] == "em" and r["backbone"] == "gpt-5.4-mini"
            and r["agg"] == "cell" and r["x"] == "X1"]
    assert [r["value"] for r in cell] == [0.5]
    assert not any(w.startswith("em withheld") for w in report["warnings"])


def test_gate_does_not_average_a_rotation_em_outside_range(tmp_path, capsys):
    # question-only gate run: rotation 0 logs em 7 with choice A where the answer is elsewhere
    bench = write_mini_bench(tmp_path / "bench")
    from scorer.load.memeye import load_benchmark

    item = load_benchmark(bench).item("Mini_Task:1", "mcq")
    rots = [{"rotation_idx": k, "choice": r.answer, "correct_position": r.answer, "em": 1.0}
            for k, r in enumerate(item.rotations)]
    wrong = next(letter for letter in "ABCD" if letter != item.rotations[0].answer)
    rots[0] = {"rotation_idx": 0, "choice": wrong, "correct_position": item.rotations[0].answer, "em": 7.0}
    runs = _runs(tmp_path, 0.0, method="question_only", rotations=rots)
    report, _ = _report(tmp_path, runs, capsys)
    outcomes = [o for o in report["gates"]["outcomes"] if o["item_id"] == "Mini_Task:1"]
    ems = [e for o in outcomes for e in o["ems"]]
    assert ems and all(0 <= e <= 1 for e in ems), ems
    n = len(item.rotations)
    assert pytest.approx((n - 1) / n) in ems  # rotation 0 scored by its choice: wrong
    assert any(w.startswith("gates: 1 recorded em value(s) outside [0, 1] in 1 MCQ row(s)") for w in report["warnings"])


def test_validate_names_an_em_outside_range(tmp_path, capsys):
    bench = write_mini_bench(tmp_path / "bench")
    runs = _runs(tmp_path, 7.0)
    assert main(["validate", str(bench), "--runs", str(runs)]) == 1
    out = capsys.readouterr().out
    lines = [line for line in out.splitlines() if "recorded em value(s) outside [0, 1]" in line]
    assert len(lines) == 1 and ":1: error: 1 recorded em value(s) outside [0, 1] (first: 7)" in lines[0], out


def test_rows_with_choices_keep_their_recomputed_em(tmp_path, capsys):
    """One row logs em 7 and no choices; another logs its rotation choices: its EM (recomputed from
    them) is published, the first row's is not."""
    bench = write_mini_bench(tmp_path / "bench")
    from scorer.load.memeye import load_benchmark

    item = load_benchmark(bench).item("Mini_Task:2", "mcq")
    rots = [{"rotation_idx": k, "choice": r.answer} for k, r in enumerate(item.rotations)]
    rows = [{"idx": 1, "mode": "mcq", "question": Q1, "em": 7.0},
            {"idx": 2, "mode": "mcq", "question": Q2, "em": 1.0, "rotations": rots}]
    write_mini_run(tmp_path / "runs" / "Mini_Task" / "20240101_000000_gpt-5.4-mini_semantic_rag__multimodal",
                   "mcq", rows)
    report, _ = _report(tmp_path, tmp_path / "runs", capsys)
    cells = {r["x"]: (r["value"], r["n"]) for r in report["matrix"]
             if r["metric"] == "em" and r["agg"] == "cell" and r["value"] is not None}
    assert cells == {"X4": (1.0, 1)}, cells


@pytest.mark.parametrize("gt", [None, "", "  ", "absent"])
def test_a_judge_score_on_a_row_without_gold_is_withheld(tmp_path, capsys, gt):
    rows = [{"idx": 1, "mode": "open", "question": Q1, "gt": "Green", "pred": "green", "judge": 1.0},
            {"idx": 2, "mode": "open", "question": Q2, "gt": gt, "pred": "417", "judge": 1.0}]
    if gt == "absent":
        del rows[1]["gt"]
    write_mini_run(tmp_path / "runs" / "Mini_Task" / "20240101_000000_gpt-5.4-mini_semantic_rag__multimodal",
                   "open", rows)
    report, _ = _report(tmp_path, tmp_path / "runs", capsys)
    judged = {r["x"]: (r["value"], r["n"]) for r in report["matrix"]
              if r["metric"] == "judge" and r["agg"] == "cell" and r["value"] is not None}
    assert judged == {"X1": (1.0, 1)}, judged  # item 2 (X4) has no gold: its judge is not published
    warning = next(w for w in report["warnings"] if w.startswith("judge withheld"))
    assert "1 row(s) in 1 run folder(s)" in warning and "no gold answer" in warning and "predictions.jsonl:2" in warning


@pytest.mark.parametrize("judge_text", ["1e400", "1" + "0" * 400, "-1e400"])
def test_a_score_too_large_for_a_number_is_withheld_and_named(tmp_path, capsys, judge_text):
    """1e400 reads as inf and a 401-digit integer overflowed a float (a traceback in validate and
    score); inf had been dropped from the cell without a word (value None, n 1)."""
    folder = tmp_path / "runs" / "Mini_Task" / "20240101_000000_gpt-5.4-mini_semantic_rag__multimodal"
    write_mini_run(folder, "open", [])
    (folder / "predictions.jsonl").write_text(
        f'{{"idx": 1, "mode": "open", "question": "{Q1}", "gt": "Green", "pred": "g", "judge": {judge_text}}}\n'
        f'{{"idx": 2, "mode": "open", "question": "{Q2}", "gt": "417", "pred": "417", "judge": 1.0}}\n')
    report, _ = _report(tmp_path, tmp_path / "runs", capsys)
    cells = {r["x"]: (r["value"], r["n"]) for r in report["matrix"] if r["metric"] == "judge" and r["agg"] == "cell"}
    assert cells["X4"] == (1.0, 1) and cells.get("X1", (None, 0))[1] == 0, cells
    assert any(w.startswith("judge withheld for 1 row(s)") and "too large for a number" in w for w in report["warnings"])
    bench = tmp_path / "bench"
    assert main(["validate", str(bench), "--runs", str(tmp_path / "runs")]) == 1
    out = capsys.readouterr()
    assert "Traceback" not in out.err
    assert ":1: error: 1 recorded score(s) too large for a number (first: judge" in out.out, out.out
