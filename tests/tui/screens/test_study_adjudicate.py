"""Adjudication end to end (issue 16 point 4): an adjudication study of the demo annotations'
verdicts (annotators disagreeing, and their majority against the judge) is made with the CLI; the
real app in its own process decides entries with real key presses and is killed with SIGKILL
midway; every decision it showed as saved is in the store; the app restarted on the database
resumes at the next undecided entry and is driven to the end with Pilot; `memscope score` then
reports the judge-vs-adjudicated-human κ — checked against scikit-learn on the gold built by hand —
and says how many pairs were adjudicated. The screen shows every annotator's act side by side."""

from __future__ import annotations

import json
import os
import signal
import subprocess
import sys
from collections import Counter
from pathlib import Path

import pytest
from sklearn.metrics import cohen_kappa_score
from textual.widgets import Input

from scorer.store import Store
from tests.paths import DEMO, REPO, RUNS
from tui.app import make_app
from tui.cli import main
from tui.modals.reason import ReasonDialog
from tui.screens.study_adjudicate import AdjudicateVerdictsScreen

pytestmark = [pytest.mark.needs_demo, pytest.mark.usefixtures("halfcell")]
DRIVER = REPO / "tests" / "tui" / "adjudicate_driver.py"
KEYS = "arb"
KILL_AT = 3


def _make(tmp_path: Path) -> Path:
    db = tmp_path / "adj.db"
    assert main(["annotations", "import", str(DEMO / "annotations.jsonl"), "--db", str(db)]) == 0
    assert main(["study", "new", "--kind", "adjudicate", "--of", "verdicts", "--include-judge", "--name", "adj",
                 "--db", str(db), str(DEMO), "--runs", str(RUNS)]) == 0
    return db


def _disputes(db: Path) -> dict:
    """What the demo's annotators said on each queued entry, and why it was queued, by hand."""
    with Store(db) as store:
        items = store.study_items("adj")
        verdicts = store.verdicts()
    by: dict = {}
    for r in verdicts:
        by.setdefault((r["item_id"], r["mode"], r["run_key"]), {})[r["annotator"]] = r["verdict"]
    return {(it.item_id, it.mode, it.run_key): (by[(it.item_id, it.mode, it.run_key)], it.stratum) for it in items}


def test_the_queue_is_the_disagreements(tmp_path: Path) -> None:
    db = _make(tmp_path)
    disputes = _disputes(db)
    assert disputes, "the demo's annotators disagree somewhere"
    for said, why in disputes.values():
        if "annotators" in why:
            assert len(set(said.values())) > 1
        else:
            assert why == "judge" and len(set(said.values())) == 1  # one voice, against the judge
    # an entry on which every annotator agrees with the judge is never queued
    with Store(db) as store:
        assert store.study("adj").params["strata"] == dict(sorted(Counter(w for _, w in disputes.values()).items()))


async def test_the_screen_shows_every_act_side_by_side_unblinded(tmp_path: Path) -> None:
    db = _make(tmp_path)
    app = make_app(DEMO, [RUNS], db=db, annotator="adj", study="adj")
    async with app.run_test(size=(140, 48)) as pilot:
        while not (isinstance(app.screen, AdjudicateVerdictsScreen) and app.screen.ready):
            await pilot.pause()
        screen = app.screen
        e = screen.session.entry
        said = _disputes(db)[(e.item_id, e.mode, e.run_key)][0]
        boxes = [str(b.content) for b in screen.query(".adj-act")]
        assert len(boxes) == len(said)
        for (annotator, verdict), box in zip(sorted(said.items()), boxes):
            assert box.startswith(annotator) and verdict in box
        item_text = str(screen.query_one("#adj-item").content)
        assert e.run_key in item_text and "Judge" in item_text and "Gold answer" in item_text
        # esc in the reason dialog writes nothing
        await pilot.press("a")
        while not isinstance(app.screen, ReasonDialog):
            await pilot.pause()
        await pilot.press("escape")
        await pilot.pause()
        with Store(db) as store:
            assert store.current("adjudication") == []


