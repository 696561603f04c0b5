"""`memscope` argument parsing and dispatch only. The work lives in scorer.commands.*.

The `tui` sub-command is added by tui.cli (the console script), so that this package never imports
the app.
"""

from __future__ import annotations

import argparse
import importlib
import os
import sys
from typing import Callable, Sequence

from scorer import __version__
from scorer.errors import UserError

# Sub-command modules under scorer.commands, in the order `--help` lists them.
COMMANDS = ("validate", "info", "score", "study", "annotations", "judge", "retrieve", "import_")

Extender = Callable[[argparse._SubParsersAction], None]


def build_parser(extra: Sequence[Extender] = ()) -> argparse.ArgumentParser:
    parser = argparse.ArgumentParser(
        prog="memscope",
        description="Workbench and offline scorer for multimodal agent-memory benchmarks.",
    )
    parser.add_argument("--version", action="version", version=f"memscope {__version__}")
    sub = parser.add_subparsers(dest="command", metavar="COMMAND")
    for ext in extra:
        ext(sub)
    for name in COMMANDS:
        try:
            module = importlib.import_module(f"scorer.commands.{name}")
        except ModuleNotFoundError as err:
            if err.name != f"scorer.commands.{name}":
                raise
            continue  # a command not built in this checkout
        module.register(sub)
    return parser


def run(argv: Sequence[str] | None, parser: argparse.ArgumentParser, default: Sequence[str] = ()) -> int:
    args_list = list(sys.argv[1:] if argv is None else argv)
    if not args_list and default:
        args_list = list(default)
    args = parser.parse_args(args_list)
    if not getattr(args, "func", None):
        parser.print_help()
        return 2
    try:
        return int(args.func(args) or 0)
    except UserError as err:
        print(f"memscope: {err}", file=sys.stderr)
        return err.exit_code
    except KeyboardInterrupt:
        print("memscope: interrupted", file=sys.stderr)
        return 130
    except BrokenPipeError:
        # `memscope info … | head` closes our stdout early: not an error.
        os.dup2(os.open(os.devnull, os.O_WRONLY), sys.stdout.fileno())
        return 0


def main(argv: Sequence[str] | None = None) -> int:
    return run(argv, build_parser())


if __name__ == "__main__":
    raise SystemExit(main())
