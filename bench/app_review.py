"""Failure review speed (issue 17), headless (Pilot) at 120×40, on MOSAIC-scale synthetic data.

    python bench/app_review.py                 # generates the MOSAIC set (fixtures/synth.py) in a temp folder
    python bench/app_review.py --mosaic DIR    # reuse `fixtures/synth.py --scale mosaic --out DIR`
    python bench/app_review.py --big DIR       # reuse the 10,000-row set this script built before

Prints one JSON object:
- scores_cell_to_items_ms: Scores screen (every section shown), `enter` on a matrix cell → the first
  frame of Items showing that cell's filter (p50 / max over cells; target < 300 ms);
- filter_change_ms: Items on ~10,000 rows, a filter key (x, y, M, A, a failure filter) → the first frame
  with the new filter (its first rows; the rest follow a chunk per frame) (p50 / max; target < 100 ms);
  `failures_first_ms` is the computing of one run's failure kinds (once per run, by the scorer's
  per-item functions, in a worker in the app), not counted in the p50;
- *_cpu_ms: the main thread's CPU time for the same keystrokes, what the latency comes to on an idle
  machine (the wall time includes waiting for the CPU on a loaded one);
- load_average (1 min) before and after, and calibration_ms (a fixed Python loop, the reference of this
  run): each time is also given as a ratio to it, so runs on a busy machine compare.
The 10,000-row set is the MOSAIC set copied 11 times under new task names (C01_Persona_001, …; run
rows renamed to match), media shared by symlink: 10,153 (item, mode) rows, 12 runs.
"""

from __future__ import annotations

import argparse
import asyncio
import json
import os
import shutil
import subprocess
import sys
import tempfile
import time
from pathlib import Path
from calibrate import calibration_ms  # bench/calibrate.py: the reference of every app bench

REPO = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(REPO))
TARGETS = {"scores_cell_to_items_ms": 300.0, "filter_change_ms": 100.0}
COPIES = 11


def pct(values: list[float], q: float) -> float:
    s = sorted(values)
    k = min(len(s) - 1, max(0, round(q / 100 * (len(s) - 1))))
    return s[k]


def summary(values: list[float], ref: float) -> dict:
    return {"n": len(values), "p50": round(pct(values, 50), 1), "max": round(max(values), 1),
            "p50_per_calibration": round(pct(values, 50) / ref, 3)}


def replicate(mosaic: Path, out: Path, copies: int = COPIES) -> None:
    """`copies` copies of a MOSAIC set's tasks and runs under new task names, media symlinked."""
    (out / "dialog").mkdir(parents=True, exist_ok=True)
    for m in ("image", "video", "audio"):
        if (mosaic / m).exists() and not (out / m).exists():
            (out / m).symlink_to((mosaic / m).resolve())
    for c in range(1, copies + 1):
        for f in sorted((mosaic / "dialog").glob("*.json")):
            shutil.copyfile(f, out / "dialog" / f"C{c:02d}_{f.name}")
        for d in sorted((mosaic / "runs").iterdir()):
            new = f"C{c:02d}_{d.name}"
            for run in d.iterdir():
                dest = out / "runs" / new / run.name
                dest.mkdir(parents=True, exist_ok=True)
                for name in ("config.json", "metrics.json"):
                    if (run / name).is_file():
                        text = (run / name).read_text(encoding="utf-8").replace(f'"{d.name}"', f'"{new}"')
                        (dest / name).write_text(text, encoding="utf-8")
                shutil.copyfile(run / "predictions.jsonl", dest / "predictions.jsonl")


class Frames:
    """Every frame the app paints: (time, screen class name, its filter, its row count)."""

    def __init__(self, app) -> None:
        self.seen: list[tuple[float, str, object, int]] = []
        self.cpu: dict[float, float] = {}  # frame time → the main thread's CPU time then
        original = app._display

        def hook(screen, renderable):
            now = time.perf_counter()
            self.cpu[now] = time.thread_time()
            self.seen.append((now, type(screen).__name__, getattr(screen, "filter", None),
                              len(getattr(screen, "keys", ()) or ())))
            return original(screen, renderable)

        app._display = hook

    async def wait(self, pred, since: float, timeout: float = 20.0) -> float:
        end = time.perf_counter() + timeout
        while time.perf_counter() < end:
            for t, name, f, n in self.seen:
                if t >= since and pred(name, f, n):
                    return t
            await asyncio.sleep(0.001)
        raise TimeoutError("no matching frame")


