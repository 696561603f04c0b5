"""`memscope retrieve BENCH --out RUNDIR`: a reference semantic-RAG retrieval run (all-MiniLM-L6-v2)."""

from __future__ import annotations

import argparse
import sys
import time
from pathlib import Path

from scorer.commands import check_bounds, check_writable
from scorer.errors import UserError
from scorer.safe_text import plain


def register(sub: argparse._SubParsersAction) -> None:
    p = sub.add_parser("retrieve", help="replay semantic retrieval over a benchmark (the embed extra)")
    p.add_argument("bench", help="benchmark root, dialog folder or dialog file")
    p.add_argument("--out", required=True, help="folder for the retrieval-only run (MemEye run layout)")
    p.add_argument("--top-k", type=int, default=10, help="rounds delivered per question (default 10)")
    p.add_argument("--pool", type=int, default=50, help="ranked candidates logged per question (default 50)")
    p.add_argument("--model", default="all-MiniLM-L6-v2", help="embedding model (default all-MiniLM-L6-v2)")
    p.add_argument("--batch", type=int, default=64, help="encoding batch size")
    p.add_argument("--device", choices=("cpu", "cuda"), default="cpu")
    p.add_argument("--cache", default=None, help="embedding cache file (default ~/.cache/memscope/embeddings.sqlite)")
    p.add_argument("--backbone", default="retrieval-only", help="backbone name the run is filed under")
    p.add_argument("--stamp", default=None, help="run-folder timestamp YYYYmmdd_HHMMSS (default: now)")
    p.add_argument("--allow-outside-root", action="store_true")
    p.set_defaults(func=run)


def run(args: argparse.Namespace) -> int:
    # Imported here, for start-up speed: `memscope --help` imports every command module.
    from rich.console import Console
    from rich.progress import BarColumn, MofNCompleteColumn, Progress, TextColumn, TimeElapsedColumn

    from scorer.embed.cache import EmbeddingCache, default_cache_path
    from scorer.load.memeye import load_benchmark
    from scorer.retrieve import RetrievalConfig, count_texts, run_retrieval

    check_bounds(args, "top_k", "pool", "batch")
    check_writable(args.out, folder=True)
    if args.batch < 1:
        raise UserError("--batch must be at least 1")
    bench = load_benchmark(args.bench, allow_outside_root=args.allow_outside_root)
    out = Path(args.out)
    cfg = RetrievalConfig(top_k=args.top_k, pool=max(args.pool, args.top_k), model=args.model,
                          batch=args.batch, device=args.device, backbone=args.backbone)
    cache = EmbeddingCache(args.cache or default_cache_path())
    console = Console(stderr=True)
    t0 = time.perf_counter()
    with Progress(TextColumn("embedding"), BarColumn(), MofNCompleteColumn(), TimeElapsedColumn(),
                  console=console, transient=True, disable=not sys.stderr.isatty()) as bar:
        task = bar.add_task("embed", total=count_texts(bench))
        totals = run_retrieval(bench, out, cache, cfg, stamp=args.stamp,
                               progress=lambda n: bar.advance(task, n))
    cache.close()
    secs = time.perf_counter() - t0
    print(f"retrieval run written to {plain(str(out))}: {totals['tasks']} task(s), {totals['rounds']} rounds, "
          f"{totals['items']} questions, {totals['folders']} run folder(s); texts embedded "
          f"{totals['computed']}, from cache {totals['hits']}; {secs:.1f} s")
    return 0
