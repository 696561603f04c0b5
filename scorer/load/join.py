"""Joining prediction rows to benchmark items, with the question text checked (DESIGN §3).

A row joins by `question_id` where it carries one the benchmark knows (the fork of the MemEye
runner walks `eval.question_ids`, so its `idx` is a position in that list), else by (task, mode,
idx). Its question must be the item's — or, for a legacy MCQ item (one options dict), the question
as the runner logs it: with the options block and the answer instruction appended.
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from typing import Any, Iterable, Mapping

from scorer.model import Benchmark, Item, Prediction, Run

_WS = re.compile(r"\s+")


def same_question(a: str, b: str) -> bool:
    """Upstream rows may reflow whitespace; anything else is a different question."""
    return _WS.sub(" ", a).strip() == _WS.sub(" ", b).strip()


def legacy_prompt(question: str, options: Mapping[str, str]) -> str:
    """A legacy MCQ question as the MemEye runner logs it: the question, a blank line, one
    `L. text` line per option letter in order, a blank line and the answer instruction."""
    keys = sorted(k for k in options if k != "answer")
    return "\n".join([question, "", *(f"{k}. {options[k]}" for k in keys), "",
                      f"Answer with ONLY the option letter ({', '.join(keys)}). Do not explain."])


def logged_question(item: Item) -> str | None:
    """The question text a row of this item logs when it is not the item's own (legacy MCQ)."""
    if item.mcq_form == "legacy" and item.rotations:
        return legacy_prompt(item.question, item.rotations[0].options)
    return None


def question_matches(logged: str, question: str, alt: str | None) -> bool:
    """A row's logged question is its item's: the same text, or the item's logged form `alt`."""
    return same_question(logged, question) or (alt is not None and same_question(logged, alt))


def question_id_of(item: Item) -> str | None:
    qid = item.raw.get("question_id")
    if isinstance(qid, (str, int)) and not isinstance(qid, bool) and str(qid).strip():
        return str(qid).strip()
    return None


def row_question_id(p: Prediction) -> str | None:
    qid = p.raw.get("question_id")
    return qid if qid.__class__ is str and qid else None


@dataclass(frozen=True, slots=True)
class JoinProblem:
    run: Run
    prediction: Prediction
    severity: str  # "error" | "warning"
    message: str
    kind: str = "no_item"  # "no_item" | "no_idx" | "unknown_task" | "question_mismatch" | "unknown_round"

    @property
    def location(self) -> str:
        return f"{self.run.folder / 'predictions.jsonl'}:{self.prediction.line}"


def _no_idx(v: Any) -> str:
    """What is wrong with a row's idx that cannot be a 1-based item index."""
    if v is None:
        return "row has no idx (the 1-based item index)"
    if v.__class__ is int:  # a huge one shown cut short (f"{v:g}" would overflow)
        shown = str(v) if len(str(v)) <= 20 else str(v)[:17] + "..."
        return f"idx {shown} is not a 1-based item index (1 or more)"
    if v.__class__ is float:  # 2.0, or an integer past 64 bits that a reader holds as a float: 1e+30
        return f"idx {v!r} is not a 1-based item index (a JSON integer, 1 or more)"
    return f"idx {str(v)[:30]!r} is not a whole number (the 1-based item index)"


class Joiner:
    """Index of a benchmark's items by (task, mode, idx) for fast joins of many rows."""

    def __init__(self, benchmark: Benchmark) -> None:
        self.benchmark = benchmark
        self.index = {(i.task, i.mode, i.index): i for i in benchmark.items()}
        self.by_question_id = {(i.task, i.mode, q): i for i in benchmark.items() if (q := question_id_of(i))}

    def item(self, run: Run, p: Prediction) -> Item | None:
        if self.by_question_id and (qid := row_question_id(p)) is not None:
            hit = self.by_question_id.get((run.task, p.mode, qid))
            if hit is not None:
                return hit
        return self.index.get((p.task, p.mode, p.idx)) or self.index.get((run.task, p.mode, p.idx))

    def problems(self, runs: Iterable[Run]) -> list[JoinProblem]:
        out = []
        for run in runs:
            if self.benchmark.task(run.task) is None and not any(
                self.benchmark.task(p.task) for p in run.predictions[:1]
            ):
                for p in run.predictions[:1]:
                    out.append(JoinProblem(run, p, "error", f"run's task {run.task!r} is not in the benchmark",
                                           "unknown_task"))
                continue
            for p in run.predictions:
                if p.idx < 1 and not (self.by_question_id and row_question_id(p)):
                    out.append(JoinProblem(run, p, "error", _no_idx(p.raw.get("idx")), "no_idx"))
                    continue
                item = self.item(run, p)
                if item is None:
                    out.append(JoinProblem(
                        run, p, "error", f"row matches no item: task {p.task!r}, mode {p.mode!r}, idx {p.idx}"))
                elif p.question and not question_matches(p.question, item.question, logged_question(item)):
                    out.append(JoinProblem(
                        run, p, "warning",
                        f"question differs from item {item.item_id} ({item.mode}): row has {p.question[:80]!r}, "
                        f"benchmark has {item.question[:80]!r}", "question_mismatch"))
                if item is not None:
                    out += self._unknown_rounds(run, p, item)
        return out

    def _unknown_rounds(self, run: Run, p: Prediction, item: Item) -> list[JoinProblem]:
        task = self.benchmark.task(item.task)
        named = [r.round_id for r in p.retrieved or ()] + list(p.delivered or ())
        unknown = sorted({r for r in named if not task.has_round(r)})
        if not unknown:
            return []
        shown = ", ".join(unknown[:5]) + (f" (+{len(unknown) - 5} more)" if len(unknown) > 5 else "")
        return [JoinProblem(run, p, "error", f"retrieved/delivered round id(s) not in task {item.task}: {shown}",
                            "unknown_round")]

    def pairs(self, runs: Iterable[Run]) -> Iterable[tuple[Run, Prediction, Item]]:
        """Rows that join to an item (question mismatches included: they are warnings, not drops)."""
        for run in runs:
            for p in run.predictions:
                item = self.item(run, p)
                if item is not None:
                    yield run, p, item
