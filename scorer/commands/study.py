"""`memscope study new|plan|list|export`: build a blind, stratified, seeded annotation queue (or an
adjudication queue of the entries annotators disagree on); plan an agreement study's size; show each
annotator's progress, their pairwise agreement and κ so far; write a study's answers.

    memscope study new --kind agreement --per-cell 3 --methods 'FC(V),SRAG(V)' --name judge-72 \
        --db memscope.db BENCH --runs BENCH/runs
    memscope study new --kind adjudicate --of verdicts --include-judge --name adj --db memscope.db \
        BENCH --runs BENCH/runs
    memscope study plan --kappa 0.9 --half-width 0.05 --prevalence 0.55
    memscope study list --db memscope.db
    memscope study export --db memscope.db --name judge-72 --out judge.csv [--reveal]

The options of `study new` are scorer.store.builder.OPTIONS (the app's study form draws the same).
"""

from __future__ import annotations

import argparse
import csv
import io
import json
import os
import sys
from pathlib import Path

from scorer.commands import DB_SIDECARS, check_not_onto, check_writable, shows_usage, write_atomic
from scorer.errors import UserError
from scorer.safe_text import csv_cell, plain
from scorer.store import DEFAULT_DB, EXPORT_FIELDS, REVEAL_FIELDS, STUDY_KINDS, Store
from scorer.store.builder import OPTIONS, RUNS_KINDS, check_spec, make_study, spec_from, summary


def register(sub: argparse._SubParsersAction) -> None:
    p = sub.add_parser("study", help="build a blind, stratified, seeded annotation queue; plan; progress; export")
    verbs = p.add_subparsers(dest="verb", metavar="VERB")
    new = verbs.add_parser("new", help="build a study (same seed → same queue)")
    new.add_argument("bench", help="benchmark root")
    new.add_argument("--kind", required=True, choices=STUDY_KINDS)
    new.add_argument("--name", required=True, help="the study's name in the database")
    for opt in OPTIONS:  # one list of options, shared with the app's study form
        kinds = "" if set(opt.kinds) == set(STUDY_KINDS) else ", ".join(opt.kinds) + ": "
        shown = (kinds + opt.help).replace("%", "%%")
        if opt.switch:
            new.add_argument(opt.flag, dest=opt.field, action="store_true", help=shown)
        else:
            new.add_argument(opt.flag, dest=opt.field, default=None, metavar=opt.metavar, choices=opt.choices,
                             help=shown)
    new.add_argument("--runs", nargs="+", default=[], metavar="DIR",
                     help=f"run folders ({', '.join(RUNS_KINDS)})")
    new.add_argument("--db", default=DEFAULT_DB, help=f"annotation database (default ./{DEFAULT_DB})")
    new.add_argument("--allow-outside-root", action="store_true")
    new.set_defaults(func=run_new)
    plan = verbs.add_parser("plan", help="the pairs an agreement study needs for a 95%% CI of κ that narrow")
    plan.add_argument("--kappa", required=True, type=float, metavar="K", help="the κ you expect")
    plan.add_argument("--half-width", required=True, type=float, metavar="W", help="the 95%% CI half-width wanted")
    plan.add_argument("--prevalence", type=float, default=None, metavar="P",
                      help="the expected share of accepts (default 0.5)")
    plan.add_argument("--raters", type=int, default=None, metavar="R",
                      help="raters per item (default 2): each pair of them gets that width")
    plan.set_defaults(func=run_plan)
    ls = verbs.add_parser("list", help="the studies in a database: progress, pairwise agreement, κ so far")
    ls.add_argument("--db", default=DEFAULT_DB, help=f"annotation database (default ./{DEFAULT_DB})")
    ls.add_argument("--bench", metavar="BENCH", help="the benchmark (oracle studies: compare options across rotations)")
    ls.add_argument("--half-width", type=float, default=None, metavar="W",
                    help="the κ CI half-width to count the pairs to go to (default: the study's planned one)")
    ls.add_argument("--allow-outside-root", action="store_true")
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

    spec = check_spec(spec_from(vars(args)), runs_given=bool(args.runs))  # before any file is read
    bench = load_benchmark(args.bench, allow_outside_root=args.allow_outside_root)
    runs = []
    if args.runs:
        from scorer.load.runs import load_runs

        runs = load_runs(args.runs, benchmark=bench)
    if spec.kind == "adjudicate" and not Path(args.db).exists():  # it adjudicates what is there
        raise UserError(f"{args.db}: no such annotation database (nothing was created; check the path)")
    existed = os.path.lexists(args.db)
    try:
        with Store(args.db) as store:
            created = store.created
            study, plan = make_study(spec, bench, runs, store)
    except UserError:
        if not existed:  # a study that could not be made leaves no empty database behind
            _remove_new_db(args.db)
        raise
    if created:
        print(plain(f"created DB {args.db}"))
    for line in summary(study, plan, args.db):
        print(plain(line))
    print(plain(f"  annotate: memscope tui {args.bench} --db {args.db} --annotator NAME --study {study.name}"))
    return 0


