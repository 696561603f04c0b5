"""Label Studio task-JSON export of the annotation store.

One task per (item, mode): `data` holds the item's text (question, gold answer, options, labels,
and every run's prediction) when a Benchmark and runs are given, and whatever the runs alone carry
otherwise; `predictions` has one entry per run, `model_version` = the run key, with the method's
answer as `choices` (the judge's verdict for open items, the chosen letter for MCQ) and its text;
`annotations` has one entry per (annotator, run) with the current human verdicts, labels, oracle
answers, flags and notes as `choices` / `textarea` results. LABEL_CONFIG is a labeling config whose
control names match every `from_name` used here, so the file imports into a project made with it.
"""

from __future__ import annotations

import hashlib
import re
from collections import defaultdict
from collections.abc import Iterable, Sequence
from typing import Any

from scorer.metrics.constants import OPTION_LETTERS
from scorer.model import X_LABELS, Y_LABELS, Benchmark, Run
from scorer.store.db import Store
from scorer.store.payload import ACT_KINDS, FLAGS, VERDICTS

LABEL_CONFIG = f"""<View>
  <Header value="$item_id ($mode)"/>
  <Text name="question" value="$question"/>
  <Text name="options" value="$options"/>
  <Text name="answer" value="$answer"/>
  <Text name="prediction" value="$prediction"/>
  <Choices name="verdict" toName="prediction" choice="single">
    {' '.join(f'<Choice value="{v}"/>' for v in VERDICTS)}
  </Choices>
  <Choices name="model_choice" toName="prediction" choice="single">
    {' '.join(f'<Choice value="{c}"/>' for c in OPTION_LETTERS)}
  </Choices>
  <TextArea name="model_answer" toName="prediction"/>
  <Choices name="x" toName="question" choice="multiple">
    {' '.join(f'<Choice value="{v}"/>' for v in X_LABELS)}
  </Choices>
  <Choices name="y" toName="question" choice="multiple">
    {' '.join(f'<Choice value="{v}"/>' for v in Y_LABELS)}
  </Choices>
  <Choices name="oracle_choice" toName="question" choice="single">
    {' '.join(f'<Choice value="{c}"/>' for c in OPTION_LETTERS)}
  </Choices>
  <TextArea name="oracle_answer" toName="question"/>
  <Choices name="flag" toName="question" choice="multiple">
    {' '.join(f'<Choice value="{v}"/>' for v in FLAGS)}
  </Choices>
  <TextArea name="flag_text" toName="question"/>
  <TextArea name="note" toName="question"/>
</View>
"""
JUDGE_VERDICT = {1.0: "accept", 0.5: "borderline", 0.0: "reject"}


def _rid(*parts: Any) -> str:
    """A stable 10-character region id (Label Studio's ids are short strings)."""
    return hashlib.sha1("\x1f".join(map(str, parts)).encode()).hexdigest()[:10]


def _result(rid: str, from_name: str, to_name: str, kind: str, values: list, origin: str = "manual") -> dict:
    key = "choices" if kind == "choices" else "text"
    return {"id": rid, "from_name": from_name, "to_name": to_name, "type": kind,
            "value": {key: values}, "origin": origin}


def _sort_key(pair: tuple[str, str | None]) -> tuple:
    item_id, mode = pair
    # "Task:12" sorts by task then number, not as text ("Task:12" < "Task:2").
    m = re.match(r"^(.*):(\d+)$", item_id)
    return (m.group(1), int(m.group(2)), "") if m else (item_id, 0, item_id), mode or ""


def _options_text(item: Any) -> str:
    if not item.rotations:
        return ""
    return "\n".join(f"{k}. {v}" for k, v in item.rotations[0].options.items())


def _prediction_entry(run: Run, pred: Any) -> dict:
    results = []
    key = (run.key, pred.item_id, pred.mode)
    if pred.mode == "mcq" and pred.choice and pred.choice in OPTION_LETTERS:
        results.append(_result(_rid("c", *key), "model_choice", "prediction", "choices", [pred.choice],
                               "prediction"))
    if pred.mode == "open" and pred.judge in JUDGE_VERDICT:
        results.append(_result(_rid("v", *key), "verdict", "prediction", "choices",
                               [JUDGE_VERDICT[pred.judge]], "prediction"))
    results.append(_result(_rid("t", *key), "model_answer", "prediction", "textarea", [pred.pred],
                           "prediction"))
    score = pred.judge if pred.mode == "open" else pred.em
    entry: dict[str, Any] = {"model_version": run.key, "result": results}
    if score is not None:
        entry["score"] = float(score)
    return entry


