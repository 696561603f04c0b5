"""Retrieval replay speed: texts embedded per second, cold vs warm (cache) LoCoMo, MOSAIC scale, and
cold against the model's own speed.

    python bench/retrieve.py [--locomo PATH] [--skip-mosaic] [--repeat 1]

Prints one JSON object. Cold = empty embedding cache (process start, model load, encoding, writing
the run); warm = a second run over the same benchmark, every text from the cache, in a fresh
process (the model is never loaded). Reference, in a fresh process too, right before each cold run:
a bare `SentenceTransformer.encode` of the same unique texts (those `memscope retrieve` embeds),
with the same batch size (64) and the same torch threads, timed around the encode call alone
(`ref_encode_s`) and from process start (`ref_process_s`: imports and model load included).
`cold_vs_encode` = cold throughput ÷ the encode's (target ≥ 0.9, issue 19), `cold_vs_process` the
same against the reference process; `*_cpu` the same ratios in CPU seconds (user + system of each
process, less disturbed by other work than wall clock). Both sides run with OMP_NUM_THREADS set to
the same count (--threads, default every CPU), which torch takes for its intra-op threads; the
reference prints torch.get_num_threads() and a probe with the same environment gives memscope's.
Reference and cold alternate which goes first from run to run. Targets: warm at least 20x faster than cold; cold ≥ 0.9× the
bare encode. The load average is printed beside each run (other work on a shared machine slows
every number, the ratios less).
"""

from __future__ import annotations

import argparse
import json
import os
import resource
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

REPO = Path(__file__).resolve().parents[1]
LOCOMO = REPO.parent / "shared" / "peer-data" / "locomo10.json"
BATCH = 64  # memscope retrieve's default --batch

REFERENCE = """
import json, sys, time
t0 = time.perf_counter()
c0 = time.process_time()
import torch
from sentence_transformers import SentenceTransformer
texts = json.load(open(sys.argv[1]))
model = SentenceTransformer(sys.argv[2], device="cpu")
t1 = time.perf_counter()
c1 = time.process_time()
model.encode(texts, batch_size=int(sys.argv[3]), normalize_embeddings=True, convert_to_numpy=True,
             show_progress_bar=False)
t2 = time.perf_counter()
c2 = time.process_time()
print(json.dumps({"encode_s": t2 - t1, "process_s": t2 - t0, "encode_cpu": c2 - c1, "process_cpu": c2 - c0,
                  "threads": torch.get_num_threads()}))
"""


THREADS = {"OMP_NUM_THREADS": str(os.cpu_count() or 1)}  # --threads sets it; the same for both sides


def children_cpu() -> float:
    r = resource.getrusage(resource.RUSAGE_CHILDREN)
    return r.ru_utime + r.ru_stime


def memscope(*args: str) -> tuple[float, float]:
    """(wall s, CPU s) of one `memscope` process."""
    t0, c0 = time.perf_counter(), children_cpu()
    subprocess.run([sys.executable, "-m", "scorer", *args], check=True, stdout=subprocess.DEVNULL,
                   cwd=REPO, env={**os.environ, **THREADS, "PYTHONPATH": str(REPO)})
    return time.perf_counter() - t0, children_cpu() - c0


def memscope_threads() -> int:
    """torch's intra-op threads in a process with memscope's environment."""
    proc = subprocess.run([sys.executable, "-c", "import torch; print(torch.get_num_threads())"], check=True,
                          capture_output=True, text=True, env={**os.environ, **THREADS})
    return int(proc.stdout.strip())


def uptime() -> str:
    try:
        return subprocess.run(["uptime"], capture_output=True, text=True).stdout.strip()
    except OSError:
        return "load average: " + ", ".join(f"{x:.2f}" for x in os.getloadavg())


def unique_texts(bench_dir: Path) -> list[str]:
    """The texts `memscope retrieve` embeds, once each, in the order it meets them."""
    sys.path.insert(0, str(REPO))
    from scorer.load.memeye import load_benchmark
    from scorer.retrieve import _questions, task_texts

    out: dict[str, None] = {}
    for task in load_benchmark(bench_dir).tasks:
        out.update(dict.fromkeys(task_texts(task)[1] + _questions(task)[1]))
    return list(out)


def reference(texts_file: Path) -> dict:
    sys.path.insert(0, str(REPO))
    from scorer.embed.model import DEFAULT_MODEL, model_dir

    env = {**os.environ, **THREADS, "HF_HUB_OFFLINE": "1", "TRANSFORMERS_OFFLINE": "1", "TOKENIZERS_PARALLELISM": "false"}
    proc = subprocess.run([sys.executable, "-c", REFERENCE, str(texts_file), str(model_dir(DEFAULT_MODEL)), str(BATCH)],
                          check=True, capture_output=True, text=True, env=env)
    return json.loads(proc.stdout.strip().splitlines()[-1])


