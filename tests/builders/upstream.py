"""Run folders as the MemEye runner writes them (ffzhai88/MemEye benchmark/runner.py and its fork
yyc777icanwritethem/MemEye), written from that runner's observed behaviour for reader tests.

`write_upstream_run` walks a MemEye dialog file's QA list the way the runner does and writes
`<runs>/<task name>/<YYYYmmdd_HHMMSS>_<model>_<effective method>/` with config.json, metrics.json
(its `summary` computed as the runner's summariser does) and predictions.jsonl. Knobs reproduce the
shapes seen in real upstream output:

- `rotation_break=True`: the runner's rotation loop stops after the first rotation (a `break`), so
  a row logs one rotation and `em` = em₀ / n_rotations;
- legacy MCQ items (one options dict) log `question` with the options block and the answer
  instruction appended, and are scored against the item's `answer` field;
- `task_name`: the name in the runner's task YAML (e.g. lower case), which need not be the file's;
- `fork=True`: the fork's runner, which walks `eval.question_ids` (so `idx` is the position in that
  list) and adds `question_id` to each row;
- full-context rows log `context_round_ids` / `context_round_count` (everything in the history).

The model's answers come from `answer(qa, rotation_index)` (a letter for MCQ, text for open); the
judge's from `judge(qa, pred)`.
"""

from __future__ import annotations

import json
import re
import string
from collections import Counter
from pathlib import Path
from typing import Any, Callable

UNSUFFIXED = {"full_context_multimodal", "full_context_text_only", "full_context_no_visual", "question_only",
              "semantic_rag_multimodal", "semantic_rag_text_only"}
METRICS = ("em", "contains_gt", "f1", "bleu", "bleu_1", "bleu_2", "bert", "judge")


def effective_method(name: str, modality: str) -> str:
    if name in UNSUFFIXED:
        return name
    if modality in ("text_only", "multimodal", "no_visual"):
        return f"{name}__{modality}"
    return name


# --- the runner's text metrics (Mem-Gallery normalisation; nltk BLEU with smoothing method1) -------

def _normalise(text: str) -> str:
    s = str(text).lower()
    s = re.sub(r"(?<=\d)\.(?=\d)", "DECIMALDOT", s)
    s = s.replace("_", "LOWLINE")
    s = re.sub(r"\b(a|an|the)\s+(?=\w)", " ", s)
    s = "".join(" " if ch in string.punctuation else ch for ch in s)
    s = s.replace("DECIMALDOT", ".").replace("LOWLINE", "_")
    return " ".join(s.split())


def _bleu(pred: str, gt: str, weights: tuple[float, ...]) -> float:
    from nltk.translate.bleu_score import SmoothingFunction, sentence_bleu

    hyp, ref = _normalise(pred).split(), _normalise(gt).split()
    if not hyp or not ref:
        return 0.0
    return float(sentence_bleu([ref], hyp, weights=weights, smoothing_function=SmoothingFunction().method1))


def _f1(pred: str, gt: str) -> float:
    from nltk.stem import PorterStemmer

    stem = PorterStemmer().stem
    p = [stem(w) for w in _normalise(pred).split()]
    g = [stem(w) for w in _normalise(gt).split()]
    same = sum((Counter(p) & Counter(g)).values())
    if not same:
        return 0.0
    precision, recall = same / len(p), same / len(g)
    return 2 * precision * recall / (precision + recall)


def open_metrics(pred: str, gt: str) -> dict[str, Any]:
    p, g = _normalise(pred), _normalise(gt)
    exact = p == g and p != ""
    return {"exact_match": exact, "em": 1.0 if exact else 0.0, "contains_gt": (g in p) if g else False,
            "f1": _f1(pred, gt), "bleu": _bleu(pred, gt, (0.25, 0.25, 0.25, 0.25)),
            "bleu_1": _bleu(pred, gt, (1, 0, 0, 0)), "bleu_2": _bleu(pred, gt, (0.5, 0.5, 0, 0))}


# --- the runner's summary ---------------------------------------------------------------------

