"""The command line: each command imports only what it needs; a mistyped command lists them all."""

from __future__ import annotations

from tests.paths import REPO


def test_a_command_imports_only_its_own_module(tmp_path):
    import subprocess
    import sys

    code = ("import sys; from scorer.cli import main\n"
            "try:\n    main(['score', '--help'])\nexcept SystemExit:\n    pass\n"
            "print(sorted(m for m in sys.modules if m.startswith('scorer.commands.')))")
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, cwd=REPO, check=True)
    assert "usage: memscope score" in out.stdout
    assert out.stdout.strip().splitlines()[-1] == "['scorer.commands.score']"
    wrong = subprocess.run([sys.executable, "-m", "scorer", "scroe"], capture_output=True, text=True, cwd=REPO)
    assert wrong.returncode == 2 and "choose from" in wrong.stderr and "'judge'" in wrong.stderr
