"""A child process that runs the real app on a study and answers it with real key presses (Pilot),
printing one line per verdict only once the screen shows it as saved. The durability test kills it
with SIGKILL mid-run; bench/study_latency.py times it.

    python study_driver.py BENCH RUNS DB STUDY ANNOTATOR N

Prints `ready <blind id> <position> <done> <total>` when the study screen is up, then per verdict
`saved <blind id> <verdict> <seconds from key press to "saved" painted>`, then `latency <json>` with
the screen's own key→painted times and the store's write times.
"""

from __future__ import annotations

import asyncio
import json
import sys
import time

KEYS = "arab"  # accept, reject, accept, borderline, …
VERDICT = {"a": "accept", "r": "reject", "b": "borderline"}


async def drive(bench: str, runs: str, db: str, study: str, annotator: str, n: int) -> None:
    from tui.app import make_app
    from tui.bases.study import StudyScreen

    app = make_app(bench, [runs], db=db, annotator=annotator, study=study)
    async with app.run_test(size=(120, 40)) as pilot:

        async def ready() -> StudyScreen:
            while not (isinstance(app.screen, StudyScreen) and app.screen.ready):
                await pilot.pause()
            return app.screen

        screen = await ready()
        s = screen.session
        print("ready", s.entry.blind_id, s.entry.position, s.n_done, s.total, flush=True)
        for i in range(n):
            blind = screen.session.entry.blind_id
            key = KEYS[i % len(KEYS)]
            started = time.perf_counter()
            await pilot.press(key)
            while not str(screen.query_one("#study-saved").content).startswith(f"✓ saved {blind}"):
                await pilot.pause()
            print("saved", blind, VERDICT[key], f"{time.perf_counter() - started:.6f}", flush=True)
            screen = await ready()
        print("latency", json.dumps({"key_to_painted": screen.latencies,
                                     "write": list(app.state.store.write_seconds)}), flush=True)


if __name__ == "__main__":
    from tui.media import image as img

    img.prepare("halfcell")
    bench, runs, db, study, annotator, n = sys.argv[1:7]
    asyncio.run(drive(bench, runs, db, study, annotator, int(n)))
