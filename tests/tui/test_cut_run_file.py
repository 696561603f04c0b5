"""A run file cut short (a crash mid-write, a copy still running) must not keep an annotator out of
the app: the app opens without that run folder, says which file and where on screen and on stderr,
and the Overview keeps saying it, while the other folders' predictions are all there."""

from __future__ import annotations

import shutil
import subprocess
import sys
from pathlib import Path

import pytest

from tests.paths import DEMO
from tests.tui.apphelpers import screen_text, settle, text_of
from tui.app import make_app
from tui.screens.scores import ScoresScreen

pytestmark = pytest.mark.needs_demo


def cut_copy(tmp_path: Path) -> tuple[Path, Path]:
    """The demo copied, one MemEye run file cut 40 bytes short of its end (mid-row)."""
    bench = tmp_path / "demo"
    shutil.copytree(DEMO, bench)
    cut = sorted((bench / "runs").rglob("predictions.jsonl"))[0]
    data = cut.read_bytes()
    cut.write_bytes(data[:-40])
    return bench, cut


async def test_the_app_opens_without_a_cut_run_folder_and_says_so(tmp_path: Path) -> None:
    bench, cut = cut_copy(tmp_path)
    whole = make_app(DEMO, [DEMO / "runs"])
    app = make_app(bench, [bench / "runs"])
    assert len(app.state.runs) == len(whole.state.runs) - 1
    assert cut.parent not in {r.folder for r in app.state.runs}
    assert len(app.state.unreadable_runs) == 1 and str(cut) in app.state.unreadable_runs[0]
    async with app.run_test(size=(160, 50)) as pilot:
        await settle(pilot)
        said = [n for n in app._notifications if n.severity == "warning"]
        assert any(str(cut) in n.message and "left out" in n.message for n in said)
        text = screen_text(app)
        assert "1 run folder left out (unreadable)" in text
        assert f"{cut.parent.name}" in text
        await pilot.press("3")  # the Scores screen says which folder its numbers leave out
        for _ in range(600):
            await pilot.pause(0.05)
            if isinstance(app.screen, ScoresScreen) and app.screen.final:
                break
        status = text_of(app.screen, "#scores-status")
        assert f"not scored: {cut}:" in status and "left out" in status, status


def test_the_cli_names_the_cut_file_on_stderr_before_the_app(tmp_path: Path) -> None:
    """`memscope tui` with the cut file: the app runs (here headless, quitting at once) and stderr
    has the one line naming the file, line and column."""
    bench, cut = cut_copy(tmp_path)
    code = ("import sys; from tui import app as a; "
            "a.run_app = lambda app: (print('opened', len(app.state.runs)), 0)[1]; "
            "from tui.cli import main; sys.exit(main(sys.argv[1:]))")
    proc = subprocess.run([sys.executable, "-c", code, "tui", str(bench), "--runs", str(bench / "runs"),
                           "--db", str(tmp_path / "x.db")], capture_output=True, text=True, timeout=120)
    assert proc.returncode == 0, proc.stderr
    assert "opened" in proc.stdout and "Traceback" not in proc.stderr
    line = next(x for x in proc.stderr.splitlines() if str(cut) in x)
    assert line.startswith("memscope: ") and "left out" in line and f"{cut}:" in line


async def test_the_overview_counts_media_files_that_cannot_be_decoded(tmp_path: Path) -> None:
    """A zero-byte image and one of garbage bytes resolve inside the root but cannot be shown: the
    Overview's media line counts them (as `memscope validate` does), checked after the first screen."""
    from scorer.load.memeye import load_benchmark
    from scorer.load.validate import validate

    bench = tmp_path / "demo"
    shutil.copytree(DEMO, bench)
    images = sorted((bench / "image").rglob("*.png"))
    images[0].write_bytes(b"")
    images[1].write_bytes(b"this is no picture at all, only text")
    errors = [f for f in validate(load_benchmark(bench)) if f.severity == "error"]
    app = make_app(bench, [])
    async with app.run_test(size=(160, 50)) as pilot:
        for _ in range(200):
            await pilot.pause(0.05)
            if "checking" not in str(app.screen.query_one("#ov-media").content):
                break
        media = str(app.screen.query_one("#ov-media").content)
        assert media.startswith(f"Media problems: {len(errors)} reference(s) cannot be shown"), media
        assert len(errors) >= 2 and any(p.name in media for p in images[:2])


QUIT_SCRIPT = """
import sys, time
import scorer.load.validate as validate
real = validate.media_problem
def slow(m, decode):
    time.sleep(0.2)
    return real(m, decode)
validate.media_problem = slow
from tui.app import make_app
app = make_app(sys.argv[1], [])
async def pilot(p):
    for _ in range(100):
        await p.pause(0.05)
        if any(w.name == "preload" for w in app.workers):
            break
    await p.pause(0.5)
    print("quit at", time.perf_counter(), flush=True)
    await p.press("q")
app.run(headless=True, size=(120, 40), auto_pilot=pilot)
print("ended at", time.perf_counter(), app.state.unshowable_media, flush=True)
"""


def test_quitting_does_not_wait_for_the_media_check() -> None:
    """On a benchmark whose media take long to decode, `q` ends the app at once: the check (in the
    preload worker, and the Overview's waiting worker) stops when its worker is cancelled. Each
    reference takes 0.2 s to check here (the demo's 50: 10 s in all); the process is timed from
    the key to its end, thread pool shutdown included (asyncio.run waits for worker threads)."""
    proc = subprocess.run([sys.executable, "-c", QUIT_SCRIPT, str(DEMO)], capture_output=True, text=True,
                          timeout=120)
    assert proc.returncode == 0, proc.stderr[-2000:]
    out = dict(line.split(" at ", 1) for line in proc.stdout.splitlines() if " at " in line)
    quit_at, (ended_at, kept) = float(out["quit"]), out["ended"].split(" ", 1)
    assert float(ended_at) - quit_at < 3.0, proc.stdout
    assert kept == "None"  # stopped, not kept half done
