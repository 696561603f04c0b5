"""The lean reader's fast path (msgspec, only the fields the scores need) gives the same frame as
the general path, and rows the fast schema does not fit fall back to the general path."""

from __future__ import annotations

import math

import json
from collections.abc import Mapping
from typing import Any

import numpy as np
import pytest

from scorer.load.frame import COLUMNS, predictions_frame
from scorer.load import lean
from scorer.load.lean import read_frame
from scorer.load.memeye import load_benchmark
from scorer.load.runs import load_runs
from tests.builders.benchmarks import write_labelled_bench
from tests.builders.runs import mcq_row, open_row, write_labelled_run

LABELS = [("X1", "Y1"), ("X2", "Y2"), ("X3", "Y3"), ("X4", "Y1")]


def _same_as_full(root, runs):
    bench = load_benchmark(root)
    full = predictions_frame(bench, load_runs(runs))
    got = read_frame(bench, runs)
    assert len(got.frame) == len(full) > 0
    for col in COLUMNS:
        assert full[col].equals(got.frame[col]), col
    return got


def _rows_kinds(path):
    lines = [ln for ln in path.read_bytes().split(b"\n") if ln.strip()]
    return lean._decode_rows(lines, path, list(range(1, len(lines) + 1)))[0].__class__


@pytest.mark.parametrize("variant", ["typed", "string score", "rotation not an object", "rotations out of order",
                                     "bool and int scores", "odd fields"])
def test_fast_and_general_paths_agree(tmp_path, variant):
    root = write_labelled_bench(tmp_path / "b", "T", LABELS)
    mcq = [mcq_row(i, c) for i, c in zip(range(1, 5), (4, 3, 0, 2))]
    opn = [open_row(i, j) for i, j in zip(range(1, 5), (1.0, 0.5, 0.0, 0.25))]
    if variant == "string score":
        opn[1]["judge"] = "0.5"  # a runner that logged the score as text
    elif variant == "rotation not an object":
        mcq[2]["rotations"][1] = "B"
    elif variant == "rotations out of order":
        mcq[0]["rotations"].reverse()
    elif variant == "bool and int scores":
        mcq[1]["em"], mcq[1]["exact_match"], opn[0]["judge"] = 1, True, 1
    elif variant == "odd fields":
        mcq[3]["idx"], opn[2]["pred"], opn[3]["gt"] = 4.0, {"text": "a dict"}, ["a", "list"]
        mcq[0]["valid_choice"], mcq[1]["abstained"] = "yes", False
    runs = tmp_path / "runs"
    f1 = write_labelled_run(runs, "T", "gpt", "fc_v", "multimodal", "mcq", mcq)
    f2 = write_labelled_run(runs, "T", "gpt", "fc_v", "multimodal", "open", opn, stamp="20260101_000001")
    got = _same_as_full(root, runs)
    assert (_rows_kinds(f1 / "predictions.jsonl") is lean._Row) == (variant != "rotation not an object")
    assert (_rows_kinds(f2 / "predictions.jsonl") is lean._Row) == (variant != "string score")
    if variant == "string score":
        assert got.frame.loc[got.frame["mode"] == "open", "judge"].tolist() == [1.0, 0.5, 0.0, 0.25]


@pytest.mark.parametrize("ending", [b"\r", b"\r\n", b"\r\n\r\n"])
def test_lines_ending_in_carriage_returns_read_as_the_full_reader_reads_them(tmp_path, ending):
    """A predictions file written with bare carriage returns (or CRLF, or blank CRLF lines between
    rows) is the same rows, with the same line numbers, for both readers: `validate` (the full
    reader) had called it clean while `score` refused it ("extra data")."""
    root = write_labelled_bench(tmp_path / "b", "T", LABELS)
    runs = tmp_path / "runs"
    f = write_labelled_run(runs, "T", "gpt", "fc_v", "multimodal", "open",
                           [open_row(i, j) for i, j in zip(range(1, 5), (1.0, 0.5, 0.0, 0.25))])
    pred = f / "predictions.jsonl"
    pred.write_bytes(pred.read_bytes().replace(b"\n", ending))
    got = _same_as_full(root, runs)
    step = 2 if ending == b"\r\n\r\n" else 1
    assert got.frame["line"].tolist() == [1 + step * k for k in range(4)]


