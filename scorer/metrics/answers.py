"""Answer scores per prediction (DESIGN.md §5): MCQ EM over rotations, the judge score, BLEU-1 and
the upstream runner's exact / contains / F1, plus position bias for rotation MCQ.

The lexical metrics reproduce the MemEye runner's behaviour (its normalisation is the Mem-Gallery
one): lower-case; articles (a/an/the followed by whitespace and a word character) dropped; every
ASCII punctuation character replaced by a space, except `_` and a `.` between two digits; runs of
whitespace collapsed. BLEU-1 is nltk's `sentence_bleu` with weights (1, 0, 0, 0) and smoothing
method1 on those tokens, written here in closed form (brevity penalty × clipped unigram precision;
nltk returns 0 when no unigram matches, and method1 smoothing never touches p1 otherwise) so that a
million rows score in seconds; `bleu` does the same for any weights (upstream's 4-gram `bleu` and
`bleu_2`) with nltk's own arithmetic; tests check both against nltk itself.

Pure functions: no I/O, no printing.
"""

from __future__ import annotations

import math
import re
import string
from collections import Counter
from collections.abc import Iterable, Mapping, Sequence
from functools import lru_cache
from itertools import chain
from typing import TYPE_CHECKING, Any

import numpy as np

from scorer.metrics.constants import OPTION_LETTERS
from scorer.model import ROTATION_RULES

if TYPE_CHECKING:  # imported where used: `memscope score` reads runs while pandas loads
    import pandas as pd


_ARTICLE = re.compile(r"\b(?:a|an|the)\s+(?=\w)")
_DECIMAL_DOT = re.compile(r"(?<=\d)\.(?=\d)")
# `_` survives (upstream protects it); the decimal dot is protected separately.
_PUNCT_TO_SPACE = str.maketrans({c: " " for c in string.punctuation if c != "_"})
# Stands in for a protected decimal dot: word characters (so `\b` and `\w` see what they would see
# upstream) that cannot occur in the text, which is lower-cased first and has no upper-case ASCII left.
_DOT_PLACEHOLDER = "PROTECTEDDECIMALDOT"


def normalize_answer(text: Any) -> str:
    """The upstream answer normalisation (see the module docstring)."""
    return _normalized(text if text.__class__ is str else str(text))


@lru_cache(maxsize=65536)
def _normalized(text: str) -> str:
    # A benchmark's gold answers recur in every run (and each text is normalised by each metric):
    # each distinct text once.
    s = text.lower()
    s = _DECIMAL_DOT.sub(_DOT_PLACEHOLDER, s)
    s = _ARTICLE.sub(" ", s)
    s = s.translate(_PUNCT_TO_SPACE).replace(_DOT_PLACEHOLDER, ".")
    return " ".join(s.split())


def answer_tokens(text: Any) -> list[str]:
    return normalize_answer(text).split()


def exact_and_contains(pred: Any, gt: Any) -> tuple[bool, bool]:
    """Upstream open-mode `exact_match` (normalised equality, empty never matches) and `contains_gt`
    (the normalised gold is a substring of the normalised prediction; an empty gold never is)."""
    p, g = normalize_answer(pred), normalize_answer(gt)
    return (p == g and p != ""), (g in p if g else False)


@lru_cache(maxsize=1)
def _stemmer():
    from nltk.stem import PorterStemmer  # core dependency; loaded on first use only

    return PorterStemmer()


@lru_cache(maxsize=65536)
def _stem(word: str) -> str:
    return _stemmer().stem(word)


def overlap(a: Sequence[str], b: Sequence[str]) -> int:
    """The size of the multiset intersection of two token lists, sum((Counter(a) & Counter(b)).values()),
    without building either Counter (a fifth of the time on answer-length lists)."""
    if len(b) < len(a):
        a, b = b, a
    left: dict[str, int] = {}
    for w in a:
        left[w] = left.get(w, 0) + 1
    same = 0
    for w in b:
        n = left.get(w)
        if n:
            left[w] = n - 1
            same += 1
    return same


