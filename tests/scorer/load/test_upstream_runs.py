"""Run folders as the MemEye runner (and its fork) really writes them, read right or flagged loudly.

Every folder here is written by tests/builders/upstream.py from the runner's observed behaviour; each
test checks the warning, the join, the family, the number or the refusal for one upstream shape,
through `memscope validate` / `memscope score` and through both run readers.
"""

from __future__ import annotations

import json
import math
from pathlib import Path

import pytest

from scorer.cli import main
from scorer.load.lean import read_frame
from scorer.load.memeye import load_benchmark
from scorer.load.runs import load_runs
from scorer.scoring import score
from scorer.sections.base import ScoreOptions
from tests.builders.benchmarks import MINI_TASK, write_mini_bench
from tests.builders.upstream import write_upstream_run

MCQ_FILE = f"{MINI_TASK}.json"
OPEN_FILE = f"{MINI_TASK}_Open.json"


@pytest.fixture()
def bench(tmp_path: Path) -> Path:
    return write_mini_bench(tmp_path / "bench")


def dialog(bench: Path, mode: str = "mcq") -> Path:
    return bench / "dialog" / (MCQ_FILE if mode == "mcq" else OPEN_FILE)


def validate_lines(bench: Path, runs: Path, capsys) -> tuple[int, list[str]]:
    code = main(["validate", str(bench), "--runs", str(runs), "--no-decode"])
    return code, capsys.readouterr().out.strip().splitlines()


def matrix_value(report, method: str, metric: str, agg: str = "macro") -> float | None:
    rows = [r for r in report.json_data()["matrix"] if r["method"] == method and r["metric"] == metric
            and r["agg"] == agg]
    return rows[0]["value"] if rows else None


def first_correct(qa: dict, rotation: int) -> str:
    """The model answers every rotation right (its answer letter)."""
    opts = qa["options"]
    return opts[rotation]["answer"] if isinstance(opts, list) else opts["answer"]


# --- 1. rotations ------------------------------------------------------------------------------

def test_rotation_break_is_warned_once_per_folder_and_scored_both_ways(bench, tmp_path, capsys):
    runs = tmp_path / "runs"
    write_upstream_run(runs, dialog(bench), answer=first_correct, rotation_break=True)
    code, lines = validate_lines(bench, runs, capsys)
    partial = [ln for ln in lines if "fewer rotations" in ln]
    assert len(partial) == 1, lines  # once per run folder, not per row
    assert "3 of 3 rotation MCQ row(s)" in partial[0] and "mostly 1 of 4" in partial[0]
    assert "capped at 1/4 = 0.25" in partial[0] and "--rotations logged" in partial[0]
    assert partial[0].split(": ")[1] == "warning"

    default = score(bench, [runs], sections=["matrix"], options=ScoreOptions(resamples=10))
    data = default.json_data()
    assert any("fewer rotations" in w and "capped at 1/4 = 0.25" in w for w in data["warnings"])
    assert data["inputs"]["options"]["rotations"] == "item"
    (folder_record,) = data["inputs"]["checks"]["partial_rotations"].values()
    assert folder_record == {"rows": 3, "rotation_rows": 3}
    # Answerable items 1 (rotation, every logged rotation right) and 3: EM 0.25 each (1 of 4).
    cells = [r for r in data["matrix"] if r["metric"] == "em" and r["agg"] == "micro"]
    assert cells[0]["value"] == pytest.approx((0.25 + 1.0 + 0.25) / 3)  # the legacy item scores 1

    logged = score(bench, [runs], sections=["matrix"], options=ScoreOptions(resamples=10, rotations="logged"))
    cells = [r for r in logged.json_data()["matrix"] if r["metric"] == "em" and r["agg"] == "micro"]
    assert cells[0]["value"] == pytest.approx(1.0)
    assert logged.json_data()["inputs"]["options"]["rotations"] == "logged"


def test_full_rotation_runs_raise_no_rotation_warning(bench, tmp_path, capsys):
    runs = tmp_path / "runs"
    write_upstream_run(runs, dialog(bench), answer=first_correct)
    _, lines = validate_lines(bench, runs, capsys)
    assert not [ln for ln in lines if "rotations" in ln], lines
    report = score(bench, [runs], sections=["matrix"], options=ScoreOptions(resamples=10))
    assert not [w for w in report.json_data()["warnings"] if "rotations" in w]


# --- 2. legacy MCQ rows ------------------------------------------------------------------------

