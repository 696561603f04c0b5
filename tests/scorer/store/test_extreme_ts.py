"""Issue 14 class 4: times at the edge of the calendar. Before the fix an annotation whose `ts` is
9999-12-31 in a zone west of UTC (or 0001-01-01 east of it) raised OverflowError from
`datetime.astimezone` in `annotations import`; now it is one line naming the file and line."""

from __future__ import annotations

import json

import pytest

from scorer.cli import main
from scorer.errors import UserError
from scorer.store.payload import normalize_ts, ts_from_us

EDGES = ["9999-12-31T23:59:59-01:00", "0001-01-01T00:00:00+01:00", "9999-12-31T23:59:59.999999-23:59"]


@pytest.mark.parametrize("ts", EDGES)
def test_normalize_ts_refuses_times_past_the_calendar(ts):
    with pytest.raises(UserError, match="outside the years"):
        normalize_ts(ts)


def test_the_calendar_edges_themselves_are_times():
    assert normalize_ts("9999-12-31T23:59:59.999999Z")[0] == "9999-12-31T23:59:59.999999Z"
    assert normalize_ts("0001-01-01T00:00:00")[0] == "0001-01-01T00:00:00Z"


@pytest.mark.parametrize("t_us", [10**20, -(10**20)])
def test_a_stored_time_no_date_holds_is_one_line(t_us):
    with pytest.raises(UserError, match="no calendar date"):
        ts_from_us(t_us)


@pytest.mark.parametrize("ts", EDGES)
def test_annotations_import_names_file_and_line(ts, tmp_path, capsys):
    good = {"ts": "2026-11-20T09:01:27Z", "annotator": "ann1", "kind": "label", "item_id": "T:1",
            "mode": None, "run": None, "study": None, "payload": {"x": ["X1"], "y": ["Y1"]}}
    f = tmp_path / "events.jsonl"
    f.write_text(json.dumps(good) + "\n" + json.dumps({**good, "ts": ts}) + "\n", encoding="utf-8")
    code = main(["annotations", "import", str(f), "--db", str(tmp_path / "a.db")])
    err = capsys.readouterr().err
    assert code in (1, 2), err
    assert "Traceback" not in err and len(err.splitlines()) <= 2
    assert "events.jsonl" in err and ":2" in err