def token_f1(pred: Any, gt: Any) -> float:
    """Upstream token F1: Porter-stemmed normalised tokens, multiset overlap."""
    p = [_stem(w) for w in answer_tokens(pred)]
    g = [_stem(w) for w in answer_tokens(gt)]
    same = overlap(p, g)
    if same == 0:
        return 0.0
    precision, recall = same / len(p), same / len(g)
    return 2 * precision * recall / (precision + recall)


def bleu_1(pred: Any, gt: Any) -> float:
    """BLEU-1 as the upstream runner computes it (0 when either side has no tokens)."""
    hyp, ref = answer_tokens(pred), answer_tokens(gt)
    if not hyp or not ref:
        return 0.0
    matches = overlap(hyp, ref)
    if matches == 0:
        return 0.0
    h, r = len(hyp), len(ref)
    brevity = 1.0 if h > r else math.exp(1 - r / h)
    return brevity * matches / h


def bleu(pred: Any, gt: Any, weights: Sequence[float] = (0.25, 0.25, 0.25, 0.25)) -> float:
    """BLEU as the upstream runner computes it for any weights (its `bleu` is 4-gram, `bleu_2`
    weights (0.5, 0.5, 0, 0)): nltk's sentence_bleu with smoothing method1 on the normalised tokens,
    written out with nltk's own arithmetic. 0 when either side has no tokens or no unigram matches;
    an n-gram order with no match counts 0.1 matches (method1's epsilon) over max(1, its n-grams)."""
    hyp, ref = answer_tokens(pred), answer_tokens(gt)
    if not hyp or not ref:
        return 0.0
    logs = []
    for n, w in enumerate(weights, start=1):
        h = Counter(zip(*(hyp[i:] for i in range(n)))) if len(hyp) >= n else Counter()
        r = Counter(zip(*(ref[i:] for i in range(n)))) if len(ref) >= n else Counter()
        matches = sum((h & r).values())
        if n == 1 and matches == 0:
            return 0.0
        total = max(1, sum(h.values()))
        logs.append(w * math.log(matches / total if matches else 0.1 / total))
    brevity = 1.0 if len(hyp) > len(ref) else math.exp(1 - len(ref) / len(hyp))
    return brevity * math.exp(math.fsum(logs))


# ---------------------------------------------------------------------------------------------
# The judge


def coerce_judge(score: Any, levels: int = 3) -> float | None:
    """A judge score on our scale. levels=5: as recorded (any number). levels=3: the upstream
    runner's coercion to {0, 0.5, 1}: below 0.25 → 0, below 0.75 → 0.5, otherwise 1 (so 0.25 →
    0.5 and 0.75 → 1). A missing or non-numeric score is None."""
    if levels not in (3, 5):
        raise ValueError(f"judge levels must be 3 or 5, got {levels!r}")
    if score is None or isinstance(score, bool):
        return None
    try:
        s = float(score)
    except (TypeError, ValueError):
        return None
    if s != s:
        return None
    if levels == 5:
        return s
    return 0.0 if s < 0.25 else 0.5 if s < 0.75 else 1.0


def coerce_judge_array(scores: Sequence[float] | np.ndarray, levels: int = 3) -> np.ndarray:
    """`coerce_judge` over an array; NaN stays NaN."""
    if levels not in (3, 5):
        raise ValueError(f"judge levels must be 3 or 5, got {levels!r}")
    x = np.asarray(scores, dtype=float)
    if levels == 5:
        return x.copy()
    out = np.where(x < 0.25, 0.0, np.where(x < 0.75, 0.5, 1.0))
    return np.where(np.isnan(x), np.nan, out)


# ---------------------------------------------------------------------------------------------
# MCQ


_LETTER = {**{c: c for c in OPTION_LETTERS}, **{c.lower(): c for c in OPTION_LETTERS}}  # the common case, one lookup


