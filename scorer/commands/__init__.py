"""One module per `memscope` sub-command. Each defines `register(subparsers)`; the parser it adds
sets `func` to a callable taking the parsed args and returning an exit code."""

import argparse
import sys
from typing import Callable


def shows_usage(parser: argparse.ArgumentParser) -> Callable[[argparse.Namespace], int]:
    """`func` for a command group called without its sub-command: its help on stderr, exit 2."""

    def show(_args: argparse.Namespace) -> int:
        parser.print_help(sys.stderr)
        return 2

    return show
