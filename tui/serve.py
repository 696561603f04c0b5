"""`memscope serve [tui options] [--host 127.0.0.1] [--port 8000]`: the same app in a browser, through
textual-serve (the `serve` extra). Each browser tab runs `memscope tui …` with the options given, in
a subprocess the server drives over a websocket. Bound to loopback by default: from another machine,
reach it over an SSH tunnel (README). A case card exported there is delivered to the browser as one
zip download (tui/serve_deliver.py, used by the Item screen), and so is the Items screen's batch of
cards (tui/casecards_batch.py; `D` when the batch outlasted the browser's window for a download);
audio plays on the server's device, and pressing play there says so (tui/widgets/media_audio.py).
"""

from __future__ import annotations

import argparse
import shlex
import sys
from pathlib import Path
from typing import Callable

from scorer.errors import UserError
from scorer.safe_text import plain

DEFAULT_HOST = "127.0.0.1"
DEFAULT_PORT = 8000
NO_SERVE = "memscope serve needs textual-serve: pip install 'memscope[serve]'"


def register(sub: argparse._SubParsersAction, add_deep_link: Callable[[argparse.ArgumentParser], None],
             check: Callable[[argparse.Namespace], None]) -> None:
    """The `serve` sub-command, with the tui's deep-link options and its argument check (from tui.cli,
    which calls this: no import back)."""
    p = sub.add_parser("serve", help="serve the app to a browser (textual-serve), on loopback by default")
    p.add_argument("bench", nargs="?", default=None, help="benchmark root (default: fixtures/demo)")
    p.add_argument("--runs", nargs="+", default=None, metavar="DIR", help="run folders or trees")
    p.add_argument("--db", default=None, help="annotation database")
    p.add_argument("--annotator", default=None, help="the annotator name every browser session uses")
    p.add_argument("--study", default=None, metavar="NAME", help="serve this study only")
    p.add_argument("--allow-outside-root", action="store_true")
    add_deep_link(p)
    p.add_argument("--host", default=DEFAULT_HOST, help=f"address to bind (default {DEFAULT_HOST}: this machine only)")
    p.add_argument("--port", type=int, default=DEFAULT_PORT, help=f"port (default {DEFAULT_PORT})")
    p.set_defaults(func=run_serve, check=check)


def tui_command(args: argparse.Namespace) -> str:
    """The `memscope tui …` command line each browser session runs (this Python, these options)."""
    argv = [sys.executable, "-m", "tui.cli", "tui"]
    if args.bench:
        argv.append(str(Path(args.bench).resolve()))
    if args.runs:
        argv += ["--runs", *(str(Path(r).resolve()) for r in args.runs)]
    for flag, value in (("--db", args.db and str(Path(args.db).resolve())), ("--annotator", args.annotator),
                        ("--study", args.study), ("--item", args.item), ("--mode", args.mode), ("--run", args.run),
                        ("--conditions", args.conditions and str(Path(args.conditions).resolve()))):
        if value:
            argv += [flag, value]
    if args.allow_outside_root:
        argv.append("--allow-outside-root")
    return shlex.join(argv)


def run_serve(args: argparse.Namespace) -> int:
    if not 0 < args.port < 65536:
        raise UserError(f"--port {args.port}: not a port number (1–65535)")
    try:
        from textual_serve.server import Server
    except ImportError:
        raise UserError(NO_SERVE) from None
    args.check(args)  # a bad benchmark or database is one line here, not in every tab
    where = f"http://{args.host}:{args.port}"
    print(plain(f"memscope serve: {where} (ctrl+c stops)"
                + ("" if args.host in ("127.0.0.1", "localhost", "::1") else " — not loopback: anyone who can reach it can use it")),
          file=sys.stderr)
    Server(tui_command(args), host=args.host, port=args.port, title="memscope").serve()
    return 0
