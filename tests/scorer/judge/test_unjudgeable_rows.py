"""A row the judge cannot be asked about — no gold answer (gt null or absent), or a question, gold or
prediction logged as a list, an object or true/false — is not sent (a null gold was judged 1.0);
it is named, kept unscored, and the run ends non-zero. `validate` lists each as an error. A number
is read as its text (LoCoMo has numeric answers) and judged."""

from __future__ import annotations

from pathlib import Path

from scorer.cli import main
from tests.builders.benchmarks import write_mini_bench
from tests.scorer.judge.test_judge import FAST, _key, out_rows, row, runs_tree, server  # noqa: F401 (fixtures)


def _rows() -> list[dict]:
    null_gt = row(2, "pred two [[score:1]]")
    null_gt["gt"] = None
    no_gt = row(3, "pred three [[score:1]]")
    del no_gt["gt"]
    return [row(1, "pred one [[score:0.5]]"), null_gt, no_gt,
            row(4, ["a", "list"]), row(5, "pred five", question=["q"]), row(6, "pred six", gt={"a": 1}),
            row(7, True), row(8, 5, gt=5)]


def test_unjudgeable_rows_are_not_sent_and_named(server, tmp_path, capsys):
    runs = runs_tree(tmp_path, _rows())
    rc = main(["judge", "--runs", str(runs), "--model", "judge-a", "--base-url", server.url,
               "--out", str(tmp_path / "out"), "--cache", str(tmp_path / "c.sqlite"), *FAST])
    err = capsys.readouterr().err
    assert rc == 1, err
    assert server.requests == 2, [r.prompt[:80] for r in server.log]  # rows 1 and 8 only
    assert not server.requests_for("pred two") and not server.requests_for("pred three")
    got = out_rows(tmp_path / "out")
    assert got[1]["judge"] == 0.5 and got[8]["judge_model"] == "judge-a"
    for idx in (2, 3, 4, 5, 6, 7):
        assert got[idx]["judge"] is None and "judge_model" not in got[idx], got[idx]
    assert "6 row(s) cannot be judged" in err and "predictions.jsonl:2: gt is missing" in err, err


def test_dry_run_says_so_too(server, tmp_path, capsys):
    runs = runs_tree(tmp_path, _rows())
    main(["judge", "--runs", str(runs), "--model", "judge-a", "--base-url", server.url, "--dry-run"])
    out = capsys.readouterr()
    assert "6 row(s) cannot be judged" in out.err + out.out
    assert server.requests == 0


def test_validate_lists_each(tmp_path, capsys):
    bench = write_mini_bench(tmp_path / "bench")
    runs = runs_tree(tmp_path, _rows())
    assert main(["validate", str(bench), "--runs", str(runs)]) == 1
    out = capsys.readouterr().out
    lines = [line for line in out.splitlines() if "cannot be judged" in line]
    assert len(lines) == 6, out
    assert any(":2: error: gt is missing (null)" in line for line in lines), lines
    assert any(":3: error: gt is missing" in line for line in lines), lines
    assert any(":4: error: pred logged as a list, not text" in line for line in lines), lines
    assert any(":7: error: pred logged as true/false, not text" in line for line in lines), lines
    assert not any(":8:" in line for line in lines)


def test_nothing_judgeable_does_not_say_already_scored(server, tmp_path, capsys):
    null_gt = row(1, "p")
    null_gt["gt"] = None
    runs = runs_tree(tmp_path, [null_gt, row(2, "q", gt=" ")])
    rc = main(["judge", "--runs", str(runs), "--model", "judge-a", "--base-url", server.url, "--dry-run"])
    err = capsys.readouterr().err
    assert rc == 1
    assert "2 open row(s): 2 cannot be judged, 0 already scored" in err and "--force" not in err, err
