"""Judge throughput and cache speed, against the test server (tests/judge_server.py) on 127.0.0.1.

    python bench/judge.py [--judgments 1000] [--latency 0.05] [--cached-rows 40000]

The server runs in its own process (as a real endpoint would: it must not share our interpreter).
1. `--judgments` distinct prompts judged through `memscope judge` (in this process) at concurrency
   1 and at concurrency 16, each with a fresh cache, the server sleeping `--latency` per request.
   Target: concurrency 16 at least 10× faster.
2. `--cached-rows` open rows (40 run folders) re-scored entirely from the cache: `memscope judge`
   as a subprocess (what a user waits for, interpreter start included). The cache is seeded
   directly with the keys the command will look up; the server must see zero requests.
   Target: under 5 s.
Prints one JSON object.
"""

from __future__ import annotations

import argparse
import json
import os
import subprocess
import sys
import tempfile
import time
import urllib.request
from contextlib import contextmanager
from pathlib import Path

REPO = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(REPO))  # run as a script from anywhere: the project's packages

from scorer.cli import main as cli  # noqa: E402
from scorer.judge.cache import JudgeCache, make_key  # noqa: E402
from scorer.judge.prompt import load_prompt  # noqa: E402

TASK = "Bench_Task"


class Server:
    def __init__(self, url: str) -> None:
        self.url = url

    @property
    def requests(self) -> int:
        with urllib.request.urlopen(self.url + "/_stats", timeout=10) as r:
            return json.load(r)["requests"]


@contextmanager
def server(latency: float = 0.0):
    proc = subprocess.Popen([sys.executable, str(REPO / "tests" / "judge_server.py"), str(latency)],
                            stdout=subprocess.PIPE, text=True)
    try:
        yield Server(proc.stdout.readline().strip())
    finally:
        proc.terminate()
        proc.wait(timeout=10)


def write_runs(root: Path, n_rows: int, per_run: int, salt: str) -> Path:
    for r in range(0, n_rows, per_run):
        folder = root / TASK / f"20260101_{r // per_run:06d}_bench-model_method{r // per_run}"
        folder.mkdir(parents=True)
        (folder / "config.json").write_text(json.dumps({"task": TASK, "model": "bench-model", "method": f"method{r // per_run}"}))
        (folder / "metrics.json").write_text(json.dumps({"task_name": TASK, "model_name": "bench-model",
                                                         "method_name": f"method{r // per_run}", "mode": "open"}))
        with (folder / "predictions.jsonl").open("w") as fh:
            for i in range(r, min(r + per_run, n_rows)):
                fh.write(json.dumps({
                    "idx": i + 1, "mode": "open", "question": f"What colour was the mug on day {i}?",
                    "gt": f"Blue with a white handle ({i})", "pred": f"It was blue, I think ({salt} {i}).",
                    "judge": None, "judge_reasoning": None, "em": 0.0, "bleu_1": 0.2}) + "\n")
    return root


def judge_throughput(tmp: Path, n: int, latency: float) -> dict:
    runs = write_runs(tmp / "through", n, 100, "t")
    out = {}
    with server(latency) as srv:
        for conc in (1, 16):
            before = srv.requests
            t0 = time.perf_counter()
            rc = cli(["judge", "--runs", str(runs), "--model", "judge-a", "--base-url", srv.url,
                      "--out", str(tmp / f"out{conc}"), "--cache", str(tmp / f"c{conc}.sqlite"),
                      "--concurrency", str(conc), "--timeout", "30"])
            secs = time.perf_counter() - t0
            asked = srv.requests - before
            assert rc == 0 and asked == n, (rc, asked)
            out[conc] = {"seconds": round(secs, 3), "requests": asked,
                         "judgments_per_s": round(n / secs, 1)}
    return {"judgments": n, "latency_s": latency, "concurrency_1": out[1], "concurrency_16": out[16],
            "speedup": round(out[1]["seconds"] / out[16]["seconds"], 2), "target_speedup": 10}


def cache_rescore(tmp: Path, n: int) -> dict:
    runs = write_runs(tmp / "cached", n, 1000, "c")
    cache_path = tmp / "cache40k.sqlite"
    prompt = load_prompt(None, 5)
    with server() as srv:
        url = srv.url
        seed = []
        for f in sorted(runs.rglob("predictions.jsonl")):
            for line in f.read_text().splitlines():
                r = json.loads(line)
                key = make_key("judge-a", url, prompt.sha256, prompt.levels, r["question"], r["gt"], r["pred"])
                seed.append((key, "judge-a", url, prompt.sha256, 0.75, "seeded", 400, 20))
        with JudgeCache(cache_path) as c:
            c.put_many(seed)
        env = {**os.environ, "PYTHONPATH": str(REPO), "OPENAI_API_KEY": "sk-bench-not-a-key"}
        t0 = time.perf_counter()
        done = subprocess.run([sys.executable, "-m", "scorer.cli", "judge", "--runs", str(runs), "--model", "judge-a",
                               "--base-url", url, "--out", str(tmp / "out40k"), "--cache", str(cache_path)],
                              env=env, capture_output=True, text=True)
        secs = time.perf_counter() - t0
        assert done.returncode == 0, done.stderr
        assert srv.requests == 0, srv.requests  # a fresh server: everything came from the cache
    written = sum(1 for f in (tmp / "out40k").rglob("predictions.jsonl") for _ in f.open())
    return {"rows": n, "run_folders": n // 1000, "seconds": round(secs, 3), "requests": 0, "rows_written": written,
            "target_seconds": 5, "note": "subprocess wall time, interpreter start included; cache seeded directly"}


def main() -> None:
    ap = argparse.ArgumentParser()
    ap.add_argument("--judgments", type=int, default=1000)
    ap.add_argument("--latency", type=float, default=0.05)
    ap.add_argument("--cached-rows", type=int, default=40_000)
    args = ap.parse_args()
    with tempfile.TemporaryDirectory(prefix="memscope-bench-judge-") as d:
        tmp = Path(d)
        load_before = os.getloadavg()[0]
        result = {"throughput": judge_throughput(tmp, args.judgments, args.latency),
                  "cache_rescore": cache_rescore(tmp, args.cached_rows),
                  # other work on the machine slows both figures: say how busy it was
                  "machine": {"cpus": os.cpu_count(), "load_1min_before": round(load_before, 2),
                              "load_1min_after": round(os.getloadavg()[0], 2)}}
    print(json.dumps(result, indent=2))


if __name__ == "__main__":
    main()
