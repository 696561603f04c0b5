"""Abstention detection and rates on hand-built rows."""

from __future__ import annotations

import numpy as np
import pytest

from scorer.metrics.abstention import (DEFAULT_PATTERNS, abstention_rates, compile_patterns, is_abstention,
                                       prediction_abstention)
from scorer.model import Rotation
from tests.builders import model as E


@pytest.mark.parametrize("text", [
    "The information is unavailable.",
    "That was NOT MENTIONED in our conversation.",
    "I don\u2019t know.",  # curly apostrophe
    "I  don't\nknow which one.",  # odd whitespace
    "It cannot be determined from what you told me.",
    "Sorry, there is not enough information to say.",
    "I do not know.",
])
def test_abstention_variants_detected(text):
    assert is_abstention(text)


@pytest.mark.parametrize("text", [
    "The green one, which you mentioned in March.",
    "I don't knowingly remember a cat called Kit.",  # word boundary: "know" + "ingly"
    "Brass",
    "",
    None,
])
def test_answers_are_not_abstentions(text):
    assert not is_abstention(text)


def test_patterns_are_configurable():
    rx = compile_patterns(["no idea"])
    assert is_abstention("No idea, honestly.", rx) and not is_abstention("I don't know.", rx)
    assert not is_abstention("I don't know", compile_patterns([]))  # detection switched off
    assert "information is unavailable" in DEFAULT_PATTERNS and "i don't know" in DEFAULT_PATTERNS


def test_logged_flag_wins_over_text():
    it = E.item(1, ["Y1"], ["D1:1"], answerable=False)
    assert prediction_abstention(it, E.pred(it, pred="I don't know", abstained=False)) == (0.0, False)
    assert prediction_abstention(it, E.pred(it, pred="Kit", abstained=True)) == (1.0, False)
    assert prediction_abstention(it, E.pred(it, pred="I don't know")) == (1.0, True)


def test_mcq_rotations_read_the_chosen_option():
    # Four rotations, "Not mentioned" at A, B, C, D in turn. The run picks the abstention option in
    # rotations 0, 1, 2 and "Tom" in rotation 3 → abstention 3/4 = 0.75.
    opts = ["Not mentioned", "Tom", "Kit", "Mog"]
    rots = []
    for r in range(4):
        order = opts[1:]
        order.insert(r, opts[0])
        rots.append(Rotation(dict(zip("ABCD", order)), "ABCD"[r]))
    it = E.item(2, ["Y1"], [], mode="mcq", answerable=False, rotations=rots)
    # rotation 3: options A=Tom, B=Kit, C=Mog, D=Not mentioned; the run chose A (Tom)
    log = [{"rotation_idx": 0, "choice": "A", "pred": "A"}, {"rotation_idx": 1, "choice": "B", "pred": "B"},
           {"rotation_idx": 2, "choice": "C", "pred": "C"}, {"rotation_idx": 3, "choice": "A", "pred": "A"}]
    assert prediction_abstention(it, E.pred(it, rotations=log, pred="A")) == (0.75, True)
    # an unextractable rotation falls back to its raw text
    log[3] = {"rotation_idx": 3, "choice": None, "pred": "I cannot answer that."}
    assert prediction_abstention(it, E.pred(it, rotations=log))[0] == 1.0


def test_legacy_mcq_choice():
    it = E.item(3, ["Y1"], [], mode="mcq", answerable=False,
                rotations=[Rotation({"A": "Tom", "B": "Not mentioned", "C": "Kit", "D": "Mog"}, "B")])
    assert prediction_abstention(it, E.pred(it, pred="B", choice="B")) == (1.0, True)
    assert prediction_abstention(it, E.pred(it, pred="A", choice="A")) == (0.0, True)


def test_rates_by_hand():
    # items: two unanswerable (abstained 1, 0), three answerable (abstained 1, 0.5, 0; scores 0, .5, 1)
    # correct abstention = (1 + 0)/2 = 0.5 (n 2); false abstention = (1 + .5 + 0)/3 = 0.5 (n 3);
    # answerable score = (0 + .5 + 1)/3 = 0.5 (n 3) — the unanswerable items' scores (1, 1) are ignored.
    r = abstention_rates([1, 0, 1, 0.5, 0], [False, False, True, True, True], [1, 1, 0, 0.5, 1],
                         detected=[True, False, False, True, True])
    assert (r.correct_abstention.value, r.correct_abstention.n) == (0.5, 2)
    assert (r.false_abstention.value, r.false_abstention.n) == (0.5, 3)
    assert (r.answerable_score.value, r.answerable_score.n) == (0.5, 3)
    assert r.detected_from_text == 3


def test_rates_without_unanswerable_items_and_unscored_rows():
    r = abstention_rates([0, 1], [True, True], [np.nan, 1.0])
    assert r.correct_abstention.value is None and r.correct_abstention.n == 0
    assert r.answerable_score.value == 1.0 and r.answerable_score.n == 1  # the unscored row is left out
    with pytest.raises(ValueError):
        abstention_rates([0], [True, False], [1, 1])


# ------------------------------------------------------------------------------------ the section


def test_section_by_hand():
    from scorer.sections import abstention as section

    # open items: U1, U2 unanswerable; A1, A2 answerable.
    u1 = E.item(1, ["Y1"], [], answerable=False)
    u2 = E.item(2, ["Y1"], [], answerable=False)
    a1 = E.item(3, ["Y1"], ["D1:1"])
    a2 = E.item(4, ["Y2"], ["D1:1", "D2:2"])
    run = E.run("semantic_rag__multimodal", [
        E.pred(u1, pred="The information is unavailable.", judge=1.0),  # text → abstained
        E.pred(u2, pred="Kit", judge=0.0, abstained=False),  # logged flag
        E.pred(a1, pred="I don't know", judge=0.0),  # false abstention (text)
        E.pred(a2, pred="Green", judge=0.75)])
    res = section.build(E.context([u1, u2, a1, a2], [run]))
    got = {r["metric"]: (r["value"], r["n"]) for r in res.data}
    # correct = (1 + 0)/2 = 0.5 (n 2); false = (1 + 0)/2 = 0.5 (n 2); score on answerable = (0 + .75)/2
    assert got == {"correct_abstention": (0.5, 2), "false_abstention": (0.5, 2), "answerable_score": (0.375, 2)}
    assert res.data[0]["n_text"] == 3
    patterns = next(t for t in res.tables if t.name == "abstention_patterns")
    assert {"Pattern": "information is unavailable"} in patterns.rows
    # a custom list replaces the defaults: "I don't know" no longer counts
    res2 = section.build(E.context([u1, u2, a1, a2], [run], extra={"abstain_patterns": ["information is unavailable"]}))
    assert {r["metric"]: r["value"] for r in res2.data}["false_abstention"] == 0.0


def test_section_absent_without_controls():
    from scorer.sections import abstention as section

    a1 = E.item(3, ["Y1"], ["D1:1"])
    res = section.build(E.context([a1], [E.run("m", [E.pred(a1, pred="x", judge=1.0)])]))
    assert res.reason is not None
