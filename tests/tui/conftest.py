"""Fixtures of the app's tests (the `needs_demo` marker is tests/conftest.py's). The helpers (the demo
app, waiting, reading the screen, the Study screens' helpers) are in tests/tui/apphelpers.py,
imported one way: `from tests.tui.apphelpers import …`.

- `halfcell`: images drawn with the half-cell renderer, whatever the terminal (`pytestmark =
  pytest.mark.usefixtures("halfcell")` for a whole file).
- `demo`: the demo benchmark and its runs loaded as the app loads them (one per test module).
- crash logs of an app that fails in a test go to a temporary folder, not ~/.local/state (autouse).
"""

from __future__ import annotations

import pytest

from tests.paths import DEMO, RUNS
from tui.media import image as img
from tui.state import load_state


@pytest.fixture(autouse=True)
def _crash_logs_in_tmp(tmp_path_factory, monkeypatch) -> None:
    monkeypatch.setenv("MEMSCOPE_CRASH_DIR", str(tmp_path_factory.getbasetemp() / "crash-logs"))


@pytest.fixture
def halfcell() -> None:
    img.prepare("halfcell")


@pytest.fixture(scope="module")
def demo():
    return load_state(DEMO, [RUNS], annotator="t")
