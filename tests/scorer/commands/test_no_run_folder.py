"""`--runs DIR` naming a folder with no run folder under it (a typo, an empty folder, /etc) is an
error naming that folder in one line, exit 2 — not a clean report of 0 run folders (exit 0)."""

from __future__ import annotations

from pathlib import Path

import pytest

from scorer.cli import main
from tests.builders.benchmarks import write_mini_bench
from tests.scorer.judge.test_judge import row, runs_tree


@pytest.mark.parametrize("command", ["info", "validate", "score", "judge"])
@pytest.mark.parametrize("which", ["empty", "no-predictions", "second"])
def test_runs_root_without_a_run_folder_is_an_error(tmp_path: Path, capsys, monkeypatch, command, which) -> None:
    monkeypatch.setenv("OPENAI_API_KEY", "sk-test-runs")
    bench = write_mini_bench(tmp_path / "bench")
    good = runs_tree(tmp_path, [row(1, "a", judge=0.5)])
    bad = tmp_path / "typo"
    bad.mkdir()
    if which == "no-predictions":
        (bad / "sub").mkdir()
        (bad / "sub" / "metrics.json").write_text("{}")
    roots = [str(good), str(bad)] if which == "second" else [str(bad)]
    argv = {"judge": ["judge", "--runs", *roots, "--model", "m", "--dry-run"]}.get(
        command, [command, str(bench), "--runs", *roots])
    rc = main(argv)
    err = capsys.readouterr().err.strip().splitlines()
    assert rc == 2, (rc, err)
    assert len(err) == 1 and str(bad) in err[0] and "no run folder" in err[0], err


def test_a_run_folder_named_directly_still_reads(tmp_path: Path, capsys) -> None:
    bench = write_mini_bench(tmp_path / "bench")
    good = runs_tree(tmp_path, [row(1, "a", judge=0.5)])
    (folder,) = {p.parent for p in good.rglob("predictions.jsonl")}
    main(["validate", str(bench), "--runs", str(folder)])
    out = capsys.readouterr()
    assert "1 run folder(s), 1 row(s)" in " ".join((out.out + out.err).split()) and "no run folder" not in out.err
    assert main(["score", str(bench), "--runs", str(folder / "predictions.jsonl")]) == 0
    assert "no run folder" not in capsys.readouterr().err