def letter(choice: Any) -> str | None:
    """A chosen option letter, or None for a missing / invalid extraction."""
    if choice.__class__ is str:
        hit = _LETTER.get(choice)
        if hit is not None:
            return hit
    if not isinstance(choice, str):
        return None
    c = choice.strip().upper()
    return c if len(c) == 1 and c in OPTION_LETTERS else None


def rotation_em(choices: Sequence[Any], answers: Sequence[Any], logged: int | None = None) -> float | None:
    """Mean over the item's rotations of [chosen letter == that rotation's answer]. A rotation with
    no recorded choice, or an invalid one, scores 0; the denominator is the item's rotation count
    (`answers`), as upstream divides by the number of rotations (the paper's definition). With
    `logged` (how many rotations the row logged, 0 < logged < the item's count) the denominator is
    that instead: EM over the logged rotations only (`--rotations logged`, a documented deviation).
    None when the item has none."""
    if not answers:
        return None
    right = 0
    for i, ans in enumerate(answers):
        c = letter(choices[i]) if i < len(choices) else None
        right += c is not None and c == letter(ans)
    denominator = logged if logged is not None and 0 < logged < len(answers) else len(answers)
    return right / denominator


def partial_rotations(logged: np.ndarray, item_rotations: np.ndarray) -> np.ndarray:
    """Rows that logged some but not all of their item's rotations (the upstream runner's rotation
    loop can stop after the first): their EM over the item's rotations is capped at logged / n."""
    logged, item_rotations = np.asarray(logged), np.asarray(item_rotations)
    return (logged > 0) & (logged < item_rotations)


def legacy_em(choice: Any, answer: Any) -> float:
    """Single-options MCQ: 1 when the extracted letter is the answer letter, else 0."""
    c = letter(choice)
    return float(c is not None and c == letter(answer))


def mcq_em(choices: Sequence[Any] | None, answers: Sequence[Any] | None, recorded: float | None = None) -> float | None:
    """EM of one MCQ prediction: from its per-rotation choices when it has them (a legacy item has
    one "rotation"); otherwise the recorded `em` (a row that logged only its score)."""
    if choices is not None and len(choices) and answers:
        return rotation_em(choices, answers)
    return recorded


_CODE = {lt: i for i, lt in enumerate(OPTION_LETTERS)}
_CODE_KEYS = {**_CODE, **{lt.lower(): i for lt, i in _CODE.items()}}
NO_LETTER = len(OPTION_LETTERS)  # the code of a missing / invalid choice


def _letter_codes(values: Iterable[Any], n: int) -> np.ndarray:
    """Letter codes (A = 0 …) of many values; NO_LETTER where there is no letter. Where every value
    is a string or missing, the values are factorized (in C) and each distinct string looked up
    once; otherwise the usual single letters are looked up by pandas' map, anything else goes
    through `letter`. The same codes either way."""
    import pandas as pd

    values = np.fromiter(values, dtype=object, count=n)
    try:
        seen, distinct = pd.factorize(values)  # −1: missing (None, NaN)
    except TypeError:  # an unhashable value (a list where a letter should be)
        distinct = None
    if distinct is not None and all(type(v) is str for v in distinct):
        # each distinct string's code, as below, looked up once; a missing value has none
        lookup = np.array([_CODE_KEYS.get(v, _CODE.get(letter(v), np.nan)) for v in distinct] + [np.nan], dtype=float)
        return np.where(np.isnan(lookup), NO_LETTER, lookup)[seen].astype(np.int64)
    raw = pd.Series(values, dtype=object)
    try:
        codes = np.array(raw.map(pd.Series(_CODE_KEYS, dtype=float)), dtype=float)  # a writable copy
    except TypeError:
        codes = np.full(n, np.nan)
    odd = np.isnan(codes) & raw.notna().to_numpy()
    if odd.any():
        codes[odd] = [_CODE.get(letter(v), np.nan) for v in raw[odd]]
    return np.where(np.isnan(codes), NO_LETTER, codes).astype(np.int64)


