"""`memscope validate BENCH [--runs DIR…]`: one line per finding; exit 0 clean, 1 with errors."""

from __future__ import annotations

import argparse
import os
import sys
from dataclasses import replace
from pathlib import Path

from scorer.load.memeye import load_benchmark
from scorer.load.runs import load_runs
from scorer.errors import DataError
from scorer.load.validate import ERROR, NOTE, Finding, validate
from scorer.safe_text import plain


def register(sub: argparse._SubParsersAction) -> None:
    p = sub.add_parser("validate", help="check a benchmark (and runs) for schema and reference problems")
    p.add_argument("bench", help="benchmark root, dialog folder or dialog file")
    p.add_argument("--runs", nargs="+", default=[], metavar="DIR", help="run folders or trees of them")
    p.add_argument("--allow-outside-root", action="store_true",
                   help="let media paths point outside the benchmark root")
    p.add_argument("--no-decode", action="store_true", help="only check that media files exist")
    p.add_argument("--quiet", action="store_true", help="print errors only")
    p.set_defaults(func=run)


def shown_from_here(finding: Finding, root: Path) -> Finding:
    """The finding with its file as a path from where the command ran: a benchmark file's path
    under the root (`dialog/X.json`) joined to the root as given, as the loader's own errors name it
    (`bench/dialog/X.json:8:16`) and run files are named (their full path) — one form per output, a
    path one can open. A `file` that names no file under the root (a task name) is left as it is."""
    if not finding.file or os.path.isabs(finding.file):
        return finding
    path = root / finding.file
    return replace(finding, file=str(path)) if path.exists() else finding


def run(args: argparse.Namespace) -> int:
    unreadable: list[DataError] = []  # dialog and run files that cannot be read: findings; the rest is checked
    bench = load_benchmark(args.bench, allow_outside_root=args.allow_outside_root, problems=unreadable)
    n_bench = len(unreadable)
    runs = load_runs(args.runs, benchmark=bench, problems=unreadable) if args.runs else []
    skipped = len(unreadable) - n_bench
    findings = [Finding(err.file, err.location, ERROR, err.message) for err in unreadable]
    findings += validate(bench, runs, decode_media=not args.no_decode)
    findings = [shown_from_here(f, bench.root) for f in findings]
    errors = sum(f.severity == ERROR for f in findings)
    notes = sum(f.severity == NOTE for f in findings)
    warnings = len(findings) - errors - notes
    for f in findings:
        if args.quiet and f.severity != ERROR:
            continue
        print(plain(str(f)))
    n_items = len(bench.item_ids())
    rows = sum(len(r.predictions) for r in runs)
    summary = (f"{bench.root}: {errors} error(s), {warnings} warning(s){f', {notes} note(s)' if notes else ''} — "
               f"{len(bench.tasks)} task(s), {n_items} item(s), {len(runs)} run folder(s)"
               f"{f' (+{skipped} unreadable, not checked)' if skipped else ''}, {rows} row(s)")
    print(plain(summary), file=sys.stderr)
    return 1 if errors else 0