def test_legacy_question_with_options_block_joins_without_mismatch(bench, tmp_path, capsys):
    runs = tmp_path / "runs"
    write_upstream_run(runs, dialog(bench), answer=lambda qa, r: "B")
    row = json.loads((next(runs.rglob("predictions.jsonl"))).read_text().splitlines()[1])
    assert row["question"].endswith("Answer with ONLY the option letter (A, B, C, D). Do not explain.")
    code, lines = validate_lines(bench, runs, capsys)
    assert not [ln for ln in lines if "question differs" in ln], lines
    report = score(bench, [runs], sections=["matrix"], options=ScoreOptions(resamples=10))
    assert not [w for w in report.json_data()["warnings"] if "question" in w]


def test_a_genuine_question_mismatch_warns_in_score(bench, tmp_path, capsys):
    runs = tmp_path / "runs"

    def edit(row: dict) -> None:
        if row["idx"] == 3:
            row["question"] = "How many dogs barked?"

    write_upstream_run(runs, dialog(bench), row_hook=edit)
    report = score(bench, [runs], sections=["matrix"], options=ScoreOptions(resamples=10))
    (w,) = [w for w in report.json_data()["warnings"] if "question" in w]
    assert w.startswith("1 row(s) in 1 run folder(s) log a question that is not their item's")
    assert "predictions.jsonl:3" in w and f"{MINI_TASK}:3" in w
    code, lines = validate_lines(bench, runs, capsys)
    assert code == 1 and any("question differs" in ln and ": error:" in ln for ln in lines)


@pytest.mark.parametrize("choice, shown, warned", [("Z", '"Z"', True), ("E", '"E"', True),
                                                    ("\x1b[1mB", '"\\u001b[1mB"', True),
                                                    ("INVALID", "", False), (" b ", "", False), (None, "", False)])
def test_a_legacy_choice_that_is_no_option_letter_is_a_warning(bench, tmp_path, capsys, choice, shown, warned):
    """A single-options (legacy) item's row whose `choice` is none of the item's letters reads as a
    wrong answer, as a rotation's does; `validate` says so (it had, for rotation items only)."""
    runs = tmp_path / "runs"

    def edit(row: dict) -> None:
        if row["idx"] == 2:  # the mini benchmark's legacy item
            row["choice"] = choice

    write_upstream_run(runs, dialog(bench), answer=first_correct, row_hook=edit)
    code, lines = validate_lines(bench, runs, capsys)
    found = [ln for ln in lines if "single-options items" in ln]
    assert code == 0 and "\x1b" not in "\n".join(lines)
    if not warned:
        assert found == [], lines
        return
    assert found == [f"{next(runs.rglob('predictions.jsonl'))}:2: warning: 1 MCQ row(s) of single-options items log "
                     f"a `choice` that is none of the item's option letters (first: {shown}): it is read as no "
                     "answer, and the row counts as wrong (upstream's runner logs a letter, or INVALID when it could "
                     "not read one)"]
    report = score(bench, [runs], sections=["matrix"], options=ScoreOptions(resamples=10))
    cells = [r for r in report.json_data()["matrix"] if r["metric"] == "em" and r["agg"] == "micro"]
    assert cells[0]["value"] == pytest.approx((1.0 + 0.0 + 1.0) / 3)  # the legacy row counts as wrong


def test_legacy_answer_letter_precedence_and_disagreement(tmp_path, capsys):
    def mutate(d: dict) -> None:
        d["human-annotated QAs"][1]["answer"] = "C"  # a letter; options.answer says B

    bench = write_mini_bench(tmp_path / "bench", mutate=mutate)
    item = load_benchmark(bench).item(f"{MINI_TASK}:2", "mcq")
    assert item.rotations[0].answer == "C"  # qa.answer first, as upstream scores it
    assert main(["validate", str(bench), "--no-decode"]) == 0  # a warning, not an error
    out = capsys.readouterr().out
    assert "answer 'C' and options.answer 'B' name different letters" in out and ": warning:" in out


def test_legacy_answer_text_names_the_letter_from_options(bench):
    item = load_benchmark(bench).item(f"{MINI_TASK}:2", "mcq")
    assert item.answer == "417" and item.rotations[0].answer == "B"  # text answer: options.answer


# --- 3. task names and question ids -----------------------------------------------------------

def test_lower_case_task_name_resolved_from_dialog_json(bench, tmp_path, capsys):
    runs = tmp_path / "runs"
    folder = write_upstream_run(runs, dialog(bench), task_name="mini_task", answer=first_correct)
    assert folder.parent.name == "mini_task"
    (run,) = load_runs([runs], benchmark=load_benchmark(bench))
    assert run.task == MINI_TASK and not run.problems
    lean = read_frame(load_benchmark(bench), [runs])
    assert lean.runs[0].task == MINI_TASK and len(lean.frame) == 4 and lean.unmatched == 0
    code, lines = validate_lines(bench, runs, capsys)
    assert code == 0, lines