def position_bias(
    keys: Sequence[tuple], choices: Sequence[Sequence[Any] | None], answers: Sequence[Sequence[Any] | None]
) -> list[dict]:
    """How often each letter is chosen, per key (e.g. (backbone, method)), over every rotation of
    every MCQ prediction; with the EM of the rotations whose correct answer sat at that letter
    (upstream's per-position accuracy). A missing/invalid choice is counted as letter "invalid".

    Rows: {key, letter, chosen, share, n (rotations), answer_here, em_when_answer_here}."""
    codes: dict[Any, int] = {}
    row_code = [codes.setdefault(k, len(codes)) if cs else -1 for k, cs in zip(keys, choices)]
    lens = np.fromiter((len(cs) if cs else 0 for cs in choices), dtype=np.int64, count=len(row_code))
    total = int(lens.sum())
    if not total:
        return []
    rows_k = np.repeat(np.asarray(row_code, dtype=np.int64), lens)
    chosen = _letter_codes(chain.from_iterable(cs for cs in choices if cs), total)
    answer = _letter_codes(chain.from_iterable(
        ans if ans is not None and len(ans) == len(cs) else
        (tuple(ans or ())[:len(cs)] + (None,) * max(0, len(cs) - len(ans or ())))
        for cs, ans in zip(choices, answers) if cs), total)
    width = NO_LETTER + 1
    k = len(codes)
    picked = np.bincount(rows_k * width + chosen, minlength=k * width).reshape(k, width)
    has = answer < NO_LETTER
    here = np.bincount(rows_k[has] * width + answer[has], minlength=k * width).reshape(k, width)
    right = has & (chosen == answer)
    right_here = np.bincount(rows_k[right] * width + answer[right], minlength=k * width).reshape(k, width)
    n_rot = picked.sum(axis=1)
    names = [*OPTION_LETTERS, "invalid"]
    out = []
    for key, c in sorted(codes.items(), key=lambda kv: tuple(map(str, kv[0])) if isinstance(kv[0], tuple) else (str(kv[0]),)):
        for j in np.flatnonzero((picked[c] > 0) | (here[c] > 0)):
            h = int(here[c, j])
            out.append({"key": key, "letter": names[j], "chosen": int(picked[c, j]), "share": int(picked[c, j]) / int(n_rot[c]),
                        "n": int(n_rot[c]), "answer_here": h, "em_when_answer_here": int(right_here[c, j]) / h if h else None})
    return out


# ---------------------------------------------------------------------------------------------
# A whole predictions frame