def summarize(rows: list[dict]) -> dict:
    """overall / by_x / by_y / by_cell means of the numeric metrics present (None skipped)."""
    def number(v: Any) -> bool:  # the runner only ever logs numbers; a test may spoil one
        return isinstance(v, (int, float))

    def add(bucket: dict, key: str, row: dict) -> None:
        b = bucket.setdefault(key, {m: [] for m in METRICS})
        for m in METRICS:
            if number(row.get(m)):
                b[m].append(float(row[m]))

    overall = {m: [] for m in METRICS}
    by_x: dict = {}
    by_y: dict = {}
    by_cell: dict = {}
    for row in rows:
        if not any(number(row.get(m)) for m in METRICS):
            continue
        for m in METRICS:
            if number(row.get(m)):
                overall[m].append(float(row[m]))
        point = row.get("point")
        xs, ys = (point if isinstance(point, list) and len(point) == 2 else ([], []))
        for x in dict.fromkeys(xs):
            add(by_x, x, row)
        for y in dict.fromkeys(ys):
            add(by_y, y, row)
        for x in xs:
            for y in ys:
                add(by_cell, f"{x}_{y}", row)

    def mean(vals: list[float]) -> float:
        return sum(vals) / len(vals)

    def collapse(bucket: dict) -> dict:
        return {k: {m: mean(v) for m, v in mv.items() if v} for k, mv in bucket.items()}

    out = {"open_count": len(rows), "overall": {m: mean(v) for m, v in overall.items() if v},
           "by_x": collapse(by_x), "by_y": collapse(by_y), "by_cell": collapse(by_cell)}
    mcq = [r for r in rows if r.get("mode") == "mcq"]
    if mcq:
        out["mcq_count"] = len(mcq)
        out["mcq_valid_rate"] = sum(1 for r in mcq if r.get("valid_choice")) / len(mcq)
    return out


# --- one run ------------------------------------------------------------------------------------

def _options_block(question: str, options: dict) -> str:
    keys = [k for k in sorted(options) if k != "answer"]
    lines = [question, ""] + [f"{k}. {options[k]}" for k in keys] + [""]
    lines.append(f"Answer with ONLY the option letter ({', '.join(keys)}). Do not explain.")
    return "\n".join(lines)


def _extract(pred: str, valid: set[str]) -> str:
    t = pred.strip().upper()
    if t in valid:
        return t
    m = re.search(r"\b(" + "|".join(sorted(valid)) + r")\b", t)
    return m.group(1) if m else "INVALID"


def _all_round_ids(dialog: dict) -> list[str]:
    return [d["round"] for s in dialog["multi_session_dialogues"] for d in s["dialogues"]]


