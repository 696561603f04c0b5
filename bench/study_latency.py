"""Per-event write latency of the Study screen, measured in the real app (headless, in its own
process, real key presses through Pilot) on a demo agreement study.

    python bench/study_latency.py [--verdicts 150]

Prints one JSON object (milliseconds, with n):
- write_ms: the store's own time for one committed write (BEGIN IMMEDIATE … COMMIT, WAL, synchronous=FULL);
- key_to_saved_painted_ms: the screen's key handler entered → the frame showing "✓ saved" painted;
- press_to_saved_seen_ms: the driver's press → it sees "✓ saved <blind id>" (Pilot's own waiting included).
"""

from __future__ import annotations

import argparse
import json
import os
import statistics
import subprocess
import sys
import tempfile
from pathlib import Path

REPO = Path(__file__).resolve().parents[1]
DEMO = REPO / "fixtures" / "demo"


def summary(seconds: list[float]) -> dict:
    ms = sorted(s * 1000 for s in seconds)
    if not ms:
        return {"n": 0}
    return {"n": len(ms), "p50": round(statistics.median(ms), 2), "p95": round(ms[int(0.95 * (len(ms) - 1))], 2),
            "max": round(ms[-1], 2), "mean": round(statistics.fmean(ms), 2)}


def main() -> None:
    ap = argparse.ArgumentParser()
    ap.add_argument("--verdicts", type=int, default=150)
    args = ap.parse_args()
    env = dict(os.environ, PYTHONPATH=str(REPO) + os.pathsep + os.environ.get("PYTHONPATH", ""))
    with tempfile.TemporaryDirectory() as tmp:
        db = Path(tmp) / "bench.db"
        subprocess.run([sys.executable, "-m", "tui.cli", "study", "new", "--kind", "agreement", "--per-cell", "20",
                        "--backbone", "gpt-5.4-mini", "--methods", "FC(T),FC(V),SRAG(T),SRAG(V),SRAG(V) budget",
                        "--name", "bench", "--db", str(db), str(DEMO), "--runs", str(DEMO / "runs")],
                       check=True, env=env, cwd=REPO, stdout=subprocess.DEVNULL)
        out = subprocess.run([sys.executable, str(REPO / "tests" / "tui" / "study_driver.py"), str(DEMO),
                              str(DEMO / "runs"), str(db), "bench", "bench", str(args.verdicts)],
                             check=True, env=env, cwd=REPO, capture_output=True, text=True).stdout
    seen = [float(line.split()[3]) for line in out.splitlines() if line.startswith("saved")]
    inner = json.loads(next(line for line in out.splitlines() if line.startswith("latency"))[len("latency "):])
    print(json.dumps({"verdicts": len(seen), "write_ms": summary(inner["write"]),
                      "key_to_saved_painted_ms": summary(inner["key_to_painted"]),
                      "press_to_saved_seen_ms": summary(seen)}, indent=1))


if __name__ == "__main__":
    main()