def test_adjudication_survives_sigkill_resumes_and_is_scored(tmp_path: Path) -> None:
    db = _make(tmp_path)
    disputes = _disputes(db)
    total = len(disputes)
    assert total > KILL_AT
    env = dict(os.environ, PYTHONPATH=str(REPO) + os.pathsep + os.environ.get("PYTHONPATH", ""))
    proc = subprocess.Popen([sys.executable, str(DRIVER), str(DEMO), str(RUNS), str(db), "adj", "adj",
                             str(total), KEYS], stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True,
                            env=env, cwd=REPO)
    saved = []
    try:
        assert proc.stdout.readline().split() == ["ready", "0", str(total)]
        for line in proc.stdout:
            if line.startswith("saved"):
                saved.append(line.split()[1:4])
            if len(saved) == KILL_AT:
                proc.send_signal(signal.SIGKILL)
                break
    finally:
        proc.kill()
        proc.wait(timeout=30)
    assert proc.returncode == -signal.SIGKILL and len(saved) == KILL_AT
    verdict = {"a": "accept", "r": "reject", "b": "borderline"}
    with Store(db) as store:
        decided = {(r["item_id"], r["run_key"]): r for r in store.current("adjudication", study="adj")}
    for item_id, run, key in saved:  # shown as saved → in the store, with its reason
        assert decided[(item_id, run)]["decision"] == {"verdict": verdict[key]}
        assert decided[(item_id, run)]["reason"].startswith("reason ")
    assert KILL_AT <= len(decided) < total

    # resumed in this process: the next undecided entry, then to the end with real keys
    import asyncio

    async def resume() -> list[tuple]:
        app = make_app(DEMO, [RUNS], db=db, annotator="adj", study="adj")
        out = []
        async with app.run_test(size=(140, 48)) as pilot:
            while not (isinstance(app.screen, AdjudicateVerdictsScreen) and app.screen.ready):
                await pilot.pause()
            screen = app.screen
            s = screen.session
            assert s.n_done == len(decided) and not s.is_done()
            i = 0
            while not s.finished:
                e = s.entry
                await pilot.press(KEYS[i % 3])
                while not isinstance(app.screen, ReasonDialog):
                    await pilot.pause()
                app.screen.query_one(Input).value = "resumed"
                await pilot.press("enter")
                while not (app.screen is screen and screen.ready):
                    await pilot.pause()
                out.append((e.item_id, e.run_key, verdict[KEYS[i % 3]]))
                i += 1
            assert "study complete" in str(screen.query_one("#study-head").content)
        return out

    after = asyncio.run(resume())
    assert len(decided) + len(after) == total
    with Store(db) as store:
        gold = {(r["item_id"], r["mode"], r["run_key"]): r["decision"]["verdict"]
                for r in store.current("adjudication")}
    assert len(gold) == total

    out = tmp_path / "report"
    assert main(["score", str(DEMO), "--runs", str(RUNS), "--db", str(db), "--sections", "agreement",
                 "--format", "json,md", "--out", str(out), "--resamples", "200"]) == 0
    report = json.loads((out / "report.json").read_text())
    rows = {r["human"]: r for r in report["agreement"]["judge_vs_human"] if r["stratum"] == "all"}
    adj = rows["adjudicated"]
    assert adj["adjudicated"] == total and rows["majority"]["adjudicated"] == 0
    # by hand: the adjudicated verdict where one exists, else the strict majority of the annotators
    from scorer.load.memeye import load_benchmark
    from scorer.load.runs import load_runs
    from scorer.load.join import Joiner

    bench = load_benchmark(DEMO)
    judge = {(item.item_id, run.mode, run.key): p.judge for run, p, item in Joiner(bench).pairs(load_runs([RUNS], benchmark=bench))}
    with Store(db) as store:
        votes: dict = {}
        for r in store.verdicts():
            votes.setdefault((r["item_id"], r["mode"], r["run_key"]), []).append(r["verdict"])
    j, h = [], []
    for key, vs in votes.items():
        top, count = Counter(vs).most_common(1)[0]
        human = gold.get(key, top if 2 * count > len(vs) else None)
        if human in ("accept", "reject") and judge.get(key) is not None:
            j.append("accept" if judge[key] >= 0.5 else "reject")
            h.append(human)
    assert adj["n"] == len(h)
    assert adj["kappa"] == pytest.approx(cohen_kappa_score(j, h), abs=1e-6)
    md = (out / "report.md").read_text()
    assert f"{total} pair(s) adjudicated" in md and "| adjudicated |" in md


def test_snapshot_adjudicate_verdicts(snap_compare, tmp_path: Path, monkeypatch) -> None:
    """The screen at 140×48: the item, the prediction and the judge, every annotator's act side by side."""
    from tests.tui.apphelpers import settle
    from tui.media import image as img

    monkeypatch.chdir(tmp_path)  # the header shows the database's path as given: relative, the same every run
    _make(tmp_path)
    img.PICTURES.clear()
    app = make_app(DEMO, [RUNS], db="adj.db", annotator="adj", study="adj")
    assert snap_compare(app, terminal_size=(140, 48), run_before=settle)
