"""One module per `memscope` sub-command. Each defines `register(subparsers)`; the parser it adds
sets `func` to a callable taking the parsed args and returning an exit code. Helpers more than one
command uses are here (commands never import each other)."""

import argparse
import os
import sys
import tempfile
from pathlib import Path
from typing import Callable

from scorer.errors import UserError


def shows_usage(parser: argparse.ArgumentParser) -> Callable[[argparse.Namespace], int]:
    """`func` for a command group called without its sub-command: its help on stderr, exit 2."""

    def show(_args: argparse.Namespace) -> int:
        parser.print_help(sys.stderr)
        return 2

    return show


def write_atomic(path: Path, text: str) -> None:
    """Write via a temporary file in the same folder, so a reader never sees half an export."""
    if not path.parent.is_dir():
        raise UserError(f"{path}: folder {path.parent} does not exist")
    fd, tmp = tempfile.mkstemp(prefix=f".{path.name}.", dir=path.parent)
    try:
        with os.fdopen(fd, "w", encoding="utf-8") as fh:
            fh.write(text)
        os.replace(tmp, path)
    except OSError as err:
        Path(tmp).unlink(missing_ok=True)
        raise UserError(f"{path}: cannot write: {err.strerror or err}") from None