def test_a_broken_line_is_still_named(tmp_path):
    from scorer.errors import DataError

    root = write_labelled_bench(tmp_path / "b", "T", LABELS)
    folder = write_labelled_run(tmp_path / "runs", "T", "gpt", "fc_v", "multimodal", "open", [open_row(1, 1.0), open_row(2, 0.0)])
    path = folder / "predictions.jsonl"
    path.write_text(path.read_text() + '{"idx": 3, "mode": \n')
    with pytest.raises(DataError, match=r"predictions.jsonl:3:"):
        read_frame(load_benchmark(root), tmp_path / "runs")


def test_shared_answer_objects_do_not_change_values(tmp_path):
    root = write_labelled_bench(tmp_path / "b", "T", LABELS)
    runs = tmp_path / "runs"
    for k in range(3):
        write_labelled_run(runs, "T", f"m{k}", "fc_v", "multimodal", "mcq", [mcq_row(i, 4) for i in range(1, 5)],
                  stamp=f"20260101_00000{k}")
    got = _same_as_full(root, runs)
    choices = got.frame["choices"].tolist()
    assert choices[0] == ("A", "B", "C", "D") and all(c is choices[0] for c in choices)  # one object
    assert np.array_equal(got.frame["em"].to_numpy(), np.ones(12))
    assert json.loads(json.dumps(choices[0])) == ["A", "B", "C", "D"]


def _many_runs(tmp_path, n_runs: int):
    root = write_labelled_bench(tmp_path / "b", "T", LABELS)
    runs = tmp_path / "runs"
    for k in range(n_runs):
        rows = [mcq_row(i, (i + k) % 5) for i in range(1, 5)] if k % 2 else [open_row(i, (i * k % 4) / 4) for i in range(1, 5)]
        write_labelled_run(runs, "T", f"model{k:03d}", "fc_v", "multimodal", "mcq" if k % 2 else "open", rows, stamp=f"20260101_{k:06d}")
    return root, runs


def test_workers_read_the_same_frame_in_the_same_order(tmp_path, monkeypatch):
    root, runs = _many_runs(tmp_path, 70)
    bench = load_benchmark(root)
    frames = {}
    for workers in ("1", "3"):
        monkeypatch.setenv("MEMSCOPE_READ_WORKERS", workers)
        got = read_frame(bench, runs)
        frames[workers] = (got.frame, [r.backbone for r in got.runs], got.files)
    one, three = frames["1"], frames["3"]
    assert one[1] == three[1] and one[2] == three[2] and len(one[0]) == 280
    for col in COLUMNS:
        assert one[0][col].equals(three[0][col]), col


def test_an_error_in_a_workers_part_is_one_line(tmp_path, monkeypatch):
    from scorer.errors import UserError

    root, runs = _many_runs(tmp_path, 70)
    last = sorted(runs.rglob("predictions.jsonl"))[-1]  # read by the last worker
    last.write_text(last.read_text() + "{not json\n")
    monkeypatch.setenv("MEMSCOPE_READ_WORKERS", "3")
    with pytest.raises(UserError, match=r"model069_fc_v_mcq/predictions.jsonl:5:2: invalid JSON"):
        read_frame(load_benchmark(root), runs)


def test_parts_are_contiguous_and_balanced_by_bytes(tmp_path):
    folders = []
    for k, size in enumerate([10, 10, 10, 10, 1000, 10, 10, 10]):
        f = tmp_path / f"r{k}"
        f.mkdir()
        (f / "predictions.jsonl").write_bytes(b"x" * size)
        folders.append(f)
    parts = lean._balanced_parts(folders, 3)
    assert [p for part in parts for p in part] == folders and len(parts) <= 3
    assert folders[4] in parts[0] or folders[4] in parts[1]  # the big file ends a part, not hides in one
    assert lean._balanced_parts(folders[:1], 4) == [folders[:1]]