def test_task_name_matched_loosely_is_a_note(bench, tmp_path, capsys):
    runs = tmp_path / "runs"
    folder = write_upstream_run(runs, dialog(bench), task_name="mini-task", answer=first_correct)
    for name in ("metrics.json", "config.json"):  # no dialog_json to go by
        data = json.loads((folder / name).read_text())
        data.pop("dialog_json", None)
        data.get("dataset", {}).pop("dialog_json", None)
        if isinstance(data.get("task"), dict):
            data["task"].pop("dataset", None)
        (folder / name).write_text(json.dumps(data))
    (run,) = load_runs([runs], benchmark=load_benchmark(bench))
    assert run.task == MINI_TASK
    assert [p.severity for p in run.problems] == ["note"]
    code, lines = validate_lines(bench, runs, capsys)
    assert code == 0 and any("note: run's task 'mini-task' matched to benchmark task 'Mini_Task'" in ln for ln in lines)
    report = score(bench, [runs], sections=["matrix"], options=ScoreOptions(resamples=10))
    assert report.json_data()["inputs"]["checks"]["notes"]


def test_fork_rows_join_on_question_id(tmp_path, capsys):
    ids = ["q-wall", "q-tag", "q-bell", "q-cat"]

    def mutate(d: dict) -> None:
        for qa, qid in zip(d["human-annotated QAs"], ids):
            qa["question_id"] = qid

    bench = write_mini_bench(tmp_path / "bench", mutate=mutate)
    runs = tmp_path / "runs"
    # The fork walks eval.question_ids: idx 1 is the bell question (the benchmark's third item).
    write_upstream_run(runs, dialog(bench), fork_question_ids=["q-bell", "q-wall"],
                       answer=lambda qa, r: first_correct(qa, r) if qa["question_id"] == "q-bell" else "Z")
    b = load_benchmark(bench)
    lean = read_frame(b, [runs])
    got = dict(zip(lean.frame["item_id"], lean.frame["question_ok"]))
    assert got == {f"{MINI_TASK}:3": True, f"{MINI_TASK}:1": True}
    report = score(bench, [runs], sections=["matrix"], options=ScoreOptions(resamples=10))
    ems = {r["x"] + r["y"]: r["value"] for r in report.json_data()["matrix"] if r["agg"] == "cell"}
    assert ems["X2Y2"] == 1.0 and ems["X1Y3"] == 0.0  # the bell item right, the wall item wrong
    code, lines = validate_lines(bench, runs, capsys)
    assert not [ln for ln in lines if "question differs" in ln or "matches no item" in ln], lines


# --- 4. modality families ----------------------------------------------------------------------

@pytest.mark.parametrize("method", ["full_context_no_visual", "question_only"])
def test_no_visual_is_its_own_family(bench, tmp_path, method):
    runs = tmp_path / "runs"
    write_upstream_run(runs, dialog(bench), method=method, modality="no_visual", history_source="full_context")
    write_upstream_run(runs, dialog(bench), method="full_context_multimodal", modality="multimodal",
                       history_source="full_context", stamp="20260101_000001")
    (nv, mm) = sorted(load_runs([runs], benchmark=load_benchmark(bench)), key=lambda r: r.method != method)
    assert nv.modality == "no_visual" and mm.modality == "multimodal"
    report = score(bench, [runs], sections=["matrix"], options=ScoreOptions(resamples=10))
    families = {r["method"]: r["family"] for r in report.json_data()["matrix"]}
    assert families == {method: "no_visual", "full_context_multimodal": "multimodal"}


def test_names_file_extends_families(bench, tmp_path, capsys):
    runs = tmp_path / "runs"
    write_upstream_run(runs, dialog(bench), method="my_memory", modality="")
    names = tmp_path / "names.json"
    names.write_text(json.dumps({"display": {"my_memory": "MyMem"}, "family": {"MyMem": "text"}}))
    out = tmp_path / "out"
    assert main(["score", str(bench), "--runs", str(runs), "--names", str(names), "--sections", "matrix",
                 "--resamples", "10", "--out", str(out), "--format", "json"]) == 0
    rows = json.loads((out / "report.json").read_text())["matrix"]
    assert {(r["display"], r["family"]) for r in rows} == {("MyMem", "text")}
    names.write_text(json.dumps({"family": {"my_memory": "visual-ish"}}))
    assert main(["score", str(bench), "--runs", str(runs), "--names", str(names)]) == 2
    assert "unknown family 'visual-ish'" in capsys.readouterr().err


# --- 5. delivered for full-context runs ------------------------------------------------------

