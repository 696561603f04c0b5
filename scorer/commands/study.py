"""`memscope study new|list|export`: build a blind, stratified, seeded annotation queue; show each
annotator's progress; write a study's answers.

    memscope study new --kind agreement --per-cell 3 --methods 'FC(V),SRAG(V)' --name judge-72 \
        --db memscope.db BENCH --runs BENCH/runs
    memscope study list --db memscope.db
    memscope study export --db memscope.db --name judge-72 --out judge.csv [--reveal]
"""

from __future__ import annotations

import argparse
import csv
import io
import json
import sys
from pathlib import Path

from scorer.commands import check_bounds, check_writable, shows_usage, write_atomic
from scorer.errors import UserError
from scorer.safe_text import csv_cell, plain
from scorer.store import (
    DEFAULT_DB,
    DEFAULT_METHODS,
    DEFAULT_MODE,
    DEFAULT_SEED,
    EXPORT_FIELDS,
    REVEAL_FIELDS,
    STUDY_KINDS,
    Store,
    parse_per_cell,
    plan_agreement,
    plan_labels,
    plan_oracle,
)


def register(sub: argparse._SubParsersAction) -> None:
    p = sub.add_parser("study", help="build a blind, stratified, seeded annotation queue; progress; export")
    verbs = p.add_subparsers(dest="verb", metavar="VERB")
    new = verbs.add_parser("new", help="build a study (same seed → same queue)")
    new.add_argument("bench", help="benchmark root")
    new.add_argument("--kind", required=True, choices=STUDY_KINDS)
    new.add_argument("--name", required=True, help="the study's name in the database")
    new.add_argument("--per-cell", required=True, metavar="N",
                     help="items per (X, Y) cell: a number, or a range such as 8-10 (drawn per cell)")
    new.add_argument("--methods", default=None, metavar="A,B",
                     help=f"agreement: methods by run or display name (default {','.join(DEFAULT_METHODS)})")
    new.add_argument("--backbone", default=None, help="agreement: the backbone whose runs to use")
    new.add_argument("--mode", choices=("open", "mcq"), default=None,
                     help="item form: agreement open (default), oracle mcq (default); labels any form")
    new.add_argument("--seed", type=int, default=DEFAULT_SEED, help=f"default {DEFAULT_SEED}")
    new.add_argument("--show-judge-after", action="store_true",
                     help="agreement: show the judge's score once the annotator has committed (default: never)")
    new.add_argument("--runs", nargs="+", default=[], metavar="DIR", help="run folders (agreement)")
    new.add_argument("--db", default=DEFAULT_DB, help=f"annotation database (default ./{DEFAULT_DB})")
    new.add_argument("--allow-outside-root", action="store_true")
    new.set_defaults(func=run_new)
    ls = verbs.add_parser("list", help="the studies in a database and each annotator's progress")
    ls.add_argument("--db", default=DEFAULT_DB, help=f"annotation database (default ./{DEFAULT_DB})")
    ls.set_defaults(func=run_list)
    exp = verbs.add_parser("export", help="write a study's answers (JSONL or CSV)")
    exp.add_argument("--db", default=DEFAULT_DB, help=f"annotation database (default ./{DEFAULT_DB})")
    exp.add_argument("--name", required=True, help="the study")
    exp.add_argument("--out", metavar="FILE", help="output file (default: stdout); .csv → CSV")
    exp.add_argument("--format", choices=("jsonl", "csv"), default=None, help="default: from --out, else jsonl")
    exp.add_argument("--reveal", action="store_true", help="add the run behind each blind id")
    exp.set_defaults(func=run_export)
    p.set_defaults(func=shows_usage(p))