def test_evidence_rows_read_as_json_are_the_rows_evidence_dicts(tmp_path):
    """The fast schema keeps the retrieval logs as their JSON text; a worker writes each chunk's
    answer fields as one JSON text and each row's lists as its own (sent as bytes, read when a
    section first asks): the rows read back are the dicts built field by field from the parsed row
    (_evidence_of_struct), for rows that log nulls, omit fields, nest objects or log lists of any
    kind; and what the worker parsed for the evidence arrays is what logged_lists reads from those
    dicts, a Prediction over them giving the delivered list."""
    import msgspec

    from scorer.load.joined_rows import (EVIDENCE_FIELDS, ROTATION_FIELDS, RUNTIME_FIELDS, EvidenceRows, LazyRow,
                                         evidence_segment)
    from scorer.metrics.evidence_flat import logged_lists
    from scorer.metrics.logged_lists import LoggedLists, RoundNames, ages_of, scores_of
    from scorer.model import Prediction

    # The reference: every field parsed (no JSON text kept), the dict built field by field.
    whole = msgspec.defstruct("Whole", [(f.name, Any if f.type is msgspec.Raw else f.type, None)
                                        for f in msgspec.structs.fields(lean._EvRow)])

    def _evidence_of_struct(row):
        ev = {k: getattr(row, k) for k in EVIDENCE_FIELDS if getattr(row, k) is not None}
        if row.rotations is not None:
            ev["rotations"] = [{k: getattr(r, k) for k in ROTATION_FIELDS} for r in row.rotations]
        if row.method_runtime is not None:
            ev["method_runtime"] = {k: getattr(row.method_runtime, k) for k in RUNTIME_FIELDS}
        return ev

    runtime = {"seed_round_ids": ["D3:1", 7, "D3:2"], "top_candidates": [{"round_id": "D3:1", "score": 2}, "x"],
               "other": [1, 2]}
    rows = [
        {"idx": 1, "mode": "mcq", "retrieved": [{"round": "D1:1", "score": 0.5, "recency_age": 3}, "D2:2"],
         "delivered": ["D1:1"], "clue_rounds": ["D1:1"], "history_source": "retrieval", "em": 1,
         "rotations": [{"rotation_idx": 0, "choice": "A", "correct_position": "A", "em": 1.0, "usage": {"n": 1}},
                       {"choice": None}], "pred": "A", "choice": "A", "abstained": False},
        {"idx": 2, "mode": "open", "retrieved": None, "delivered": None, "context_round_ids": [],
         "method_runtime": runtime, "judge": 0.5, "pred": "x" * 40},
        {"idx": 3, "mode": "open", "retrieved": "not a list", "clue_rounds": {"odd": [1, "two", None]},
         "history_source": None, "judge": 1.0, "contains_gt": True, "method_runtime": None, "pred": ""},
        {"idx": 4, "mode": "open"},
        {"idx": 5, "mode": "open", "delivered": [1, "D1:2", {"r": 2.5e-300}], "retrieved": [[], {}, 12345678901234]},
        # the usual log (read in C), with a repeat, an entry without a score and a round named twice
        {"idx": 6, "mode": "open", "retrieved": [{"round": "D1:1", "score": 0.9}, {"round": "D1:2"},
                                                 {"round": "x", "round": "D1:1", "score": "0.1"}],
         "context_round_ids": ["D1:1", "D1:2"]},
        # not the usual log: a text entry, `round_id`, a round that is not text; then a `retrieved`
        # that is no list beside an upstream log (the upstream log is the ranking)
        {"idx": 7, "mode": "open", "retrieved": ["D1:1", {"round_id": "D1:2", "score": 1}, {"round": 3}]},
        {"idx": 8, "mode": "open", "retrieved": {"round": "D1:1"}, "method_runtime": runtime},
        {"idx": 9, "mode": "open", "retrieved": [], "history_source": "clue_only", "clue_rounds": ["D2:1"]},
        {"idx": 10, "mode": "open", "method_runtime": {"history_source": "clue_only"}, "clue_rounds": ["D2:1", 4]},
        {"idx": 11, "mode": "open", "clue_rounds": ["D2:1"]},  # clue rounds alone: nothing logged
        # rows that log no ranking and no delivered list of their own (read without decoding their
        # lists): which history source counts, a null one, clue rounds null or not a list
        {"idx": 12, "mode": "open", "history_source": "clue_only", "clue_rounds": ["D2:1", "D2:2"],
         "method_runtime": {"history_source": "full_context"}},
        {"idx": 13, "mode": "open", "history_source": None, "clue_rounds": ["D2:3"],
         "method_runtime": {"history_source": "clue_only", "seed_round_ids": None}},
        {"idx": 14, "mode": "open", "history_source": "full_context", "clue_rounds": ["D2:3"],
         "method_runtime": {"history_source": "clue_only"}},
        {"idx": 15, "mode": "open", "history_source": 5, "clue_rounds": ["D2:3"],
         "method_runtime": {"history_source": "clue_only"}},
        {"idx": 16, "mode": "open", "clue_rounds": None, "method_runtime": {"history_source": "clue_only"}},
        {"idx": 17, "mode": "open", "clue_rounds": "D2:1", "method_runtime": {"history_source": "clue_only"}},
        {"idx": 18, "mode": "open", "clue_rounds": None},
        {"idx": 19, "mode": "open", "clue_rounds": [ "D2:1" ,  "D2:2" ]},
        {"idx": 20, "mode": "open", "method_runtime": {"selected_round_ids": ["D2:2"], "history_source": "clue_only"},
         "clue_rounds": ["D2:1"]},
        # recency ages and scores of every kind, in the usual log (read in C) and not (a text entry)
        {"idx": 21, "mode": "open", "retrieved": [
            {"round": f"D3:{i}", "score": s, "recency_age": a} for i, (s, a) in enumerate(
                [(0.5, 3), (10 ** 400, 2.5), ("0.25", "nan"), (None, "inf"), (True, True), (1, "3"), (2, 10 ** 400),
                 (-(10 ** 400), None), (0.1, "x"), (0.2, -(10 ** 400))], start=1)]},
        {"idx": 22, "mode": "open", "retrieved": ["D1:1", {"round": "D1:2", "score": 10 ** 400, "recency_age": "nan"},
                                                 {"round_id": "D1:3", "recency_age": 4}]},
    ]
    body = b"[" + b",".join(json.dumps(r).encode() for r in rows) + b"]"
    decoded = lean._EV_ROWS.decode(body)
    keep = list(range(len(rows)))
    want = [_evidence_of_struct(r) for r in msgspec.json.decode(body, type=list[whole])]
    names = RoundNames()  # shared by the segments of a part, as a reader worker shares it
    evidence = EvidenceRows([evidence_segment(decoded, keep[:2], names),
                             ("dicts", [{"kept": "as is"}], LoggedLists.build([None], names)),
                             evidence_segment(decoded, keep[2:], names)])
    got = evidence.decode()
    expected = [*want[:2], {"kept": "as is"}, *want[2:]]
    assert all(isinstance(r, LazyRow) for i, r in enumerate(got) if i != 2)
    assert [dict(r) for r in got] == expected
    assert [list(d) for d in got] == [list(d) for d in expected]  # same keys, same order
    assert "retrieved" not in got[1] and "history_source" not in got[3]  # null is absent, as before
    for r, w in zip(got, expected):  # a Mapping that reads as the dict does
        assert len(r) == len(w) and all(r[k] == w[k] and r.get(k) == w[k] and k in r for k in w)
        assert r.get("absent") is None and r.get("absent", 3) == 3 and "absent" not in r
        with pytest.raises(KeyError):
            r["absent"]

    def reference(w):
        p = Prediction("T", "open", 1, 1, w)
        return logged_lists(w, lambda: p.delivered)

    def readable(ranking, delivered, read=False):  # scores and ages as scores_of / ages_of read them, NaN as None
        if ranking is not None:
            ages = list(ranking[2]) if read else ages_of(list(ranking[2])).tolist()  # (as_rows: read already)
            ranking = (list(ranking[0]), [None if v != v else v for v in scores_of(list(ranking[1])).tolist()],
                       [None if v != v else v for v in ages])
        return ranking, None if delivered is None else tuple(delivered)

    logged = [readable(*lg, read=True) for lg in evidence.logged().as_rows()]
    assert logged == [readable(*(reference(w) or (None, None))) for w in expected]
    assert len(evidence.logged().names) == len(set(evidence.logged().names))  # each id once: one numbering
    # row 3 names fields logged_lists reads, but neither is a list: it logged none, as rows 2, 4 and 11
    assert [lg != (None, None) for lg in logged] == [True, True, False, False, False, True, True, True, True, True,
                                                     True, False, True, True, False, False, False, False, False,
                                                     False, True, True, True]
    assert logged[6] == ((["D1:1", "D1:2", "D1:1"], [0.9, None, 0.1], [None] * 3), ("D1:1", "D1:2"))
    assert logged[7] == ((["D1:1", "D1:2"], [None, 1.0], [None] * 2), None)
    assert logged[8] == ((["D3:1", "D3:2"], [2.0, None], [None] * 2), None)  # the upstream log: `retrieved` is no list
    assert logged[9] == (([], [], []), ("D2:1",)) and logged[10] == (None, ("D2:1",))
    inf = math.inf  # a logged age that is no finite number reads +inf (never filled in), an unreadable one None
    assert logged[21][0][1:] == ([0.5, inf, 0.25, None, 1.0, 1.0, 2.0, -inf, 0.1, 0.2],
                                 [3.0, 2.5, inf, inf, 1.0, 3.0, inf, None, None, inf])
    assert logged[22][0] == (["D1:1", "D1:2", "D1:3"], [None, inf, None], [None, inf, 4.0])
    assert logged[12] == (None, ("D2:1", "D2:2")) and logged[13] == (None, ("D2:3",))  # the row's own source first
    assert logged[20] == (None, ("D2:2",))  # what the run selected, not the clue rounds


