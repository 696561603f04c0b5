"""Write small MemEye-layout benchmarks and upstream-shaped runs for the scoring tests, as a user's
files would look (dialog JSON + mirrored _Open file; run folders with config/metrics/predictions)."""

from __future__ import annotations

import json
from collections.abc import Iterable
from pathlib import Path

LETTERS = "ABCD"


def write_bench(root: Path, task: str, labels: list[tuple[str, str]]) -> Path:
    """One task whose items i = 1.. have the given (X, Y) labels; MCQ items have four rotations with
    the answer at A, B, C, D in turn."""
    dialog = {
        "character_profile": {"name": "Test"},
        "multi_session_dialogues": [{"session_id": "D1", "date": "2024-01-01", "dialogues": [
            {"round": "D1:1", "user": "The key tag reads 417.", "assistant": "Noted."}]}],
    }
    qas = []
    for i, (x, y) in enumerate(labels, start=1):
        options = []
        for r in range(4):
            opts = [f"wrong {i}.{k}" for k in range(3)]
            opts.insert(r, f"answer {i}")
            options.append({**dict(zip(LETTERS, opts)), "answer": LETTERS[r]})
        qas.append({"point": [[x], [y]], "question": f"Question {i}?", "answer": f"answer {i}",
                    "session_id": ["D1"], "clue": ["D1:1"], "options": options})
    (root / "dialog").mkdir(parents=True, exist_ok=True)
    (root / "dialog" / f"{task}.json").write_text(json.dumps({**dialog, "human-annotated QAs": qas}))
    open_qas = [{k: v for k, v in q.items() if k != "options"} for q in qas]
    (root / "dialog" / f"{task}_Open.json").write_text(json.dumps({**dialog, "human-annotated QAs": open_qas}))
    return root


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


def write_run(runs: Path, task: str, backbone: str, method: str, modality: str, mode: str,
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
