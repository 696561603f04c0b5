"""A child process that runs the real app on an adjudication study and decides its entries with
real key presses (Pilot): the decision key, then a reason typed into the reason dialog and enter.
It prints `saved <item_id> <run> <decision>` only once the screen shows the decision as saved.
The adjudication test (tests/tui/screens/test_study_adjudicate.py) kills it with SIGKILL midway.

    python adjudicate_driver.py BENCH RUNS DB STUDY ANNOTATOR N KEYS

KEYS: the decision keys to press in turn ("arb…" for verdicts, option letters for the oracle).
"""

from __future__ import annotations

import asyncio
import sys


async def drive(bench: str, runs: str, db: str, study: str, annotator: str, n: int, keys: str) -> None:
    from textual.widgets import Input

    from tui.app import make_app
    from tui.bases.study import StudyScreen
    from tui.modals.reason import ReasonDialog

    app = make_app(bench, [runs], db=db, annotator=annotator, study=study)
    async with app.run_test(size=(140, 48)) as pilot:

        async def ready() -> StudyScreen:
            while not (isinstance(app.screen, StudyScreen) and app.screen.ready):
                await pilot.pause()
            return app.screen

        screen = await ready()
        s = screen.session
        print("ready", s.n_done, s.total, flush=True)
        for i in range(n):
            if s.finished:
                break
            e = s.entry
            await pilot.press(keys[i % len(keys)])
            while not isinstance(app.screen, ReasonDialog):
                await pilot.pause()
            app.screen.query_one(Input).value = f"reason {i}"
            await pilot.press("enter")
            while not str(screen.query_one("#study-saved").content).startswith("✓ saved"):
                await pilot.pause()
            print("saved", e.item_id, e.run_key, keys[i % len(keys)], flush=True)
            screen = await ready()
        print("done", s.n_done, s.total, flush=True)


if __name__ == "__main__":
    from tui.media import image as img

    img.prepare("halfcell")
    bench, runs, db, study, annotator, n, keys = sys.argv[1:8]
    asyncio.run(drive(bench, runs, db, study, annotator, int(n), keys))
