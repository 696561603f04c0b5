"""One demo report with every output format, shared by the paper, figure and long-CSV tests (made
once per session: drawing the figures at 300 dpi in three formats is the slow part)."""

from __future__ import annotations

from pathlib import Path

import pytest

from scorer.cli import main
from tests.paths import DEMO


@pytest.fixture(scope="session")
def demo_outputs(tmp_path_factory) -> Path:
    """`memscope score` of the demo (with its annotations and a --compare pair) as tex, png, csv, json."""
    tmp = tmp_path_factory.mktemp("demo-outputs")
    db = tmp / "a.db"
    assert main(["annotations", "import", str(DEMO / "annotations.jsonl"), "--db", str(db)]) == 0
    out = tmp / "r"
    assert main(["score", str(DEMO), "--runs", str(DEMO / "runs"), "--db", str(db), "--compare", "SRAG(V):FC(V)",
                 "--resamples", "300", "--out", str(out), "--format", "tex,png,csv,json"]) == 0
    return out
