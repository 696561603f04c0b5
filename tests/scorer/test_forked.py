"""scorer.forked: work in forked processes gives what the same work gives in this process, and a
piece that fails or whose worker dies is computed again here (so its error is the usual one)."""

from __future__ import annotations

import json
import os

import pytest

from scorer.cli import main
from scorer.forked import fork_staged, worker_count
from tests.paths import DEMO, REPO

PARENT = os.getpid()


def square_with_pid(x: int) -> tuple[int, int]:
    return x * x, os.getpid()


def slow_square_with_pid(x: int) -> tuple[int, int]:
    import time

    time.sleep(0.05)  # long enough that the forked process takes some (this process takes items too)
    return square_with_pid(x)


def test_results_in_input_order_and_computed_in_workers():
    got = fork_staged(slow_square_with_pid, list(range(12)), workers=2, first=list(reversed(range(12))), later=[])
    assert [v for v, _ in got] == [x * x for x in range(12)]
    assert any(pid != PARENT for _, pid in got)


def test_one_worker_means_this_process():
    assert all(pid == PARENT for _, pid in fork_staged(square_with_pid, [1, 2, 3], workers=1, first=[0, 1, 2], later=[]))


def fails_on_three(x: int) -> int:
    if x == 3:
        raise KeyError("three")
    return x


def test_an_error_surfaces_as_itself_in_the_caller():
    with pytest.raises(KeyError, match="three"):
        fork_staged(fails_on_three, [1, 2, 3, 4], workers=2, first=[0, 1, 2, 3], later=[])


def dies_in_a_worker(x: int) -> tuple[int, int]:
    if os.getpid() != PARENT and x == 2:
        os._exit(9)  # the worker is killed mid-piece (as by the OOM killer)
    return x, os.getpid()


def test_a_dead_worker_costs_time_not_results():
    got = fork_staged(dies_in_a_worker, [1, 2, 3], workers=2, first=[0, 1, 2], later=[])
    assert [v for v, _ in got] == [1, 2, 3]
    assert dict(got)[2] == PARENT  # recomputed here


def test_worker_count_follows_the_environment(monkeypatch):
    monkeypatch.setenv("MEMSCOPE_SECTION_WORKERS", "3")
    assert worker_count(10) == 3 and worker_count(2) == 2
    monkeypatch.setenv("MEMSCOPE_SECTION_WORKERS", "1")
    assert worker_count(10, default=4) == 1
    monkeypatch.setenv("MEMSCOPE_SECTION_WORKERS", "lots")
    assert worker_count(10) == 1


@pytest.mark.needs_demo
def test_sections_in_workers_give_the_same_report(tmp_path, monkeypatch):
    reports = {}
    for workers in ("1", "3"):
        monkeypatch.setenv("MEMSCOPE_SECTION_WORKERS", workers)
        out = tmp_path / workers
        assert main(["score", str(DEMO), "--runs", str(DEMO / "runs"), "--compare", "SRAG(V):FC(V)",
                     "--resamples", "500", "--out", str(out), "--format", "json,md"]) == 0
        reports[workers] = ((out / "report.json").read_bytes(), (out / "report.md").read_bytes())
    assert reports["1"] == reports["3"]
    data = json.loads(reports["3"][0])
    assert data["matrix"] and data["bootstrap"] and data["caption_proof"]



def test_no_fork_from_a_threaded_process(monkeypatch):
    import threading

    monkeypatch.setenv("MEMSCOPE_SECTION_WORKERS", "3")
    assert worker_count(5) == 3
    stop = threading.Event()
    t = threading.Thread(target=stop.wait)
    t.start()
    try:
        assert worker_count(5) == 1  # the app scores in a worker thread: everything stays in-process
        got = fork_staged(square_with_pid, [1, 2, 3], worker_count(3), first=[0, 1, 2], later=[])
        assert all(pid == PARENT for _, pid in got)
    finally:
        stop.set()
        t.join()


