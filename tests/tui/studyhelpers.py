"""Shared by the Study screen tests: build a study through the real CLI, open the real app on it, wait
until the current entry is painted and may be answered, and read what the screen says."""

from __future__ import annotations

import re
from pathlib import Path

from apphelpers import DEMO, SIZE  # noqa: F401  (re-exported for the study tests)

from scorer.cli import main as cli_main

RUNS = DEMO / "runs"
# What a blind agreement screen must never show before the annotator commits: the method (run or
# display name), the backbone, or a judge score.
LEAK = re.compile(r"full_context|semantic_rag|clue_only|FC\([TV]\)|SRAG\(|Oracle\(|gpt-5\.4|qwen3|judge \d")


def new_study(db: Path, kind: str, name: str, per_cell: str, *extra: str, runs: bool = False) -> None:
    argv = ["study", "new", "--kind", kind, "--per-cell", per_cell, "--name", name, "--db", str(db),
            *extra, str(DEMO)]
    if runs:
        argv += ["--runs", str(RUNS)]
    assert cli_main(argv) == 0


def study_app(db: Path, study: str, annotator: str, runs: bool = True):
    from tui.app import make_app

    return make_app(DEMO, [RUNS] if runs else [], db=db, annotator=annotator, study=study)


async def wait_ready(pilot, limit: int = 400):
    """Until the app shows a Study screen whose current entry is painted; returns that screen."""
    from tui.screens.study_base import StudyScreen

    for _ in range(limit):
        await pilot.pause()
        screen = pilot.app.screen
        if isinstance(screen, StudyScreen) and screen.ready:
            return screen
    raise AssertionError(f"the study screen never became ready (screen: {pilot.app.screen!r})")


def text_of(screen, selector: str) -> str:
    """The plain text a Static holds (whether or not it is scrolled into view)."""
    w = screen.query_one(selector)
    return str(w.content)


def saved_line(screen) -> str:
    return text_of(screen, "#study-saved")


def kappa(a: list, b: list) -> float:
    """Cohen's κ by hand: (p_o − p_e) / (1 − p_e) over the categories either side used."""
    n = len(a)
    cats = sorted(set(a) | set(b))
    p_o = sum(x == y for x, y in zip(a, b)) / n
    p_e = sum((a.count(c) / n) * (b.count(c) / n) for c in cats)
    return (p_o - p_e) / (1 - p_e)
