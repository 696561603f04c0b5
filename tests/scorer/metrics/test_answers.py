"""Answer scores: normalisation, exact/contains/F1, BLEU-1 (against nltk), the judge coercion, MCQ EM
over rotations, position bias and scoring a whole predictions frame."""

from __future__ import annotations

import math

import numpy as np
import pandas as pd
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from nltk.translate.bleu_score import SmoothingFunction, sentence_bleu

from scorer.metrics.answers import (
    answer_tokens,
    bleu_1,
    coerce_judge,
    coerce_judge_array,
    exact_and_contains,
    legacy_em,
    mcq_em,
    normalize_answer,
    position_bias,
    rotation_em,
    score_frame,
    token_f1,
)
from scorer.model.rows import choices_of_row


@pytest.mark.parametrize("text, expected", [
    ("The Cat's 3.5 kg_bag!", "cat s 3.5 kg_bag"),
    ("An apple, an orange and the pear.", "apple orange and pear"),
    ("This is a", "this is a"),  # an article with no following word stays
    ("Version 1.2.3 at 10:30", "version 1.2.3 at 10 30"),
    ("e.g. the end.", "e g end"),
    ("  Multiple\tspaces\n here ", "multiple spaces here"),
    ("thE  Answer", "answer"),
    ("Pi is 3.14.", "pi is 3.14"),
    ("a_b the_c", "a_b the_c"),  # underscores are word characters: no article there
    ("", ""),
])
def test_normalize_answer(text, expected):
    assert normalize_answer(text) == expected


def test_exact_and_contains():
    assert exact_and_contains("The answer: Blue!", "blue") == (False, True)
    assert exact_and_contains("Blue.", "the blue") == (True, True)
    assert exact_and_contains("", "") == (False, False)
    assert exact_and_contains("Blue", "") == (False, False)
    assert exact_and_contains("navy blue", "blue navy") == (False, False)


def test_token_f1_with_stemming():
    assert token_f1("running dogs", "the dog runs") == 1.0
    assert token_f1("red car", "red bus") == pytest.approx(0.5)
    assert token_f1("red red car", "red") == pytest.approx(2 * (1 / 3) * 1 / (1 / 3 + 1))
    assert token_f1("", "red") == 0.0


def test_bleu_1_hand_computed():
    # "cat sat on mat" vs "cat is on mat": 3 of 4 unigrams match, equal lengths → BP 1.
    assert bleu_1("The cat sat on the mat", "the cat is on the mat") == pytest.approx(0.75)
    # One matching token against a four-token reference: precision 1, BP = exp(1 − 4/1).
    assert bleu_1("cat", "cat sat on mat") == pytest.approx(math.exp(-3))
    # Clipping: "the" is an article and goes; "cat cat cat" vs "cat" → 1/3, longer than the ref → BP 1.
    assert bleu_1("cat cat cat", "the cat") == pytest.approx(1 / 3)
    assert bleu_1("dog", "cat") == 0.0
    assert bleu_1("", "cat") == 0.0 and bleu_1("cat", "") == 0.0


def _nltk_bleu_1(pred: str, gt: str) -> float:
    hyp, ref = answer_tokens(pred), answer_tokens(gt)
    if not hyp or not ref:
        return 0.0
    return sentence_bleu([ref], hyp, weights=(1, 0, 0, 0), smoothing_function=SmoothingFunction().method1)


WORDS = st.sampled_from(["the", "a", "cat", "dog", "red", "blue", "3.5", "mat,", "on", "Cat!", "sat", "an", "x_y"])


@settings(max_examples=150, deadline=None)
@given(st.lists(WORDS, max_size=9).map(" ".join), st.lists(WORDS, max_size=9).map(" ".join))
def test_bleu_1_equals_nltk_sentence_bleu(pred, gt):
    assert bleu_1(pred, gt) == pytest.approx(_nltk_bleu_1(pred, gt), abs=1e-12)


@pytest.mark.parametrize("score, expected", [
    (0, 0.0), (0.2499, 0.0), (0.25, 0.5), (0.5, 0.5), (0.7499, 0.5), (0.75, 1.0), (1, 1.0), ("0.8", 1.0),
    (None, None), ("bad", None), (float("nan"), None), (True, None),
])
def test_coerce_judge_three_levels(score, expected):
    assert coerce_judge(score, 3) == expected


