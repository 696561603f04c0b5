"""Validation gates on hand-built MCQ items and ablation runs.

Items (MCQ, four rotations each; the gold is at A, B, C, D in turn):
  T:1  X1/Y1 clue D1:1             — question-only solves every rotation on both backbones → shortcut
  T:2  X3/Y2 clues D1:1, D2:2      — clean: shortcut gates fail, oracle solves
  T:3  X4/Y3 clue D2:2 only        — oracle fails (EM ≤ 0.25) on both backbones; and Y3 with one clue
  T:4  X3/Y1 clue D3:1             — question-only solves every rotation on bb1 only → not flagged
                                     under panel="all", flagged under panel="any"
"""

from __future__ import annotations

import pytest

from scorer.metrics.gates import (gate_observations, gate_of, gate_outcomes, gate_patterns, items_to_revisit,
                                  pass_rates_by_cell, rotation_em, structure_findings)
from scorer.model import Rotation
from tests.builders import model as E

ROTS = tuple(Rotation({"A": "o", "B": "o", "C": "o", "D": "o"}, "ABCD"[r]) for r in range(4))
ITEMS = [
    E.item(1, ["Y1"], ["D1:1"], ["D1"], x=["X1"], mode="mcq", rotations=ROTS),
    E.item(2, ["Y2"], ["D1:1", "D2:2"], ["D1", "D2"], x=["X3"], mode="mcq", rotations=ROTS),
    E.item(3, ["Y3"], ["D2:2"], ["D2"], x=["X4"], mode="mcq", rotations=ROTS),
    E.item(4, ["Y1"], ["D3:1"], ["D3"], x=["X3"], mode="mcq", rotations=ROTS),
]
BENCH = E.bench(ITEMS)


def rows(it, right: int):
    """A row whose first `right` rotations are correct (choice = gold letter), the rest pick a wrong one."""
    rot = [{"rotation_idx": r, "correct_position": "ABCD"[r], "choice": "ABCD"[r] if r < right else "ABCD"[r - 1],
            "em": 1.0 if r < right else 0.0} for r in range(4)]
    return E.pred(it, rotations=rot, em=right / 4)


def mk(method, rights, backbone):
    return E.run(method, [rows(it, k) for it, k in zip(ITEMS, rights)], backbone=backbone, mode="mcq")


RUNS = [
    mk("question_only", [4, 1, 0, 4], "bb1"), mk("question_only", [4, 2, 1, 3], "bb2"),
    mk("clue_only_context__multimodal", [4, 4, 1, 4], "bb1"), mk("clue_only_context__multimodal", [4, 3, 0, 4], "bb2"),
    mk("semantic_rag__multimodal", [0, 0, 0, 0], "bb1"),  # not a gate run: ignored
]


def test_method_recognition_and_config():
    pats = gate_patterns()
    assert gate_of("question_only", pats) == "question_only"
    assert gate_of("clue_only_context__multimodal", pats) == "oracle"
    assert gate_of("clue_only_context__text_only", pats) is None  # dense captions: not a gate here
    assert gate_of("minimal_caption_clue", pats) == "caption_only"
    assert gate_of("no_visual_clue__text_only", pats) == "no_visual"
    assert gate_of("semantic_rag__multimodal", pats) is None
    custom = gate_patterns({"oracle": ["my_oracle"], "no_visual": "re:^bare"})
    assert gate_of("my_oracle", custom) == "oracle" and gate_of("clue_only_context__multimodal", custom) is None
    assert gate_of("bare_text", custom) == "no_visual"
    with pytest.raises(ValueError):
        gate_patterns({"nope": ["x"]})


def test_rotation_em():
    assert rotation_em(rows(ITEMS[0], 3)) == (0.75, 4)
    # a rotation without `em` is scored by its choice
    p = E.pred(ITEMS[0], rotations=[{"rotation_idx": 0, "correct_position": "A", "choice": "a"},
                                    {"rotation_idx": 1, "correct_position": "B", "choice": None}])
    assert rotation_em(p) == (0.5, 2)
    assert rotation_em(E.pred(ITEMS[0], em=1.0)) == (1.0, 1)


