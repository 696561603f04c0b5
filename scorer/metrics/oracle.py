"""Human oracle accuracy (DESIGN.md §5; MemEye App. "Human Validation Under Oracle Evidence").

Annotators answer MCQ items seeing only the gold clue rounds. Per group (each Y level, and All):
- mean individual accuracy = the mean over annotators of each annotator's accuracy on the group's
  items they answered;
- majority-vote accuracy = share of items whose strict majority choice (more than half of those who
  answered) is correct; an item without one counts as wrong and is counted in `ties`.
An item with several Y labels counts in each of its Y groups, and once in All.

Pure functions: no I/O, no printing.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass

from scorer.metrics.agreement import strict_majority

ALL = "All"


@dataclass(frozen=True)
class OracleAnswer:
    """One annotator's answer to one MCQ item. `choice` None = not answered (ignored)."""

    item_id: str
    y: tuple[str, ...]
    annotator: str
    choice: str | None
    correct: str


@dataclass(frozen=True)
class OracleRow:
    y: str  # a Y label, or "All"
    majority_accuracy: float | None
    mean_individual_accuracy: float | None
    n_items: int  # items with at least one answer
    n_annotators: int  # annotators with at least one answer in the group
    ties: int  # items with no strict majority (counted wrong)
    majority_correct: int
    n_answers: int


def _letter(v) -> str | None:
    if v is None:
        return None
    s = str(v).strip().upper()
    return s or None


def _as_answer(row) -> OracleAnswer:
    if isinstance(row, OracleAnswer):
        get = row.__dict__.get  # re-normalised below like every other form
    elif isinstance(row, Mapping):
        get = row.get
    else:  # a (item_id, y, annotator, choice, correct) tuple
        item_id, y, annotator, choice, correct = row
        get = {"item_id": item_id, "y": y, "annotator": annotator, "choice": choice, "correct": correct}.get
    y = get("y")
    ys = (y,) if isinstance(y, str) else tuple(y or ())
    correct = _letter(get("correct"))
    if correct is None:
        raise ValueError(f"item {get('item_id')!r} has no correct letter")
    return OracleAnswer(str(get("item_id")), tuple(str(v) for v in ys), str(get("annotator")), _letter(get("choice")), correct)


def oracle_accuracy(rows: Iterable[OracleAnswer | Mapping | Sequence]) -> tuple[OracleRow, ...]:
    """Rows by Y label (sorted), then All. `rows` are OracleAnswer, dicts with keys item_id, y,
    annotator, choice, correct, or tuples in that order; `y` is one label or a list of labels."""
    answers = [_as_answer(r) for r in rows]
    items: dict[str, tuple[tuple[str, ...], str]] = {}
    choices: dict[str, dict[str, str]] = {}
    for a in answers:
        y_correct = (tuple(sorted(set(a.y))), a.correct)
        if items.setdefault(a.item_id, y_correct) != y_correct:
            raise ValueError(f"item {a.item_id!r} has conflicting Y labels or correct letters across rows")
        if a.choice is None:
            continue
        per_item = choices.setdefault(a.item_id, {})
        if a.annotator in per_item:
            raise ValueError(f"annotator {a.annotator!r} answered item {a.item_id!r} twice; pass one answer each")
        per_item[a.annotator] = a.choice
    groups: dict[str, list[str]] = {}
    for item_id in items:
        if item_id in choices:
            for y in items[item_id][0]:
                groups.setdefault(y, []).append(item_id)
    out = [_row(y, groups[y], items, choices) for y in sorted(groups)]
    out.append(_row(ALL, [i for i in items if i in choices], items, choices))
    return tuple(out)


def _row(y: str, item_ids: list[str], items, choices) -> OracleRow:
    right, ties, n_answers = 0, 0, 0
    per_annotator: dict[str, list[int]] = {}
    for item_id in item_ids:
        correct = items[item_id][1]
        votes = choices[item_id]
        for annotator, choice in votes.items():
            tally = per_annotator.setdefault(annotator, [0, 0])
            tally[0] += choice == correct
            tally[1] += 1
            n_answers += 1
        winner, _ = strict_majority(list(votes.values()))
        ties += winner is None
        right += winner == correct
    n = len(item_ids)
    individual = [c / t for c, t in per_annotator.values()]
    return OracleRow(
        y=y,
        majority_accuracy=right / n if n else None,
        mean_individual_accuracy=sum(individual) / len(individual) if individual else None,
        n_items=n,
        n_annotators=len(per_annotator),
        ties=int(ties),
        majority_correct=int(right),
        n_answers=n_answers,
    )