def test_the_registry_lists_every_section_module_once_and_is_their_only_record():
    import ast

    from scorer.sections.registry import SECTIONS, name_of

    with_build = set()
    for path in sorted((REPO / "scorer" / "sections").glob("*.py")):
        body = ast.parse(path.read_text(encoding="utf-8")).body
        if any(isinstance(n, ast.FunctionDef) and n.name == "build" for n in body):
            with_build.add(f"scorer.sections.{path.stem}")
        copies = [t.id for n in body if isinstance(n, ast.Assign) for t in n.targets
                  if isinstance(t, ast.Name) and t.id in ("NEEDS_RAW", "COST")]
        assert not copies, (path.name, copies)  # the registry's facts, not the module's
    assert sorted(s.module for s in SECTIONS) == sorted(with_build)
    assert len({s.name for s in SECTIONS}) == len(SECTIONS)
    for s in SECTIONS:
        assert s.load().NAME == s.name == name_of(s.module)


@pytest.mark.needs_demo
def test_sections_the_registry_calls_lean_give_the_same_data_from_either_reader():
    from scorer.scoring import score
    from scorer.sections.base import ScoreOptions
    from scorer.sections.registry import SECTIONS

    lean = [s.name for s in SECTIONS if not s.raw]
    opts = ScoreOptions(resamples=200, compare=(("SRAG(V)", "FC(V)"),))
    a = score(DEMO, [DEMO / "runs"], options=opts, sections=lean, lean=True).json_data()
    b = score(DEMO, [DEMO / "runs"], options=opts, sections=lean, lean=False).json_data()
    assert a["inputs"]["runs"]["reader"] == "lean" and b["inputs"]["runs"]["reader"] == "full"
    for name in lean:
        assert a[name] == b[name], name
    assert a["matrix"] and a["bootstrap"] and a["caption_proof"]


@pytest.mark.needs_demo
def test_runs_read_while_sections_load_give_the_same_report(tmp_path, monkeypatch):
    from scorer.scoring import score

    monkeypatch.setenv("MEMSCOPE_READ_WORKERS", "2")
    chosen = ["matrix", "position_bias", "caption_proof"]
    overlapped = score(DEMO, [DEMO / "runs"], sections=chosen).json_data()
    # one reader in this process takes the other path: section modules first, then the runs
    monkeypatch.setenv("MEMSCOPE_READ_WORKERS", "1")
    plain = score(DEMO, [DEMO / "runs"], sections=chosen).json_data()
    assert overlapped == plain and overlapped["matrix"]


# fork_staged: the sections that need no shared data start while this process prepares it.

def _wait_for(path, seconds=20.0):
    import time

    end = time.monotonic() + seconds
    while not os.path.exists(path):
        if time.monotonic() > end:
            return False
        time.sleep(0.01)
    return True


def test_staged_items_start_while_the_stage_runs_and_later_ones_see_it(tmp_path):
    from scorer.forked import fork_staged

    started = tmp_path / "first-started"
    shared: dict[str, int] = {}

    def work(x: int):
        if x == 0:  # a `first` item: says it started, in a forked process
            started.write_text(str(os.getpid()))
            return x, os.getpid(), None
        return x, os.getpid(), shared.get("prepared")  # a `later` item reads what the stage computed

    def stage():
        # Returns only once the `first` item has started elsewhere: with the stage run before any
        # fork (as the scorer did), this waits 20 s and the test fails.
        assert _wait_for(started), "no `first` item started while the stage ran"
        shared["prepared"] = 42

    got = fork_staged(work, [0, 1, 2, 3], workers=2, first=[0], later=[3, 2, 1], stage=stage)
    assert [x for x, _, _ in got] == [0, 1, 2, 3]
    assert got[0][1] != PARENT
    assert all(seen == 42 for _, _, seen in got[1:])


def test_no_helper_is_forked_after_the_stage_while_first_items_wait():
    """Helpers for the `later` items are forked only once every `first` item is taken: before, the
    processes on `first` still have work, and a helper forked beside them only shares the cores
    (and makes both sides copy the pages they write). Here the worker is still on its first item
    when the stage ends, two more wait: every item is computed by this process or that worker."""
    import time

    def work(x: int):
        if x < 3:
            time.sleep(0.3)  # `first` items: the worker is on one of them long after the stage ends
        return x, os.getpid()

    got = fork_staged(work, list(range(5)), workers=2, first=[0, 1, 2], later=[3, 4], stage=lambda: None)
    assert [x for x, _ in got] == [0, 1, 2, 3, 4]
    assert len({pid for _, pid in got}) == 2, got  # this process and the one worker: no helper
    assert {pid for x, pid in got if x >= 3} == {PARENT}  # `later` items: taken here, at once


