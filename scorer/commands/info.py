"""`memscope info BENCH [--runs DIR…] [--json]`: counts of a benchmark and its runs."""

from __future__ import annotations

import argparse
import json

from rich.console import Console
from rich.table import Table
from rich.text import Text

from scorer.counts import benchmark_counts
from scorer.load.memeye import load_benchmark
from scorer.load.runs import load_runs
from scorer.model import X_LABELS, Y_LABELS
from scorer.safe_text import plain


def register(sub: argparse._SubParsersAction) -> None:
    p = sub.add_parser("info", help="counts: tasks, sessions, rounds, items by mode and cell, media, runs")
    p.add_argument("bench", help="benchmark root, dialog folder or dialog file")
    p.add_argument("--runs", nargs="+", default=[], metavar="DIR", help="run folders or trees of them")
    p.add_argument("--json", action="store_true", help="print one JSON object")
    p.add_argument("--allow-outside-root", action="store_true")
    p.set_defaults(func=run)


def run(args: argparse.Namespace) -> int:
    bench = load_benchmark(args.bench, allow_outside_root=args.allow_outside_root)
    runs = load_runs(args.runs, benchmark=bench) if args.runs else []
    counts = benchmark_counts(bench, runs)
    if args.json:
        print(json.dumps(counts, indent=2, ensure_ascii=False))
        return 0
    render(counts, Console(highlight=False))
    return 0


def render(c: dict, console: Console) -> None:
    head = Table.grid(padding=(0, 2))
    head.add_column(style="bold")
    head.add_column(justify="right")
    for label, value in [
        ("benchmark", c["benchmark"]), ("tasks", c["tasks"]), ("sessions", c["sessions"]),
        ("rounds", c["rounds"]), ("items (mcq)", c["items"]["mcq"]), ("items (open)", c["items"]["open"]),
        ("distinct items", c["distinct_items"]), ("unanswerable", c["unanswerable"]),
        ("images", c["media"]["image"]), ("videos", c["media"]["video"]), ("audio clips", c["media"]["audio"]),
        ("remote media", c["remote_media"]),
    ]:
        head.add_row(label, Text(plain(str(value))))  # the benchmark's path: escapes shown, not obeyed
    console.print(head)
    grid = Table(title="items per (X, Y)", title_justify="left")
    grid.add_column("")
    for x in X_LABELS:
        grid.add_column(x, justify="right")
    for y in Y_LABELS:
        grid.add_row(y, *[str(c["cells"].get(f"{x}_{y}", 0)) for x in X_LABELS])
    console.print(grid)
    if c["runs"]:
        t = Table(title="runs (backbone × method × mode)", title_justify="left")
        for col in ("backbone", "method", "mode", "tasks", "rows"):
            t.add_column(col, justify="right" if col in ("tasks", "rows") else "left")
        agg: dict[tuple[str, str, str], list[int]] = {}
        for r in c["runs"]:
            a = agg.setdefault((r["backbone"], r["method"], r["mode"]), [0, 0])
            a[0] += 1
            a[1] += r["rows"]
        for (b, m, mode), (nt, nr) in sorted(agg.items()):
            t.add_row(Text(plain(b)), Text(plain(m)), Text(plain(mode)), str(nt), str(nr))
        console.print(t)
