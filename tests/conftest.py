"""Shared by every test (tests/tui/conftest.py adds the app's fixtures).

- `@pytest.mark.needs_demo` (or `pytestmark = pytest.mark.needs_demo`): skipped when the demo
  benchmark and its runs have not been built (`python fixtures/build.py`).
- `demo_bench`: the shipped demo benchmark, loaded once per test module.

The paths themselves (REPO, DEMO, RUNS, LOCOMO) are in tests/paths.py, and the files and objects
tests build (benchmarks, runs, upstream run folders, hand-built model objects) in tests/builders/;
both are imported one way, `from tests.paths import …`, `from tests.builders.runs import …`.
"""

from __future__ import annotations

import pytest

from scorer.load.memeye import load_benchmark
from tests.paths import DEMO, DEMO_MISSING, demo_built


def pytest_configure(config: pytest.Config) -> None:
    config.addinivalue_line("markers", "needs_demo: skipped when the demo benchmark is not built (fixtures/build.py)")


@pytest.hookimpl(tryfirst=True)
def pytest_runtest_setup(item: pytest.Item) -> None:
    if item.get_closest_marker("needs_demo") is not None and not demo_built():
        pytest.skip(DEMO_MISSING)


@pytest.fixture(scope="module")
def demo_bench():
    return load_benchmark(DEMO)
