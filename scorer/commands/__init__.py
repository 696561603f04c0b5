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


def check_bounds(args: argparse.Namespace, *dests: str) -> None:
    """Refuse, with one line, a numeric option outside its bounds (scorer.metrics.constants.OPTION_BOUNDS)."""
    from scorer.metrics.constants import OPTION_BOUNDS

    for dest in dests:
        value = getattr(args, dest, None)
        if value is None:
            continue
        lo, hi = OPTION_BOUNDS[dest]
        if not lo <= value <= hi:
            flag = "--" + dest.replace("_", "-")
            raise UserError(f"{flag} must be between {lo:,} and {hi:,}, got {value:,}"
                            if len(str(value)) <= 30 else f"{flag} must be between {lo:,} and {hi:,}")


def check_seconds(args: argparse.Namespace, *dests: str) -> None:
    """Refuse, with one line, a time option that is not a finite number of seconds."""
    import math

    for dest in dests:
        value = getattr(args, dest, None)
        if value is not None and not math.isfinite(value):
            raise UserError(f"--{dest.replace('_', '-')} must be a finite number of seconds, got {value}")


def _read_only(path: Path) -> bool:
    # os.access alone says yes to root for any mode; a file or folder with no write bit at all is
    # read-only by intent, whoever runs memscope (and os.access still catches read-only mounts)
    try:
        mode = path.stat().st_mode
    except OSError:
        return True
    return not os.access(path, os.W_OK | (os.X_OK if path.is_dir() else 0)) or not mode & 0o222


def check_writable(path: str | Path, *, folder: bool, option: str = "--out") -> Path:
    """Refuse, with one line and before any work is done, an output that cannot be written:
    `folder=True` for an output folder (created if missing), False for an output file (written via
    a temporary file beside it). The check every command that writes makes first."""
    path = Path(path)
    try:
        resolved = path.resolve()
        exists = os.path.lexists(path)
        if folder and resolved == Path(resolved.anchor):
            raise UserError(f"{option} {path}: is the file system root; give a folder for the output")
        if exists:
            if folder and not path.is_dir():
                raise UserError(f"{option} {path}: is a file, not a folder")
            if not folder and path.is_dir():
                raise UserError(f"{option} {path}: is a folder, not a file")
            if not folder and not path.is_file():
                raise UserError(f"{option} {path}: not a regular file; refusing to replace it")
            if _read_only(path):
                raise UserError(f"{option} {path}: is read-only")
        parent = path if folder and exists else path.parent
        if not folder and not parent.is_dir():
            raise UserError(f"{option} {path}: folder {parent} does not exist")
        # the nearest folder that exists is where the output (or its first missing folder) goes
        while not parent.exists() and parent != parent.parent:
            parent = parent.parent
        if not parent.is_dir():
            raise UserError(f"{option} {path}: {parent} is a file, not a folder")
        if _read_only(parent):
            raise UserError(f"{option} {path}: folder {parent} is read-only")
    except OSError as err:
        raise UserError(f"{option} {path}: cannot write: {err.strerror or err}") from None
    return path


# SQLite keeps a database's uncommitted pages and locks in files beside it; writing onto one of
# them loses annotations just as writing onto the database does
DB_SIDECARS = ("", "-wal", "-shm", "-journal")


def _same_file(a: Path, b: Path) -> bool:
    try:
        if a.resolve() == b.resolve():
            return True
        return a.exists() and b.exists() and os.path.samefile(a, b)
    except (OSError, RuntimeError, ValueError):  # a symlink loop (RuntimeError in 3.11), a NUL in the path
        return False


def check_not_onto(path: str | Path, option: str, *, db: str | Path | None = None,
                   others: dict[str, str | Path | None] | None = None,
                   inputs: dict[str, str | Path | None] | None = None) -> None:
    """Refuse, with one line, an output that is one of the command's files — the annotation
    database (or a SQLite file beside it), another input (`inputs`, option → path) or another
    output (`others`): written over, it would be lost. Compared after resolving `..` and symbolic
    links, and by inode."""
    out = Path(path)
    if db is not None:
        for suffix in DB_SIDECARS:
            if _same_file(out, Path(str(db) + suffix)):
                what = "the annotation database" if not suffix else f"the annotation database's {suffix[1:]} file"
                raise UserError(f"{option} {path}: is {what} (--db {db}); writing there would replace "
                                "the annotations — give another file")
    for other_option, other in (inputs or {}).items():
        if other is not None and _same_file(out, Path(other)):
            raise UserError(f"{option} {path}: is the {other_option} file, an input; writing there would "
                            "replace it — give another file")
    for other_option, other in (others or {}).items():
        if other is not None and _same_file(out, Path(other)):
            raise UserError(f"{option} {path}: is also {other_option}; give each output its own file")


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
