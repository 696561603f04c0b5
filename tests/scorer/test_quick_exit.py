"""The console script's quick exit (scorer.cli.exit_with, issue 19): `score`, `validate` and `info`
end the process without tearing its objects down, yet write all their output, keep their exit
code, and still end normally when their output is piped into a reader that stops early; every
other command exits normally (its exit handlers run)."""

from __future__ import annotations

import json
import subprocess
import sys

import pytest

from tests.paths import DEMO, REPO

# A console script that registers an exit handler first: it prints only if the interpreter tears down.
SCRIPT = ("import atexit, sys\n"
          "atexit.register(lambda: print('TEARDOWN', file=sys.stderr))\n"
          "from tui.cli import console\n"
          "sys.argv = ['memscope', *sys.argv[1:]]\n"
          "console()\n")


def _memscope(*args: str, **kw) -> subprocess.CompletedProcess:
    return subprocess.run([sys.executable, "-c", SCRIPT, *args], capture_output=True, text=True, cwd=REPO,
                          timeout=300, **kw)


def test_score_ends_without_teardown_and_writes_its_whole_report(tmp_path):
    out = tmp_path / "rep"
    proc = _memscope("score", str(DEMO), "--runs", str(DEMO / "runs"), "--format", "json,md", "--out", str(out))
    assert proc.returncode == 0, proc.stderr
    assert "TEARDOWN" not in proc.stderr  # the quick exit skipped the interpreter's teardown
    # printed, and flushed before the exit (rich folds the long line at 80 columns)
    assert proc.stdout.startswith("wrote 2 file(s) to") and proc.stdout.endswith(f"{out / 'report.json'}\n")
    data = json.loads((out / "report.json").read_text())
    assert data["inputs"]["rows"]["scored"] > 0
    md = (out / "report.md").read_text()
    assert md.endswith("\n") and len(md) > 1000


def test_score_to_the_terminal_flushes_every_line(tmp_path):
    proc = _memscope("score", str(DEMO), "--runs", str(DEMO / "runs"), "--sections", "matrix")
    assert proc.returncode == 0, proc.stderr
    assert "TEARDOWN" not in proc.stderr
    full = _memscope("score", str(DEMO), "--runs", str(DEMO / "runs"), "--sections", "matrix", "--out",
                     str(tmp_path / "r"), "--format", "md")
    assert full.returncode == 0
    # the terminal rendering is long (one table per backbone): all of it arrived
    assert len(proc.stdout.splitlines()) > 40 and proc.stdout.rstrip().splitlines()[-1].strip()


def test_an_error_keeps_its_exit_code_and_message():
    proc = _memscope("score", str(DEMO), "--runs", str(DEMO / "no-such-runs-folder"), "--db", "/nonexistent.db")
    assert proc.returncode == 2
    assert proc.stderr.startswith("memscope: ") and "no such annotation database" in proc.stderr
    assert "TEARDOWN" not in proc.stderr


def test_validate_piped_into_a_reader_that_stops_early():
    proc = subprocess.run(f"{sys.executable} -c \"$SCRIPT\" validate {DEMO} --runs {DEMO / 'runs'} | head -c 10",
                          shell=True, capture_output=True, text=True, cwd=REPO, timeout=300,
                          env={**_env(), "SCRIPT": SCRIPT})
    assert proc.returncode == 0
    assert "Traceback" not in proc.stderr and "BrokenPipe" not in proc.stderr


def test_other_commands_exit_normally(tmp_path):
    proc = _memscope("study", "list", "--db", str(tmp_path / "s.db"))  # runs to its end, returns an exit code
    assert "TEARDOWN" in proc.stderr  # not a quick-exit command: the interpreter tore down as usual
    quick = _memscope("info", str(DEMO))
    assert quick.returncode == 0 and "TEARDOWN" not in quick.stderr


def _env() -> dict:
    import os

    return dict(os.environ)


@pytest.mark.parametrize("command", [f"info {DEMO}", f"score {DEMO} --runs {DEMO / 'runs'} --sections matrix "
                                                    "--resamples 10"])
def test_a_table_piped_into_head_exits_0(command):
    """rich meets the closed pipe of `| head -1` with SystemExit(1): memscope's own exit is 0, as for
    any reader that stops early (pipefail: the pipeline's status is memscope's)."""
    proc = subprocess.run(f"set -o pipefail; {sys.executable} -c \"$SCRIPT\" {command} | head -1",
                          shell=True, executable="/bin/bash", capture_output=True, text=True, cwd=REPO,
                          timeout=300, env={**_env(), "SCRIPT": SCRIPT})
    assert proc.returncode == 0, proc.stderr
    assert "Traceback" not in proc.stderr and len(proc.stdout.splitlines()) == 1