def test_same_lists_is_true_only_for_the_same_lists_text():
    """Two rows' lists are known equal when their JSON texts are; equal values written differently
    (0.5 and 0.50) are not known equal, and are compared as values by the caller."""
    from scorer.load.joined_rows import EvidenceRows, evidence_segment, same_lists

    lines = [b'{"idx": 1, "mode": "mcq", "retrieved": [{"round": "D1:1", "score": 0.5}], "clue_rounds": ["D1:1"]}',
             b'{"idx": 1, "mode": "open", "retrieved": [{"round": "D1:1", "score": 0.5}], "clue_rounds": ["D1:1"]}',
             b'{"idx": 2, "mode": "open", "retrieved": [{"round": "D1:1", "score": 0.50}], "clue_rounds": ["D1:1"]}',
             b'{"idx": 3, "mode": "open", "retrieved": [{"round": "D1:1", "score": 0.25}], "clue_rounds": ["D1:1"]}',
             b'{"idx": 4, "mode": "open"}', b'{"idx": 5, "mode": "mcq"}']
    got = EvidenceRows([evidence_segment(lean._EV_ROWS.decode(b"[" + b",".join(lines) + b"]"),
                                         list(range(len(lines))))]).decode()
    assert same_lists(got[0], got[1]) and not same_lists(got[0], got[3])
    assert not same_lists(got[0], got[2]) and dict(got[0]) == dict(got[2])  # same values, other text
    assert same_lists(got[4], got[5])  # neither logged a list
    assert not same_lists(got[0], dict(got[1]))  # a plain dict: compare the values


