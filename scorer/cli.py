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
from scorer.safe_text import plain

# Sub-command modules under scorer.commands, in the order `--help` lists them.
COMMANDS = ("validate", "info", "score", "study", "annotations", "judge", "retrieve", "import_")

Extender = Callable[[argparse._SubParsersAction], None]


def build_parser(extra: Sequence[Extender] = (), command: str | None = None) -> argparse.ArgumentParser:
    """The parser. With `command` (the sub-command about to run), only that command's module is
    imported: some commands pull in asyncio, SQLite or pandas, and `memscope score` should not pay
    for `memscope judge`'s imports. `extra` extenders are always added."""
    parser = argparse.ArgumentParser(
        prog="memscope",
        description="Workbench and offline scorer for multimodal agent-memory benchmarks.",
    )
    parser.add_argument("--version", action="version", version=f"memscope {__version__}")
    sub = parser.add_subparsers(dest="command", metavar="COMMAND")
    for ext in extra:
        ext(sub)
    if command is not None and command in sub.choices:
        return parser  # an extender's command (`tui`)
    wanted = COMMANDS if command is None or _module_of(command) not in COMMANDS else (_module_of(command),)
    for name in wanted:  # every command in COMMANDS ships: a missing one is a broken install, said loudly
        importlib.import_module(f"scorer.commands.{name}").register(sub)
    return parser


def _module_of(command: str) -> str:
    return "import_" if command == "import" else command


def command_in(argv: Sequence[str] | None) -> str | None:
    """The sub-command named on a command line (its first word that is not an option), if any."""
    args = list(sys.argv[1:] if argv is None else argv)
    return args[0] if args and not args[0].startswith("-") else None


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
        print(f"memscope: {plain(str(err))}", file=sys.stderr)  # paths, ids from data: escapes shown
        return err.exit_code
    except KeyboardInterrupt:
        print("memscope: interrupted", file=sys.stderr)
        return 130
    except BrokenPipeError:
        # `memscope info … | head` closes our stdout early: not an error.
        os.dup2(os.open(os.devnull, os.O_WRONLY), sys.stdout.fileno())
        return 0
    except SystemExit as err:  # rich's Console meets a closed pipe with SystemExit(1): the same case
        if isinstance(err.__context__, BrokenPipeError):
            os.dup2(os.open(os.devnull, os.O_WRONLY), sys.stdout.fileno())
            return 0
        raise


def main(argv: Sequence[str] | None = None) -> int:
    return run(argv, build_parser(command=command_in(argv)))


# Commands that, run from the console script, end the process at once when done: `score` leaves
# millions of objects (rows, records, frames) whose teardown took 0.8 s of a 3.3 s report at MemEye
# scale (measured, issue 19). Each has written and closed every file it writes before it returns;
# none has an exit handler to run. The app, the judge and retrieval exit normally.
QUICK_EXIT = frozenset({"score", "validate", "info"})


def exit_with(code: int, command: str | None) -> None:
    """The console script's exit: for a QUICK_EXIT command, flush the standard streams and end the
    process without tearing its objects down (os._exit); otherwise a normal SystemExit."""
    if command in QUICK_EXIT:
        for stream in (sys.stdout, sys.stderr):
            try:
                stream.flush()
            except (OSError, ValueError):  # a closed pipe (`| head`): nothing left to write to
                pass
        os._exit(code)
    raise SystemExit(code)


def console() -> None:
    """`python -m scorer`: main() with exit_with's quick exit."""
    exit_with(main(), command_in(None))


if __name__ == "__main__":
    console()
