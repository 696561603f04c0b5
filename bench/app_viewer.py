"""How fast the media viewer answers, headless (Pilot) in the real app: a 1920×1080 photo-like PNG and
a 1920×1080 JPEG opened in the viewer, then zoom steps and pans.

    python bench/app_viewer.py [--repeat 5] [--size 120x40]

Prints one JSON object:
- first_picture_ms: the viewer made and pushed → its first picture painted (decoded in a thread,
  through the source cache, fitted and drawn as half-cells, then the canvas's lines rendered by the
  compositor, Textual's own screen refresh, as a terminal would get them); cold caches: every run is
  a fresh Python process (no colour, style, picture or source cached by an earlier run; the app's
  preload worker — media modules, a 4×3 half-cell warm-up — is waited for first, as bench/app.py
  does before its first Enter). The bench
  waits for that paint with a bare 1 ms asyncio sleep, not Pilot's pause (which walks every widget
  of the screen and forces a refresh each time: tens of ms of the UI thread's CPU, and the GIL taken
  from the decode and the worker, that a user's app does not spend); first_picture_arrived_ms: the
  same to the screen's picture_arrived (its status line updated; queued, it may run just after the paint);
- zoom_step_ms: the app's zoom action starts → the magnified picture is on the canvas (the source is
  cached: crop, nearest-neighbour resample, half-cell lines in a worker), p50/max over
  fit→1×→2×→4×→8× and back; zoom_step_pilot_ms: the same from the test's `pilot.press` to seeing it
  (adds Pilot's own key delivery and idle waits);
- pan_ms / pan_pilot_ms: the same for an arrow key at 8×;
- first_picture_cpu_ms: the CPU time of the whole process (every thread) over that same interval, which
  other processes' load disturbs far less than the wall time;
- reference_ms: PIL alone decoding the same file (`Image.open(...).convert("RGB")`), in the same
  run: `first_picture_ratio` = first picture / reference says how much the viewer adds to a decode;
- png_from_thumbnail: the same PNG as a user opens it: the app deep-linked onto an item of a temp
  copy of tests/builders' mini benchmark whose clue image is that PNG, its thumbnail drawn, then `z`;
  first_picture_ms from the app's `z` action starting (first_picture_pilot_ms from `pilot.press`) to
  the viewer's first picture painted (the same mark as above); decodes_for_the_viewer counts the
  source cache's misses meanwhile (0: the viewer used the thumbnail's decode);
- load_average (1, 5, 15 min) and calibration_ms (a fixed Python loop): how busy the machine was;
  first_picture_per_calibration = the median first picture / calibration_ms, to compare runs.
Targets (issue 15): first picture < 150 ms for a 1920×1080 source, zoom step < 50 ms.
"""

from __future__ import annotations

import argparse
import asyncio
import json
import os
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path
from calibrate import calibration_ms  # bench/calibrate.py: the reference of every app bench

REPO = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(REPO))
TARGETS = {"first_picture_ms": 150.0, "zoom_step_ms": 50.0}
PAINTED: list[tuple[float, float]] = []  # (perf_counter, process_time) of each paint of a viewer's picture


def watch_paints() -> None:
    """Record when a viewer's canvas renders its lines with its picture in them (this process only)."""
    from tui.screens.viewer import ViewerCanvas

    real = ViewerCanvas.render_lines

    def render_lines(self, crop):
        lines = real(self, crop)
        if self.picture is not None and self._wanted is None and self._strips and self._strips is self.picture.strips:
            PAINTED.append((time.perf_counter(), time.process_time()))
        return lines

    ViewerCanvas.render_lines = render_lines


async def until_painted() -> tuple[float, float]:
    """The first paint recorded: a bare sleep between looks (no Pilot pause: see the docstring)."""
    t = time.perf_counter()
    while not PAINTED:
        if time.perf_counter() - t > 30:
            raise SystemExit("the viewer's picture was never painted")
        await asyncio.sleep(0.001)
    return PAINTED[0]