def run_new(args: argparse.Namespace) -> int:
    from scorer.load.memeye import load_benchmark  # here, for start-up speed: `memscope --help` imports every command

    check_bounds(args, "seed")
    per_cell = parse_per_cell(args.per_cell)
    mode = args.mode or DEFAULT_MODE[args.kind]
    if args.kind != "agreement":
        for flag, value in (("--methods", args.methods), ("--backbone", args.backbone), ("--runs", args.runs)):
            if value:
                raise UserError(f"{flag} is for agreement studies only (this is a {args.kind} study)")
    bench = load_benchmark(args.bench, allow_outside_root=args.allow_outside_root)
    if args.kind == "agreement":
        from scorer.load.runs import load_runs

        if not args.runs:
            raise UserError("an agreement study needs the runs whose predictions are judged: --runs DIR…")
        methods = [m.strip() for m in args.methods.split(",") if m.strip()] if args.methods else list(DEFAULT_METHODS)
        plan = plan_agreement(bench, load_runs(args.runs, benchmark=bench), per_cell, args.seed, methods, args.backbone, mode,
                              show_judge=args.show_judge_after)
    elif args.kind == "oracle":
        plan = plan_oracle(bench, per_cell, args.seed, mode)
    else:
        plan = plan_labels(bench, per_cell, args.seed, args.mode)
    with Store(args.db) as store:
        study = store.create_study(args.name, plan.kind, plan.seed, plan.params, plan.entries)
    what = f"{len(plan.entries)} entries"
    if plan.kind == "agreement":
        what += f" ({plan.n_items} items × {len(plan.params['methods'])} methods on {plan.params['backbone']}, blind)"
    else:
        what += f" ({plan.n_items} items)"
    strata = ", ".join(f"{c} {n}" for c, n in plan.params["strata"].items())
    print(plain(f"study {study.name!r}: {plan.kind}, {what}, seed {plan.seed} → {args.db}"))
    print(plain(f"  per cell: {strata}"))
    for s in plan.shortfalls:
        print(plain(f"  short: {s}"))
    print(plain(f"  annotate: memscope tui {args.bench} --db {args.db} --annotator NAME --study {study.name}"))
    return 0


def run_list(args: argparse.Namespace) -> int:
    with Store(args.db, create=False) as store:
        studies = store.studies()
        if not studies:
            print(plain(f"{args.db}: no studies (make one with `memscope study new`)"))
            return 0
        for st in studies:
            print(plain(f"{st.name}  {st.kind}  {st.n_items} entries  seed {st.seed}  created {st.created}"))
            progress = store.progress(st.name)
            if not progress:
                print("  no annotator has started")
            for p in progress:
                pct = 100.0 * p["done"] / p["total"] if p["total"] else 0.0
                print(plain(f"  {p['annotator']}: {p['done']}/{p['total']} ({pct:.0f}%)"))
    return 0


def run_export(args: argparse.Namespace) -> int:
    if args.out:
        check_writable(args.out, folder=False)
    fmt = args.format or ("csv" if args.out and args.out.lower().endswith(".csv") else "jsonl")
    with Store(args.db, create=False) as store:
        rows = store.study_answers(args.name, reveal=args.reveal)
    fields = list(EXPORT_FIELDS) + (list(REVEAL_FIELDS) if args.reveal else [])
    buf = io.StringIO()
    if fmt == "csv":
        w = csv.DictWriter(buf, fieldnames=fields, lineterminator="\n")
        w.writeheader()
        w.writerows({k: csv_cell(v) for k, v in r.items()} for r in rows)  # no formulas, no controls
    else:
        for r in rows:
            buf.write(json.dumps({k: r.get(k) for k in fields}, ensure_ascii=False) + "\n")
    what = f"{len(rows)} row(s) of study {args.name!r}" + (" with runs revealed" if args.reveal else " (blind)")
    if args.out:
        write_atomic(Path(args.out), buf.getvalue())
        print(plain(f"{args.db}: wrote {what} to {args.out}"))
    else:
        sys.stdout.write(buf.getvalue())
        sys.stdout.flush()
        print(plain(f"{args.db}: wrote {what}"), file=sys.stderr)
    return 0
