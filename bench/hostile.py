"""Memory of `memscope validate` on hostile benchmarks (issue 14, class 2's "a 2 GiB sparse video must
not cost 2 GB"), as ratios to the peak RSS of a bare `python3 -c "import scorer.load.memeye"` measured
in the same run.

    python bench/hostile.py [--keep DIR]

Prints one JSON object:
- baseline_peak_rss_mb: `import scorer.load.memeye` alone (the reader's own imports);
- sparse_video: a copy of one demo task whose first round names `video/huge.mp4`, a 2 GiB sparse
  file (truncate(), no data written): validate's peak RSS in MB, its ratio to the baseline, its wall
  time and exit status;
- big_dialog: the same task with sessions of generated text added until its dialog file is 50 MB;
- load_average: the 1/5/15-minute load when the run ended (2 shared cores: compare like with like).
Peak RSS is the child's ru_maxrss (os.wait4), so each figure is one process's own peak.
"""

from __future__ import annotations

import argparse
import json
import os
import shutil
import subprocess
import sys
import tempfile
import time
from pathlib import Path

REPO = Path(__file__).resolve().parents[1]
DEMO = REPO / "fixtures" / "demo"
TASK = "Travel_Photo_Diary"
VIDEO_BYTES = 2 * 1024**3
DIALOG_BYTES = 50 * 1000**2


def peak(argv: list[str]) -> dict:
    """Run argv; its peak RSS (MB), wall time (s) and exit status."""
    t0 = time.perf_counter()
    proc = subprocess.Popen(argv, cwd=REPO, stdout=subprocess.DEVNULL, stderr=subprocess.PIPE)
    _, status, usage = os.wait4(proc.pid, 0)
    proc.returncode = os.waitstatus_to_exitcode(status)
    err = proc.stderr.read().decode("utf-8", "replace").strip().splitlines() if proc.stderr else []
    return {"peak_rss_mb": round(usage.ru_maxrss / 1024, 1), "wall_s": round(time.perf_counter() - t0, 2),
            "exit": proc.returncode, "stderr_tail": err[-2:]}


def task_copy(root: Path) -> tuple[Path, dict]:
    bench = root / "bench"
    (bench / "dialog").mkdir(parents=True)
    shutil.copytree(DEMO / "image" / TASK, bench / "image" / TASK)
    doc = json.loads((DEMO / "dialog" / f"{TASK}.json").read_text(encoding="utf-8"))
    return bench, doc


def sparse_video(root: Path) -> Path:
    bench, doc = task_copy(root / "video")
    (bench / "video").mkdir()
    with open(bench / "video" / "huge.mp4", "wb") as fh:
        fh.truncate(VIDEO_BYTES)
    doc["multi_session_dialogues"][0]["dialogues"][0]["input_video"] = ["video/huge.mp4"]
    (bench / "dialog" / f"{TASK}.json").write_text(json.dumps(doc), encoding="utf-8")
    return bench


def big_dialog(root: Path) -> Path:
    bench, doc = task_copy(root / "dialog")
    sessions = doc["multi_session_dialogues"]
    base = len(json.dumps(doc).encode())
    text = "The shelf by the window holds the blue vase, two postcards and a ticket stub. " * 12
    n, size = 0, base
    while size < DIALOG_BYTES:
        n += 1
        sid = f"D{1000 + n}"
        rounds = [{"round": f"{sid}:{r}", "user": text, "assistant": text} for r in range(1, 51)]
        sessions.append({"session_id": sid, "date": "2026-01-01", "dialogues": rounds})
        size += len(json.dumps(sessions[-1]).encode()) + 2
    path = bench / "dialog" / f"{TASK}.json"
    path.write_text(json.dumps(doc), encoding="utf-8")
    return bench


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--keep", metavar="DIR", help="build the benchmarks here and keep them")
    args = ap.parse_args()
    tmp = Path(args.keep) if args.keep else Path(tempfile.mkdtemp(prefix="memscope-hostile-"))
    try:
        base = peak([sys.executable, "-c", "import scorer.load.memeye"])
        out: dict = {"baseline_peak_rss_mb": base["peak_rss_mb"]}
        for name, build, size in (("sparse_video", sparse_video, VIDEO_BYTES), ("big_dialog", big_dialog, None)):
            bench = build(tmp)
            if size is None:
                size = (bench / "dialog" / f"{TASK}.json").stat().st_size
            fig = peak([sys.executable, "-m", "scorer.cli", "validate", str(bench)])
            fig["ratio_to_baseline"] = round(fig["peak_rss_mb"] / base["peak_rss_mb"], 2)
            fig["input_bytes"] = size
            out[name] = fig
        out["load_average"] = [round(x, 2) for x in os.getloadavg()]
        print(json.dumps(out, indent=2))
    finally:
        if not args.keep:
            shutil.rmtree(tmp, ignore_errors=True)
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