def test_full_context_rows_deliver_their_context_rounds(bench, tmp_path):
    runs = tmp_path / "runs"
    write_upstream_run(runs, dialog(bench), method="full_context_multimodal", history_source="full_context")
    (run,) = load_runs([runs], benchmark=load_benchmark(bench))
    assert all(p.delivered == ("D1:1", "D1:2", "D2:1", "D2:2") for p in run.predictions)


def test_empty_context_round_ids_stay_unknown(bench, tmp_path):
    runs = tmp_path / "runs"

    def agentic(row: dict) -> None:  # the runner logs [] for agentic methods
        row.pop("method_runtime", None)
        row["context_round_ids"], row["context_round_count"] = [], 0

    write_upstream_run(runs, dialog(bench), method="m2a", row_hook=agentic)
    (run,) = load_runs([runs], benchmark=load_benchmark(bench))
    assert all(p.delivered is None for p in run.predictions)


# --- 6. partial runs and stale summaries -----------------------------------------------------

def test_partial_run_is_warned(bench, tmp_path, capsys):
    runs = tmp_path / "runs"
    write_upstream_run(runs, dialog(bench), max_questions=2, answer=first_correct)
    _, lines = validate_lines(bench, runs, capsys)
    (line,) = [ln for ln in lines if "partial run" in ln]
    assert "rows for 2 of the 4 mcq item(s) of task Mini_Task" in line
    assert "num_qas_run 2 of num_qas 4" in line


def test_stale_summary_is_warned_and_a_fresh_one_is_not(bench, tmp_path, capsys):
    runs = tmp_path / "runs"
    folder = write_upstream_run(runs, dialog(bench, "open"), mode="open", answer=lambda qa, r: qa["answer"],
                                judge=lambda qa, p: 1.0)
    _, lines = validate_lines(bench, runs, capsys)
    assert not [ln for ln in lines if "summary" in ln], lines
    metrics = json.loads((folder / "metrics.json").read_text())
    metrics["summary"]["overall"]["judge"] = 0.8
    metrics["summary"]["by_cell"]["X1_Y3"]["bleu_1"] = 0.5
    (folder / "metrics.json").write_text(json.dumps(metrics))
    _, lines = validate_lines(bench, runs, capsys)
    (line,) = [ln for ln in lines if "summary" in ln]
    assert "2 figure(s) differ" in line and "overall.judge: recorded 0.8, rows give 1" in line
    assert "by_cell.X1_Y3.bleu_1: recorded 0.5, rows give 1" in line


# --- 7. non-finite values and judge scales ---------------------------------------------------

def test_a_bare_nan_is_a_missing_value_in_both_readers(bench, tmp_path, capsys):
    runs = tmp_path / "runs"

    def nan_judge(row: dict) -> None:
        if row["idx"] == 2:
            row["judge"] = float("nan")
            row["latency_ms"] = float("inf")

    folder = write_upstream_run(runs, dialog(bench, "open"), mode="open", answer=lambda qa, r: qa["answer"],
                                judge=lambda qa, p: 1.0, row_hook=nan_judge)
    assert "NaN" in (folder / "predictions.jsonl").read_text().splitlines()[1]
    b = load_benchmark(bench)
    (run,) = load_runs([runs], benchmark=b)
    assert len(run.predictions) == 4 and run.predictions[1].judge is None
    (prob,) = run.problems
    assert prob.location.endswith("predictions.jsonl:2") and "NaN, Infinity" in prob.message
    lean = read_frame(b, [runs])
    assert len(lean.frame) == 4 and math.isnan(lean.frame["judge"].iloc[1])
    assert [p.location for p in lean.runs[0].problems] == [prob.location]
    code, lines = validate_lines(bench, runs, capsys)
    assert any("predictions.jsonl:2: warning: non-finite number(s) NaN, Infinity" in ln for ln in lines)
    report = score(bench, [runs], sections=["matrix"], options=ScoreOptions(resamples=10))
    data = report.json_data()
    assert data["inputs"]["rows"]["scored"] == 4
    assert any("bare NaN/Infinity" in w and "predictions.jsonl:2" in w for w in data["warnings"])
    micro = [r for r in data["matrix"] if r["metric"] == "judge" and r["agg"] == "micro"]
    assert micro[0]["value"] == 1.0 and micro[0]["n"] == 2  # items 1 and 3 (4 is unanswerable)


def five_point_judge(qa: dict, pred: str) -> float:
    return {1: 5.0, 2: 2.0, 3: 4.0, 4: 1.0}[int(qa["_n"])]


