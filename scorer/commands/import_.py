"""`memscope import locomo FILE --out DIR [--force]`: convert another public format into a benchmark."""

from __future__ import annotations

import argparse
import json
from typing import Any

from scorer.commands import check_writable, shows_usage
from scorer.load.locomo import REPORT_NAME, import_locomo

MAX_LISTED = 20  # unresolved evidence lines printed; all of them are in the report file


def register(sub: argparse._SubParsersAction) -> None:
    p = sub.add_parser("import", help="convert another public benchmark format (LoCoMo) into ours")
    formats = p.add_subparsers(dest="format", metavar="FORMAT")
    lo = formats.add_parser(
        "locomo",
        help="LoCoMo (snap-research locomo10.json)",
        description="Write a LoCoMo JSON file as a benchmark (dialog/<task>_Open.json, one task per "
        f"conversation) plus {REPORT_NAME} (counts, normalised and unresolved evidence).",
    )
    lo.add_argument("file", help="LoCoMo JSON file, e.g. locomo10.json")
    lo.add_argument("--out", required=True, metavar="DIR", help="output folder (must be empty or new)")
    lo.add_argument("--force", action="store_true",
                    help="write into a non-empty folder, replacing the files a previous import wrote there")
    lo.set_defaults(func=run_locomo)
    p.set_defaults(func=shows_usage(p))



def _q(value: Any) -> str:
    """Data text for the terminal: quoted, with control characters (escapes) made visible."""
    return json.dumps(value if isinstance(value, str) else str(value), ensure_ascii=False)


def summary(report: dict, out: str) -> list[str]:
    c, ev = report["counts"], report["evidence"]
    cats = ", ".join(f"{k}: {v}" for k, v in report["categories"].items())
    lines = [
        f"imported LoCoMo into {out}",
        f"  conversations {c['conversations']} · sessions {c['sessions']} · rounds {c['rounds']}"
        + (f" · {c['date_only_sessions']} dated sessions without turns (not made)" if c["date_only_sessions"] else ""),
        (f"  images {c['images']} ({c['remote_images']} remote, {c['embedded_images']} embedded, written to image/)"
         f" · captions without an image URL {c['captions_without_image']}"),
        f"  open items {c['qa_items']} · unanswerable (category 5) {c['unanswerable']} · by category {cats}",
        (f"  evidence strings {ev['strings']}: {ev['exact']} exact · {ev['normalised_strings']} normalised"
         f" (→ {ev['normalised_ids']} ids) · {ev['unresolved']} unresolved · {ev['duplicates_removed']} duplicate(s)"
         f" · items without a clue {ev['items_without_clue']}"),
    ]
    for u in report["unresolved_evidence"][:MAX_LISTED]:
        lines.append(f"  unresolved {u['item']}: {_q(u['raw'])}: {u['reason']}")
    extra = len(report["unresolved_evidence"]) - MAX_LISTED
    if extra > 0:
        lines.append(f"  … {extra} more unresolved")
    lines.append(f"  details: {REPORT_NAME} ({len(report['findings'])} other findings)")
    return lines


def run_locomo(args: argparse.Namespace) -> int:
    check_writable(args.out, folder=True)
    report = import_locomo(args.file, args.out, force=args.force)
    print("\n".join(summary(report, args.out)))
    return 0