def make_source(folder: Path, fmt: str) -> Path:
    """A 1920×1080 photo-like picture: smooth gradients, noise and small text (PNG compresses it as a
    camera image would not be, so noise keeps the file honest)."""
    import numpy as np
    from PIL import Image, ImageDraw

    rng = np.random.default_rng(15)
    y, x = np.mgrid[0:1080, 0:1920]
    a = np.stack([(x * 255 // 1919), (y * 255 // 1079), ((x + y) * 255 // 2998)], axis=-1).astype(np.int16)
    a += rng.integers(-24, 25, size=a.shape, dtype=np.int16)
    im = Image.fromarray(np.clip(a, 0, 255).astype(np.uint8), "RGB")
    d = ImageDraw.Draw(im)
    for k in range(40):
        d.text((40 + 45 * k, 60 + 24 * k), f"EUR {k}.50", fill="white")
    path = folder / f"photo_1920x1080.{fmt}"
    im.save(path, quality=90) if fmt == "jpg" else im.save(path)
    return path


async def preloaded(app) -> None:
    """Until the app's preload worker is done (tui.preload: the media modules, the half-cell path's
    first use), as bench/app.py waits before its first Enter: a user reads the first screen meanwhile."""
    end = time.perf_counter() + 30
    while time.perf_counter() < end and not any(w.name == "preload" for w in app.workers):
        await asyncio.sleep(0.005)
    await app.workers.wait_for_complete([w for w in app.workers if w.name == "preload"])


async def measure(path: Path, size: tuple[int, int]) -> dict:
    from PIL import Image

    from scorer.model import Media
    from tests.paths import DEMO
    from tui.app import make_app
    from tui.media import image as img
    from tui.media import zoom as zm
    from tui.media.audio import NullPlayer
    from tui.screens.viewer import ViewerScreen

    img.prepare("halfcell")
    img.PICTURES.clear()
    zm.SOURCES.clear()
    watch_paints()
    marks: list[tuple[str, float]] = []  # in the app: an action starts, a picture arrives on the canvas

    class Timed(ViewerScreen):
        CSS_PATH = str(REPO / "tui" / "screens" / "viewer.tcss")  # relative paths resolve from here

        def action_zoom(self, delta: int) -> None:
            marks.append(("key", time.perf_counter()))
            super().action_zoom(delta)

        def action_fit(self) -> None:
            marks.append(("key", time.perf_counter()))
            super().action_fit()

        def action_pan(self, dx: int, dy: int) -> None:
            marks.append(("key", time.perf_counter()))
            super().action_pan(dx, dy)

        def picture_arrived(self) -> None:
            marks.append(("shown", time.perf_counter()))
            super().picture_arrived()

    def app_side() -> list[float]:
        """Each key's action start → the next picture arrival, ms (what the app itself takes)."""
        out, start = [], None
        for what, t in marks:
            if what == "key":
                start = t
            elif start is not None:
                out.append((t - start) * 1000)
                start = None
        marks.clear()
        return out
    t0, c0 = time.perf_counter(), time.process_time()
    Image.open(path).convert("RGB")
    reference = (time.perf_counter() - t0) * 1000
    reference_cpu = (time.process_time() - c0) * 1000
    app = make_app(DEMO, runs=(), annotator="bench", allow_outside_root=True, player=NullPlayer())

    async def until(pilot, done) -> float:
        t = time.perf_counter()
        while not done():
            await pilot.pause(0.001)
        return (time.perf_counter() - t) * 1000

    async with app.run_test(size=size) as pilot:
        await pilot.pause(0.2)
        await preloaded(app)
        PAINTED.clear()
        t, c = time.perf_counter(), time.process_time()  # before the screen is made: it starts decoding when made
        v = Timed([Media("image", path.name, path=path)])
        await app.push_screen(v)
        end, end_cpu = await until_painted()
        first = (end - t) * 1000
        first_cpu = (end_cpu - c) * 1000
        arrived = (next(at for what, at in marks if what == "shown") - t) * 1000
        await pilot.pause(0.05)

        def shown() -> bool:
            return v.canvas.picture is not None and v.canvas._wanted is None

        marks.clear()
        zooms, pans = [], []
        for key in ("plus", "plus", "plus", "plus", "minus", "minus", "minus", "0"):
            t = time.perf_counter()
            await pilot.press(key)
            zooms.append((time.perf_counter() - t) * 1000 + await until(pilot, shown))
            await pilot.pause(0.05)
        zoom_app = app_side()
        await pilot.press("plus", "plus", "plus")
        await until(pilot, shown)
        await pilot.pause(0.05)
        marks.clear()
        for key in ("right", "down", "left", "up") * 2:
            t = time.perf_counter()
            await pilot.press(key)
            pans.append((time.perf_counter() - t) * 1000 + await until(pilot, shown))
            await pilot.pause(0.05)
        pan_app = app_side()

    def summary(xs: list[float]) -> dict:
        return {"p50": round(statistics.median(xs), 1), "max": round(max(xs), 1), "n": len(xs)} if xs else {}

    return {"first_picture_ms": round(first, 1), "first_picture_cpu_ms": round(first_cpu, 1),
            "first_picture_arrived_ms": round(arrived, 1), "reference_ms": round(reference, 1), "reference_cpu_ms": round(reference_cpu, 1),
            "first_picture_ratio": round(first / reference, 2) if reference else None,
            "zoom_step_ms": summary(zoom_app), "pan_ms": summary(pan_app),
            "zoom_step_pilot_ms": summary(zooms), "pan_pilot_ms": summary(pans)}


THUMB_ITEM = ("Mini_Task:2", "mcq")  # tests/builders' mini benchmark: its one clue image is tag.png


async def measure_from_thumbnail(path: Path, size: tuple[int, int]) -> dict:
    """As a user does it: the app opened (deep link) on an item whose clue image is `path` (a copy of
    the mini benchmark of tests/builders, its tag.png replaced by it), its thumbnail drawn, then `z` →
    the viewer's first picture on the canvas. Cold but for what the thumbnail itself decoded."""
    import shutil
    import tempfile

    from tests.builders.benchmarks import MINI_TASK, write_mini_bench
    from tui.app import make_app
    from tui.media import image as img
    from tui.media import zoom as zm
    from tui.media.audio import NullPlayer
    from tui.screens.viewer import ViewerScreen
    from tui.widgets.media_image import MediaImage

    img.prepare("halfcell")
    watch_paints()
    with tempfile.TemporaryDirectory() as tmp:
        root = write_mini_bench(Path(tmp) / "bench")
        tag = root / "image" / MINI_TASK / "tag.png"
        shutil.copyfile(path, tag)
        img.PICTURES.clear()
        zm.SOURCES.clear()
        app = make_app(root, runs=(), annotator="bench", player=NullPlayer(), item=THUMB_ITEM[0], mode=THUMB_ITEM[1])
        started: list[float] = []
        real = app.action_view_media

        def view_media() -> None:  # the app's own `z` action: its start, without Pilot's key delivery
            started.append(time.perf_counter())
            real()

        app.action_view_media = view_media  # type: ignore[method-assign]
        async with app.run_test(size=size) as pilot:
            t = time.perf_counter()
            while True:
                thumbs = [w for w in app.screen.query(MediaImage) if w.path == tag]
                if thumbs and thumbs[0].picture is not None:
                    break
                if time.perf_counter() - t > 30:
                    raise SystemExit("the thumbnail never arrived")
                await pilot.pause(0.001)
            thumb_ms = (time.perf_counter() - t) * 1000
            misses = zm.SOURCES.misses
            await pilot.pause(0.2)
            await preloaded(app)
            PAINTED.clear()
            t, c = time.perf_counter(), time.process_time()
            await pilot.press("z")
            end, end_cpu = await until_painted()
            first_cpu = (end_cpu - c) * 1000
            await pilot.pause(0.05)
            v = app.screen
            assert isinstance(v, ViewerScreen), v
            assert v.size_px == (1920, 1080), v.size_px
    return {"first_picture_ms": round((end - started[0]) * 1000, 1),
            "first_picture_pilot_ms": round((end - t) * 1000, 1), "first_picture_cpu_ms": round(first_cpu, 1),
            "thumbnail_drawn_ms": round(thumb_ms, 1),
            "decodes_for_the_viewer": zm.SOURCES.misses - misses}


def fresh(path: Path, size: str, scenario: str = "cold") -> dict:
    """One `measure` in a fresh Python process: no colour, style or picture cached by a previous run."""
    out = subprocess.run([sys.executable, __file__, "--one", str(path), "--size", size, "--scenario", scenario],
                         capture_output=True, text=True, check=True, cwd=REPO)
    return json.loads(out.stdout.strip().splitlines()[-1])


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--repeat", type=int, default=5)
    ap.add_argument("--size", default="120x40")
    ap.add_argument("--one", default=None, help=argparse.SUPPRESS)  # one run, in this (fresh) process
    ap.add_argument("--scenario", default="cold", choices=("cold", "thumbnail"), help=argparse.SUPPRESS)
    args = ap.parse_args()
    size = tuple(int(v) for v in args.size.split("x"))
    if args.one:
        run = measure_from_thumbnail if args.scenario == "thumbnail" else measure
        print(json.dumps(asyncio.run(run(Path(args.one), size))))
        return 0
    out: dict = {"targets": TARGETS, "size": args.size, "load_average_before": [round(v, 2) for v in os.getloadavg()],
                 "calibration_ms": calibration_ms()}
    with tempfile.TemporaryDirectory() as tmp:
        for fmt in ("png", "jpg"):
            path = make_source(Path(tmp), fmt)
            runs = [fresh(path, args.size) for _ in range(args.repeat)]
            firsts = [r["first_picture_ms"] for r in runs]
            steps = [r["zoom_step_ms"]["p50"] for r in runs]
            out[fmt] = {"first_picture_ms_median": round(statistics.median(firsts), 1),
                        "first_picture_per_calibration": round(statistics.median(firsts) / out["calibration_ms"], 3),
                        "first_picture_ms_max": max(firsts),
                        "first_picture_cpu_ms_median": round(statistics.median(r["first_picture_cpu_ms"] for r in runs), 1),
                        "zoom_step_ms_median_of_p50": round(statistics.median(steps), 1),
                        "zoom_step_ms_max": max(r["zoom_step_ms"]["max"] for r in runs),
                        "n_runs": len(runs), "runs": runs}
            if fmt == "png":  # the same file, opened with `z` from the Item screen that shows its thumbnail
                runs = [fresh(path, args.size, "thumbnail") for _ in range(args.repeat)]
                firsts = [r["first_picture_ms"] for r in runs]
                out["png_from_thumbnail"] = {
                    "first_picture_ms_median": round(statistics.median(firsts), 1),
                    "first_picture_per_calibration": round(statistics.median(firsts) / out["calibration_ms"], 3),
                    "first_picture_ms_max": max(firsts),
                    "first_picture_pilot_ms_median": round(statistics.median(r["first_picture_pilot_ms"] for r in runs), 1),
                    "first_picture_cpu_ms_median": round(statistics.median(r["first_picture_cpu_ms"] for r in runs), 1),
                    "decodes_for_the_viewer_max": max(r["decodes_for_the_viewer"] for r in runs),
                    "n_runs": len(runs), "runs": runs}
    out["load_average_after"] = [round(v, 2) for v in os.getloadavg()]
    print(json.dumps(out, indent=1))
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
