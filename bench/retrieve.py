"""Retrieval replay speed: rounds embedded per second, cold vs warm (cache) LoCoMo, MOSAIC scale.

    python bench/retrieve.py [--locomo PATH] [--skip-mosaic]

Prints one JSON object. Cold = empty embedding cache (model load + encoding); warm = a second run
over the same benchmark, every text from the cache, in a fresh process (the model is never loaded).
Target: warm at least 20x faster than cold.
"""

from __future__ import annotations

import argparse
import json
import os
import subprocess
import sys
import tempfile
import time
from pathlib import Path

REPO = Path(__file__).resolve().parents[1]
LOCOMO = REPO.parent / "shared" / "peer-data" / "locomo10.json"


def memscope(*args: str) -> float:
    t0 = time.perf_counter()
    subprocess.run([sys.executable, "-m", "scorer", *args], check=True, stdout=subprocess.DEVNULL,
                   cwd=REPO, env={**os.environ, "PYTHONPATH": str(REPO)})
    return time.perf_counter() - t0


def main() -> None:
    ap = argparse.ArgumentParser()
    ap.add_argument("--locomo", default=str(LOCOMO))
    ap.add_argument("--skip-mosaic", action="store_true")
    args = ap.parse_args()
    out: dict = {"machine": {"cpus": os.cpu_count()}}
    with tempfile.TemporaryDirectory() as tmp:
        t = Path(tmp)
        if Path(args.locomo).exists():
            memscope("import", "locomo", args.locomo, "--out", str(t / "locomo"))
            cache = str(t / "cache.sqlite")
            cold = memscope("retrieve", str(t / "locomo"), "--out", str(t / "r1"), "--cache", cache)
            warm = memscope("retrieve", str(t / "locomo"), "--out", str(t / "r2"), "--cache", cache)
            sys.path.insert(0, str(REPO))
            from scorer.load.memeye import load_benchmark
            from scorer.retrieve import count_texts

            n = count_texts(load_benchmark(t / "locomo"))
            out["locomo"] = {"texts": n, "cold_s": round(cold, 2), "warm_s": round(warm, 2),
                             "warm_speedup": round(cold / warm, 1), "texts_per_s_cold": round(n / cold, 1)}
        if not args.skip_mosaic:
            subprocess.run([sys.executable, str(REPO / "fixtures" / "synth.py"), "--scale", "mosaic",
                            "--out", str(t / "mosaic")], check=True, stdout=subprocess.DEVNULL)
            bench_dir = t / "mosaic"
            cache = str(t / "cache2.sqlite")
            cold = memscope("retrieve", str(bench_dir), "--out", str(t / "m1"), "--cache", cache)
            warm = memscope("retrieve", str(bench_dir), "--out", str(t / "m2"), "--cache", cache)
            out["mosaic"] = {"cold_s": round(cold, 2), "warm_s": round(warm, 2),
                             "warm_speedup": round(cold / warm, 1)}
    print(json.dumps(out, indent=2))


if __name__ == "__main__":
    main()