def locomo_run(t: Path, texts: list[str], n_texts: int, i: int) -> dict:
    load = os.getloadavg()[0]
    up = uptime()
    cache = str(t / f"cache{i}.sqlite")
    cold_args = ("retrieve", str(t / "locomo"), "--out", str(t / f"r{i}a"), "--cache", cache, "--batch", str(BATCH))
    if i % 2 == 0:  # alternate which side goes first: a load that rises or falls favours neither
        ref = reference(t / "texts.json")
        cold, cold_cpu = memscope(*cold_args)
    else:
        cold, cold_cpu = memscope(*cold_args)
        ref = reference(t / "texts.json")
    warm, _ = memscope("retrieve", str(t / "locomo"), "--out", str(t / f"r{i}b"), "--cache", cache, "--batch", str(BATCH))
    n = len(texts)
    return {"uptime": up, "load_average": round(load, 2), "load_average_after": round(os.getloadavg()[0], 2),
            "first": "reference" if i % 2 == 0 else "cold",
            "unique_texts": n, "texts": n_texts, "torch_threads": ref["threads"], "memscope_threads": memscope_threads(),
            "ref_encode_s": round(ref["encode_s"], 2), "ref_process_s": round(ref["process_s"], 2),
            "cold_s": round(cold, 2), "warm_s": round(warm, 2), "warm_speedup": round(cold / warm, 1),
            "texts_per_s_cold": round(n / cold, 1), "texts_per_s_ref_encode": round(n / ref["encode_s"], 1),
            "cold_vs_encode": round(ref["encode_s"] / cold, 3), "cold_vs_process": round(ref["process_s"] / cold, 3),
            "ref_encode_cpu": round(ref["encode_cpu"], 2), "cold_cpu": round(cold_cpu, 2),
            "cold_vs_encode_cpu": round(ref["encode_cpu"] / cold_cpu, 3),
            "cold_vs_process_cpu": round(ref["process_cpu"] / cold_cpu, 3)}


def spread(runs: list[dict], key: str) -> dict:
    vals = sorted(r[key] for r in runs)
    return {"n": len(vals), "min": vals[0], "median": statistics.median(vals), "max": vals[-1]}


def main() -> None:
    ap = argparse.ArgumentParser()
    ap.add_argument("--locomo", default=str(LOCOMO))
    ap.add_argument("--skip-mosaic", action="store_true")
    ap.add_argument("--repeat", type=int, default=1, help="LoCoMo cold/warm/reference runs (default 1)")
    ap.add_argument("--threads", type=int, default=os.cpu_count() or 1, help="torch threads, both sides")
    args = ap.parse_args()
    THREADS["OMP_NUM_THREADS"] = str(args.threads)
    print(uptime(), file=sys.stderr, flush=True)
    out: dict = {"machine": {"cpus": os.cpu_count()}, "targets": {"cold_vs_encode": 0.9, "warm_speedup": 20}}
    with tempfile.TemporaryDirectory() as tmp:
        t = Path(tmp)
        if Path(args.locomo).exists():
            memscope("import", "locomo", args.locomo, "--out", str(t / "locomo"))
            texts = unique_texts(t / "locomo")
            (t / "texts.json").write_text(json.dumps(texts), encoding="utf-8")
            from scorer.load.memeye import load_benchmark
            from scorer.retrieve import count_texts

            n = count_texts(load_benchmark(t / "locomo"))
            runs = []
            for i in range(args.repeat):  # each run on stderr as it ends (a loaded machine makes runs long)
                runs.append(locomo_run(t, texts, n, i))
                print(json.dumps(runs[-1]), file=sys.stderr, flush=True)
            out["locomo"] = {**runs[-1], "runs": runs} if args.repeat > 1 else runs[0]
            if args.repeat > 1:
                out["locomo"]["spread"] = {k: spread(runs, k) for k in
                                           ("cold_vs_encode", "cold_vs_process", "cold_vs_encode_cpu", "load_average")}
        if not args.skip_mosaic:
            subprocess.run([sys.executable, str(REPO / "fixtures" / "synth.py"), "--scale", "mosaic",
                            "--out", str(t / "mosaic")], check=True, stdout=subprocess.DEVNULL)
            bench_dir = t / "mosaic"
            cache = str(t / "cache2.sqlite")
            cold, _ = memscope("retrieve", str(bench_dir), "--out", str(t / "m1"), "--cache", cache)
            warm, _ = memscope("retrieve", str(bench_dir), "--out", str(t / "m2"), "--cache", cache)
            out["mosaic"] = {"cold_s": round(cold, 2), "warm_s": round(warm, 2),
                             "warm_speedup": round(cold / warm, 1)}
    out["uptime_end"] = uptime()
    print(json.dumps(out, indent=2))


if __name__ == "__main__":
    main()