@pytest.fixture()
def likert_runs(tmp_path: Path) -> tuple[Path, Path]:
    def number(d: dict) -> None:
        for k, qa in enumerate(d["human-annotated QAs"], start=1):
            qa["_n"] = k

    bench = write_mini_bench(tmp_path / "bench", mutate_open=number)
    runs = tmp_path / "runs"
    write_upstream_run(runs, dialog(bench, "open"), mode="open", answer=lambda qa, r: qa["answer"],
                       judge=five_point_judge)
    return bench, runs


def test_a_one_to_five_judge_is_never_thresholded_silently(likert_runs, capsys):
    bench, runs = likert_runs
    code, lines = validate_lines(bench, runs, capsys)
    (line,) = [ln for ln in lines if "judge" in ln]
    assert ": warning: judge scores look like a 1-5 scale (3 of 4 value(s) outside [0, 1] (min 1, max 5))" in line
    assert "--judge-scale 1-5" in line
    for levels in (5, 3):  # the 3-level coercion would turn every 2.0 into a 1
        report = score(bench, [runs], sections=["matrix"], options=ScoreOptions(resamples=10, judge_levels=levels))
        data = report.json_data()
        assert matrix_value(report, "semantic_rag_multimodal", "judge", "micro") is None
        assert [r for r in data["matrix"] if r["metric"] == "judge"] == []
        assert any(w.startswith("judge withheld for 1 run folder(s)") and "--judge-scale 1-5" in w
                   for w in data["warnings"])
        (why,) = data["inputs"]["checks"]["withheld"]["judge"].values()
        assert "1-5 scale" in why


def test_judge_scale_rescales_linearly_and_is_recorded(likert_runs, tmp_path):
    bench, runs = likert_runs
    out = tmp_path / "out"
    assert main(["score", str(bench), "--runs", str(runs), "--judge-scale", "1-5", "--sections", "matrix",
                 "--resamples", "10", "--out", str(out), "--format", "json"]) == 0
    data = json.loads((out / "report.json").read_text())
    assert data["inputs"]["options"]["judge_scale"] == "1-5"
    cells = {(r["x"], r["y"]): r["value"] for r in data["matrix"] if r["metric"] == "judge" and r["agg"] == "cell"}
    # Items 1 (5 → 1.0), 2 (2 → 0.25), 3 (4 → 0.75, in X2 and X3); item 4 is an abstention control.
    assert cells == {("X1", "Y3"): 1.0, ("X4", "Y1"): 0.25, ("X2", "Y2"): 0.75, ("X3", "Y2"): 0.75}
    assert not [w for w in data["warnings"] if "withheld" in w]


@pytest.mark.parametrize("bad, kind", [(-5.0, "number"), ("high", "text"), ("0.5", "text"), (" 1 ", "text"),
                                       ("NaN", "text"), (True, "true/false"), ([1], "a list"),
                                       ({"score": 1}, "an object")])
def test_impossible_judge_scores_are_errors_and_unpublished(bench, tmp_path, capsys, bad, kind):
    runs = tmp_path / "runs"

    def spoil(row: dict) -> None:
        if row["idx"] == 3:
            row["judge"] = bad

    write_upstream_run(runs, dialog(bench, "open"), mode="open", answer=lambda qa, r: qa["answer"],
                       judge=lambda qa, p: 0.5, row_hook=spoil)
    code, lines = validate_lines(bench, runs, capsys)
    assert code == 1
    (line,) = [ln for ln in lines if "judge" in ln]
    assert line.split(": ")[0].endswith("predictions.jsonl:3") and ": error:" in line
    if kind != "number":
        assert f"judge logged as {kind}, not a number" in line
    report = score(bench, [runs], sections=["matrix"], options=ScoreOptions(resamples=10))
    data = report.json_data()
    assert [r for r in data["matrix"] if r["metric"] == "judge"] == []  # not -1.09, not 0.5 either
    assert any(w.startswith("judge withheld for 1 run folder(s)") for w in data["warnings"])


def test_bleu_out_of_range_is_refused(bench, tmp_path, capsys):
    runs = tmp_path / "runs"

    def percent(row: dict) -> None:
        row["bleu_1"] = 42.0

    write_upstream_run(runs, dialog(bench, "open"), mode="open", answer=lambda qa, r: qa["answer"],
                       judge=lambda qa, p: 1.0, row_hook=percent)
    code, lines = validate_lines(bench, runs, capsys)
    assert code == 1 and any("bleu_1: 4 of 4 value(s) outside [0, 1] (min 42, max 42)" in ln for ln in lines)
    report = score(bench, [runs], sections=["matrix"], options=ScoreOptions(resamples=10))
    data = report.json_data()
    assert [r for r in data["matrix"] if r["metric"] == "bleu_1"] == []
    assert [r for r in data["matrix"] if r["metric"] == "judge"]  # the judge is fine and published
    assert any(w.startswith("bleu_1 withheld") for w in data["warnings"])


