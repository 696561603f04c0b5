"""Benchmark the MOSAIC sections (issue 20) on the MOSAIC-scale synthetic set. Prints one JSON object.

    python bench/mosaic.py [--dir DIR] [--repeat 3]

fixtures/synth.py --scale mosaic (70 personas, 923 open items, 40 run configurations × 70 personas =
2,800 run folders, 36,920 rows; made in a temporary folder unless --dir names one already made) is
scored as a subprocess, start-up included, three ways, interleaved so that each repeat sees the
same load: the reference `--sections matrix`, the five MOSAIC sections (`--format md,png`: both
figures), and the whole default report (`--format md,csv,json,tex,png`). Reported: the median
wall times, the MOSAIC and full-report times as ratios to the reference, and the load average
before and after (the machine is shared: other work slows every number).
"""

from __future__ import annotations

import argparse
import json
import os
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

REPO = Path(__file__).resolve().parents[1]
MOSAIC = "mosaic_ladder,mosaic_strata,mosaic_sweep,mosaic_carriers,mosaic_composition"


def timed(args: list[str]) -> float:
    t = time.perf_counter()
    subprocess.run([sys.executable, "-m", "scorer", *args], cwd=REPO, check=True, stdout=subprocess.DEVNULL)
    return time.perf_counter() - t


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--dir", type=Path, help="a benchmark already made by fixtures/synth.py --scale mosaic")
    ap.add_argument("--repeat", type=int, default=3)
    args = ap.parse_args(argv)
    with tempfile.TemporaryDirectory() as tmp:
        bench = args.dir
        if bench is None:
            bench = Path(tmp) / "mosaic"
            subprocess.run([sys.executable, str(REPO / "fixtures" / "synth.py"), "--scale", "mosaic", "--out",
                            str(bench)], check=True, stdout=subprocess.DEVNULL)
        base = ["score", str(bench), "--runs", str(bench / "runs")]
        load_before = os.getloadavg()
        times: dict[str, list[float]] = {"matrix": [], "mosaic": [], "full": []}
        for i in range(args.repeat):
            times["matrix"].append(timed([*base, "--sections", "matrix"]))
            times["mosaic"].append(timed([*base, "--sections", MOSAIC, "--out", f"{tmp}/m{i}", "--format", "md,png"]))
            times["full"].append(timed([*base, "--out", f"{tmp}/f{i}", "--format", "md,csv,json,tex,png"]))
        med = {k: statistics.median(v) for k, v in times.items()}
        print(json.dumps({
            "rows": 36_920, "run_folders": 2_800, "repeat": args.repeat,
            "median_s": {k: round(v, 2) for k, v in med.items()},
            "mosaic_over_matrix": round(med["mosaic"] / med["matrix"], 2),
            "full_over_matrix": round(med["full"] / med["matrix"], 2),
            "load_before": [round(x, 2) for x in load_before], "load_after": [round(x, 2) for x in os.getloadavg()],
        }))
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
