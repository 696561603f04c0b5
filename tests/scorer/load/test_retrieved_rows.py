"""A row's `retrieved` log as Retrieved entries (scorer.model.rows.retrieved_of): the fast loop (slots
set as the dataclass __init__ sets them) gives what the plain rule gives, entry for entry — real,
frozen, equal Retrieved objects — on every shape a log may hold."""

from __future__ import annotations

import dataclasses
import math
from collections import OrderedDict

import pytest

from scorer.model import Retrieved
from scorer.model.rows import num, retrieved_of


class Text(str):
    pass


def plain_rule(raw):
    """The definition: text entries name a round; objects name it by `round` (if the key is there),
    else `round_id`; anything else is skipped; ranks count every entry."""
    if not isinstance(raw, list):
        return None
    out = []
    for rank, entry in enumerate(raw, start=1):
        if isinstance(entry, str):
            out.append(Retrieved(entry, rank))
        elif isinstance(entry, dict):
            rid = entry.get("round", entry.get("round_id"))
            if isinstance(rid, str):
                out.append(Retrieved(rid, rank, num(entry.get("score")), num(entry.get("recency_age"))))
    return tuple(out)


LOGS = [
    ["D1:1", {"round": "D1:2", "score": 0.5, "recency_age": 3}],
    [{"round_id": "D1:3", "score": "0.25", "recency_age": "7"}, {"round": None, "round_id": "D1:4"}],
    [{"round": 5}, {"score": 1.0}, 7, None, ["D1:5"], {"round": "D1:6", "score": True, "recency_age": "nan"}],
    [{"round": "D1:7", "score": float("inf"), "recency_age": -0.0}, Text("D1:8"), OrderedDict(round=Text("D1:9"))],
    [{"round": "D2:1", "score": 1, "recency_age": False}, {"round": "D2:2", "score": "high", "recency_age": [1]}],
    [],
]


def same(a: Retrieved, b: Retrieved) -> bool:
    def eq(x, y):  # the same value of the same type (3 and 3.0 differ here)
        return type(x) is type(y) and x == y or (isinstance(x, float) and isinstance(y, float) and math.isnan(x) and math.isnan(y))
    return type(a) is type(b) is Retrieved and all(eq(getattr(a, f.name), getattr(b, f.name))
                                                   for f in dataclasses.fields(Retrieved))


@pytest.mark.parametrize("log", LOGS)
def test_each_log_reads_as_the_plain_rule_reads_it(log):
    got, want = retrieved_of({"retrieved": log}), plain_rule(log)
    assert len(got) == len(want)
    assert all(same(g, w) for g, w in zip(got, want))


def test_the_entries_are_ordinary_retrieved_values():
    (e, text, obj) = retrieved_of({"retrieved": [{"round": "D1:2", "score": 0.5, "recency_age": 3}, "D1:1",
                                                 {"round_id": "D3:1"}]})
    assert e == Retrieved("D1:2", 1, 0.5, 3.0) and hash(e) == hash(Retrieved("D1:2", 1, 0.5, 3.0))
    assert repr(text) == "Retrieved(round_id='D1:1', rank=2, score=None, recency_age=None)"
    assert obj == Retrieved("D3:1", 3) and type(e.recency_age) is float
    with pytest.raises(dataclasses.FrozenInstanceError):
        e.score = 1.0  # type: ignore[misc]
    assert dataclasses.replace(e, recency_age=9.0) == Retrieved("D1:2", 1, 0.5, 9.0)


def test_a_log_that_is_not_a_list_is_none_and_upstream_logs_still_read():
    assert retrieved_of({"retrieved": {"round": "D1:1"}}) is None
    got = retrieved_of({"method_runtime": {"seed_round_ids": ["D1:1", 3, "D1:2"],
                                           "top_candidates": [{"round_id": "D1:2", "score": 0.4}]}})
    assert got == (Retrieved("D1:1", 1), Retrieved("D1:2", 3, 0.4))