def score_frame(
    frame: pd.DataFrame,
    rotation_answers: Mapping[str, Sequence[str]] | pd.Series,
    judge_levels: int = 5,
    compute_missing_bleu: bool = True,
    rotations: str = "item",
) -> tuple[pd.DataFrame, dict[str, int]]:
    """The frame with its answer-score columns set from the definitions above.

    `frame` has scorer.load.frame.predictions_frame's columns plus `choices` (per-rotation choices, or a
    one-element tuple for a legacy MCQ row, None when the row logged none). `rotation_answers` maps
    item_id → the MCQ item's answer letter per rotation. `rotations` is one of ROTATION_RULES; with
    "logged", a row that logged fewer rotations than its item has (column `rotations_logged`) is
    scored over those. The recorded scores are kept as `em_recorded` / `judge_recorded` /
    `bleu_1_recorded`, and `rotations_item` holds each MCQ row's item rotation count; returns
    (frame, counts) where counts says how many MCQ rows were recomputed, how many disagree with their
    recorded em, how many logged a partial set of rotations, and how many BLEU values were computed
    because the row had none (only for rows with prediction text)."""
    if rotations not in ROTATION_RULES:
        raise ValueError(f"rotations must be one of {ROTATION_RULES}, got {rotations!r}")
    out = frame.copy()
    import pandas as pd

    counts = {"em_recomputed": 0, "em_recorded_differs": 0, "em_from_record": 0, "bleu_1_computed": 0,
              "partial_rotations": 0}
    out["rotations_item"] = 0
    for col in ("em", "judge", "bleu_1"):
        out[f"{col}_recorded"] = out[col]
    is_mcq = (out["mode"] == "mcq").to_numpy()
    if is_mcq.any():
        answers = out.loc[is_mcq, "item_id"].map(rotation_answers)
        choices = out.loc[is_mcq, "choices"] if "choices" in out else pd.Series([None] * int(is_mcq.sum()))
        recorded = out.loc[is_mcq, "em"].to_numpy()
        n_item = np.fromiter((len(a) if isinstance(a, (tuple, list)) else 0 for a in answers.tolist()),
                             dtype=np.int64, count=len(recorded))
        n_logged = (out.loc[is_mcq, "rotations_logged"].to_numpy(np.int64) if "rotations_logged" in out
                    else np.zeros(len(recorded), dtype=np.int64))
        partial = partial_rotations(n_logged, n_item)
        counts["partial_rotations"] = int(partial.sum())
        out.loc[is_mcq, "rotations_item"] = n_item
        logged = rotations == "logged"
        ems = np.empty(len(recorded))
        from_choices = np.zeros(len(recorded), dtype=bool)
        # The lean reader shares one tuple per distinct set of choices within a part it reads, and an
        # item's answers are one tuple: rows are looked up by those objects' ids first (the lists
        # keep them alive for the whole loop), then by value, so equal choices against equal
        # answers (other parts, other items) are scored once — a few hundred calls at MemEye scale.
        memo: dict[tuple[int, int], float | None] = {}
        by_value: dict[tuple, float | None] = {}
        for i, (cs, ans, rec) in enumerate(zip(choices.tolist(), answers.tolist(), recorded)):
            if cs is not None and len(cs) and isinstance(ans, (tuple, list)) and ans:
                n = int(n_logged[i]) if logged and partial[i] else None
                key = (id(cs), id(ans), n)
                em = memo.get(key, memo)
                if em is memo:
                    value_key = (cs, ans, n)  # equal choices against equal answers (another part, item): once
                    try:
                        em = by_value[value_key]
                    except KeyError:
                        em = by_value[value_key] = rotation_em(cs, ans, n)
                    except TypeError:  # a choice that cannot be hashed (logged as a list)
                        em = rotation_em(cs, ans, n)
                    memo[key] = em
                ems[i] = em
                from_choices[i] = True
            else:
                ems[i] = rec
        differs = from_choices & ~np.isnan(recorded) & (np.abs(ems - recorded) > 1e-9)
        counts["em_recomputed"] = int(from_choices.sum())
        counts["em_recorded_differs"] = int(differs.sum())
        counts["em_from_record"] = int((~from_choices & ~np.isnan(recorded)).sum())
        out.loc[is_mcq, "em"] = ems
    is_open = ~is_mcq
    out.loc[is_mcq, "judge"] = np.nan
    out.loc[is_mcq, "bleu_1"] = np.nan
    if is_open.any():
        out.loc[is_open, "em"] = np.nan  # an open row's `em` is upstream's exact match, not the MCQ metric
        out.loc[is_open, "judge"] = coerce_judge_array(out.loc[is_open, "judge"].to_numpy(dtype=float), judge_levels)
        if compute_missing_bleu:
            # Only rows with an answer: a retrieval-only run (no prediction text) has nothing to score.
            need = is_open & out["bleu_1"].isna().to_numpy()
            if need.any():
                need[need] = [isinstance(p, str) and bool(p.strip()) for p in out.loc[need, "pred"]]
            if need.any():
                sub = out.loc[need, ["pred", "gt"]]
                out.loc[need, "bleu_1"] = [bleu_1(p, g) for p, g in zip(sub["pred"], sub["gt"])]
                counts["bleu_1_computed"] = int(need.sum())
    return out, counts
