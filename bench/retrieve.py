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
same against the reference process. Targets: warm at least 20x faster than cold; cold ≥ 0.9× the
bare encode. The load average is printed beside each run (other work on a shared machine slows
every number, the ratios less).
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
BATCH = 64  # memscope retrieve's default --batch

REFERENCE = """
import json, sys, time
t0 = time.perf_counter()
import torch
from sentence_transformers import SentenceTransformer
texts = json.load(open(sys.argv[1]))
model = SentenceTransformer(sys.argv[2], device="cpu")
t1 = time.perf_counter()
model.encode(texts, batch_size=int(sys.argv[3]), normalize_embeddings=True, convert_to_numpy=True,
             show_progress_bar=False)
t2 = time.perf_counter()
print(json.dumps({"encode_s": t2 - t1, "process_s": t2 - t0, "threads": torch.get_num_threads()}))
"""


def memscope(*args: str) -> float:
    t0 = time.perf_counter()
    subprocess.run([sys.executable, "-m", "scorer", *args], check=True, stdout=subprocess.DEVNULL,
                   cwd=REPO, env={**os.environ, "PYTHONPATH": str(REPO)})
    return time.perf_counter() - t0


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

    env = {**os.environ, "HF_HUB_OFFLINE": "1", "TRANSFORMERS_OFFLINE": "1", "TOKENIZERS_PARALLELISM": "false"}
    proc = subprocess.run([sys.executable, "-c", REFERENCE, str(texts_file), str(model_dir(DEFAULT_MODEL)), str(BATCH)],
                          check=True, capture_output=True, text=True, env=env)
    return json.loads(proc.stdout.strip().splitlines()[-1])


def locomo_run(t: Path, texts: list[str], n_texts: int, i: int) -> dict:
    ref = reference(t / "texts.json")
    load = os.getloadavg()[0]
    cache = str(t / f"cache{i}.sqlite")
    cold = memscope("retrieve", str(t / "locomo"), "--out", str(t / f"r{i}a"), "--cache", cache, "--batch", str(BATCH))
    warm = memscope("retrieve", str(t / "locomo"), "--out", str(t / f"r{i}b"), "--cache", cache, "--batch", str(BATCH))
    n = len(texts)
    return {"load_average": round(load, 2), "load_average_after": round(os.getloadavg()[0], 2),
            "unique_texts": n, "texts": n_texts, "torch_threads": ref["threads"],
            "ref_encode_s": round(ref["encode_s"], 2), "ref_process_s": round(ref["process_s"], 2),
            "cold_s": round(cold, 2), "warm_s": round(warm, 2), "warm_speedup": round(cold / warm, 1),
            "texts_per_s_cold": round(n / cold, 1), "texts_per_s_ref_encode": round(n / ref["encode_s"], 1),
            "cold_vs_encode": round(ref["encode_s"] / cold, 3), "cold_vs_process": round(ref["process_s"] / cold, 3)}


def main() -> None:
    ap = argparse.ArgumentParser()
    ap.add_argument("--locomo", default=str(LOCOMO))
    ap.add_argument("--skip-mosaic", action="store_true")
    ap.add_argument("--repeat", type=int, default=1, help="LoCoMo cold/warm/reference runs (default 1)")
    args = ap.parse_args()
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
