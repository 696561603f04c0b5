"""What both run readers notice in a prediction row while reading it, before any number is built.

- A bare `NaN`, `Infinity` or `-Infinity` (what Python's json module writes for a float it cannot
  represent) is not JSON, so the fast parsers refuse the line; `loads_lenient` reads it with the
  standard library and turns each such constant into a missing value (None), saying which.
- A score logged as text (`"judge": "high"`, and `"0.5"` too) would otherwise become a missing value
  or a guessed number without a word, and a judge / EM / BLEU-1 / F1 logged as true/false a 1 or a
  0: `text_scores` lists such fields.

Both come back as `RunProblem`s on the run (scorer.model), which `validate` prints and `score`
repeats in its warnings.
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

from scorer.errors import DataError
from scorer.load.jsonio import BadJSON, std_loads
from scorer.model import RunProblem
from scorer.model.rows import json_kind

SCORE_FIELDS = ("em", "judge", "bleu_1", "f1", "exact_match", "contains_gt")


def loads_lenient(line: bytes | str) -> tuple[Any, list[str]]:
    """(value, the non-finite constants it held) of one JSON text the standard library accepts;
    each `NaN` / `Infinity` / `-Infinity` becomes None. Raises BadJSON (a ValueError)."""
    found: list[str] = []

    def constant(name: str) -> None:
        found.append(name)
        return None

    data = line.encode("utf-8", "surrogatepass") if isinstance(line, str) else line
    return std_loads(data, parse_constant=constant), found


def lenient_row(path: Path, line: bytes, line_no: int, problems: list[RunProblem] | None) -> Any:
    """A line the fast parsers refused: read with NaN/Infinity as missing values (a problem appended
    to `problems` says so), or a one-line error naming the file, line and column."""
    try:
        row, constants = loads_lenient(line)
    except BadJSON as err:
        raise DataError(path, err.location(line_no) or str(line_no), err.message) from None
    if constants and problems is not None:
        problems.append(non_finite_problem(str(path), line_no, constants))
    return row


def non_finite_problem(file: str, line: int, constants: list[str]) -> RunProblem:
    shown = ", ".join(dict.fromkeys(constants))
    return RunProblem(f"{file}:{line}", "warning",
                      f"non-finite number(s) {shown} (not JSON; Python's json writes them) read as missing values",
                      "non_finite")


NUMBER_FIELDS = ("em", "judge", "bleu_1", "f1")  # numbers upstream; exact_match / contains_gt may be true/false


def text_scores(row: dict) -> list[tuple[str, str, str]]:
    """(field, value as logged, "text" / "true/false" / "a list" / "an object") of every score field
    logged as text — "0.5" and " 1 " too: a runner writes numbers, and text is not guessed at — as a
    list or an object, or, for a field upstream writes as a number, as true/false."""
    out = []
    for name in SCORE_FIELDS:
        v = row.get(name)
        if v.__class__ is str:
            out.append((name, v, "text"))
        elif v.__class__ is bool and name in NUMBER_FIELDS:
            out.append((name, "true" if v else "false", "true/false"))
        elif isinstance(v, (list, dict)):  # [1], {"score": 1}: not guessed at either
            out.append((name, json.dumps(v, ensure_ascii=False)[:60], json_kind(v)))
    return out


TEXT_SCORE = "text_score:"  # kind prefix; the field follows (text_score:judge)


def text_score_problem(file: str, line: int, name: str, value: str, kind: str = "text") -> RunProblem:
    return RunProblem(f"{file}:{line}", "error", f"{name} logged as {kind}, not a number: {value[:40]!r}",
                      TEXT_SCORE + name)


def row_problems(file: str, rows: list[tuple[int, dict]]) -> list[RunProblem]:
    """Text scores in a run's rows (dicts): one problem per offending field."""
    return [text_score_problem(file, line, name, value, kind) for line, row in rows
            for name, value, kind in text_scores(row)]
