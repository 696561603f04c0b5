"""Fixtures of the app's tests. The helpers (paths, apps, waiting, reading the screen) are in
apphelpers.py, imported one way: `from apphelpers import …`.

- `@pytest.mark.needs_demo` (or `pytestmark = pytest.mark.needs_demo`): skipped when the demo
  benchmark has not been built (`python fixtures/build.py`).
- `halfcell`: images drawn with the half-cell renderer, whatever the terminal (`pytestmark =
  pytest.mark.usefixtures("halfcell")` for a whole file).
- `demo`: the demo benchmark and its runs loaded as the app loads them (one per test module).
"""

from __future__ import annotations

import pytest

from apphelpers import DEMO, DEMO_MISSING, RUNS
from tui.media import image as img
from tui.state import load_state


def pytest_configure(config: pytest.Config) -> None:
    config.addinivalue_line("markers", "needs_demo: skipped when the demo benchmark is not built (fixtures/build.py)")


def pytest_runtest_setup(item: pytest.Item) -> None:
    if item.get_closest_marker("needs_demo") is not None and not (DEMO / "dialog").is_dir():
        pytest.skip(DEMO_MISSING)


@pytest.fixture
def halfcell() -> None:
    img.prepare("halfcell")


@pytest.fixture(scope="module")
def demo():
    return load_state(DEMO, [RUNS], annotator="t")