def _annotation(annotator: str, run_key: str | None, rows: list[tuple[str, dict]]) -> dict:
    results: list[dict] = []
    notes, flags, flag_texts = [], [], []
    lead_time = None
    for kind, r in rows:
        rid = r["uid"][:10]
        if kind == "verdict":
            results.append(_result(rid, "verdict", "prediction", "choices", [r["verdict"]]))
        elif kind == "label":
            results.append(_result(rid, "x", "question", "choices", list(r["x"])))
            results.append(_result(_rid("y", rid), "y", "question", "choices", list(r["y"])))
        elif kind == "oracle":
            if r.get("choice") is not None:
                results.append(_result(rid, "oracle_choice", "question", "choices", [r["choice"]]))
            else:
                results.append(_result(rid, "oracle_answer", "question", "textarea", [r["answer"]]))
            lead_time = r.get("seconds", lead_time)
        elif kind == "note":
            notes.append(r["text"])
        elif kind == "flag":
            flags.append(r["flag"])
            if r.get("text"):
                flag_texts.append(r["text"])
    if flags:
        results.append(_result(_rid("f", annotator, run_key), "flag", "question", "choices", sorted(set(flags))))
    if flag_texts:
        results.append(_result(_rid("g", annotator, run_key), "flag_text", "question", "textarea", flag_texts))
    if notes:
        results.append(_result(_rid("n", annotator, run_key), "note", "question", "textarea", notes))
    created = max(r["ts"] for _, r in rows)
    ann: dict[str, Any] = {"result": results, "was_cancelled": False, "ground_truth": False,
                           "created_at": created, "updated_at": created,
                           "memscope": {"annotator": annotator, "run": run_key}}
    if lead_time is not None:
        ann["lead_time"] = float(lead_time)
    return ann


def labelstudio_tasks(store: Store, benchmark: Benchmark | None = None, runs: Sequence[Run] = (),
                      study: str | None = None) -> list[dict]:
    """Label Studio tasks for every (item, mode) with events, benchmark items or run predictions."""
    events: dict[tuple[str, str | None], list[tuple[str, dict]]] = defaultdict(list)
    for kind in ACT_KINDS:
        for row in store.current(kind, study):
            events[(row["item_id"], row["mode"])].append((kind, row))
    preds: dict[tuple[str, str], list[tuple[Run, Any]]] = defaultdict(list)
    for run in runs:
        for p in run.predictions:
            preds[(p.item_id, p.mode)].append((run, p))
    pairs: set[tuple[str, str | None]] = {k for k in events if k[1] is not None} | set(preds)
    if benchmark is not None:
        pairs |= {(i.item_id, i.mode) for i in benchmark.items()}
    # Events without a mode (e.g. labels of an item) belong to every form of that item.
    modeless = {item_id for item_id, mode in events if mode is None}
    with_mode = {item_id for item_id, _ in pairs}
    pairs |= {(item_id, None) for item_id in modeless - with_mode}
    return [_task(item_id, mode, benchmark, preds.get((item_id, mode), []),
                  events.get((item_id, mode), []) + (events.get((item_id, None), []) if mode else []))
            for item_id, mode in sorted(pairs, key=_sort_key)]


def _task(item_id: str, mode: str | None, benchmark: Benchmark | None,
          preds: list[tuple[Run, Any]], rows: list[tuple[str, dict]]) -> dict:
    item = benchmark.item(item_id, mode) if benchmark is not None and mode else None
    first = preds[0][1] if preds else None
    data: dict[str, Any] = {
        "item_id": item_id, "mode": mode,
        "task": item.task if item else (first.task if first else item_id.rsplit(":", 1)[0]),
        "question": item.question if item else (first.question if first else ""),
        "answer": item.answer if item else (first.gt if first else ""),
        "options": _options_text(item) if item else "",
        "x": ", ".join(sorted(item.x)) if item else "",
        "y": ", ".join(sorted(item.y)) if item else "",
        "clue_rounds": list(item.clue_rounds) if item else [],
        "prediction": "\n\n".join(f"[{run.key}] {p.pred}" for run, p in preds),
        "runs": {run.key: p.pred for run, p in preds},
    }
    by_ann: dict[tuple[str, str | None], list[tuple[str, dict]]] = defaultdict(list)
    for kind, r in rows:
        by_ann[(r["annotator"], r["run_key"])].append((kind, r))
    return {
        "data": data,
        "predictions": [_prediction_entry(run, p) for run, p in preds],
        "annotations": [_annotation(a, rk, by_ann[(a, rk)])
                        for a, rk in sorted(by_ann, key=lambda k: (k[0], k[1] or ""))],
    }


def used_from_names(tasks: Iterable[dict]) -> set[str]:
    names = set()
    for t in tasks:
        for block in t["predictions"] + t["annotations"]:
            names |= {r["from_name"] for r in block["result"]}
    return names
