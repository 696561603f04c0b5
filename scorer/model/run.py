"""The typed model of a method's run: one (backbone, method, mode) over one task, and its rows.

Frozen dataclasses, as the benchmark side (scorer.model.benchmark). A prediction keeps its upstream
row whole (`raw`) and reads its fields from it on access, through scorer.model.rows.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Mapping

from scorer.model.frozen import empty
from scorer.model.rows import (Retrieved, RotationResult, delivered_of, history_source_of, num, retrieved_of,
                               rotations_of, row_text)


# A run folder's files, as the MemEye runner writes them (read by every run reader, written by
# `memscope retrieve` and the judge)
PREDICTIONS, CONFIG, METRICS = "predictions.jsonl", "config.json", "metrics.json"
RUN_FILES = (CONFIG, METRICS, PREDICTIONS)


def _of_type(v: Any, t: type) -> Any:
    return v if type(v) is t else None


@dataclass(frozen=True, slots=True, eq=False)
class Prediction:
    """One upstream row, kept whole in `raw`. Only what identifies it is stored; every score and
    text is read from `raw` on access (as the upstream runner wrote it), which keeps loading tens of
    thousands of rows cheap: building one object per row is most of a load's cost."""

    task: str
    mode: str
    idx: int
    line: int  # 1-based line in predictions.jsonl
    raw: Mapping[str, Any] = field(default_factory=empty)
    parsed: dict[str, Any] | None = field(default=None, repr=False)  # rotations/retrieved/delivered once read

    question = property(lambda self: row_text(self.raw.get("question")))
    gt = property(lambda self: row_text(self.raw.get("gt")))
    pred = property(lambda self: row_text(self.raw.get("pred")))
    em = property(lambda self: num(self.raw.get("em")))
    judge = property(lambda self: num(self.raw.get("judge")))
    bleu_1 = property(lambda self: num(self.raw.get("bleu_1")))
    exact_match = property(lambda self: num(self.raw.get("exact_match")))
    contains_gt = property(lambda self: num(self.raw.get("contains_gt")))
    f1 = property(lambda self: num(self.raw.get("f1")))
    judge_reasoning = property(lambda self: _of_type(self.raw.get("judge_reasoning"), str))
    choice = property(lambda self: _of_type(self.raw.get("choice"), str) or None)
    valid_choice = property(lambda self: _of_type(self.raw.get("valid_choice"), bool))
    abstained = property(lambda self: _of_type(self.raw.get("abstained"), bool))

    @property
    def history_source(self) -> str | None:
        return history_source_of(self.raw)

    @property
    def item_id(self) -> str:
        return f"{self.task}:{self.idx}"

    @property
    def rotations(self) -> tuple[RotationResult, ...]:
        return self._memo("rotations", rotations_of, self.raw)

    @property
    def retrieved(self) -> tuple[Retrieved, ...] | None:
        """Ranked retrieval, best first; None when the run logged none (unknown, not empty)."""
        return self._memo("retrieved", retrieved_of, self.raw)

    @property
    def delivered(self) -> tuple[str, ...] | None:
        """Round ids placed in the reader's request; None when unknown (not "same as retrieved")."""
        return self._memo("delivered", delivered_of, self.raw, self.history_source)

    def _memo(self, name: str, parse: Any, *args: Any) -> Any:
        # Parsed lists (immutable tuples) are kept once read: the evidence diagnostics read a
        # row's retrieval several times, and parsing it is what costs.
        memo = self.parsed
        if memo is None:
            memo = {}
            object.__setattr__(self, "parsed", memo)
        if name not in memo:
            memo[name] = parse(*args)
        return memo[name]


@dataclass(frozen=True, slots=True)
class RunProblem:
    """Something a reader noticed in a run folder that changes what its numbers mean: a non-finite
    number read as missing, a score logged as text, a task name matched loosely. `location` is
    `file:line` (or the file alone); `severity` is "error", "warning" or "note"."""

    location: str
    severity: str
    message: str
    kind: str = ""

    def __str__(self) -> str:
        return f"{self.location}: {self.severity}: {self.message}"


@dataclass(frozen=True, eq=False)
class Run:
    """One (backbone, method, mode) over one task, read from one upstream run folder."""

    backbone: str
    method: str
    mode: str
    task: str
    folder: Path
    modality: str | None = None  # "text" | "multimodal" | "no_visual" | as logged | None (scorer.names)
    config: Mapping[str, Any] = field(default_factory=empty)
    metrics: Mapping[str, Any] = field(default_factory=empty)
    predictions: tuple[Prediction, ...] = ()
    problems: tuple[RunProblem, ...] = ()  # what the reader noticed (scorer.load.row_checks)

    @property
    def key(self) -> str:
        """`<backbone>/<method>`: the name a run goes by in tables, studies and annotations."""
        return f"{self.backbone}/{self.method}"