def test_a_helper_is_forked_when_later_items_wait_and_first_ones_are_all_taken():
    """The other side of the rule: the worker takes the one `first` item, the stage ends, and two
    `later` items wait: a helper takes one beside this process."""
    import time

    def work(x: int):
        time.sleep(0.4 if x == 0 else 0.3)
        return x, os.getpid()

    got = fork_staged(work, list(range(3)), workers=2, first=[0], later=[1, 2], stage=lambda: time.sleep(0.1))
    assert [x for x, _ in got] == [0, 1, 2]
    assert len({pid for _, pid in got}) == 3, got  # this process, the worker and a helper


def test_a_late_helper_is_forked_only_while_the_items_left_take_long():
    """The worker finishes both `first` items while this process is still on `later` ones (item 1
    still waited when the stage ended, so no helper was forked then): a helper is forked for what
    waits only when the item this process computed last took LATE_HELPER_S or more (at MemEye scale
    the items left then are done in a moment, and a fork of the large scoring process costs more
    than it saves)."""
    import time

    from scorer.forked import LATE_HELPER_S

    def run(seconds: float, n_later: int):
        def work(x: int):
            time.sleep({0: 0.2, 1: 0.01}.get(x, seconds))  # items 0 and 1, `first`: the worker's
            return x, os.getpid()
        n = 2 + n_later
        got = fork_staged(work, list(range(n)), workers=2, first=[0, 1], later=list(range(2, n)),
                          stage=lambda: time.sleep(0.05))
        assert [x for x, _ in got] == list(range(n))
        return got

    slow = run(LATE_HELPER_S * 2, 6)  # this process is on them until ~0.65 s; the worker is done at ~0.21 s
    assert len({pid for _, pid in slow}) == 3, slow  # this process, the worker and a helper
    quick = run(LATE_HELPER_S * 0.4, 20)  # as long in all, each item quicker than a fork is worth
    assert {pid for x, pid in quick if x > 1} == {PARENT}, quick  # `later` items here, no helper forked


def test_staged_errors_and_dead_workers_are_recomputed_here():
    from scorer.forked import fork_staged

    with pytest.raises(KeyError, match="three"):
        fork_staged(fails_on_three, [1, 2, 3, 4], workers=2, first=[2, 0], later=[1, 3])
    got = fork_staged(dies_in_a_worker, [1, 2, 3], workers=2, first=[1, 0], later=[2])
    assert [v for v, _ in got] == [1, 2, 3]
    assert dict(got)[2] == PARENT  # its worker died: recomputed here
    with pytest.raises(ValueError):
        fork_staged(square_with_pid, [1, 2], workers=2, first=[0], later=[0])


def test_staged_with_one_worker_is_this_process_in_order():
    from scorer.forked import fork_staged

    calls = []
    got = fork_staged(lambda x: calls.append(x) or (x, os.getpid()), [5, 6, 7], workers=1, first=[2], later=[0, 1],
                      stage=lambda: calls.append("stage"))
    assert calls == ["stage", 5, 6, 7] and all(pid == PARENT for _, pid in got)


def test_what_was_frozen_stays_frozen_after_the_workers_return():
    """The readers freeze what they loaded (gc_paused); forking workers must not thaw it, or the
    next collection walks every loaded row at once (0.18 s at MemEye scale)."""
    import gc

    kept = [[i] for i in range(50_000)]  # loaded, then frozen as the readers leave them
    gc.freeze()
    before = gc.get_freeze_count()
    try:
        assert fork_staged(lambda x: x * 2, [1, 2, 3, 4], 2, [0, 1, 2, 3], []) == [2, 4, 6, 8]
        assert gc.get_freeze_count() >= before > 50_000
    finally:
        gc.unfreeze()
    assert kept


