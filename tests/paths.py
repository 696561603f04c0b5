"""Where the tests find the repository, the shipped demo and the peer data: the one definition, for
module-level use (parametrize, skip conditions, helpers); tests/conftest.py marks with them.

    from tests.paths import DEMO, REPO, RUNS
"""

from __future__ import annotations

from pathlib import Path

REPO = Path(__file__).resolve().parents[1]
DEMO = REPO / "fixtures" / "demo"  # the shipped demo benchmark (python fixtures/build.py)
RUNS = DEMO / "runs"  # its synthetic runs
DEMO_MISSING = "the demo is built by fixtures/build.py"  # why a test marked needs_demo is skipped
PEER = REPO.parent / "shared" / "peer-data"  # real data sets beside the clone, when present
LOCOMO = PEER / "locomo10.json"


def demo_built() -> bool:
    """The demo's dialogs and runs are there (tests marked `needs_demo` are skipped otherwise)."""
    return (DEMO / "dialog").is_dir() and RUNS.is_dir()
