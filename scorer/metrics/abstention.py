"""Abstention (DESIGN.md §5; MOSAIC's abstention controls).

- correct-abstention rate: share of `answerable: false` items on which the run abstained;
- false-abstention rate: share of answerable items on which it abstained;
- answer score: the mean score (MCQ EM, open judge) over answerable items only, so a run that
  abstains everywhere cannot look calibrated and the unanswerable controls do not dilute the score.

Whether a row abstained: its `abstained` field when the runner logged one; otherwise detected from
the text. A text abstains when, after lower-casing, folding curly apostrophes and collapsing
whitespace, it contains one of the patterns (plain phrases matched at word boundaries; the list is
configurable and printed in the report). For MCQ rows each rotation counts: the chosen option's text
(or the raw prediction) is checked, and the item's abstention is the mean over its rotations, as EM is.

Pure functions: no I/O, no printing.
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from typing import Sequence

import numpy as np

from scorer.model import Item, Prediction

DEFAULT_PATTERNS: tuple[str, ...] = (
    "information is unavailable",
    "information is not available",
    "not mentioned",
    "never mentioned",
    "was not discussed",
    "i don't know",
    "i do not know",
    "cannot be determined",
    "can't be determined",
    "cannot determine",
    "can't determine",
    "not enough information",
    "insufficient information",
    "no information",
    "unable to answer",
    "cannot answer",
    "can't answer",
)

_FOLD = str.maketrans({"\u2019": "'", "\u2018": "'", "\u02bc": "'", "\u00a0": " "})


def normalise(text: str) -> str:
    return " ".join(text.translate(_FOLD).lower().split())


def compile_patterns(patterns: Sequence[str] = DEFAULT_PATTERNS) -> re.Pattern[str]:
    """One regex matching any pattern as a phrase (word boundaries at both ends)."""
    phrases = [normalise(p) for p in patterns if p and normalise(p)]
    if not phrases:
        return re.compile(r"(?!x)x")  # matches nothing: the user switched detection off
    return re.compile("|".join(rf"(?<!\w){re.escape(p)}(?!\w)" for p in phrases))


_DEFAULT_RE = compile_patterns()


def is_abstention(text: str | None, patterns: re.Pattern[str] | Sequence[str] = _DEFAULT_RE) -> bool:
    if not text:
        return False
    rx = patterns if isinstance(patterns, re.Pattern) else compile_patterns(patterns)
    return rx.search(normalise(text)) is not None


def prediction_abstention(
    item: Item, p: Prediction, patterns: re.Pattern[str] | Sequence[str] = _DEFAULT_RE
) -> tuple[float, bool]:
    """(abstention in [0, 1], detected from text?) for one row: the logged flag when present, else
    the text rule (MCQ: mean over rotations of the chosen option's or the raw text's verdict)."""
    if p.abstained is not None:
        return float(p.abstained), False
    rx = patterns if isinstance(patterns, re.Pattern) else compile_patterns(patterns)
    if item.mode != "mcq":
        return float(is_abstention(p.pred, rx)), True
    rots = p.rotations
    if not rots:  # legacy MCQ row: one choice against the item's single option set
        return float(_mcq_one(item, 0, p.choice, p.pred, rx)), True
    votes = [_mcq_one(item, r.rotation_idx, r.choice, r.pred, rx) for r in rots]
    return float(np.mean(votes)), True


def _mcq_one(item: Item, rotation: int, choice: str | None, pred: str, rx: re.Pattern[str]) -> bool:
    if choice and 0 <= rotation < len(item.rotations):
        text = item.rotations[rotation].options.get(choice.strip().upper())
        if text is not None:
            return is_abstention(text, rx)
    return is_abstention(pred, rx)


@dataclass(frozen=True)
class Rate:
    value: float | None
    n: int


@dataclass(frozen=True)
class AbstentionRates:
    correct_abstention: Rate  # over unanswerable items
    false_abstention: Rate  # over answerable items
    answerable_score: Rate  # over answerable items with a score
    detected_from_text: int  # rows whose abstention came from the text rule


def abstention_rates(
    abstained: Sequence[float] | np.ndarray,
    answerable: Sequence[bool] | np.ndarray,
    scores: Sequence[float] | np.ndarray,
    detected: Sequence[bool] | np.ndarray | None = None,
) -> AbstentionRates:
    """Rates over aligned per-item arrays; NaN scores (unscored rows) are left out of the score."""
    ab = np.asarray(abstained, dtype=float)
    ans = np.asarray(answerable, dtype=bool)
    sc = np.asarray(scores, dtype=float)
    if not (ab.shape == ans.shape == sc.shape):
        raise ValueError("abstained, answerable and scores must be aligned per item")

    def rate(x: np.ndarray) -> Rate:
        x = x[np.isfinite(x)]
        return Rate(float(x.mean()) if x.size else None, int(x.size))

    n_text = int(np.asarray(detected, dtype=bool).sum()) if detected is not None else 0
    return AbstentionRates(rate(ab[~ans]), rate(ab[ans]), rate(sc[ans]), n_text)
