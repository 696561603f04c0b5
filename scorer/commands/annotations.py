"""`memscope annotations import FILE --db DB [--format jsonl|labelstudio] [--users FILE]` and
`memscope annotations export --db DB [--format jsonl|labelstudio] [--out FILE] [--bench BENCH --runs DIR…]
[--config-out FILE] [--media-url PREFIX] [--users FILE]`.

Import is idempotent (an event already in the database is skipped); export writes JSONL events in
the DESIGN §4 shape, or Label Studio task JSON. Summaries go to stdout, or to stderr when the data
itself goes to stdout.
"""

from __future__ import annotations

import argparse
import io
import json
import sys
from pathlib import Path
from typing import Any

from scorer.commands import check_not_onto, check_writable, shows_usage, write_atomic
from scorer.safe_text import plain
from scorer.errors import DataError, UserError
from scorer.store import DEFAULT_DB, Store, write_jsonl
from scorer.store.jsonl import parse_jsonl
from scorer.store.labelstudio import export_labelstudio, label_config


USERS_HELP = ("labelstudio: JSON object mapping memscope annotators to Label Studio users "
              '(user id or e-mail), e.g. {"ann1": "ann1@lab.org"}')


def register(sub: argparse._SubParsersAction) -> None:
    p = sub.add_parser("annotations", help="import or export annotation events (JSONL, Label Studio)")
    verbs = p.add_subparsers(dest="verb", metavar="VERB")
    imp = verbs.add_parser("import", help="add the events of a JSONL file (idempotent)")
    imp.add_argument("files", nargs="+", metavar="FILE",
                     help="JSONL files, one event per line (or Label Studio JSON exports: --format labelstudio)")
    imp.add_argument("--db", default=DEFAULT_DB, help=f"annotation database (default ./{DEFAULT_DB})")
    imp.add_argument("--format", choices=("jsonl", "labelstudio"), default="jsonl",
                     help="jsonl (memscope events) or labelstudio (a Label Studio JSON export)")
    imp.add_argument("--users", metavar="FILE", help=USERS_HELP)
    imp.set_defaults(func=run_import)
    exp = verbs.add_parser("export", help="write the events as JSONL or Label Studio tasks")
    exp.add_argument("--db", default=DEFAULT_DB, help=f"annotation database (default ./{DEFAULT_DB})")
    exp.add_argument("--format", choices=("jsonl", "labelstudio"), default="jsonl")
    exp.add_argument("--out", metavar="FILE", help="output file (default: stdout)")
    exp.add_argument("--study", metavar="NAME", help="only this study's events")
    exp.add_argument("--bench", metavar="BENCH", help="benchmark, for item texts in Label Studio tasks")
    exp.add_argument("--runs", nargs="+", default=[], metavar="DIR", help="run folders, for predictions")
    exp.add_argument("--allow-outside-root", action="store_true")
    exp.add_argument("--config-out", metavar="FILE", help="labelstudio: also write the labeling config (XML)")
    exp.add_argument("--media-url", metavar="PREFIX",
                     help="labelstudio: URL prefix for media paths under the benchmark root, e.g. "
                          "'/data/local-files/?d=' (Label Studio's local-files serving)")
    exp.add_argument("--users", metavar="FILE", help=USERS_HELP)
    exp.set_defaults(func=run_export)
    p.set_defaults(func=shows_usage(p))



def run_import(args: argparse.Namespace) -> int:
    """Every file is read and checked before the database is opened: a bad line in any of them
    leaves the database as it was (and makes none)."""
    _labelstudio_only(args, "users")
    users = _users(args.users) if args.format == "labelstudio" else None
    parsed = [(file, _parse(file, args.format, users)) for file in args.files]
    with Store(args.db) as store:
        if store.created:
            print(plain(f"created DB {args.db}"))
        total_added = total_skipped = 0
        for file, events in parsed:
            added, skipped = store.insert_many(events)
            total_added += added
            total_skipped += skipped
            print(plain(f"{file}: {len(events)} event(s) read, {added} added, "
                        f"{skipped} skipped (already present) → {store.path}"))
        if len(args.files) > 1:
            print(f"total: {total_added} added, {total_skipped} skipped; {store.count()} event(s) in the database")
    return 0


