"""Issue 14 class 4: numeric options outside their bounds (scorer.metrics.constants.OPTION_BOUNDS)
are refused with one line, exit 2, before any file is read. Before the bounds, `--seed -1` ended
in numpy's ValueError traceback and `--resamples 100000000` was killed after gigabytes."""

from __future__ import annotations

import pytest

from scorer.cli import main
from scorer.metrics.constants import MAX_RESAMPLES, OPTION_BOUNDS
from tests.paths import DEMO, RUNS

MISSING = "/nonexistent/bench"  # never read: the bounds are checked first

CASES = [
    (["score", MISSING, "--runs", MISSING, "--resamples", "100000000"], "--resamples"),
    (["score", MISSING, "--runs", MISSING, "--resamples", str(MAX_RESAMPLES + 1)], "--resamples"),
    (["score", MISSING, "--runs", MISSING, "--seed", "-1"], "--seed"),
    (["score", MISSING, "--runs", MISSING, "--seed", str(2**64)], "--seed"),
    (["score", MISSING, "--runs", MISSING, "--k", "100000000000"], "--k"),
    (["study", "new", MISSING, "--kind", "labels", "--name", "s", "--per-cell", "100000000",
      "--db", "/nonexistent/x.db"], "--per-cell"),
    (["study", "new", MISSING, "--kind", "labels", "--name", "s", "--per-cell", "2", "--seed", "-5",
      "--db", "/nonexistent/x.db"], "--seed"),
    (["judge", "--runs", MISSING, "--model", "m", "--concurrency", "1000000"], "--concurrency"),
    (["judge", "--runs", MISSING, "--model", "m", "--max-retries", "1000000000"], "--max-retries"),
    (["judge", "--runs", MISSING, "--model", "m", "--timeout", "nan"], "--timeout"),
    (["judge", "--runs", MISSING, "--model", "m", "--backoff", "inf"], "--backoff"),
    (["retrieve", MISSING, "--out", "/nonexistent/out", "--top-k", "0"], "--top-k"),
    (["retrieve", MISSING, "--out", "/nonexistent/out", "--top-k", "10000000000"], "--top-k"),
    # a phrase with no words would match nothing: the default phrases gone, text detection off unsaid
    (["score", MISSING, "--runs", MISSING, "--abstain-pattern", ""], "--abstain-pattern"),
    (["score", MISSING, "--runs", MISSING, "--abstain-pattern", "I don't know", "  "], "--abstain-pattern"),
]


@pytest.mark.parametrize("argv,flag", CASES, ids=[f"{a[0]} {f} {a[a.index(f) + 1]}" for a, f in CASES])
def test_out_of_bounds_is_one_line_before_any_work(argv, flag, capsys):
    assert main(argv) == 2
    err = capsys.readouterr().err
    assert err.count("\n") == 1 and err.startswith("memscope: ") and flag in err
    assert "Traceback" not in err


def test_bounds_are_defined_once_beside_the_defaults():
    from scorer.metrics import constants

    assert OPTION_BOUNDS["resamples"] == (1, MAX_RESAMPLES)
    assert OPTION_BOUNDS["resamples"][0] <= constants.DEFAULT_RESAMPLES <= MAX_RESAMPLES
    assert OPTION_BOUNDS["k"][0] <= constants.DEFAULT_K <= OPTION_BOUNDS["k"][1]
    assert OPTION_BOUNDS["seed"][0] <= constants.DEFAULT_SEED <= OPTION_BOUNDS["seed"][1]


@pytest.mark.needs_demo
def test_the_bounds_themselves_are_accepted(tmp_path, capsys):
    runs = str(RUNS / "Travel_Photo_Diary")
    lo_seed, hi_seed = OPTION_BOUNDS["seed"]
    for seed in (lo_seed, hi_seed):
        assert main(["score", str(DEMO), "--runs", runs, "--sections", "matrix", "--resamples", "10",
                     "--seed", str(seed), "--k", "100000", "--out", str(tmp_path / f"o{seed}"),
                     "--format", "json"]) == 0
