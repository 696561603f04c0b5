"""Nothing shown as saved is ever lost: the real app, in its own process, answers a scripted run of 200
verdicts with real key presses; it is killed with SIGKILL half way; every verdict the screen had
shown as saved is in the database, and the app restarted on the same database resumes at the next
unanswered entry."""

from __future__ import annotations

import os
import signal
import subprocess
import sys
from pathlib import Path

import pytest

from scorer.store import Store
from tests.paths import DEMO, REPO, RUNS
from tests.tui.apphelpers import new_study

DRIVER = REPO / "tests" / "tui" / "study_driver.py"
STUDY = "judge-big"
KILL_AT = 100  # of a scripted 200


def driver(db: Path, n: int) -> subprocess.Popen:
    env = dict(os.environ, PYTHONPATH=str(REPO) + os.pathsep + os.environ.get("PYTHONPATH", ""))
    return subprocess.Popen([sys.executable, str(DRIVER), str(DEMO), str(RUNS), str(db), STUDY, "ann1", str(n)],
                            stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True, env=env, cwd=REPO)


@pytest.mark.needs_demo
def test_every_verdict_shown_as_saved_survives_sigkill_and_resume_continues(tmp_path: Path) -> None:
    db = tmp_path / "kill.db"
    new_study(db, "agreement", STUDY, "20", "--backbone", "gpt-5.4-mini",
              "--methods", "FC(T),FC(V),SRAG(T),SRAG(V),SRAG(V) budget", runs=True)
    proc = driver(db, 200)
    saved: list[tuple[str, str]] = []
    try:
        ready = proc.stdout.readline().split()
        assert ready[0] == "ready" and ready[2:4] == ["1", "0"] and int(ready[4]) >= 200, ready
        for line in proc.stdout:
            _, blind, verdict, _ = line.split()
            saved.append((blind, verdict))
            if len(saved) == KILL_AT:
                proc.send_signal(signal.SIGKILL)
                break
        saved += [tuple(line.split()[1:3]) for line in proc.stdout if line.startswith("saved")]
    finally:
        proc.kill()
        proc.wait(timeout=30)
    assert proc.returncode == -signal.SIGKILL
    assert KILL_AT <= len(saved) < 200

    with Store(db) as store:
        blind_of = {(r["item_id"], r["run_key"]): r["blind_id"] for r in store.reveal(STUDY, "ann1")}
        stored = {blind_of[(r["item_id"], r["run_key"])]: r["verdict"]
                  for r in store.verdicts(STUDY) if r["annotator"] == "ann1"}
        (progress,) = store.progress(STUDY)
        queue = store.annotator_queue(STUDY, "ann1")
    for blind, verdict in saved:
        assert stored.get(blind) == verdict  # shown as saved → on disk
    # At most the one verdict committed after its "saved" line was printed (killed in between).
    assert len(saved) <= progress["done"] <= len(saved) + 1 and progress["done"] == len(stored)
    first_open = next(q for q in queue if not q.done)

    proc = driver(db, 0)
    out, err = proc.communicate(timeout=60)
    assert proc.returncode == 0, err
    ready = out.split("\n")[0].split()
    assert ready == ["ready", first_open.blind_id, str(progress["done"] + 1), str(progress["done"]), ready[4]]