def test_rows_with_clue_rounds_alone_write_the_lists_text_the_encoder_writes():
    """A row that logs only its clue rounds has its lists text written without the encoder (most
    rows at MemEye scale): the same bytes, so that same_lists finds it equal to a row whose lists
    the encoder wrote (here: beside a null history source, which is read the general way)."""
    from scorer.load.joined_rows import EvidenceRows, evidence_segment, same_lists

    lines = [b'{"idx": 1, "mode": "mcq", "clue_rounds": [ "D1:1" ,"D1:2"]}',
             b'{"idx": 1, "mode": "open", "clue_rounds": [ "D1:1" ,"D1:2"], "history_source": null}',
             b'{"idx": 2, "mode": "open", "clue_rounds": null}']
    got = EvidenceRows([evidence_segment(lean._EV_ROWS.decode(b"[" + b",".join(lines) + b"]"),
                                         list(range(len(lines))))]).decode()
    assert got[0].lists_text() == b'{"clue_rounds":[ "D1:1" ,"D1:2"]}' == got[1].lists_text()
    assert same_lists(got[0], got[1]) and got[2].lists_text() is None and dict(got[2]) == {}


def test_joined_rows_decode_once_when_first_read(tmp_path):
    root = write_labelled_bench(tmp_path / "b", "T", LABELS)
    mcq = [mcq_row(i, c) for i, c in zip(range(1, 5), (4, 3, 0, 2))]
    runs = tmp_path / "runs"
    write_labelled_run(runs, "T", "gpt", "fc_v", "multimodal", "mcq", mcq)
    joined = read_frame(load_benchmark(root), runs, evidence=True).joined
    assert joined._rows.__class__.__name__ == "EvidenceRows"  # not decoded by the read
    first = joined.rows
    assert first is joined.rows and len(first) == 4 and all(isinstance(r, Mapping) for r in first)
    assert [p.choice for p in map(joined.prediction, range(4))] == [r["choice"] for r in mcq]