async def scores_to_items(bench: Path, cells: int) -> dict:
    from tests.tui.apphelpers import settle
    from tui.app import make_app
    from tui.screens.scores import ScoresScreen, ScoreTable

    app = make_app(bench, [bench / "runs"], annotator="bench")
    frames = Frames(app)
    out: dict = {"items": len(app.state.rows), "runs": len(app.state.run_refs)}
    async with app.run_test(size=(120, 40)) as pilot:
        t0 = time.perf_counter()
        await pilot.press("3")
        while not (isinstance(app.screen, ScoresScreen) and app.screen.final):
            await settle(pilot)
        out["scores_all_sections_s"] = round(time.perf_counter() - t0, 2)
        scores = app.screen
        main = next(t for t in scores.query(ScoreTable) if t.table.name.startswith("main_"))
        cols = list(main.table.columns)
        first_method = 4  # Y, X, Metric, n, then the methods
        times, cpu = [], []
        picks = [(r, c) for r in range(len(main.table.rows)) for c in range(first_method, len(cols))]
        step = max(1, len(picks) // cells)
        for row, col in picks[::step][:cells]:
            main.focus()
            main.move_cursor(row=row, column=col, animate=False)
            await settle(pilot)
            f = scores.filter_of(main)
            if f is None:
                continue
            want = len(app.state.filtered(f))
            c0, t0 = time.thread_time(), time.perf_counter()
            await pilot.press("enter")
            t = await frames.wait(lambda name, shown, n, f=f, w=want: name == "ItemsScreen" and shown == f and n == w,
                                  t0)
            times.append((t - t0) * 1000)
            cpu.append((frames.cpu[t] - c0) * 1000)
            await settle(pilot)
            await pilot.press("3")
            await settle(pilot)
        out["cells"] = len(times)
        out["times"], out["cpu"] = times, cpu
    return out


async def filter_changes(bench: Path) -> dict:
    from tests.tui.apphelpers import settle
    from tui.app import make_app
    from tui.rows import Filter

    t0 = time.perf_counter()
    app = make_app(bench, [bench / "runs"], annotator="bench")
    out: dict = {"rows": len(app.state.rows), "runs": len(app.state.run_refs),
                 "load_s": round(time.perf_counter() - t0, 1)}
    frames = Frames(app)
    async with app.run_test(size=(120, 40)) as pilot:
        await pilot.press("2")
        await settle(pilot)
        items = app.screen
        times, cpu = [], []

        async def filled() -> None:  # the previous list wholly in the table: not the next key's cost
            while items.filling:
                await pilot.pause()
            await settle(pilot)

        for key in ("x", "x", "y", "y", "y", "x", "x", "x", "y", "M", "M", "M", "A", "A", "A"):
            await filled()
            c0, t0 = time.thread_time(), time.perf_counter()
            before = items.filter
            await pilot.press(key)
            t = await frames.wait(lambda name, shown, n, b=before: name == "ItemsScreen" and shown != b, t0)
            times.append((t - t0) * 1000)
            cpu.append((frames.cpu[t] - c0) * 1000)
        # failure filters: a run's kinds are computed once (in a worker when `!` asks; timed here on its
        # own), then every failure filter of that run is a set lookup per row
        ref = next(r for r in app.state.run_refs if "semantic_rag" in r.method)
        t0 = time.perf_counter()
        app.state.failures(ref.index)
        out["failures_first_ms"] = round((time.perf_counter() - t0) * 1000, 1)
        for kinds in (("stale_dominance",), ("latest_miss",), ("chain_incomplete",), ("not_delivered",),
                      ("answered_unanswerable",), ()):
            await filled()
            f = Filter(run=ref.index, failures=kinds)
            c0, t0 = time.thread_time(), time.perf_counter()
            items.show_filter(f)
            t = await frames.wait(lambda name, shown, n, f=f: name == "ItemsScreen" and shown == f, t0)
            times.append((t - t0) * 1000)
            cpu.append((frames.cpu[t] - c0) * 1000)
        out["times"], out["cpu"] = times, cpu
    return out


def child(kind: str, bench: str, cells: int) -> None:
    fn = scores_to_items(Path(bench), cells) if kind == "scores" else filter_changes(Path(bench))
    print(json.dumps(asyncio.run(fn)))


def run_child(kind: str, bench: Path, cells: int) -> dict:
    """Each scenario in a fresh process (clean imports and memory)."""
    res = subprocess.run([sys.executable, __file__, "--child", kind, str(bench), "--cells", str(cells)],
                         capture_output=True, text=True, cwd=REPO)
    if res.returncode != 0:
        raise SystemExit(f"bench/app_review.py: the {kind} scenario failed:\n{res.stderr[-3000:]}")
    return json.loads(res.stdout.strip().splitlines()[-1])


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--mosaic", type=Path, help="a `fixtures/synth.py --scale mosaic` folder to reuse")
    ap.add_argument("--big", type=Path, help="the 10,000-row copy built by an earlier run (kept with --keep)")
    ap.add_argument("--cells", type=int, default=10, help="Scores cells to open (default 10)")
    ap.add_argument("--child", nargs=2, help=argparse.SUPPRESS)
    args = ap.parse_args(argv)
    if args.child:
        child(args.child[0], args.child[1], args.cells)
        return 0
    tmp = Path(tempfile.mkdtemp(prefix="memscope-review-"))
    try:
        mosaic = args.mosaic
        if mosaic is None:
            mosaic = tmp / "mosaic"
            subprocess.run([sys.executable, str(REPO / "fixtures" / "synth.py"), "--scale", "mosaic", "--out",
                            str(mosaic)], check=True, capture_output=True)
        big = args.big
        if big is None:
            big = tmp / "big"
            replicate(mosaic, big)
        load_before = round(os.getloadavg()[0], 2)
        ref = calibration_ms()
        scores = run_child("scores", mosaic, args.cells)
        filters = run_child("filters", big, args.cells)
        ref_after = calibration_ms()
        reference = (ref + ref_after) / 2
        out = {
            "scores_cell_to_items_ms": {**summary(scores.pop("times"), reference), **scores},
            "scores_cell_to_items_cpu_ms": summary(scores.pop("cpu"), reference),
            "filter_change_ms": {**summary(filters.pop("times"), reference), **filters},
            "filter_change_cpu_ms": summary(filters.pop("cpu"), reference),
            "targets": TARGETS,
            "load_average": {"before": load_before, "after": round(os.getloadavg()[0], 2)},
            "calibration_ms": {"before": ref, "after": ref_after}, "cpus": os.cpu_count(),
        }
        print(json.dumps(out, indent=1))
    finally:
        shutil.rmtree(tmp, ignore_errors=True)
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
