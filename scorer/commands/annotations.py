"""`memscope annotations import FILE --db DB` and
`memscope annotations export --db DB [--format jsonl|labelstudio] [--out FILE] [--bench BENCH --runs DIR…]`.

Import is idempotent (an event already in the database is skipped); export writes JSONL events in
the DESIGN §4 shape, or Label Studio task JSON. Summaries go to stdout, or to stderr when the data
itself goes to stdout.
"""

from __future__ import annotations

import argparse
import io
import json
import sys
from pathlib import Path

from scorer.commands import check_writable, shows_usage, write_atomic
from scorer.safe_text import plain
from scorer.store import DEFAULT_DB, Store, import_jsonl, labelstudio_tasks, write_jsonl


def register(sub: argparse._SubParsersAction) -> None:
    p = sub.add_parser("annotations", help="import or export annotation events (JSONL, Label Studio)")
    verbs = p.add_subparsers(dest="verb", metavar="VERB")
    imp = verbs.add_parser("import", help="add the events of a JSONL file (idempotent)")
    imp.add_argument("files", nargs="+", metavar="FILE", help="JSONL files, one event per line")
    imp.add_argument("--db", default=DEFAULT_DB, help=f"annotation database (default ./{DEFAULT_DB})")
    imp.set_defaults(func=run_import)
    exp = verbs.add_parser("export", help="write the events as JSONL or Label Studio tasks")
    exp.add_argument("--db", default=DEFAULT_DB, help=f"annotation database (default ./{DEFAULT_DB})")
    exp.add_argument("--format", choices=("jsonl", "labelstudio"), default="jsonl")
    exp.add_argument("--out", metavar="FILE", help="output file (default: stdout)")
    exp.add_argument("--study", metavar="NAME", help="only this study's events")
    exp.add_argument("--bench", metavar="BENCH", help="benchmark, for item texts in Label Studio tasks")
    exp.add_argument("--runs", nargs="+", default=[], metavar="DIR", help="run folders, for predictions")
    exp.add_argument("--allow-outside-root", action="store_true")
    exp.set_defaults(func=run_export)
    p.set_defaults(func=shows_usage(p))



def run_import(args: argparse.Namespace) -> int:
    with Store(args.db) as store:
        total_added = total_skipped = 0
        for file in args.files:
            res = import_jsonl(store, file)
            total_added += res.added
            total_skipped += res.skipped
            print(plain(f"{file}: {res.lines} event(s) read, {res.added} added, "
                        f"{res.skipped} skipped (already present) → {store.path}"))
        if len(args.files) > 1:
            print(f"total: {total_added} added, {total_skipped} skipped; {store.count()} event(s) in the database")
    return 0


def run_export(args: argparse.Namespace) -> int:
    if args.out:
        check_writable(args.out, folder=False)
    with Store(args.db, create=False) as store:
        buf = io.StringIO()
        if args.format == "jsonl":
            n = write_jsonl(store, buf, study=args.study)
            what = f"{n} event(s)" + (f" of study {args.study!r}" if args.study else "")
        else:
            tasks = _labelstudio(store, args)
            json.dump(tasks, buf, ensure_ascii=False, indent=1)
            buf.write("\n")
            n_ann = sum(len(t["annotations"]) for t in tasks)
            n_pred = sum(len(t["predictions"]) for t in tasks)
            what = f"{len(tasks)} task(s), {n_ann} annotation(s), {n_pred} prediction(s)"
    if args.out:
        write_atomic(Path(args.out), buf.getvalue())
        print(plain(f"{args.db}: wrote {what} to {args.out}"))
    else:
        sys.stdout.write(buf.getvalue())
        sys.stdout.flush()
        print(plain(f"{args.db}: wrote {what}"), file=sys.stderr)
    return 0


def _labelstudio(store: Store, args: argparse.Namespace) -> list[dict]:
    bench, runs = None, []
    if args.bench:  # the readers imported only when asked for (start-up speed)
        from scorer.load.memeye import load_benchmark

        bench = load_benchmark(args.bench, allow_outside_root=args.allow_outside_root)
    if args.runs:
        from scorer.load.runs import load_runs

        runs = load_runs(args.runs, benchmark=bench) if bench is not None else load_runs(args.runs)
    return labelstudio_tasks(store, bench, runs, study=args.study)