@pytest.mark.needs_demo
def test_the_sections_run_with_the_collector_paused(monkeypatch):
    """No cyclic collection in this process while the sections run (they build acyclic results
    from what was read; each collection would rescan it); the collector is on again afterwards."""
    import gc

    from scorer.scoring import run as run_module
    from scorer.scoring import score

    collections = []
    inside = []

    def count(phase, info):
        if phase == "start" and inside:
            collections.append(info["generation"])

    real = run_module._run_sections

    def watched(*a, **k):
        inside.append(True)
        try:
            return real(*a, **k)
        finally:
            inside.clear()

    monkeypatch.setattr(run_module, "_run_sections", watched)
    monkeypatch.setenv("MEMSCOPE_SECTION_WORKERS", "1")
    gc.callbacks.append(count)
    try:
        assert gc.isenabled()
        score(DEMO, [DEMO / "runs"], sections=["matrix", "caption_proof", "evidence", "recency", "delivery"])
    finally:
        gc.callbacks.remove(count)
        gc.unfreeze()
    assert collections == [] and gc.isenabled()


def lock_with_pid(x: int):
    import threading

    return x, os.getpid(), threading.Lock()  # a lock does not pickle


def test_a_result_that_does_not_pickle_is_computed_again_here():
    """A worker pickles each result straight into its file; one that fails part way is left there
    unfinished (never renamed into place) and computed again in this process."""
    import time

    got = fork_staged(lambda x: (time.sleep(0.03), lock_with_pid(x))[1], list(range(6)), workers=2,
                      first=list(range(6)), later=[])
    assert [x for x, _, _ in got] == list(range(6))
    assert {pid for _, pid, _ in got} == {PARENT}  # every result here, however many the worker took


def big_result(x: int) -> dict:
    import time

    import numpy as np

    time.sleep(0.05)  # long enough that the forked process takes some
    rng = np.random.default_rng(x)
    return {"x": x, "pid": os.getpid(), "values": rng.random(400_000), "names": [f"round {i}" for i in range(20_000)]}


def test_large_results_come_back_whole_and_leave_no_file(tmp_path, monkeypatch):
    """Results of megabytes (read back through a mapping of their file, scorer.forked.load_result)
    equal the same work done here, and the results' folder is gone afterwards."""
    import tempfile

    import numpy as np

    monkeypatch.setattr(tempfile, "tempdir", str(tmp_path))
    got = fork_staged(big_result, list(range(6)), workers=2, first=list(range(6)), later=[])
    assert any(r["pid"] != PARENT for r in got)
    for x, r in enumerate(got):
        want = big_result(x)
        assert r["x"] == x and np.array_equal(r["values"], want["values"]) and r["names"] == want["names"]
    assert list(tmp_path.iterdir()) == []


def test_an_empty_result_file_is_the_error_an_empty_pickle_is(tmp_path):
    import pickle

    from scorer.forked import load_result

    empty = tmp_path / "0.pkl"
    empty.write_bytes(b"")
    with pytest.raises(EOFError):
        pickle.loads(b"")
    with pytest.raises(EOFError):
        load_result(str(empty))
    whole = tmp_path / "1.pkl"
    whole.write_bytes(pickle.dumps({"a": [1, 2.5, "x"]}))
    assert load_result(str(whole)) == {"a": [1, 2.5, "x"]}


def _refuse_to_load():
    raise RuntimeError("this result cannot be loaded")


class FailsToLoad:
    """Pickles, but raises when unpickled."""

    def __reduce__(self):
        return (_refuse_to_load, ())


def interrupted_here(x: int):
    import time

    if os.getpid() == PARENT:
        time.sleep(0.6)  # the worker writes a result or two meanwhile
        raise KeyboardInterrupt
    time.sleep(0.2)  # slow enough that this process claims an item before the worker has them all
    return FailsToLoad()


def test_an_interruption_goes_up_as_itself_and_no_result_is_read(tmp_path, monkeypatch):
    """Interrupted (Ctrl-C while this process computes an item), fork_staged stops its workers,
    removes their results unread and lets the interruption go up: reading a result then could
    only raise something else in its place."""
    import tempfile

    monkeypatch.setattr(tempfile, "tempdir", str(tmp_path))
    with pytest.raises(KeyboardInterrupt):
        fork_staged(interrupted_here, [1, 2, 3, 4], workers=2, first=[0, 1, 2, 3], later=[])
    assert list(tmp_path.iterdir()) == []
