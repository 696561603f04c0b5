"""The `adjudication` event kind (DESIGN §4): its payload validated by the kind it decides, its derived
state, JSONL export and idempotent import, undo; and the adjudication queue built from disagreements."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from scorer.errors import DataError, UserError
from scorer.store import Store, import_jsonl, write_jsonl
from scorer.store.adjudicate import adjudicated, plan_adjudication


def test_payloads_are_validated_by_the_kind_they_decide(tmp_path: Path) -> None:
    with Store(tmp_path / "a.db") as s:
        ev = s.add("adjudication", "adj", "T:1", {"of": "label", "decision": {"x": ["X3", "X2", "X3"], "y": ["Y1"]},
                                                  "reason": "the clue is a chart"})
        assert ev.payload == {"of": "label", "decision": {"x": ["X2", "X3"], "y": ["Y1"]},
                              "reason": "the clue is a chart"}
        assert s.add("adjudication", "adj", "T:1", {"of": "oracle", "decision": {"choice": "B", "rotation": 0}},
                     mode="mcq").payload["reason"] == ""
        bad = [({"of": "labels", "decision": {}}, "'of' must be one of label, verdict, oracle"),
               ({"of": "verdict", "decision": {"verdict": "maybe"}}, "'verdict' must be one of"),
               ({"of": "verdict", "decision": {"verdict": "accept"}}, "'mode' and 'run' are required"),
               ({"of": "label", "decision": {"x": ["X1"], "y": ["Y1"]}, "why": "x"}, "unknown key 'why'"),
               ({"decision": {"x": ["X1"], "y": ["Y1"]}}, "missing key 'of'"),
               ({"of": "label", "decision": {"x": ["X1"], "y": ["Y1"]}, "reason": 3}, "'reason' must be")]
        for payload, message in bad:
            with pytest.raises(UserError, match=message):
                s.add("adjudication", "adj", "T:2", payload)
        assert s.count() == 2


def test_current_state_jsonl_round_trip_and_undo(tmp_path: Path) -> None:
    src = Store(tmp_path / "src.db")
    first = src.add("adjudication", "adj", "T:1", {"of": "verdict", "decision": {"verdict": "reject"}},
                    mode="open", run_key="b/m", study="adj")
    src.add("adjudication", "adj", "T:1", {"of": "verdict", "decision": {"verdict": "accept"}, "reason": "on reflection"},
            mode="open", run_key="b/m", study="adj")
    src.add("adjudication", "adj", "T:1", {"of": "label", "decision": {"x": ["X1"], "y": ["Y2"]}},
            mode="open", run_key="b/m", study="adj")  # another kind on the same entry stands beside it
    rows = src.current("adjudication")
    assert sorted((r["of"], json.dumps(r["decision"])) for r in rows) == [
        ("label", '{"x": ["X1"], "y": ["Y2"]}'), ("verdict", '{"verdict": "accept"}')]
    assert adjudicated(rows, "verdicts") == {("T:1", "open", "b/m"): {"verdict": "accept"}}
    out = tmp_path / "e.jsonl"
    with open(out, "w", encoding="utf-8") as fh:
        assert write_jsonl(src, fh) == 3
    lines = [json.loads(x) for x in out.read_text().splitlines()]
    assert lines[1]["kind"] == "adjudication" and lines[1]["payload"] == {
        "of": "verdict", "decision": {"verdict": "accept"}, "reason": "on reflection"}
    dst = Store(tmp_path / "dst.db")
    assert (import_jsonl(dst, out).added, import_jsonl(dst, out).skipped) == (3, 3)  # idempotent
    strip = lambda rs: sorted((r["uid"], r["of"], json.dumps(r["decision"]), r["reason"]) for r in rs)  # noqa: E731
    assert strip(dst.current("adjudication")) == strip(rows)
    # an undo of the later verdict decision brings the earlier one back
    later = next(r for r in rows if r["of"] == "verdict")
    src.undo("adj", later["event_id"])
    assert adjudicated(src.current("adjudication"), "verdict") == {("T:1", "open", "b/m"): {"verdict": "reject"}}
    assert first.id
    # a bad adjudication line in a file is one error naming file and line, and adds nothing
    bad = tmp_path / "bad.jsonl"
    bad.write_text(out.read_text() + json.dumps({**lines[0], "payload": {"of": "oracle", "decision": {"choice": "Z"}}}) + "\n")
    with pytest.raises(DataError, match=r"bad.jsonl.*4.*adjudication payload"):
        import_jsonl(Store(tmp_path / "third.db"), bad)
    src.close()
    dst.close()


def _row(annotator: str, item: str, **payload) -> dict:
    return {"annotator": annotator, "item_id": item, "mode": payload.pop("mode", None),
            "run_key": payload.pop("run_key", None), **payload}


def test_the_queue_holds_disagreements_only() -> None:
    rows = [_row("a", "T:1", x=["X1"], y=["Y1"]), _row("b", "T:1", x=["X1"], y=["Y1"]),  # agree
            _row("a", "T:2", x=["X1"], y=["Y1"]), _row("b", "T:2", x=["X2"], y=["Y1"]),  # X differs
            _row("a", "T:3", x=["X1", "X2"], y=["Y2"]), _row("b", "T:3", x=["X2", "X1"], y=["Y2"]),  # same sets
            _row("a", "T:4", x=["X1"], y=["Y1"])]  # one annotator: nothing to disagree with
    plan = plan_adjudication(rows, "labels", 1)
    assert [e[0] for e in plan.entries] == ["T:2"] and plan.params["candidates"] == 4
    v = [_row("a", "T:1", verdict="accept", mode="open", run_key="r"),
         _row("a", "T:2", verdict="reject", mode="open", run_key="r"),
         _row("b", "T:2", verdict="reject", mode="open", run_key="r"),
         _row("a", "T:3", verdict="borderline", mode="open", run_key="r")]
    judge = {("T:1", "open", "r"): 0.25, ("T:2", "open", "r"): 0.0, ("T:3", "open", "r"): 1.0}
    plan = plan_adjudication(v, "verdicts", 1, include_judge=True, judge=judge)
    assert [(e[0], e[3]) for e in plan.entries] == [("T:1", "judge")]  # T:3's borderline is no side taken
    with pytest.raises(UserError, match="nothing to adjudicate"):
        plan_adjudication(v, "verdicts", 1)
    with pytest.raises(UserError, match="needs --of verdicts"):
        plan_adjudication(rows, "labels", 1, include_judge=True, judge=judge)
