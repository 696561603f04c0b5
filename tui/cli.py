"""The `memscope` console script: the scorer's commands plus `tui`, which opens the app.

With no arguments it opens the app on the shipped demo (fixtures/demo).
"""

from __future__ import annotations

import argparse
import os
import sys
from pathlib import Path
from typing import Sequence

from scorer.cli import build_parser, command_in, run
from scorer.errors import UserError

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
    p.set_defaults(func=run_tui)


def run_tui(args: argparse.Namespace) -> int:
    bench = Path(args.bench) if args.bench else DEMO
    if not bench.exists():
        raise UserError(f"{bench}: no such benchmark" + (" (the demo is built by `python fixtures/build.py`)" if not args.bench else ""))
    runs = args.runs if args.runs is not None else ([str(bench / "runs")] if (bench / "runs").is_dir() else [])
    annotator = args.annotator or os.environ.get("MEMSCOPE_ANNOTATOR") or os.environ.get("USER") or "annotator"
    # the app (and Textual) only when asked for: the other commands never load it
    # (tests/tui/test_import_hygiene.py), so not a cycle dodge
    from tui.app import launch

    return launch(bench=bench, runs=runs, db=args.db, annotator=annotator,
                  allow_outside_root=args.allow_outside_root, study=args.study)


def main(argv: Sequence[str] | None = None) -> int:
    command = command_in(argv)
    if command is None and not list(sys.argv[1:] if argv is None else argv):
        command = "tui"  # no arguments: the app on the demo
    return run(argv, build_parser([register], command=command), default=["tui"])


if __name__ == "__main__":
    raise SystemExit(main())