def test_coerce_judge_five_levels_and_arrays():
    assert coerce_judge(0.25, 5) == 0.25 and coerce_judge(0.75, 5) == 0.75
    with pytest.raises(ValueError):
        coerce_judge(0.5, 4)
    out = coerce_judge_array([0.0, 0.25, 0.5, 0.75, 1.0, np.nan], 3)
    np.testing.assert_array_equal(out[:5], [0.0, 0.5, 0.5, 1.0, 1.0])
    assert np.isnan(out[5])
    np.testing.assert_array_equal(coerce_judge_array([0.25, 0.75], 5), [0.25, 0.75])


def test_rotation_em():
    assert rotation_em(("A", "B", "INVALID", None), ("A", "C", "C", "D")) == 0.25
    assert rotation_em((" b ", "c", "D", "a"), ("B", "C", "D", "A")) == 1.0
    # A rotation with no logged choice scores 0; the denominator is the item's rotation count.
    assert rotation_em(("A",), ("A", "B", "C", "D")) == 0.25
    assert rotation_em(("AB", "B"), ("A", "B")) == 0.5  # "AB" is not one letter: invalid
    assert rotation_em((), ()) is None
    assert legacy_em("b", "B") == 1.0 and legacy_em("INVALID", "B") == 0.0 and legacy_em(None, "B") == 0.0
    assert mcq_em(None, ("A",), recorded=0.75) == 0.75
    assert mcq_em(("A",), ("A",), recorded=0.0) == 1.0


def test_choices_of_row():
    rots = [{"rotation_idx": 1, "choice": "B"}, {"rotation_idx": 0, "choice": "A"}, {"rotation_idx": 3, "choice": None}]
    assert choices_of_row({"rotations": rots}, "mcq") == ("A", "B", None, None)
    assert choices_of_row({"rotations": [{"choice": "C"}, {"choice": "D"}]}, "mcq") == ("C", "D")
    assert choices_of_row({"choice": "B"}, "mcq") == ("B",)
    assert choices_of_row({"choice": "B"}, "open") is None
    assert choices_of_row({}, "mcq") is None


def test_position_bias_hand_computed():
    rows = position_bias(
        [("b", "m"), ("b", "m"), ("b", "n")],
        [("A", "B", None, "D"), ("A", "A", "C", "D"), ("B",)],
        [("A", "B", "C", "D"), ("B", "C", "D", "A"), ("B",)],
    )
    m = {r["letter"]: r for r in rows if r["key"] == ("b", "m")}
    assert m["A"]["chosen"] == 3 and m["A"]["share"] == 3 / 8 and m["A"]["n"] == 8
    assert m["invalid"]["chosen"] == 1
    # Answer at A twice (item 1 rot 0: right; item 2 rot 3: chose D) → 0.5.
    assert m["A"]["answer_here"] == 2 and m["A"]["em_when_answer_here"] == 0.5
    assert m["C"]["em_when_answer_here"] == 0.0
    assert sum(r["chosen"] for r in m.values()) == 8
    n = [r for r in rows if r["key"] == ("b", "n")]
    assert n == [{"key": ("b", "n"), "letter": "B", "chosen": 1, "share": 1.0, "n": 1, "answer_here": 1,
                  "em_when_answer_here": 1.0}]


def test_position_bias_reads_odd_choices_like_letter_does():
    rows = position_bias([("b", "m")] * 2, [(" b ", "INVALID", ["A"], "d"), ("c",)], [("A", "B", "C", "D"), None])
    got = {r["letter"]: (r["chosen"], r["answer_here"]) for r in rows}
    # " b " → B; INVALID and a list → invalid; "d" → D; an item without answers adds choices only.
    assert got == {"A": (0, 1), "B": (1, 1), "C": (1, 1), "D": (1, 1), "invalid": (2, 0)}
    assert [r["em_when_answer_here"] for r in rows if r["letter"] == "D"] == [1.0]


