"""`memscope score`'s printer: rich is imported while the runs are read (not before the reader's
workers start, which would hold them back; nor after the report, in its path), and the progress
bar still shows on a terminal."""

from __future__ import annotations

import subprocess
import sys

import pytest

from tests.paths import DEMO, REPO
from tests.scorer.commands.test_progress_escapes import run_on_a_terminal

pytestmark = pytest.mark.needs_demo

# Runs `memscope score` in this process with the reader wrapped: prints whether rich's console was
# imported when the runs began to be read, and when the command returned.
PROBE = """
import sys
import scorer.scoring.context as context
from scorer.cli import main
real = context.read_frame
def read_frame(*a, **k):
    print("at read:", "rich.console" in sys.modules, flush=True)
    return real(*a, **k)
context.read_frame = read_frame
code = main(sys.argv[1:])
print("after:", "rich.console" in sys.modules, code, flush=True)
"""


def test_rich_is_imported_while_the_runs_are_read(tmp_path):
    proc = subprocess.run([sys.executable, "-c", PROBE, "score", str(DEMO), "--runs", str(DEMO / "runs"),
                           "--sections", "matrix", "--format", "json", "--out", str(tmp_path / "out")],
                          capture_output=True, text=True, cwd=REPO, timeout=120)
    assert proc.returncode == 0, proc.stderr
    lines = proc.stdout.splitlines()
    assert "at read: False" in lines and "after: True 0" in lines
    assert any(line.startswith("wrote 1 file(s) to ") for line in lines)


def test_the_progress_bar_shows_when_stderr_is_a_terminal(tmp_path, monkeypatch):
    for name in ("FORCE_COLOR", "TTY_COMPATIBLE", "TTY_INTERACTIVE"):  # a real terminal, nothing forced
        monkeypatch.delenv(name, raising=False)
    rc, out = run_on_a_terminal([sys.executable, "-m", "scorer", "score", str(DEMO), "--runs", str(DEMO / "runs"),
                                 "--sections", "matrix", "--format", "json", "--out", str(tmp_path / "out")], {})
    assert rc == 0, out.decode(errors="replace")
    assert b"wrote 1 file(s)" in out
    assert b"scoring" in out or b"reading" in out or b"section" in out  # the bar was drawn
