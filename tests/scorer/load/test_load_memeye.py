from __future__ import annotations

import json
from pathlib import Path

import pytest

from scorer.errors import DataError
from scorer.load.memeye import load_benchmark, parse_point, parse_rotations
from tests.builders.benchmarks import MINI_TASK, write_mini_bench


@pytest.fixture
def bench_root(tmp_path: Path) -> Path:
    return write_mini_bench(tmp_path / "bench")


def test_root_layout_loads_both_modes(bench_root: Path) -> None:
    b = load_benchmark(bench_root)
    assert [t.name for t in b.tasks] == [MINI_TASK]
    t = b.tasks[0]
    assert [s.session_id for s in t.sessions] == ["D1", "D2"]
    assert [r.round_id for r in t.rounds] == ["D1:1", "D1:2", "D2:1", "D2:2"]
    assert [r.order for r in t.rounds] == [0, 1, 2, 3]
    assert sum(i.mode == "mcq" for i in t.items) == 4
    assert sum(i.mode == "open" for i in t.items) == 4
    mcq = b.item(f"{MINI_TASK}:1", "mcq")
    opn = b.item(f"{MINI_TASK}:1", "open")
    assert mcq is not None and opn is not None and mcq.question == opn.question
    assert mcq.mcq_form == "rotation" and len(mcq.rotations) == 4
    assert [r.answer for r in mcq.rotations] == ["A", "B", "C", "D"]
    assert all(r.options[r.answer] == "Green" for r in mcq.rotations)
    assert opn.rotations == () and opn.mcq_form is None


def test_legacy_mcq_and_labels(bench_root: Path) -> None:
    b = load_benchmark(bench_root)
    legacy = b.item(f"{MINI_TASK}:2", "mcq")
    assert legacy.mcq_form == "legacy"
    assert len(legacy.rotations) == 1 and legacy.rotations[0].answer == "B"
    multi = b.item(f"{MINI_TASK}:3", "mcq")
    assert multi.x == {"X2", "X3"} and multi.y == {"Y2"}
    assert multi.cells == (("X2", "Y2"), ("X3", "Y2"))
    assert multi.chain[0].modality == "audio" and multi.chain[0].challenge == "prosody"


def test_default_chain_one_answer_fact_per_clue(bench_root: Path) -> None:
    item = load_benchmark(bench_root).item(f"{MINI_TASK}:1", "open")
    assert [(f.round_id, f.role) for f in item.chain] == [("D1:1", "answer"), ("D2:2", "answer")]
    assert item.cluster == MINI_TASK


def test_answerable_default_and_false(bench_root: Path) -> None:
    b = load_benchmark(bench_root)
    assert b.item(f"{MINI_TASK}:1", "mcq").answerable is True
    assert b.item(f"{MINI_TASK}:4", "mcq").answerable is False


def test_media_located_not_decoded(bench_root: Path) -> None:
    t = load_benchmark(bench_root).tasks[0]
    r = t.round("D1:1")
    (img,) = r.images
    assert img.kind == "image" and img.path == (bench_root / "image" / MINI_TASK / "wall_blue.png").resolve() or img.path.exists()
    assert img.text == "A hallway wall painted blue." and img.media_id == "wall_blue"
    (audio,) = t.round("D2:1").media
    assert audio.kind == "audio" and audio.text == "(three chimes)" and audio.path.exists()


def test_latest_and_stale(bench_root: Path) -> None:
    b = load_benchmark(bench_root)
    t = b.tasks[0]
    item = b.item(f"{MINI_TASK}:1", "mcq")
    assert t.latest_clue(item).round_id == "D2:2"
    assert t.is_stale(item, "D1:1") and t.is_stale(item, "D1:2") and t.is_stale(item, "D2:1")
    assert not t.is_stale(item, "D2:2")


def test_single_dialog_file(bench_root: Path) -> None:
    b = load_benchmark(bench_root / "dialog" / f"{MINI_TASK}_Open.json")
    assert b.root == bench_root
    assert {i.mode for i in b.items()} == {"open"}
    assert b.tasks[0].round("D1:1").images[0].path is not None


def test_invalid_json_is_one_line_error(tmp_path: Path) -> None:
    (tmp_path / "dialog").mkdir()
    (tmp_path / "dialog" / "Bad.json").write_text('{"multi_session_dialogues": [}')
    with pytest.raises(DataError) as err:
        load_benchmark(tmp_path)
    msg = str(err.value)
    assert "Bad.json:1:" in msg and "invalid JSON" in msg and "\n" not in msg


def test_wrong_shapes_are_data_errors(tmp_path: Path) -> None:
    (tmp_path / "dialog").mkdir()
    (tmp_path / "dialog" / "T.json").write_text(json.dumps({"multi_session_dialogues": {"a": 1}}))
    with pytest.raises(DataError, match="multi_session_dialogues: must be a list"):
        load_benchmark(tmp_path)
    with pytest.raises(DataError, match="no such file"):
        load_benchmark(tmp_path / "missing")


@pytest.mark.parametrize("point,x,y", [
    ([["X2"], ["Y1"]], {"X2"}, {"Y1"}),
    (["X3", "Y2"], {"X3"}, {"Y2"}),
    ({"x": ["x1"], "y": "Y3"}, {"X1"}, {"Y3"}),
    (None, set(), set()),
])
def test_parse_point(point, x, y) -> None:
    assert parse_point(point) == (frozenset(x), frozenset(y))


def test_parse_rotations_forms() -> None:
    rots, form = parse_rotations({"A": "a", "B": "b", "answer": "b"}, None)
    assert form == "legacy" and rots[0].answer == "B" and dict(rots[0].options) == {"A": "a", "B": "b"}
    assert parse_rotations(None, None) == ((), None)