def run_export(args: argparse.Namespace) -> int:
    if args.out:
        check_writable(args.out, folder=False)
        check_not_onto(args.out, "--out", db=args.db, inputs={"--users": args.users})
    _labelstudio_only(args, "config_out", "media_url", "users")
    if args.media_url is not None:
        _check_media_url(args.media_url)
    if args.config_out:
        check_writable(args.config_out, folder=False, option="--config-out")
        check_not_onto(args.config_out, "--config-out", db=args.db, inputs={"--users": args.users},
                       others={"--out": args.out})
    with Store(args.db, create=False) as store:
        if (args.study and args.study not in {s.name for s in store.studies()}
                and next(store.events(study=args.study), None) is None):
            raise UserError(f"{args.db}: no study {args.study!r} and no event of one (`memscope study list`)")
        buf = io.StringIO()
        if args.format == "jsonl":
            n = write_jsonl(store, buf, study=args.study)
            what = f"{n} event(s)" + (f" of study {args.study!r}" if args.study else "")
        else:
            export = _labelstudio(store, args)
            tasks = export.tasks
            json.dump(tasks, buf, ensure_ascii=False, indent=1)
            buf.write("\n")
            n_ann = sum(len(t["annotations"]) for t in tasks)
            n_pred = sum(len(t["predictions"]) for t in tasks)
            n_res = sum(len(a["result"]) for t in tasks for a in t["annotations"])
            n_events = sum(len(t["data"]["memscope"]["events"]) for t in tasks)
            what = (f"{len(tasks)} task(s), {n_ann} annotation(s), {n_res} result(s) of {n_events} event(s), "
                    f"{n_pred} prediction(s)")
            _labelstudio_notes(args, export)
    if args.out:
        write_atomic(Path(args.out), buf.getvalue())
        print(plain(f"{args.db}: wrote {what} to {args.out}"))
    else:
        sys.stdout.write(buf.getvalue())
        sys.stdout.flush()
        print(plain(f"{args.db}: wrote {what}"), file=sys.stderr)
    return 0


def _labelstudio(store: Store, args: argparse.Namespace) -> Any:
    bench, runs = None, []
    if args.bench:  # the readers imported only when asked for (start-up speed)
        from scorer.load.memeye import load_benchmark

        bench = load_benchmark(args.bench, allow_outside_root=args.allow_outside_root)
    if args.runs:
        from scorer.load.runs import load_runs

        runs = load_runs(args.runs, benchmark=bench) if bench is not None else load_runs(args.runs)
    return export_labelstudio(store, bench, runs, study=args.study, media_url=args.media_url,
                              users=_users(args.users))


# URL schemes Label Studio opens media from: the web, and its cloud storages (resolved by the
# storage connected to the project)
MEDIA_URL_SCHEMES = ("http://", "https://", "s3://", "gs://", "azure-blob://")


def _check_media_url(prefix: str) -> None:
    """A media URL prefix Label Studio opens as a link to a file: a path on its server ("/data/…")
    or a URL of MEDIA_URL_SCHEMES — not javascript:, data:, file: or a "//host" of no scheme, and no
    space or control character."""
    path = prefix.startswith("/") and not prefix.startswith("//")
    if not (path or prefix.lower().startswith(MEDIA_URL_SCHEMES)):
        raise UserError(f"--media-url {prefix[:60]!r}: give a path on the Label Studio server "
                        f"('/data/local-files/?d=') or a URL beginning {', '.join(MEDIA_URL_SCHEMES)}")
    if any(c.isspace() or ord(c) < 32 or ord(c) == 127 for c in prefix):
        raise UserError(f"--media-url {prefix[:60]!r}: holds a space or a control character")


def _labelstudio_only(args: argparse.Namespace, *options: str) -> None:
    for opt in options:
        if args.format != "labelstudio" and getattr(args, opt):
            raise UserError(f"--{opt.replace('_', '-')} is for --format labelstudio")


def _labelstudio_notes(args: argparse.Namespace, export: Any) -> None:
    """Write the labeling config if asked, and say what the tasks lack (on stderr)."""
    if args.config_out:
        write_atomic(Path(args.config_out), label_config())
        print(plain(f"wrote the Label Studio labeling config to {args.config_out}"), file=sys.stderr)
    if not args.bench:
        print("note: no --bench: tasks carry no question, options, gold answer or media", file=sys.stderr)
    if export.not_carried:
        print(f"note: {export.not_carried} live event(s) not in the tasks (superseded decisions, adjudications): "
              "Label Studio gets the current state; the JSONL export keeps every event", file=sys.stderr)
    if export.media_left_out:
        print(f"note: {export.media_left_out} local medium reference(s) left out: give --media-url "
              "(e.g. '/data/local-files/?d=' with Label Studio's local-files serving rooted at the benchmark)",
              file=sys.stderr)


def _users(path: str | None) -> dict[str, Any]:
    """The --users mapping: memscope annotator → Label Studio user id (int) or e-mail."""
    if not path:
        return {}
    from scorer.load.jsonio import read_json

    users = read_json(Path(path))
    if not isinstance(users, dict):
        raise DataError(path, "", 'expected a JSON object such as {"ann1": "ann1@lab.org"}')
    for name, who in users.items():
        if not (isinstance(who, str) and who.strip()) and not (isinstance(who, int) and not isinstance(who, bool)):
            raise DataError(path, name, f"expected a Label Studio user id or e-mail, got {who!r}")
    return users


def _parse(file: str, fmt: str, users: dict[str, Any] | None) -> list:
    """The events of one import file, each with its place (scorer.store's parsers)."""
    if fmt == "jsonl":
        return parse_jsonl(file)
    from scorer.store.labelstudio_import import parse_labelstudio

    return parse_labelstudio(file, users)