def test_score_frame_recomputes_em_coerces_judge_and_fills_bleu():
    frame = pd.DataFrame({
        "mode": ["mcq", "mcq", "mcq", "open", "open"],
        "item_id": ["T:1", "T:2", "T:3", "T:1", "T:2"],
        "em": [1.0, 0.5, 0.25, 1.0, 0.0],  # T:1 records 1.0 but its choices give 0.5
        "judge": [np.nan, np.nan, np.nan, 0.25, 0.75],
        "bleu_1": [np.nan, np.nan, np.nan, 0.4, np.nan],
        "pred": ["", "", "", "x", "The cat sat on the mat"],
        "gt": ["", "", "", "y", "the cat is on the mat"],
        "choices": [("A", "C", "C", "D"), ("B",), None, None, None],
    })
    answers = {"T:1": ("A", "B", "C", "D"), "T:2": ("B",), "T:3": ("A", "B", "C", "D")}
    out, counts = score_frame(frame, answers, judge_levels=3)
    assert list(out["em"][:3]) == [0.75, 1.0, 0.25]  # T:3 logged no choices: its recorded em stands
    assert counts == {"em_recomputed": 2, "em_recorded_differs": 2, "em_from_record": 1, "bleu_1_computed": 1,
                      "partial_rotations": 0}
    assert out["em"][3:].isna().all()
    assert list(out["judge"][3:]) == [0.5, 1.0]
    assert out["bleu_1"][3] == 0.4 and out["bleu_1"][4] == pytest.approx(0.75)
    assert list(out["em_recorded"]) == [1.0, 0.5, 0.25, 1.0, 0.0]
    # A row without prediction text (a retrieval-only run) gets no BLEU-1.
    empty, c2 = score_frame(frame.assign(pred=["", "", "", "x", "  "]), answers, judge_levels=3)
    assert np.isnan(empty["bleu_1"][4]) and c2["bleu_1_computed"] == 0
    five, _ = score_frame(frame, answers, judge_levels=5)
    assert list(five["judge"][3:]) == [0.25, 0.75]


def test_score_frame_scores_equal_choices_once_and_each_row_as_rotation_em_does(monkeypatch):
    """Rows whose choices and item answers are equal (other tuples, other items, other folders)
    are scored once (rotation_em is called per distinct value, not per row); every row's EM is
    still rotation_em of its own choices, with `--rotations logged` too; a choice that cannot be
    hashed (a list) is scored without the shared value."""
    from scorer.metrics import answers as module

    calls = []
    real = module.rotation_em

    def counted(*args):
        calls.append(args)
        return real(*args)

    monkeypatch.setattr(module, "rotation_em", counted)
    choices = [tuple("ACCD"), tuple("ACCD"), tuple("ACCD"), ("A", ["B"], "C", "D"), tuple("BBCD"), ("A",)]
    items = ["T:1", "T:2", "T:3", "T:1", "T:2", "T:3"]
    answers = {"T:1": tuple("ABCD"), "T:2": tuple("ABCD"), "T:3": tuple("ABCD")}
    frame = pd.DataFrame({"mode": ["mcq"] * 6, "item_id": items, "em": [np.nan] * 6, "judge": [np.nan] * 6,
                          "bleu_1": [np.nan] * 6, "pred": [""] * 6, "gt": [""] * 6,
                          "choices": [tuple(c) for c in choices], "rotations_logged": [4, 4, 4, 4, 4, 1]})
    for rule in ("item", "logged"):
        calls.clear()
        out, _ = score_frame(frame, answers, rotations=rule)
        want = [real(c, answers[i], 1 if rule == "logged" and k == 5 else None)
                for k, (c, i) in enumerate(zip(choices, items))]
        assert list(out["em"]) == want
        assert len(calls) == 4  # ACCD once for three rows; the list; BBCD; the partial row


def test_letter_codes_of_strings_equal_letter_per_value():
    """_letter_codes factorizes string choices and looks each distinct one up once (issue 19): the
    codes equal `letter` value by value (odd spellings, invalid strings, missing values), and
    equal the per-value path where a value is not a string."""
    from scorer.metrics.answers import _CODE, NO_LETTER, _letter_codes, letter

    values = ["A", "b", " c ", "(D)", "INVALID", "", None, np.nan, "A", "e", "Answer: B", "a"] * 3
    want = [NO_LETTER if v is None or v != v else _CODE.get(letter(v), NO_LETTER) for v in values]
    assert _letter_codes(iter(values), len(values)).tolist() == want
    mixed = [*values, 3, ["A"]]  # a number and a list: the per-value path
    assert _letter_codes(iter(mixed), len(mixed)).tolist() == [*want, _CODE.get(letter(3), NO_LETTER), NO_LETTER]