# --- both readers agree on every upstream shape ---------------------------------------------

def test_both_readers_give_the_same_frame_on_upstream_shapes(tmp_path):
    from scorer.load.frame import COLUMNS, predictions_frame

    ids = ["q-wall", "q-tag", "q-bell", "q-cat"]

    def mutate(d: dict) -> None:
        for qa, qid in zip(d["human-annotated QAs"], ids):
            qa["question_id"] = qid

    bench = write_mini_bench(tmp_path / "bench", mutate=mutate)
    runs = tmp_path / "runs"
    write_upstream_run(runs, dialog(bench), answer=first_correct, rotation_break=True, task_name="mini_task")
    write_upstream_run(runs, dialog(bench), fork_question_ids=["q-bell", "q-tag"], stamp="20260101_000001",
                       method="semantic_rag_text_only", modality="text_only")

    def nan(row: dict) -> None:
        row["judge"] = float("nan") if row["idx"] == 1 else row["judge"]

    write_upstream_run(runs, dialog(bench, "open"), mode="open", answer=lambda qa, r: qa["answer"],
                       judge=lambda qa, p: 1.0, row_hook=nan, stamp="20260101_000002")
    b = load_benchmark(bench)
    full = predictions_frame(b, load_runs([runs], benchmark=b))
    lean = read_frame(b, [runs])
    assert len(full) == len(lean.frame) == 4 + 2 + 4
    for col in COLUMNS:
        assert full[col].equals(lean.frame[col]), col
    assert lean.frame["question_ok"].all()


@pytest.mark.parametrize("scale, wrong", [("1-5", 0.0), ("0-10", 0.1)])
def test_judge_scale_never_rescales_a_folder_already_on_0_1(likert_runs, tmp_path, capsys, scale, wrong):
    """--judge-scale is one flag for every folder: a 0–1 judge's folder beside a 1–5 one would have
    its 1.0 published as 0.0 (1-5) or 0.1 (0-10). Such a folder (every score within [0, 1]) is
    withheld with a warning naming it; the 1–5 folder is rescaled as asked."""
    bench, runs = likert_runs
    write_upstream_run(runs, dialog(bench, "open"), mode="open", answer=lambda qa, r: qa["answer"],
                       judge=lambda qa, p: 1.0, method="full_context_multimodal", history_source="full_context")
    out = tmp_path / "out"
    assert main(["score", str(bench), "--runs", str(runs), "--judge-scale", scale, "--sections", "matrix",
                 "--resamples", "10", "--out", str(out), "--format", "json"]) == 0
    data = json.loads((out / "report.json").read_text())
    judged = {r["method"]: r["value"] for r in data["matrix"] if r["metric"] == "judge" and r["agg"] == "micro"}
    assert "full_context_multimodal" not in judged and wrong not in judged.values()
    (folder,) = [f for f in data["inputs"]["checks"]["withheld"]["judge"]]
    assert "full_context" in folder
    warning = next(w for w in data["warnings"] if w.startswith("judge withheld for 1 run folder(s)"))
    assert "all within [0, 1]" in warning and f"--judge-scale {scale}" in warning
    assert f"warning: {warning}" in capsys.readouterr().err.splitlines()  # said on the terminal too, with --out
    if scale == "1-5":
        assert judged == {"semantic_rag_multimodal": pytest.approx((1.0 + 0.25 + 0.75) / 3)}


