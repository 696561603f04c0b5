"""Media figures: image decode + shrink (cold / warm cache), GIF and mp4 frame seeks, half-cell render
of a full 120×40 frame, Sixel encode shrunk vs not, and the Session screen's round step (headless).
Prints one JSON object; every figure carries its n.

    python bench/media.py [--bench fixtures/demo] [--repeat 20]

Images: every image of the benchmark plus two synthetic 1920×1080 photos (JPEG, PNG), which is
where shrinking first matters (DESIGN §9).
"""

from __future__ import annotations

import argparse
import asyncio
import json
import platform
import random
import statistics
import sys
import tempfile
import time
from pathlib import Path
from typing import Callable

import numpy as np
from PIL import Image

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

from scorer.load.memeye import load_benchmark  # noqa: E402
from tui.media import halfcell as hc  # noqa: E402
from tui.media import image as img  # noqa: E402
from tui.media.frames import PillowFrames  # noqa: E402

THUMB, FULL, SCREEN = (16, 6), (72, 16), (120, 40)


def stats(ms: list[float]) -> dict:
    s = sorted(ms)
    return {"n": len(s), "mean_ms": round(statistics.fmean(s), 3), "p50_ms": round(s[len(s) // 2], 3),
            "p95_ms": round(s[min(len(s) - 1, round(0.95 * (len(s) - 1)))], 3), "max_ms": round(s[-1], 3)}


def timed(fn: Callable[[], object]) -> float:
    t = time.perf_counter()
    fn()
    return (time.perf_counter() - t) * 1000


def photo(path: Path, size: tuple[int, int] = (1920, 1080)) -> Path:
    """A 'photo' (default 1920×1080): smooth gradients plus noise, so codecs cannot cheat."""
    rng = np.random.default_rng(7)
    w, h = size
    y, x = np.mgrid[0:h, 0:w]
    a = np.stack([(x * 255 // (w - 1)), (y * 255 // (h - 1)), ((x + y) * 255 // (w + h - 2))], axis=-1).astype(np.int16)
    a = np.clip(a + rng.integers(-20, 21, a.shape), 0, 255).astype(np.uint8)
    Image.fromarray(a).save(path, quality=88) if path.suffix == ".jpg" else Image.fromarray(a).save(path)
    return path


def images_figures(paths: list[Path], cells: tuple[int, int], repeat: int = 1) -> dict:
    """Cold = decode + shrink + render through an empty cache; warm = the same call again (a hit)."""
    cold, warm = [], []
    for _ in range(repeat):
        for p in paths:
            img.PICTURES.clear()
            cold.append(timed(lambda: img.load_picture(p, cells)))
            warm.append(timed(lambda: img.load_picture(p, cells)))
    return {"cold": stats(cold), "warm": stats(warm)}


def gif_figures(gifs: list[Path], repeat: int) -> dict:
    rnd, seq = [], []
    rng = random.Random(20260430)
    for g in gifs:
        src = PillowFrames(g)
        for _ in range(repeat):
            i = rng.randrange(src.count)
            rnd.append(timed(lambda: src.frame(i)))
        for i in range(src.count):
            seq.append(timed(lambda: src.frame(i)))
        src.close()
    return {"files": len(gifs), "random_seek": stats(rnd), "next_frame": stats(seq)}


def av_figures(tmp: Path, repeat: int) -> dict:
    try:
        import av
    except ImportError:
        return {"value": None, "reason": "PyAV (the video extra) not installed"}
    from tui.media.frames import PyAVFrames

    out = {}
    for name, codec in (("clip.mp4", "libx264"), ("clip.webm", "libvpx")):
        path = tmp / name
        with av.open(str(path), "w") as c:  # 10 s at 25 fps, 640×360, a keyframe every 2 s
            s = c.add_stream(codec, rate=25)
            s.width, s.height, s.pix_fmt = 640, 360, "yuv420p"
            s.gop_size = 50
            for k in range(250):
                a = np.full((360, 640, 3), (k * 7) % 255, dtype=np.uint8)
                a[:, (k * 2) % 640] = 255
                for pkt in s.encode(av.VideoFrame.from_ndarray(a, format="rgb24")):
                    c.mux(pkt)
            for pkt in s.encode():
                c.mux(pkt)
        t0 = time.perf_counter()
        src = PyAVFrames(path)
        open_ms = (time.perf_counter() - t0) * 1000
        rng = random.Random(1)
        rnd = [timed(lambda i=rng.randrange(src.count): src.frame(i)) for _ in range(repeat)]
        src.frame(100)
        nxt = [timed(lambda i=i: src.frame(i)) for i in range(101, 101 + repeat)]
        out[name] = {"frames": src.count, "open_and_index_ms": round(open_ms, 1),
                     "random_seek": stats(rnd), "next_frame": stats(nxt)}
        src.close()
    return out


def halfcell_figures(repeat: int) -> dict:
    # 1800×1200 (3:2) fills all 120×80 half-cell pixels of a 120×40 frame: the worst case
    src = Image.open(photo(Path(tempfile.mkdtemp()) / "p.png", (1800, 1200))).convert("RGB")
    box = img.box_px(SCREEN, img.HALFCELL)
    small = img.to_fit(src, box)
    shrink = [timed(lambda: img.to_fit(src, box)) for _ in range(repeat)]
    render = [timed(lambda: hc.halfcell_strips(small)) for _ in range(repeat)]
    return {"frame_cells": list(SCREEN), "pixels": list(small.size),
            "shrink_1800x1200": stats(shrink), "strips": stats(render)}


def sixel_figures(repeat: int) -> dict:
    """textual-image's Sixel encoder on a full-screen box (120×40 cells at 10×20 px), shrunk first or not."""
    try:
        from textual_image._sixel import image_to_sixels
    except Exception as exc:  # pragma: no cover
        return {"value": None, "reason": f"textual-image sixel encoder unavailable: {exc}"}
    src = Image.open(photo(Path(tempfile.mkdtemp()) / "p.png")).convert("RGB")
    shrunk = img.to_fit(src, (SCREEN[0] * 10, SCREEN[1] * 20))
    n = max(2, repeat // 5)
    return {"source_1920x1080": stats([timed(lambda: image_to_sixels(src)) for _ in range(n)]),
            "shrunk_" + "x".join(map(str, shrunk.size)): stats([timed(lambda: image_to_sixels(shrunk))
                                                                for _ in range(n)])}


async def session_figures(bench: Path) -> dict:
    """Round step in the Session screen, headless at 120×40: text on screen, then media filled in."""
    from textual.worker import WorkerCancelled

    from tui.app import make_app
    from tui.media.audio import NullPlayer
    from tui.screens.session import SessionScreen

    app = make_app(bench, runs=(), db=None, annotator="bench", player=NullPlayer())
    shown, filled = [], []
    async with app.run_test(size=SCREEN) as pilot:
        task = max(app.state.bench.tasks, key=lambda t: sum(len(r.media) for r in t.rounds))
        screen = SessionScreen(task.name, None)
        await app.push_screen(screen)
        await app.workers.wait_for_complete()
        await pilot.pause()
        img.PICTURES.clear()
        for _ in range(len(screen.rounds) - 1):
            t0 = time.perf_counter()
            screen.pos += 1
            await screen._show()  # what the `n` key runs: the round's text and widgets mounted
            screen._on_timer_update()  # layout + paint, as the next screen refresh would
            t1 = time.perf_counter()
            for _ in range(100):  # media workers: open → decode/shrink/render → paint
                try:
                    await app.workers.wait_for_complete()
                except WorkerCancelled:
                    pass
                await asyncio.sleep(0.001)
                if all(w.is_finished for w in app.workers):
                    break
            screen._on_timer_update()
            t2 = time.perf_counter()
            shown.append((t1 - t0) * 1000)
            filled.append((t2 - t0) * 1000)
    return {"task": task.name, "round_to_text_painted": stats(shown), "round_to_media_filled_cold": stats(filled)}


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--bench", type=Path, default=ROOT / "fixtures" / "demo")
    ap.add_argument("--repeat", type=int, default=20)
    args = ap.parse_args()
    img.prepare("halfcell")
    bench = load_benchmark(args.bench)
    tmp = Path(tempfile.mkdtemp())
    paths = sorted({m.path for t in bench.tasks for r in t.rounds for m in r.media
                    if m.kind == "image" and m.path is not None})
    jpg, png = photo(tmp / "photo.jpg"), photo(tmp / "photo.png")
    r = max(3, args.repeat // 4)
    gifs = sorted({m.path for t in bench.tasks for r in t.rounds for m in r.media
                   if m.kind == "video" and m.path is not None and m.path.suffix.lower() == ".gif"})
    out = {
        "python": platform.python_version(), "machine": platform.machine(), "renderer": img.mode(),
        "bench": str(args.bench),
        "image_decode_shrink_render": {
            "benchmark_images": {"thumb_16x6": images_figures(paths, THUMB), "full_72x16": images_figures(paths, FULL)},
            **{f"photo_1920x1080_{p.suffix[1:]}": {
                "thumb_16x6": images_figures([p], THUMB, r), "full_72x16": images_figures([p], FULL, r),
                "screen_120x40": images_figures([p], SCREEN, r)} for p in (jpg, png)},
        },
        "gif_frames": gif_figures(gifs, args.repeat) if gifs else {"value": None, "reason": "no GIF in the benchmark"},
        "pyav_frames": av_figures(tmp, args.repeat),
        "halfcell_120x40": halfcell_figures(args.repeat),
        "sixel_encode_120x40": sixel_figures(args.repeat),
        "session_round_step": asyncio.run(session_figures(args.bench)),
    }
    print(json.dumps(out, indent=1))


if __name__ == "__main__":
    main()
