"""The inputs record names each run file below the run path it was given by (issue 19 made the
lookup per record, not per file): as given, relative or absolute, with or without a trailing
slash, the file system root included; a file under no given path keeps its own path."""

from __future__ import annotations

import os

from scorer.scoring.inputs import runs_record


def _paths(given: list[str], files: list[str]) -> list[str]:
    return [f["path"] for f in runs_record(given, [(f, "0" * 64) for f in files], 1, "lean")["files"]]


def test_files_are_named_below_the_path_given(tmp_path, monkeypatch):
    monkeypatch.chdir(tmp_path)
    (tmp_path / "runs" / "a").mkdir(parents=True)
    absolute = str(tmp_path / "runs" / "a" / "predictions.jsonl")
    assert _paths(["runs"], [absolute]) == ["runs/a/predictions.jsonl"]
    assert _paths(["runs/"], [absolute]) == ["runs/a/predictions.jsonl"]
    assert _paths([str(tmp_path / "runs")], [absolute]) == [f"{(tmp_path / 'runs').as_posix()}/a/predictions.jsonl"]
    assert _paths(["runs/a"], ["runs/a"]) == ["runs/a"]  # the path given itself
    # the first base that holds the file wins; a sibling whose name starts alike does not hold it
    assert _paths(["runs/a", "runs"], [absolute]) == ["runs/a/predictions.jsonl"]
    assert _paths(["run"], [absolute]) == [absolute.replace(os.sep, "/")]


def test_the_root_as_a_run_path(tmp_path):
    file = str(tmp_path / "x" / "predictions.jsonl")
    assert _paths(["/"], [file]) == [file]
    assert _paths(["/"], ["/"]) == ["/"]
