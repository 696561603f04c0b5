"""Loading speed: a MemEye-scale synthetic benchmark and run set (fixtures/synth.py --scale memeye).

    python bench/load.py [--repeat 5]

Prints one JSON object: rows, time to read the benchmark, the runs, the join into the scoring
frame, and validate; each the median of --repeat runs in this process.
"""

from __future__ import annotations

import argparse
import json
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

REPO = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(REPO))

from scorer.load.frame import predictions_frame  # noqa: E402
from scorer.load.memeye import load_benchmark  # noqa: E402
from scorer.load.runs import load_runs  # noqa: E402
from scorer.load.validate import validate  # noqa: E402


def timed(fn, repeat: int):
    times, result = [], None
    for _ in range(repeat):
        result = None  # free the previous load outside the timed region
        t0 = time.perf_counter()
        result = fn()
        times.append(time.perf_counter() - t0)
    return statistics.median(times), result


def main() -> None:
    ap = argparse.ArgumentParser()
    ap.add_argument("--repeat", type=int, default=5)
    args = ap.parse_args()
    with tempfile.TemporaryDirectory() as tmp:
        root = Path(tmp) / "memeye"
        subprocess.run([sys.executable, str(REPO / "fixtures" / "synth.py"), "--scale", "memeye", "--out", str(root)],
                       check=True, stdout=subprocess.DEVNULL)
        runs_dir = root / "runs"
        t_bench, bench = timed(lambda: load_benchmark(root), args.repeat)
        t_runs, runs = timed(lambda: load_runs(runs_dir), args.repeat)
        t_frame, frame = timed(lambda: predictions_frame(bench, runs), args.repeat)
        t_val, findings = timed(lambda: validate(bench, runs, decode_media=False), 1)
        size = sum(p.stat().st_size for p in runs_dir.rglob("predictions.jsonl"))
        print(json.dumps({
            "items": len(bench.item_ids()),
            "run_folders": len(runs),
            "rows": sum(len(r.predictions) for r in runs),
            "predictions_mb": round(size / 1e6, 1),
            "load_benchmark_s": round(t_bench, 3),
            "load_runs_s": round(t_runs, 3),
            "frame_s": round(t_frame, 3),
            "frame_rows": len(frame),
            "validate_no_decode_s": round(t_val, 3),
            "validate_errors": sum(f.severity == "error" for f in findings),
        }, indent=2))


if __name__ == "__main__":
    main()