def write_upstream_run(
    runs_root: Path,
    dialog_path: Path,
    *,
    model: str = "gpt-5.4-mini",
    method: str = "semantic_rag_multimodal",
    modality: str = "multimodal",
    mode: str = "mcq",
    answer: Callable[[dict, int], str] = lambda qa, r: "A",
    judge: Callable[[dict, str], float | None] | None = None,
    rotation_break: bool = False,
    task_name: str | None = None,
    fork_question_ids: list[str] | None = None,
    history_source: str = "semantic_rag",
    top_k: int = 3,
    max_questions: int = 0,
    stamp: str = "20260101_000000",
    row_hook: Callable[[dict], None] | None = None,
) -> Path:
    """Write one run folder; returns it. `history_source`: semantic_rag (method_runtime seed /
    selected / top_candidates), full_context (context_round_ids = every round) or clue_only."""
    dialog = json.loads(dialog_path.read_text(encoding="utf-8"))
    qas = dialog["human-annotated QAs"]
    task = task_name or dialog_path.stem.removesuffix("_Open")
    eff = effective_method(method, modality)
    if fork_question_ids is not None:
        by_id = {str(q.get("question_id", "")): q for q in qas}
        walk = [by_id[q] for q in fork_question_ids]
    else:
        walk = qas[:max_questions] if max_questions else qas
    rounds = _all_round_ids(dialog)
    rows = []
    for i, qa in enumerate(walk, start=1):
        options = qa.get("options")
        common = {"method_name": method, "effective_method_name": eff, "method_modality": modality,
                  "history_turns": 2 * len(rounds), "source_sessions": qa.get("session_id", []),
                  "clue_rounds": qa.get("clue", [])}
        if isinstance(options, list) and options:
            results = []
            for r_idx, rot in enumerate(options):
                letter = answer(qa, r_idx)
                valid = {k for k in rot if k != "answer"}
                choice = _extract(letter, valid)
                results.append({"rotation_idx": r_idx, "correct_position": rot["answer"], "pred": letter,
                                "choice": choice, "em": 1.0 if choice == rot["answer"].strip().upper() else 0.0,
                                "latency_ms": 5, "usage": {}})
                if rotation_break:
                    break
            em = sum(r["em"] for r in results) / len(options)
            bias: dict[str, int] = {}
            for r in results:
                if r["choice"] != "INVALID":
                    bias[r["choice"]] = bias.get(r["choice"], 0) + 1
            row = {"idx": i, "point": qa.get("point"), "mode": "mcq", "question": qa.get("question", ""),
                   "gt": qa.get("answer", ""), "pred": results[-1]["pred"], "choice": results[-1]["choice"],
                   "valid_choice": all(r["choice"] != "INVALID" for r in results), "exact_match": em == 1.0,
                   "em": em, "contains_gt": results[-1]["choice"] == str(qa.get("answer", "")).strip().upper(),
                   "f1": em, "bleu": None, "bleu_1": None, "bleu_2": None, "bert": None, "judge": None,
                   "judge_reasoning": None, "latency_ms": 5 * len(results), **common, "rotations": results,
                   "debiased_em": em, "position_bias": bias,
                   "usage": {"prompt_tokens": 0, "completion_tokens": 0, "total_tokens": 0}}
        elif isinstance(options, dict) and options:
            question = _options_block(qa.get("question", ""), options)
            letter = answer(qa, 0)
            choice = _extract(letter, set(options))
            gt = str(qa.get("answer", ""))
            em = 1.0 if choice == gt.strip().upper() else 0.0
            row = {"idx": i, "point": qa.get("point"), "mode": "mcq", "question": question, "gt": gt,
                   "pred": letter, "choice": choice, "valid_choice": choice != "INVALID", "exact_match": em == 1.0,
                   "em": em, "contains_gt": choice == gt.strip().upper(), "f1": em, "bleu": None, "bleu_1": None,
                   "bleu_2": None, "bert": None, "judge": None, "judge_reasoning": None, "latency_ms": 5, **common}
        else:
            pred = answer(qa, 0)
            gt = str(qa.get("answer", ""))
            score = judge(qa, pred) if judge else None
            row = {"idx": i, "point": qa.get("point"), "mode": "open", "question": qa.get("question", ""),
                   "gt": gt, "pred": pred, **open_metrics(pred, gt), "bert": None, "judge": score,
                   "judge_reasoning": None if score is None else "judged", "latency_ms": 5, **common,
                   "usage": {}}
        if history_source == "semantic_rag":
            seeds = (list(qa.get("clue", [])) + [r for r in rounds if r not in qa.get("clue", [])])[:top_k]
            selected = [r for r in rounds if r in seeds]
            row["method_runtime"] = {"history_source": "semantic_rag", "seed_round_ids": seeds,
                                     "selected_round_ids": selected,
                                     "top_candidates": [{"round_id": r, "score": 0.9 - 0.1 * k}
                                                        for k, r in enumerate(seeds[:max(5, top_k)])]}
            context = selected
        elif history_source == "clue_only":
            row["method_runtime"] = {"history_source": "clue_only"}
            context = [r for r in rounds if r in qa.get("clue", [])]
        else:
            context = list(rounds)
        if fork_question_ids is None:
            row["context_round_ids"] = context
            row["context_round_count"] = len(context)
        else:
            row["question_id"] = str(qa.get("question_id", ""))
        if row_hook:
            row_hook(row)
        rows.append(row)
    folder = runs_root / task / f"{stamp}_{model}_{eff}"
    folder.mkdir(parents=True, exist_ok=True)
    eval_cfg: dict[str, Any] = {"mode": mode, "max_questions": max_questions}
    if fork_question_ids is not None:
        eval_cfg["question_ids"] = fork_question_ids
    config = {"task": {"name": task, "dataset": {"dialog_json": str(dialog_path)}}, "dataset": {"dialog_json": str(dialog_path)},
              "eval": eval_cfg, "model": {"provider": "openai_api", "name": model, "model": model},
              "method": {"name": method, "modality": modality}, "run": {}}
    all_mcq = all(isinstance(q.get("options"), (dict, list)) and q.get("options") for q in qas)
    metrics = {"task_name": task, "model_name": model, "model_path": model, "method_name": eff,
               "base_method_name": method, "method_modality": modality, "mode": "mcq" if all_mcq else mode,
               "num_qas": len(qas), "num_qas_run": len({r["idx"] for r in rows}), "dialog_json": str(dialog_path),
               "image_root": "", "run_dir": str(folder), "git_commit": "0" * 40, "summary": summarize(rows)}
    (folder / "config.json").write_text(json.dumps(config, indent=2), encoding="utf-8")
    (folder / "metrics.json").write_text(json.dumps(metrics, indent=2), encoding="utf-8")
    with open(folder / "predictions.jsonl", "w", encoding="utf-8") as fh:
        for row in rows:
            fh.write(json.dumps(row, ensure_ascii=False) + "\n")  # Python's json: NaN stays a bare NaN
    return folder