def _remove_new_db(db: str) -> None:
    """Remove the database this command created, with SQLite's files beside it, if it holds nothing
    (no event, no study: another process may have begun to use a new file at the same path)."""
    try:
        with Store(db, create=False) as store:
            if store.count() or store.studies():
                return
    except (UserError, OSError):
        return
    for suffix in DB_SIDECARS:
        try:
            os.unlink(db + suffix)
        except OSError:
            pass


def run_plan(args: argparse.Namespace) -> int:
    from scorer.metrics.kappa_plan import DEFAULT_PREVALENCE, DEFAULT_RATERS, plan_kappa

    prevalence = DEFAULT_PREVALENCE if args.prevalence is None else args.prevalence
    raters = DEFAULT_RATERS if args.raters is None else args.raters
    if not 2 <= raters <= 1000:
        raise UserError(f"--raters must be between 2 and 1,000, got {raters}")
    try:
        kp = plan_kappa(args.kappa, args.half_width, prevalence)
    except ValueError as err:
        raise UserError(str(err).replace("the half-width", "--half-width").replace("the prevalence", "--prevalence")) from None
    (a, b), (c, d) = kp.table
    print(f"{kp.pairs} pairs: Cohen's κ {kp.kappa:g} at prevalence {kp.prevalence:g} has an expected 95% CI "
          f"half-width of {kp.expected_half_width:.4f} ≤ {kp.half_width:g} (statsmodels' analytic SE)")
    print(f"  expected table (equal marginals): both accept {a:.4f}, accept/reject {b:.4f} each way, "
          f"both reject {d:.4f}; var(κ) = {kp.variance_per_pair:.5f} / n")
    if raters > 2:
        print(f"  {raters} raters: each of the {raters * (raters - 1) // 2} pairs rates the same {kp.pairs} items "
              f"({kp.pairs * raters} ratings); Fleiss' κ has no analytic SE in memscope (bootstrap only)")
    del c
    return 0


def run_list(args: argparse.Namespace) -> int:
    from scorer.store.status import status_lines, study_status

    if args.half_width is not None and not 0 < args.half_width < 1:
        raise UserError(f"--half-width must lie between 0 and 1, got {args.half_width:g}")
    if not Path(args.db).exists():
        raise UserError(f"{args.db}: no such annotation database (nothing was created; check the path)")
    bench = None
    if args.bench:
        from scorer.load.memeye import load_benchmark

        bench = load_benchmark(args.bench, allow_outside_root=args.allow_outside_root)
    with Store(args.db, create=False) as store:
        studies = store.studies()
        if not studies:
            print(plain(f"{args.db}: no studies (make one with `memscope study new`)"))
            return 0
        for st in studies:
            print(plain(f"{st.name}  {st.kind}  {st.n_items} entries  seed {st.seed}  created {st.created}"))
            for line in status_lines(study_status(store, st.name, bench, args.half_width)):
                print(plain(line))
    return 0


def run_export(args: argparse.Namespace) -> int:
    if args.out:
        check_writable(args.out, folder=False)
        check_not_onto(args.out, "--out", db=args.db)
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
