"""`score` says what `validate` calls an error when it changes a published number: an MCQ rotation
whose answer letter is none of its options (every choice on it counts as wrong), and a run folder
that adds no row (an empty predictions.jsonl: its method would silently vanish from the matrix)."""

from __future__ import annotations

import json
import shutil
from pathlib import Path

import pytest

from scorer.scoring import score
from scorer.sections.base import ScoreOptions
from tests.paths import DEMO

pytestmark = pytest.mark.needs_demo


def _copy(tmp_path: Path) -> Path:
    bench = tmp_path / "demo"
    shutil.copytree(DEMO, bench)
    return bench


def test_an_answer_letter_that_is_no_option_is_a_score_warning(tmp_path: Path) -> None:
    bench = _copy(tmp_path)
    dialog = bench / "dialog" / "Home_Renovation_Journal.json"
    data = json.loads(dialog.read_text())
    qa = data["human-annotated QAs"][1]
    assert isinstance(qa["options"], list)
    qa["options"][0]["answer"] = "E"
    dialog.write_text(json.dumps(data, ensure_ascii=False))
    warnings = score(bench, [bench / "runs"], sections=["matrix"], options=ScoreOptions(resamples=10)).json_data()["warnings"]
    (w,) = [w for w in warnings if "answer letter is not one of its options" in w]
    assert w.startswith("1 MCQ item(s) have a rotation") and "Home_Renovation_Journal:2 rotation 0, answer 'E'" in w
    clean = score(DEMO, [DEMO / "runs"], sections=["matrix"], options=ScoreOptions(resamples=10)).json_data()["warnings"]
    assert not [w for w in clean if "not one of its options" in w]


def test_a_run_folder_with_no_rows_is_a_score_warning(tmp_path: Path) -> None:
    bench = _copy(tmp_path)
    empty = sorted((bench / "runs").rglob("predictions.jsonl"))[0]
    empty.write_bytes(b"")
    data = score(bench, [bench / "runs"], sections=["matrix"], options=ScoreOptions(resamples=10)).json_data()
    (w,) = [w for w in data["warnings"] if "add no scored row" in w]
    assert w.startswith("1 run folder(s) add no scored row") and str(empty.parent) in w


def test_a_misspelt_compare_name_is_refused_in_one_line(capsys: pytest.CaptureFixture[str], tmp_path: Path) -> None:
    """`--compare FC(T):nope` had exited 0 with a null comparison and a warning per backbone."""
    from scorer.cli import main

    argv = ["score", str(DEMO), "--runs", str(DEMO / "runs"), "--resamples", "20", "--format", "json",
            "--out", str(tmp_path / "o")]
    assert main([*argv, "--compare", "FC(T):nope"]) == 2
    err = capsys.readouterr().err.strip().splitlines()
    assert len(err) == 1 and "--compare FC(T):nope: 'nope' names no method of the runs" in err[0]
    assert main([*argv, "--compare", "FC(T):full_context__multimodal"]) == 0  # a run's method name is one


def test_a_repeated_row_is_named_where_it_is(tmp_path: Path) -> None:
    """A row repeated inside one predictions.jsonl is said as such, with its line (the message had
    blamed "several run folders for one task" and "the last folder")."""
    bench = _copy(tmp_path)
    pred = sorted((bench / "runs").rglob("predictions.jsonl"))[0]
    lines = pred.read_bytes().splitlines(keepends=True)
    pred.write_bytes(b"".join(lines) + lines[1])  # row 2 again, as line n + 1
    data = score(bench, [bench / "runs"], sections=["matrix"], options=ScoreOptions(resamples=10)).json_data()
    (w,) = [w for w in data["warnings"] if "repeat an item already scored" in w]
    assert w.startswith("1 row(s) repeat an item already scored")
    assert f"{pred}:2 and :{len(lines) + 1}, in one file" in w and "the later line is used" in w
    assert "several run folders" not in w
    # the same run in a second folder: that is what "several run folders" is said of
    twin = pred.parent.with_name(pred.parent.name + "_again")
    shutil.copytree(pred.parent, twin)
    pred.write_bytes(b"".join(lines))
    data = score(bench, [bench / "runs"], sections=["matrix"], options=ScoreOptions(resamples=10)).json_data()
    (w,) = [w for w in data["warnings"] if "repeat an item already scored" in w]
    assert "several run folders for one task?; the row of the folder read last is used" in w
