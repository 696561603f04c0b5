"""An unexpected exception in the app: exit status 1, one line on stderr naming a crash log that
holds the traceback (the real app, in a subprocess, with a failure injected through App.call_later)."""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

from tests.paths import DEMO

ROOT = Path(__file__).resolve().parents[2]

CRASHING = """
import sys
from tui.app import make_app, run_app

def boom():
    raise RuntimeError("injected failure \\x1b]0;pwned\\x07")

async def pilot(p):
    await p.pause()
    p.app.call_later(boom)
    await p.pause(5)  # the app exits before this ends

app = make_app(sys.argv[1], [sys.argv[1] + "/runs"])
sys.exit(run_app(app, headless=True, size=(120, 40), auto_pilot=pilot))
"""


def test_a_crash_exits_non_zero_with_one_line_naming_its_log(tmp_path: Path) -> None:
    env = dict(os.environ, MEMSCOPE_CRASH_DIR=str(tmp_path / "crashes"))
    done = subprocess.run([sys.executable, "-c", CRASHING, str(DEMO)], cwd=ROOT, env=env,
                          capture_output=True, text=True, timeout=120)
    assert done.returncode != 0
    lines = done.stderr.strip().splitlines()
    assert len(lines) == 1, done.stderr
    assert lines[0].startswith("memscope: ") and "\x1b" not in lines[0]
    logs = list((tmp_path / "crashes").glob("crash-*.log"))
    assert len(logs) == 1 and str(logs[0]) in lines[0]
    assert "RuntimeError: injected failure" in logs[0].read_text(encoding="utf-8")


async def test_exporting_a_card_with_unencodable_text_is_not_a_crash(tmp_path: Path) -> None:
    """A lone surrogate escape in a question: the reader turns it into U+FFFD (scorer.load.jsonio),
    so the card is written whole; it never crashes the app or leaves a 0-byte file."""
    from tests.builders.benchmarks import MINI_TASK, write_mini_bench
    from tests.tui.apphelpers import SIZE, settle
    from tests.tui.test_app_screens import open_item
    from tui.app import make_app

    def lone_surrogate(d: dict) -> None:
        d["human-annotated QAs"][0]["question"] += " \ud800"

    root = write_mini_bench(tmp_path / "b", mutate=lone_surrogate)
    app = make_app(root, [], exports_dir=tmp_path / "exports")
    async with app.run_test(size=SIZE) as pilot:
        await open_item(pilot, (f"{MINI_TASK}:1", "mcq"))
        await pilot.press("E")  # export a case card
        await settle(pilot)
        assert app.return_code is None and app._exception is None  # still running
        assert [n for n in app._notifications if n.severity == "error"] == []
    cards = [p for p in (tmp_path / "exports").rglob("*") if p.suffix in (".md", ".tex")]
    assert cards and all(p.stat().st_size > 0 for p in cards)
    assert all("\ufffd" in p.read_text(encoding="utf-8") for p in cards if p.suffix == ".md")


async def test_ctrl_p_then_page_down_in_one_burst_does_not_kill_the_app() -> None:
    """Both keys posted before the app handles either, as the driver does with one read from the
    terminal (Pilot.press waits between keys, which hid the crash: KeyError in OptionList._move_page)."""
    from textual import events
    from textual.command import CommandList, CommandPalette

    from tests.tui.apphelpers import SIZE, demo_app, settle

    for page in ("pagedown", "pageup"):
        app = demo_app()
        async with app.run_test(size=SIZE) as pilot:
            await settle(pilot)
            app.post_message(events.Key("ctrl+p", None))
            app.post_message(events.Key(page, None))
            await settle(pilot)
            assert app._exception is None and app.return_code is None
            assert isinstance(app.screen, CommandPalette)
            # once shown, the page keys move through the list as Textual's do
            commands = app.screen.query_one(CommandList)
            await pilot.press("down")
            start = commands.highlighted
            assert commands.option_count > 3 and start is not None
            await pilot.press("pagedown")
            assert commands.highlighted > start
            moved = commands.highlighted
            await pilot.press("pageup")  # a page back (the palette lists runs and tasks too: many pages)
            assert commands.highlighted < moved