def test_outcomes_by_hand():
    obs = gate_observations(BENCH, RUNS)
    assert len(obs) == 16  # 4 items × 2 gates × 2 backbones
    out = {(o.item_id, o.gate): o for o in gate_outcomes(obs)}
    # question-only: T:1 EM 1.0 on bb1 and bb2 → flagged; T:4 EM 1.0 (bb1) / 0.75 (bb2) → not under "all"
    assert out[("T:1", "question_only")].flagged and out[("T:1", "question_only")].ems == (1.0, 1.0)
    assert not out[("T:4", "question_only")].flagged
    # oracle: T:3 EM 0.25 (bb1) and 0.0 (bb2), both ≤ 0.25 → flagged; T:2 solved → not
    assert out[("T:3", "oracle")].flagged and "EM ≤ 0.25" in out[("T:3", "oracle")].reason
    assert not out[("T:2", "oracle")].flagged
    anyp = {(o.item_id, o.gate): o for o in gate_outcomes(obs, panel="any")}
    assert anyp[("T:4", "question_only")].flagged


def test_structure_findings():
    assert structure_findings(BENCH) == {"T:3": ["clue structure: Y3 item has 1 existing clue round(s); needs at least 2"]}


def test_items_to_revisit():
    got = items_to_revisit(BENCH, RUNS)
    assert sorted(got) == ["T:1", "T:3"]
    assert got["T:1"][0].startswith("shortcut: solved under every rotation with question-only input")
    assert "bb1 EM 1.00, bb2 EM 1.00" in got["T:1"][0]
    assert len(got["T:3"]) == 2 and got["T:3"][1].startswith("clue structure")
    assert sorted(items_to_revisit(BENCH, RUNS, structure=False, panel="any")) == ["T:1", "T:3", "T:4"]
    assert items_to_revisit(BENCH, [], structure=False) == {}


def test_pass_rates_by_cell():
    rates = {(r.x, r.y, r.gate): r for r in pass_rates_by_cell(gate_outcomes(gate_observations(BENCH, RUNS)), ITEMS)}
    # X1/Y1: T:1 fails question-only, passes oracle → qo 0/1, oracle 1/1, all 0/1
    assert (rates[("X1", "Y1", "question_only")].passed, rates[("X1", "Y1", "question_only")].n) == (0, 1)
    assert rates[("X1", "Y1", "oracle")].rate == 1.0 and rates[("X1", "Y1", "all")].rate == 0.0
    # X3/Y1: T:4 passes both; X3/Y2: T:2 passes both; X4/Y3: T:3 fails oracle
    assert rates[("X3", "Y1", "all")].rate == 1.0 and rates[("X3", "Y2", "all")].rate == 1.0
    assert rates[("X4", "Y3", "oracle")].rate == 0.0 and rates[("X4", "Y3", "question_only")].rate == 1.0


def test_section_tables():
    from scorer.sections import gates as section
    from scorer.sections.base import ScoreContext, ScoreOptions

    ctx = ScoreContext(BENCH, RUNS, None, None, ScoreOptions())
    res = section.build(ctx)
    assert [r["item_id"] for r in res.data["revisit"]] == ["T:1", "T:3"]
    rates = next(t for t in res.tables if t.name == "gates_pass_rates")
    assert rates.columns == ["Y", "X", "n", "Question-only", "Oracle (visual)", "All gates"]
    x1y1 = next(r for r in rates.rows if (r["Y"], r["X"]) == ("Y1", "X1"))
    assert (x1y1["n"], x1y1["Question-only"], x1y1["All gates"]) == (1, 0.0, 0.0)
    # a stricter panel flags T:4 too
    res_any = section.build(ScoreContext(BENCH, RUNS, None, None, ScoreOptions(extra={"gate_panel": "any"})))
    assert [r["item_id"] for r in res_any.data["revisit"]] == ["T:1", "T:3", "T:4"]
