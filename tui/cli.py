"""The `memscope` console script: the scorer's commands plus `tui`, which opens the app.

With no arguments it opens the app on the shipped demo (fixtures/demo).
"""

from __future__ import annotations

import argparse
import os
import sys
from pathlib import Path
from typing import Sequence

from scorer.cli import build_parser, command_in, exit_with, run
from scorer.errors import UserError
from scorer.safe_text import plain

DEMO = Path(__file__).resolve().parents[1] / "fixtures" / "demo"


def register(sub: argparse._SubParsersAction) -> None:
    p = sub.add_parser("tui", help="open the app (default: the shipped demo)")
    p.add_argument("bench", nargs="?", default=None, help="benchmark root (default: fixtures/demo)")
    p.add_argument("--runs", nargs="+", default=None, metavar="DIR",
                   help="run folders or trees (default: BENCH/runs when it exists)")
    p.add_argument("--db", default=None, help="annotation database (default: ./memscope.db)")
    p.add_argument("--annotator", default=None, help="your annotator name (default: $MEMSCOPE_ANNOTATOR or $USER)")
    p.add_argument("--study", default=None, metavar="NAME", help="open this study (from `memscope study new`); the app then shows only the study")
    p.add_argument("--allow-outside-root", action="store_true")
    add_deep_link(p)
    p.set_defaults(func=run_tui)


def add_deep_link(p: argparse.ArgumentParser) -> None:
    """--item/--mode/--run: open the app on one item and run (a report row's or a case card's id);
    and --conditions, the MOSAIC conditions file the Scores screen scores with (as `memscope score`)."""
    p.add_argument("--conditions", default=None, metavar="FILE",
                   help="MOSAIC conditions of the runs (as memscope score --conditions), for the Scores screen")
    p.add_argument("--item", default=None, metavar="ITEM_ID", help="open the Item screen on this item")
    p.add_argument("--mode", default=None, choices=("mcq", "open"), help="which form of --item (default: mcq when it has one)")
    p.add_argument("--run", default=None, metavar="RUN_KEY", help="with --item: this run's tab first (BACKBONE/METHOD)")


def run_tui(args: argparse.Namespace) -> int:
    bench = Path(args.bench) if args.bench else DEMO
    if not bench.exists():
        raise UserError(f"{bench}: no such benchmark" + (" (the demo is built by `python fixtures/build.py`)" if not args.bench else ""))
    runs = args.runs if args.runs is not None else ([str(bench / "runs")] if (bench / "runs").is_dir() else [])
    annotator = args.annotator or os.environ.get("MEMSCOPE_ANNOTATOR") or os.environ.get("USER") or "annotator"
    _check_db(args)
    score_extra = {}
    if args.conditions:
        from scorer.load.conditions import score_extra as conditions_extra  # a bad file: one line, before the app

        score_extra = conditions_extra(args.conditions)
    # the app (and Textual) only when asked for: the other commands never load it
    # (tests/tui/test_import_hygiene.py), so not a cycle dodge
    from tui.app import launch

    return launch(bench=bench, runs=runs, db=args.db, annotator=annotator,
                  allow_outside_root=args.allow_outside_root, study=args.study,
                  item=args.item, mode=args.mode, run=args.run, score_extra=score_extra)


def check_tui_args(args: argparse.Namespace) -> None:
    """What `memscope serve` checks once before serving the same options to every browser tab."""
    bench = Path(args.bench) if args.bench else DEMO
    if not bench.exists():
        raise UserError(f"{bench}: no such benchmark")
    _check_db(args)
    if args.conditions:
        from scorer.load.conditions import load_file

        load_file(args.conditions)  # a bad conditions file: one line, before serving


def _check_db(args: argparse.Namespace) -> None:
    """A study is read from a database that must exist (a typo must not open an empty one and hide
    everyone's work); any other --db is written to, and made (and said so) the first time."""
    if args.db is None:
        return
    db = Path(args.db)
    if args.study is not None and not db.exists():
        raise UserError(f"{args.db}: no such annotation database (nothing was created; check the path)")
    if not db.exists():
        from scorer.store import Store

        with Store(db) as store:
            if store.created:
                print(plain(f"created DB {args.db}"), file=sys.stderr)


def main(argv: Sequence[str] | None = None) -> int:
    command = command_in(argv)
    if command is None and not list(sys.argv[1:] if argv is None else argv):
        command = "tui"  # no arguments: the app on the demo
    from tui.serve import register as register_serve  # `memscope serve`: the app in a browser

    def serve(sub: argparse._SubParsersAction) -> None:
        register_serve(sub, add_deep_link, check_tui_args)

    return run(argv, build_parser([register, serve], command=command), default=["tui"])


def console() -> None:
    """The `memscope` console script: main(), then scorer.cli.exit_with (a quick exit for `score`,
    `validate` and `info`)."""
    exit_with(main(), command_in(None))


if __name__ == "__main__":
    console()
