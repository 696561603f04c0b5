"""Upstream MemEye row shapes (rotation MCQ, legacy MCQ, open) and our evidence extension."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from scorer.errors import DataError
from scorer.load.join import Joiner
from scorer.load.memeye import load_benchmark
from scorer.load.runs import load_runs
from tests.builders.benchmarks import MINI_TASK, write_mini_bench
from tests.builders.runs import write_mini_run


def rotation_row(idx: int, question: str) -> dict:
    rots = [{"rotation_idx": i, "correct_position": "ABCD"[i], "pred": f"({c})", "choice": c,
             "em": float(c == "ABCD"[i]), "latency_ms": 10, "usage": {}} for i, c in enumerate(["A", "B", "A", "D"])]
    return {"idx": idx, "point": [["X1"], ["Y3"]], "mode": "mcq", "question": question, "gt": "Green",
            "pred": "(D)", "exact_match": 1.0, "em": 0.75, "contains_gt": 1.0, "f1": 1.0, "bleu": 0.0,
            "bleu_1": 0.0, "bleu_2": 0.0, "bert": None, "judge": None, "judge_reasoning": None,
            "latency_ms": 40, "method_name": "semantic_rag", "effective_method_name": "semantic_rag__multimodal",
            "method_modality": "multimodal", "history_turns": 4, "source_sessions": ["D1", "D2"],
            "clue_rounds": ["D1:1", "D2:2"], "choice": "D", "valid_choice": True, "rotations": rots,
            "debiased_em": 0.75, "position_bias": {"A": 2, "B": 1, "D": 1},
            "method_runtime": {"seed_round_ids": ["D1:1", "D2:2", "D1:2"],
                               "selected_round_ids": ["D1:1", "D2:2"],
                               "top_candidates": [{"round_id": "D1:1", "score": 0.9}, {"round_id": "D2:2", "score": 0.8}]}}


def test_rotation_legacy_open_rows(tmp_path: Path) -> None:
    root = write_mini_bench(tmp_path / "b")
    write_mini_run(tmp_path / "runs" / MINI_TASK / "20260101_000000_gpt-5.4-mini_semantic_rag__multimodal", "mcq", [
        rotation_row(1, "What colour is the hall wall now?"),
        {"idx": 2, "mode": "mcq", "question": "What number is on the key tag?", "gt": "417", "pred": "X",
         "choice": None, "valid_choice": False, "em": 0.0, "effective_method_name": "semantic_rag__multimodal"},
    ])
    write_mini_run(tmp_path / "runs" / MINI_TASK / "20260101_000001_gpt-5.4-mini_semantic_rag__multimodal", "open", [
        {"idx": 1, "mode": "open", "question": "What colour is the hall wall now?", "gt": "Green",
         "pred": "It is green.", "judge": 1.0, "judge_reasoning": "same colour", "bleu_1": 0.33, "usage": {},
         "effective_method_name": "semantic_rag__multimodal",
         "retrieved": [{"round": "D2:2", "score": 0.91, "recency_age": 0}, "D1:1"],
         "delivered": ["D2:2"], "abstained": False},
    ])
    runs = load_runs([tmp_path / "runs"])
    assert len(runs) == 2
    mcq, opn = sorted(runs, key=lambda r: r.mode)
    assert (mcq.backbone, mcq.method, mcq.mode, mcq.task, mcq.modality) == (
        "gpt-5.4-mini", "semantic_rag__multimodal", "mcq", MINI_TASK, "multimodal")
    assert mcq.key == "gpt-5.4-mini/semantic_rag__multimodal"
    rot = mcq.predictions[0]
    assert rot.em == 0.75 and [r.choice for r in rot.rotations] == ["A", "B", "A", "D"]
    assert [r.round_id for r in rot.retrieved] == ["D1:1", "D2:2", "D1:2"]
    assert [r.score for r in rot.retrieved] == [0.9, 0.8, None]
    assert rot.delivered == ("D1:1", "D2:2")
    assert rot.raw["position_bias"] == {"A": 2, "B": 1, "D": 1}  # every upstream field kept
    legacy = mcq.predictions[1]
    assert legacy.valid_choice is False and legacy.choice is None and legacy.rotations == ()
    o = opn.predictions[0]
    assert o.judge == 1.0 and o.judge_reasoning == "same colour" and o.abstained is False
    assert [(r.round_id, r.rank, r.score, r.recency_age) for r in o.retrieved] == [
        ("D2:2", 1, 0.91, 0.0), ("D1:1", 2, None, None)]
    bench = load_benchmark(root)
    j = Joiner(bench)
    assert j.problems(runs) == []
    assert len(list(j.pairs(runs))) == 3


def test_clue_only_rows_deliver_their_clues(tmp_path: Path) -> None:
    write_mini_run(tmp_path / "r", "open", [{"idx": 1, "mode": "open", "question": "q", "pred": "p",
                                        "history_source": "clue_only", "clue_rounds": ["D1:1"]}],
              method="clue_only_context__multimodal")
    (run,) = load_runs(tmp_path / "r")
    p = run.predictions[0]
    assert p.delivered == ("D1:1",) and p.retrieved is None and p.history_source == "clue_only"


def test_join_reports_unknown_rows_and_question_mismatch(tmp_path: Path) -> None:
    root = write_mini_bench(tmp_path / "b")
    write_mini_run(tmp_path / "runs" / "r1", "open", [
        {"idx": 1, "mode": "open", "question": "What colour is the  hall wall now?"},  # whitespace only
        {"idx": 2, "mode": "open", "question": "A different question?"},
        {"idx": 99, "mode": "open", "question": "?"},
    ])
    probs = Joiner(load_benchmark(root)).problems(load_runs(tmp_path / "runs"))
    assert [(p.prediction.line, p.severity) for p in probs] == [(2, "warning"), (3, "error")]
    assert "A different question?" in probs[0].message and "key tag" in probs[0].message
    assert "idx 99" in probs[1].message


def test_bad_rows_are_one_line_errors(tmp_path: Path) -> None:
    f = write_mini_run(tmp_path / "r", "open", [{"idx": 1}])
    with (f / "predictions.jsonl").open("a") as fh:
        fh.write("{not json\n")
    with pytest.raises(DataError, match=r"predictions.jsonl:2:2: invalid JSON"):
        load_runs(tmp_path / "r")
    with pytest.raises(DataError, match="no such file"):
        load_runs(tmp_path / "nothing")


def test_run_without_metrics_uses_folder_name(tmp_path: Path) -> None:
    d = tmp_path / MINI_TASK / "20260101_000000_qwen3-vl-8b_full_context__text_only"
    d.mkdir(parents=True)
    (d / "predictions.jsonl").write_text(json.dumps({
        "idx": 1, "mode": "open", "effective_method_name": "full_context__text_only"}) + "\n")
    (run,) = load_runs(tmp_path)
    assert (run.backbone, run.method, run.mode, run.task, run.modality) == (
        "qwen3-vl-8b", "full_context__text_only", "open", MINI_TASK, "text")


def test_forty_thousand_rows_load(tmp_path: Path) -> None:
    row = rotation_row(1, "What colour is the hall wall now?")
    line = json.dumps(row) + "\n"
    for k in range(10):
        d = write_mini_run(tmp_path / "runs" / f"r{k}", "mcq", [], method=f"m{k}__multimodal")
        (d / "predictions.jsonl").write_text(line * 4000)
    runs = load_runs(tmp_path / "runs")
    assert sum(len(r.predictions) for r in runs) == 40_000
    # The time itself is measured by bench/load.py (a benchmark, not a timed test).
