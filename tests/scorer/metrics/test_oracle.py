"""Human oracle accuracy: hand-computed cases with ties, no-majority items and multi-Y items."""

from __future__ import annotations

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from scorer.metrics.oracle import OracleAnswer, oracle_accuracy

# item, Y labels, correct letter, choices of ann1, ann2, ann3 (None = not answered)
CASE = [
    ("i1", ["Y1"], "A", ("A", "A", "A")),  # unanimous, right
    ("i2", ["Y1"], "B", ("B", "B", "C")),  # 2 of 3 right
    ("i3", ["Y2"], "C", ("A", "B", "C")),  # three-way split: no majority -> wrong, tie
    ("i4", ["Y2"], "D", ("D", None, "A")),  # 1 of 2 who answered: not strict -> wrong, tie
    ("i5", ["Y2", "Y3"], "A", ("A", "A", "B")),  # counts in Y2 and in Y3
    ("i6", ["Y3"], "B", ("C", "C", "B")),  # majority wrong
    ("i7", ["Y1"], "A", (None, None, None)),  # nobody answered: not counted
]


def rows(case=CASE):
    for item, ys, correct, choices in case:
        for ann, choice in zip(("ann1", "ann2", "ann3"), choices):
            yield {"item_id": item, "y": ys, "annotator": ann, "choice": choice, "correct": correct}


def by_y(result):
    return {r.y: r for r in result}


def test_hand_case():
    r = by_y(oracle_accuracy(rows()))
    assert list(r) == ["Y1", "Y2", "Y3", "All"]
    # Y1 (i1, i2): majority right on both -> 1.0. Individuals: ann1 2/2, ann2 2/2, ann3 1/2
    # -> (1 + 1 + 0.5)/3 = 0.8333.
    assert (r["Y1"].majority_accuracy, r["Y1"].ties, r["Y1"].n_items) == (1.0, 0, 2)
    assert r["Y1"].mean_individual_accuracy == pytest.approx(2.5 / 3)
    # Y2 (i3, i4, i5): only i5 has a right majority -> 1/3; i3 and i4 are ties.
    # ann1: i3 ✗ i4 ✓ i5 ✓ = 2/3; ann2: i3 ✗ i5 ✓ = 1/2; ann3: i3 ✓ i4 ✗ i5 ✗ = 1/3 -> mean 0.5.
    assert r["Y2"].majority_accuracy == pytest.approx(1 / 3) and r["Y2"].ties == 2
    assert r["Y2"].mean_individual_accuracy == pytest.approx(0.5)
    assert (r["Y2"].n_items, r["Y2"].n_answers, r["Y2"].majority_correct) == (3, 8, 1)
    # Y3 (i5, i6): i5 right, i6 wrong -> 0.5; each annotator 1 of 2 -> 0.5.
    assert (r["Y3"].majority_accuracy, r["Y3"].mean_individual_accuracy, r["Y3"].n_items) == (0.5, 0.5, 2)
    # All (i1..i6, i5 once): right majorities i1, i2, i5 -> 3/6; ties i3, i4.
    # ann1 4/6, ann2 3/5, ann3 3/6 -> (20 + 18 + 15)/90 = 53/90.
    a = r["All"]
    assert (a.majority_accuracy, a.ties, a.n_items, a.n_annotators, a.n_answers) == (0.5, 2, 6, 3, 17)
    assert a.mean_individual_accuracy == pytest.approx(53 / 90)


def test_two_annotators_split_is_a_tie():
    case = [("q1", "Y1", "A", ("A", "B", None)), ("q2", "Y1", "B", ("B", "B", None))]
    r = by_y(oracle_accuracy(rows(case)))["Y1"]
    # q1: 1 of 2 -> no strict majority, wrong; q2 right -> 0.5. Individuals: ann1 2/2, ann2 1/2.
    assert (r.majority_accuracy, r.ties, r.n_annotators) == (0.5, 1, 2)
    assert r.mean_individual_accuracy == pytest.approx(0.75)


def test_input_forms_and_letter_normalisation():
    answers = [
        OracleAnswer("k1", ("Y2",), "ann1", "b", "B"),
        {"item_id": "k1", "y": "Y2", "annotator": "ann2", "choice": " B ", "correct": "b"},
        ("k1", ["Y2"], "ann3", "C", "B"),
    ]
    r = by_y(oracle_accuracy(answers))
    assert r["Y2"].majority_accuracy == 1.0 and r["Y2"].mean_individual_accuracy == pytest.approx(2 / 3)
    assert r["All"].n_items == 1


def test_inconsistent_input_is_an_error():
    with pytest.raises(ValueError, match="conflicting"):
        oracle_accuracy([("k", "Y1", "a", "A", "A"), ("k", "Y1", "b", "A", "B")])
    with pytest.raises(ValueError, match="twice"):
        oracle_accuracy([("k", "Y1", "a", "A", "A"), ("k", "Y1", "a", "B", "A")])
    with pytest.raises(ValueError, match="no correct letter"):
        oracle_accuracy([("k", "Y1", "a", "A", None)])


def test_nothing_answered():
    (only,) = oracle_accuracy([("k", "Y1", "a", None, "A")])
    assert only.y == "All" and only.n_items == 0 and only.majority_accuracy is None


answers = st.lists(st.sampled_from("ABCD"), min_size=1, max_size=30)


@settings(max_examples=50, deadline=None)
@given(answers, answers)
def test_single_annotator_majority_equals_individual(choices, correct):
    n = min(len(choices), len(correct))
    data = [(f"i{i}", "Y1", "solo", choices[i], correct[i]) for i in range(n)]
    r = by_y(oracle_accuracy(data))["All"]
    assert r.majority_accuracy == pytest.approx(r.mean_individual_accuracy) and r.ties == 0
