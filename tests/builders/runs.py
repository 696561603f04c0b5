"""Run folders (config.json, metrics.json, predictions.jsonl) for the benchmarks of
tests/builders/benchmarks.py, and rows to put in them. Run folders as the MemEye runner itself
writes them, summary and all, are tests/builders/upstream.py's.

- `write_mini_run(folder, mode, rows, …)`: a run of the mini benchmark's task, written into exactly
  the folder given (config and metrics in the flat shape, rows as given).
- `write_labelled_run(runs, task, backbone, method, modality, mode, rows)`: a run placed in a runs
  tree as the runner lays them out, `<runs>/<task>/<stamp>_<backbone>_<method>_<mode>/` (config in
  the nested shape; every row carries `method_name` / `effective_method_name`).
- `mcq_row` / `open_row`: rows answering `write_labelled_bench`'s items (question `Question {idx}?`,
  gold `answer {idx}`).
"""

from __future__ import annotations

import json
from collections.abc import Iterable
from pathlib import Path

from tests.builders.benchmarks import LETTERS, MINI_TASK


def write_mini_run(folder: Path, mode: str, rows: list[dict], method: str = "semantic_rag__multimodal",
                   backbone: str = "gpt-5.4-mini", modality: str = "multimodal") -> Path:
    folder.mkdir(parents=True, exist_ok=True)
    (folder / "config.json").write_text(json.dumps({"task": MINI_TASK, "model": backbone, "method": method}))
    (folder / "metrics.json").write_text(json.dumps({
        "task_name": MINI_TASK, "model_name": backbone, "method_name": method.split("__")[0],
        "method_modality": modality, "mode": mode, "num_qas_run": len(rows)}))
    with (folder / "predictions.jsonl").open("w") as fh:
        for r in rows:
            fh.write(json.dumps(r) + "\n")
    return folder


def write_labelled_run(runs: Path, task: str, backbone: str, method: str, modality: str, mode: str,
                       rows: Iterable[dict], stamp: str = "20260101_000000") -> Path:
    folder = runs / task / f"{stamp}_{backbone}_{method}_{mode}"
    folder.mkdir(parents=True, exist_ok=True)
    (folder / "config.json").write_text(json.dumps({"task": {"name": task}, "model": {"name": backbone},
                                                     "method": {"name": method}}))
    (folder / "metrics.json").write_text(json.dumps({"task_name": task, "model_name": backbone, "method_name": method,
                                                      "method_modality": modality, "mode": mode}))
    with (folder / "predictions.jsonl").open("w") as fh:
        for r in rows:
            fh.write(json.dumps({**r, "method_name": method, "effective_method_name": method}) + "\n")
    return folder


def mcq_row(idx: int, correct_rotations: int) -> dict:
    """A rotation-MCQ row whose first `correct_rotations` rotations are right (the last wrong one
    an invalid extraction); its recorded `em` agrees."""
    rots = []
    for r in range(4):
        right = r < correct_rotations
        choice = LETTERS[r] if right else ("INVALID" if r == 3 else LETTERS[(r + 1) % 4])
        rots.append({"rotation_idx": r, "correct_position": LETTERS[r], "pred": choice, "choice": choice,
                     "em": float(right)})
    return {"idx": idx, "mode": "mcq", "question": f"Question {idx}?", "gt": f"answer {idx}", "pred": rots[-1]["pred"],
            "choice": rots[-1]["choice"], "valid_choice": all(r["choice"] != "INVALID" for r in rots),
            "em": correct_rotations / 4, "rotations": rots, "judge": None, "bleu_1": None}


def open_row(idx: int, judge: float) -> dict:
    pred = f"answer {idx}" if judge >= 0.5 else "something else"
    return {"idx": idx, "mode": "open", "question": f"Question {idx}?", "gt": f"answer {idx}", "pred": pred,
            "judge": judge, "judge_reasoning": "test", "em": None}
