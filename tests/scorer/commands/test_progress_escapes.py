"""Issue 14, class 8: the judge's progress bar is drawn only on a terminal, so it is tested on one — a
real pseudo-terminal — with a model name that carries an OSC title and a screen clear. The bar must
show the name, never pass its escapes to the terminal."""

from __future__ import annotations

import os
import pty
import select
import subprocess
import sys
import time
from pathlib import Path

from tests.judge_server import JudgeServer
from tests.paths import REPO
from tests.scorer.judge.test_judge import row, runs_tree

HOSTILE = "judge\x1b]0;PWNED\x07\x1b[2J-a"


def run_on_a_terminal(argv: list[str], extra_env: dict[str, str], limit: float = 60) -> tuple[int, bytes]:
    master, slave = pty.openpty()
    proc = subprocess.Popen(argv, stdin=slave, stdout=slave, stderr=slave, env={**os.environ, "PYTHONPATH": str(REPO), **extra_env,
                            "TERM": "xterm-256color", "COLUMNS": "120", "LINES": "40"}, close_fds=True)
    os.close(slave)
    out, deadline = bytearray(), time.monotonic() + limit
    while time.monotonic() < deadline:
        ready, _, _ = select.select([master], [], [], 0.1)
        if ready:
            try:
                chunk = os.read(master, 65536)
            except OSError:  # the child closed the terminal
                break
            if not chunk:
                break
            out += chunk
        elif proc.poll() is not None:
            break
    os.close(master)
    return proc.wait(timeout=10), bytes(out)


def test_progress_bar_shows_a_hostile_model_name_without_its_escapes(tmp_path: Path) -> None:
    # Each answer takes a while, so the bar is drawn several times before it goes.
    rows = [row(i, f"answer {i} [[score:0.5]]") for i in range(1, 5)]
    runs = runs_tree(tmp_path, rows)
    with JudgeServer(latency=0.3) as server:
        rc, out = run_on_a_terminal(
            [sys.executable, "-m", "scorer", "judge", "--runs", str(runs), "--model", HOSTILE,
             "--base-url", server.url, "--out", str(tmp_path / "out"), "--cache", str(tmp_path / "c.sqlite"),
             "--concurrency", "1", "--timeout", "5"],
            {"OPENAI_API_KEY": "sk-test-progress"})
        assert {r.model for r in server.log} == {HOSTILE}  # the name reached the server as given
    assert rc == 0, out.decode(errors="replace")
    assert b"judging with" in out  # the bar was drawn on the terminal
    assert b"\x1b]0;PWNED" not in out and b"\x1b[2J" not in out
    assert b"\\x1b]0;PWNED" in out or b"]0;PWNED" in out  # shown, visibly