@pytest.mark.parametrize("shape, severity, said_by_validate, said_by_score", [
    ("single_choice", "warning", "log a single `choice` and no `rotations` list", "log fewer rotations than their item has (mostly 1 of 4)"),
    ("rotations_text", "error", "log `rotations` as a str, not a list", "log fewer rotations than their item has (mostly 1 of 4)"),
    ("rotation_idx_17", "error", "log a rotation_idx outside their item's rotations", "log a rotation_idx beyond their item's rotations"),
])
def test_rotation_rows_the_paper_rule_cannot_read_are_said_in_validate_and_score(
        bench, tmp_path, capsys, shape, severity, said_by_validate, said_by_score):
    """A 4-rotation item's row with only a bare `choice`, with `rotations` as text, or with a
    rotation_idx past the item's: each scores as the paper's rule makes it (unlogged rotations wrong),
    and neither `validate` nor `score` is silent about it."""
    def spoil(row: dict) -> None:
        rots = row.get("rotations")
        if not rots:
            return
        if shape == "single_choice":
            row.pop("rotations")
            row["choice"] = rots[0]["choice"]
        elif shape == "rotations_text":
            row["rotations"] = "".join(r["choice"] for r in rots)
            row["choice"] = rots[0]["choice"]
        else:
            rots[-1]["rotation_idx"] = 17

    runs = tmp_path / "runs"
    write_upstream_run(runs, dialog(bench), answer=first_correct, row_hook=spoil)
    code, lines = validate_lines(bench, runs, capsys)
    (line,) = [ln for ln in lines if said_by_validate in ln]
    assert f": {severity}: 3 rotation MCQ row(s)" in line and line.split(": ")[0].endswith("predictions.jsonl:1")
    assert code == (1 if severity == "error" else 0)
    report = score(bench, [runs], sections=["matrix"], options=ScoreOptions(resamples=10))
    warnings = report.json_data()["warnings"]
    assert any(said_by_score in w for w in warnings), warnings
    em = matrix_value(report, "semantic_rag_multimodal", "em", "micro")
    # answerable: two 4-rotation items right on the rotations read (1 of 4, or 3 of 4), one 1-rotation item
    # right (the third 4-rotation item is the unanswerable control, not in the matrix)
    assert em == pytest.approx(((0.75 if shape == "rotation_idx_17" else 0.25) * 2 + 1.0) / 3)


def test_repeated_rotation_idx_is_said_as_the_score_reads_it(bench, tmp_path, capsys):
    """Every rotation_idx 0: `validate` errors and says what `score` does with such a row — its
    choices scored in the order logged (the scores equal the clean run's)."""
    def spoil(row: dict) -> None:
        for r in row.get("rotations") or []:
            r["rotation_idx"] = 0

    clean, runs = tmp_path / "clean", tmp_path / "runs"
    write_upstream_run(clean, dialog(bench), answer=first_correct)
    write_upstream_run(runs, dialog(bench), answer=first_correct, row_hook=spoil)
    code, lines = validate_lines(bench, runs, capsys)
    (line,) = [ln for ln in lines if "rotation_idx" in ln]
    assert code == 1 and "repeats or is not a whole number, the row's choices are scored in the order logged" in line
    reports = [score(bench, [r], sections=sections, options=ScoreOptions(resamples=10))
               for r in (clean, runs) for sections in (["matrix"], ["matrix", "evidence"])]  # lean, then full reader
    ems = [matrix_value(rep, "semantic_rag_multimodal", "em", "micro") for rep in reports]
    assert ems[0] == ems[1] == ems[2] == ems[3]
    for rep in reports[2:]:  # `score` says it too, naming the first row
        data = rep.json_data()
        (warning,) = [w for w in data["warnings"] if "rotation_idx that repeats" in w]
        assert warning.startswith("3 MCQ row(s) in 1 run folder(s)") and "predictions.jsonl:1)" in warning
        assert "scored in the order logged" in warning and data["inputs"]["checks"]["rotations_in_logged_order"] == 3
    assert not any("rotation_idx" in w for rep in reports[:2] for w in rep.json_data()["warnings"])


@pytest.mark.parametrize("odd", [["A"], {"letter": "A"}, 1])
def test_a_rotation_choice_that_is_not_text_is_an_error_not_a_traceback(bench, tmp_path, capsys, odd):
    """`"choice": ["A"]` in one rotation: `validate` errors naming the row, and `score` (both readers)
    reads that rotation as unlogged (wrong) instead of failing on an unhashable list."""
    def spoil(row: dict) -> None:
        rots = row.get("rotations")
        if rots and row["idx"] == 1:
            rots[0]["choice"] = odd

    runs = tmp_path / "runs"
    write_upstream_run(runs, dialog(bench), answer=first_correct, row_hook=spoil)
    code, lines = validate_lines(bench, runs, capsys)
    (line,) = [ln for ln in lines if "not text" in ln]
    assert code == 1 and ": error: 1 MCQ row(s) log a rotation `choice` that is not text" in line
    assert line.split(": ")[0].endswith("predictions.jsonl:1")
    ems = []
    for rows in ("lean", "full"):
        sections = ["matrix"] if rows == "lean" else ["matrix", "evidence"]  # evidence reads the raw rows too
        report = score(bench, [runs], sections=sections, options=ScoreOptions(resamples=10))
        ems.append(matrix_value(report, "semantic_rag_multimodal", "em", "micro"))
        (warning,) = [w for w in report.json_data()["warnings"] if "not text" in w]  # `score` says it too
        assert warning.startswith("1 MCQ row(s) in 1 run folder(s) log a rotation `choice` that is not text (first: ")
        assert "predictions.jsonl:1)" in warning and "counts as wrong" in warning
    # item 1 right on 3 of its 4 rotations, the other 4-rotation item and the 1-rotation item right
    assert ems == [pytest.approx((0.75 + 1.0 + 1.0) / 3)] * 2


