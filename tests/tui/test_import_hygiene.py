"""Run-time guards for the import hygiene the command line and the plain-Python app modules depend on
(as harlequin has them): in a fresh interpreter, importing them loads no Textual module.

The import-linter contracts in pyproject.toml read the static graph, so they cannot tell an import at
module scope from one deferred into the function that needs it (`memscope` imports the app only for
the `tui` command). These tests run the real thing in a subprocess and look at `sys.modules`, which
is the only way to prove a deferral defers.
"""

from __future__ import annotations

import os
import subprocess
import sys
import tomllib

import pytest

from tests.paths import REPO

FORBIDDEN = ("textual", "textual_image")


def textual_free_modules() -> list[str]:
    """The modules the import contract says never import Textual (one list: pyproject.toml's)."""
    config = tomllib.loads((REPO / "pyproject.toml").read_text(encoding="utf-8"))
    for contract in config["tool"]["importlinter"]["contracts"]:
        sources = contract.get("source_modules", [])
        if "textual" in contract.get("forbidden_modules", []) and sources and all(
                m.startswith("tui.") for m in sources):
            return sources
    raise AssertionError("pyproject.toml has no contract keeping tui modules free of Textual")


def loaded_after(code: str) -> list[str]:
    """The forbidden top-level packages in sys.modules after running `code` in a fresh interpreter."""
    probe = f"{code}\nimport sys\nprint(','.join(m for m in {FORBIDDEN!r} if m in sys.modules))\n"
    proc = subprocess.run([sys.executable, "-c", probe], capture_output=True, text=True, timeout=120, cwd=REPO,
                          env={**os.environ, "PYTHONPATH": str(REPO)})
    assert proc.returncode == 0, proc.stderr
    last = proc.stdout.splitlines()[-1] if proc.stdout.strip() else ""
    return [m for m in last.split(",") if m]


@pytest.mark.parametrize("module", textual_free_modules())
def test_the_plain_python_app_modules_load_no_textual(module: str) -> None:
    assert loaded_after(f"import {module}") == [], f"import {module} loads Textual"


def test_the_whole_scorer_loads_no_textual() -> None:
    code = ("import importlib, pkgutil, scorer\n"
            "for m in pkgutil.walk_packages(scorer.__path__, 'scorer.'):\n"
            "    if not m.name.endswith('__main__'):\n"
            "        importlib.import_module(m.name)\n")
    assert loaded_after(code) == []


@pytest.mark.parametrize("module", ["scorer.cli", "tui.cli"])
def test_the_command_line_modules_load_no_textual(module: str) -> None:
    assert loaded_after(f"import {module}") == [], f"import {module} loads Textual"


@pytest.mark.parametrize("argv", [["--help"], ["--version"], ["score", "--help"],
                                  pytest.param(["info", "fixtures/demo"], marks=pytest.mark.needs_demo)])
def test_memscope_commands_other_than_the_app_load_no_textual(argv: list[str]) -> None:
    """`memscope …` for everything but the app: the console script's own entry point, end to end."""
    code = ("import contextlib, io\n"
            "from tui.cli import main\n"
            "with contextlib.redirect_stdout(io.StringIO()):\n"
            "    try:\n"
            f"        main({argv!r})\n"
            "    except SystemExit:\n"
            "        pass\n")
    assert loaded_after(code) == [], f"memscope {' '.join(argv)} loads Textual"


def test_the_guard_sees_textual_when_it_is_loaded() -> None:
    """The probe itself works: the app does load Textual (a guard that never fires would pass anyway)."""
    assert "textual" in loaded_after("import tui.app")
