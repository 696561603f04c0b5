"""Shared by the app's tests (the one helpers module: `from tests.tui.apphelpers import …`; the
fixtures are in conftest.py, the demo's paths in tests/paths.py, the benchmarks tests write in
tests/builders/): the demo app, a way to wait until the app has settled (workers done, screen
painted), the text a running app shows, and the Study screens' helpers (a study built through the
real CLI, the app opened on it, waiting until its entry may be answered)."""

from __future__ import annotations

import re
from pathlib import Path

from textual.worker import WorkerCancelled

from scorer.cli import main as cli_main
from tests.paths import DEMO, RUNS

SIZE = (120, 40)


async def settle(pilot, rounds: int = 20) -> None:
    """Wait for the chain of workers (image decodes, scoring) and the repaints they cause, instead of
    sleeping: a finished worker's handler may queue another, so loop until none is left."""
    app = pilot.app
    for _ in range(rounds):
        await pilot.pause()
        try:
            await app.workers.wait_for_complete()
        except WorkerCancelled:  # a superseded picture job (a held ← / →): its successor is waited for
            pass
        await pilot.pause()
        if all(w.is_finished for w in app.workers):  # pending ones count: a handler may just have queued one
            return


def demo_app(tmp_path: Path | None = None, db: Path | None = None, **kw):
    from tui.app import make_app

    exports = (tmp_path / "exports") if tmp_path is not None else None
    return make_app(DEMO, [DEMO / "runs"], db=db, annotator=kw.pop("annotator", "ann1"), exports_dir=exports, **kw)


def demo_db(tmp_path: Path) -> Path:
    """A fresh annotation store holding the demo's annotations.jsonl."""
    from scorer.store import Store, import_jsonl

    path = tmp_path / "demo.db"
    with Store(path) as store:
        import_jsonl(store, DEMO / "annotations.jsonl")
    return path


async def pictures_done(pilot, widgets, tries: int = 150) -> None:
    """Wait until every picture widget shows its picture or its error: a decoded picture arrives by
    message after its worker has ended, so waiting for workers alone can look too early."""
    for _ in range(tries):
        if all(w.picture is not None or w.error is not None for w in widgets):
            return
        await pilot.pause(0.02)


# ---------------------------------------------------------------- what the screen shows


def screen_lines(app) -> list[str]:
    """Every row of the current screen (modal screens included) as plain text: what the user would
    read off the terminal."""
    strips = app.screen._compositor.render_strips()
    return ["".join(seg.text for seg in strip) for strip in strips]


def screen_text(app) -> str:
    return "\n".join(screen_lines(app))


def text_of(screen, selector: str) -> str:
    """The plain text a Static holds (whether or not it is scrolled into view)."""
    w = screen.query_one(selector)
    return str(w.content)


# ---------------------------------------------------------------- the Study screens
# A study built through the real CLI, the real app opened on it, waiting until the current entry is
# painted and may be answered.

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
    from tui.bases.study import StudyScreen

    for _ in range(limit):
        await pilot.pause()
        screen = pilot.app.screen
        if isinstance(screen, StudyScreen) and screen.ready:
            return screen
    raise AssertionError(f"the study screen never became ready (screen: {pilot.app.screen!r})")


def saved_line(screen) -> str:
    return text_of(screen, "#study-saved")


def kappa(a: list, b: list) -> float:
    """Cohen's κ by hand: (p_o − p_e) / (1 − p_e) over the categories either side used."""
    n = len(a)
    cats = sorted(set(a) | set(b))
    p_o = sum(x == y for x, y in zip(a, b)) / n
    p_e = sum((a.count(c) / n) * (b.count(c) / n) for c in cats)
    return (p_o - p_e) / (1 - p_e)