def test_a_judge_score_between_the_levels_is_said_and_averaged_as_recorded(bench, tmp_path):
    runs = tmp_path / "runs"

    def between(row: dict) -> None:
        if row["idx"] == 2:
            row["judge"] = 0.3

    write_upstream_run(runs, dialog(bench, "open"), mode="open", answer=lambda qa, r: qa["answer"],
                       judge=lambda qa, p: 1.0, row_hook=between)
    report = score(bench, [runs], sections=["matrix"], options=ScoreOptions(resamples=10))
    data = report.json_data()
    (warning,) = [w for w in data["warnings"] if "not on the judge levels" in w]
    assert warning.startswith("1 judge score(s) in 1 run folder(s)") and "predictions.jsonl:2" in warning
    assert data["inputs"]["checks"]["judge_off_levels"] == 1
    assert matrix_value(report, "semantic_rag_multimodal", "judge", "micro") == pytest.approx((1.0 + 0.3 + 1.0) / 3)


@pytest.mark.parametrize("huge", [1e308, -1e308, 1.7976931348623157e308])
def test_a_huge_judge_score_is_refused_without_numpy_noise(bench, tmp_path, huge):
    """Scores near the float limit are refused like any out-of-range score, and no numpy overflow
    warning reaches the terminal (the command is run as a user runs it, in its own process)."""
    import subprocess
    import sys

    runs = tmp_path / "runs"

    def spoil(row: dict) -> None:
        if row["idx"] in (1, 3):
            row["judge"] = huge

    write_upstream_run(runs, dialog(bench, "open"), mode="open", answer=lambda qa, r: qa["answer"],
                       judge=lambda qa, p: 0.5, row_hook=spoil)
    for args in (["validate", str(bench), "--runs", str(runs), "--no-decode"],
                 ["score", str(bench), "--runs", str(runs), "--resamples", "10", "--out", str(tmp_path / "o"),
                  "--format", "json"],
                 ["score", str(bench), "--runs", str(runs), "--resamples", "10", "--judge-scale", "1-10"]):
        done = subprocess.run([sys.executable, "-m", "scorer", *args], capture_output=True, text=True, timeout=120)
        assert "Warning" not in done.stderr and "Traceback" not in done.stderr, (args, done.stderr)
        assert done.returncode == (1 if args[0] == "validate" else 0), (args, done.stdout, done.stderr)
    data = json.loads((tmp_path / "o" / "report.json").read_text())
    assert [r for r in data["matrix"] if r["metric"] == "judge"] == []


def test_a_withheld_judge_is_withheld_from_every_section(likert_runs):
    """A 1–5 judge without --judge-scale is withheld: not in the matrix, and not read back from the
    rows by the sections that pair on each item's score (abstention, delivery) either."""
    bench, runs = likert_runs
    report = score(bench, [runs], options=ScoreOptions(resamples=10))
    data = report.json_data()
    assert [r for r in data["matrix"] if r["metric"] == "judge"] == []
    answerable = [r for r in data["abstention"] if r["metric"] == "answerable_score"]
    assert answerable and all(r["value"] is None and r["n"] == 0 for r in answerable), answerable
    delivery = data["delivery"]
    assert delivery.get("score_join", []) == [] and all(i["score"] is None for i in delivery["items"])


def test_validate_reports_a_run_file_cut_short_beside_everything_else(bench, tmp_path, capsys):
    """A predictions.jsonl cut mid-row (a run still being written) is one error naming file, line
    and column, in words; `validate` still checks every other folder and says what it could not."""
    runs = tmp_path / "runs"
    write_upstream_run(runs, dialog(bench), answer=first_correct, rotation_break=True)
    cut = write_upstream_run(runs, dialog(bench, "open"), mode="open", answer=lambda qa, r: qa["answer"],
                             judge=lambda qa, p: 0.5, stamp="20260101_000001") / "predictions.jsonl"
    data = cut.read_bytes()
    cut.write_bytes(data[: data.index(b'"pred"', data.index(b"\n") + 1) + 9])  # inside row 2's pred
    code = main(["validate", str(bench), "--runs", str(runs), "--no-decode"])
    out, err = capsys.readouterr()
    lines = out.strip().splitlines()
    (bad,) = [ln for ln in lines if ln.startswith(str(cut))]
    assert f"{cut}:2:" in bad and ": error: invalid JSON: unterminated string starting at column" in bad
    assert "cut short" in bad
    assert any("log fewer rotations" in ln for ln in lines)  # the other folder was checked
    assert code == 1 and "1 run folder(s) (+1 unreadable, not checked)" in err
