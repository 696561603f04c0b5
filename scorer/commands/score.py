"""`memscope score BENCH --runs DIR… [--db FILE] [--out DIR] [--format md,csv,json,tex,png] …`:
every table of a MemEye-style paper from runs and annotations. Without --out, the terminal view."""

from __future__ import annotations

import argparse
import os
import sys
from collections.abc import Callable, Sequence
from pathlib import Path

from scorer.commands import check_bounds
from scorer.errors import UserError
from scorer.metrics.constants import DEFAULT_K, DEFAULT_RESAMPLES, DEFAULT_SEED
from scorer.model import ROTATION_RULES
from scorer.names import CAPTION_PROOF_PAIRS, load_names
from scorer.report.fmt import LATEX_DECIMALS
from scorer.report.formats import DEFAULT_FORMATS, FORMATS, parse_formats
from scorer.safe_text import plain
from scorer.sections.base import ScoreOptions


def register(sub: argparse._SubParsersAction) -> None:
    p = sub.add_parser("score", help="evaluation matrices, agreement, oracle accuracy, bootstrap CIs, reports")
    p.add_argument("bench", help="benchmark root, dialog folder or dialog file")
    p.add_argument("--runs", nargs="+", required=True, metavar="DIR", help="run folders or trees of them")
    p.add_argument("--db", metavar="FILE", help="annotation database (verdicts, labels, oracle answers)")
    p.add_argument("--study", metavar="NAME", help="use only the annotations of this study")
    p.add_argument("--out", metavar="DIR", help="write the report here (default: print it)")
    p.add_argument("--format", default=",".join(DEFAULT_FORMATS), metavar="LIST",
                   help=f"with --out: any of {','.join(FORMATS)} (default {','.join(DEFAULT_FORMATS)})")
    p.add_argument("--decimals", type=int, default=LATEX_DECIMALS, metavar="N",
                   help=f"with --format tex: decimal places of the LaTeX tables' numbers and CIs (default {LATEX_DECIMALS})")
    p.add_argument("--seed", type=int, default=DEFAULT_SEED, help=f"bootstrap seed (default {DEFAULT_SEED})")
    p.add_argument("--resamples", type=int, default=DEFAULT_RESAMPLES,
                   help=f"bootstrap resamples (default {DEFAULT_RESAMPLES})")
    p.add_argument("--k", type=int, default=DEFAULT_K, help=f"K for evidence diagnostics (default {DEFAULT_K})")
    p.add_argument("--judge-levels", type=int, choices=(3, 5), default=5,
                   help="5: judge scores as recorded; 3: the upstream runner's {0, .5, 1} coercion")
    p.add_argument("--judge-scale", metavar="MIN-MAX",
                   help="the scale the runs' judge scores are on, e.g. 1-5 or 1-10: rescaled linearly to [0, 1] "
                        "(recorded in the report's inputs); judge scores outside [0, 1] are refused otherwise")
    p.add_argument("--rotations", choices=ROTATION_RULES, default="item",
                   help="item: MCQ EM over all the item's rotations, an unlogged one scoring 0 (the paper's "
                        "definition, default); logged: over the rotations a row logged (a documented deviation)")
    p.add_argument("--recompute-text-metrics", action="store_true",
                   help="BLEU-1, F1, exact match and contains from each open row's pred and gt (upstream's "
                        "normalisation) instead of the values the run recorded")
    p.add_argument("--mark-all", action="store_true",
                   help="mark best/second among reference baselines too (oracle, question-only, no_visual)")
    p.add_argument("--compare", nargs="+", action="extend", default=[], metavar="A:B",
                   help="paired bootstrap comparison of two methods, each by the method name its runs log "
                        "(full_context__text_only) or its display name (FC(T)), on every backbone")
    p.add_argument("--caption-pair", nargs="+", action="extend", default=[], metavar="T:V",
                   help="caption-proof pair(s), text:visual (default: "
                        + ", ".join(f"{t}:{v}" for t, v in CAPTION_PROOF_PAIRS) + ")")
    p.add_argument("--stage-pair", nargs="+", action="extend", default=[], metavar='STAGE:"A"→"B"',
                   help='paired stage loss between two runs differing in one stage (→ or ->), e.g. '
                        'delivery:"SRAG(V)"->"SRAG(V) budget"; stages: write, retrieval, delivery, read')
    p.add_argument("--conditions", metavar="FILE",
                   help='MOSAIC conditions: JSON {"<backbone>/<method>": {"condition": …, "stage": …, "budget": …, '
                        '"carrier": "<modality>:<variant>", "ranking": …}} (overrides what runs declare in '
                        'metrics.json/config.json)')
    p.add_argument("--abstain-pattern", nargs="+", action="extend", default=[], metavar="TEXT",
                   help="phrase(s) marking an abstention in rows without `abstained` (replace the default list)")
    p.add_argument("--clustered", action="store_true",
                   help="bootstrap over clusters (persona/conversation) instead of items")
    p.add_argument("--names", metavar="FILE",
                   help='JSON {"method_name": "Display"}, or {"display": {…}, "family": {method: family}, '
                        '"reference": [method, …]}, extending the display names, families and reference baselines')
    p.add_argument("--sections", metavar="LIST", help="only these report sections (comma-separated names)")
    p.add_argument("--allow-outside-root", action="store_true")
    p.set_defaults(func=run)


def _pairs(values: list[str], flag: str) -> tuple[tuple[str, str], ...]:
    out = []
    for v in values:
        parts = v.split(":")
        if len(parts) != 2 or not all(p.strip() for p in parts):
            raise UserError(f"{flag}: expected A:B (two method names), got {v!r}")
        out.append((parts[0].strip(), parts[1].strip()))
    return tuple(out)


def parse_judge_scale(text: str | None) -> tuple[float, float] | None:
    """`--judge-scale MIN-MAX` (e.g. 1-5) as (min, max), or None."""
    if text is None:
        return None
    parts = text.replace("–", "-").split("-")
    try:
        lo, hi = (float(v) for v in parts)
    except ValueError:
        raise UserError(f"--judge-scale: expected MIN-MAX such as 1-5 or 1-10, got {text!r}") from None
    if not (lo == lo and hi == hi) or hi <= lo or abs(lo) == float("inf") or abs(hi) == float("inf"):
        raise UserError(f"--judge-scale: MIN must be below MAX, got {text!r}")
    return lo, hi


def options_from(args: argparse.Namespace) -> ScoreOptions:
    check_bounds(args, "seed", "resamples", "k", "decimals")
    if args.resamples < 1:
        raise UserError("--resamples must be at least 1")
    if args.k < 1:
        raise UserError("--k must be at least 1")
    extra = {}
    if args.caption_pair:
        extra["caption_pairs"] = _pairs(args.caption_pair, "--caption-pair")
    if getattr(args, "stage_pair", None):
        from scorer.metrics.delivery import parse_stage_pair  # numpy: only with stage pairs

        for v in args.stage_pair:
            parse_stage_pair(v)  # a malformed pair is a one-line error before any file is read
        extra["stage_pairs"] = tuple(args.stage_pair)
    if getattr(args, "conditions", None):
        from scorer.load.conditions import score_extra  # checked before any run is read

        extra.update(score_extra(args.conditions))
    if getattr(args, "abstain_pattern", None):
        from scorer.metrics.abstention import normalise

        blank = [p for p in args.abstain_pattern if not normalise(p)]
        if blank:  # it would match nothing: the default phrases gone, detection off without a word
            raise UserError(f"--abstain-pattern {blank[0]!r} has no words to match (it would switch detection "
                            "from text off in silence); give the phrases that mark an abstention")
        extra["abstain_patterns"] = tuple(args.abstain_pattern)
    names = load_names(args.names)
    return ScoreOptions(seed=args.seed, resamples=args.resamples, k=args.k, judge_levels=args.judge_levels,
                        compare=_pairs(args.compare, "--compare"), clustered=args.clustered, study=args.study,
                        names=dict(names.display), families=dict(names.families), references=names.references,
                        mark_all=args.mark_all, rotations=args.rotations,
                        judge_scale=parse_judge_scale(args.judge_scale),
                        recompute_text_metrics=args.recompute_text_metrics, extra=extra)


# Environment variables with which rich treats a stream that is not a terminal as one.
_FORCED_TERMINAL = ("FORCE_COLOR", "TTY_COMPATIBLE", "TTY_INTERACTIVE")


def _printer(to_files: bool) -> Callable[[], None]:
    """What to import while the runs are read, not before or after: rich's console (40 ms) and,
    with --out, the report writers (9 ms)."""
    def imports() -> None:
        import rich.console  # noqa: F401
        import rich.text  # noqa: F401

        if to_files:
            import scorer.report.write  # noqa: F401
    return imports


def _encoder(out: str | None, formats: Sequence[str]) -> Callable[[object], bytes] | None:
    """With report.json to write: each section's text in it, encoded where the section is built
    (scorer.scoring.score's `encode`)."""
    if not out or "json" not in formats:
        return None
    from scorer.report.jsonfile import section_text

    return section_text


class _Progress:
    """A rich progress bar on stderr while scoring (only when stderr is a terminal). rich is only
    imported here when it may be one: otherwise the runs are read first (scorer.scoring.score
    imports it meanwhile)."""

    def __init__(self) -> None:
        self.bar = None
        self.task = None
        if not (sys.stderr.isatty() or any(os.environ.get(v) is not None for v in _FORCED_TERMINAL)):
            return
        from rich.console import Console

        self.console = Console(stderr=True)
        if self.console.is_terminal:
            from rich.progress import (
                BarColumn,
                MofNCompleteColumn,
                Progress,
                TextColumn,
                TimeElapsedColumn,
            )

            # Redrawn on each step rather than by rich's refresh thread: scoring forks workers, which
            # is only done from a single-threaded process (scorer.forked.can_fork).
            self.bar = Progress(TextColumn("{task.description}"), BarColumn(), MofNCompleteColumn(),
                                TimeElapsedColumn(), console=self.console, transient=True, auto_refresh=False)

    def __enter__(self) -> _Progress:
        if self.bar:
            self.bar.start()
            self.task = self.bar.add_task("scoring", total=1)
        return self

    def __exit__(self, *exc: object) -> None:
        if self.bar:
            self.bar.stop()

    def __call__(self, stage: str, done: int, total: int) -> None:
        if self.bar is not None:
            from rich.markup import escape

            self.bar.update(self.task, description=escape(plain(stage)), completed=done, total=max(total, 1), refresh=True)


def blas_on_one_thread_from_start() -> None:
    """Every matrix product of a report runs on one BLAS thread (scorer.metrics.resample.one_blas_thread:
    values independent of the cores), so the BLAS library starts no thread pool in this process or
    in the workers it forks: OpenBLAS's pool threads spin-wait on start, after every fork and at
    every change of the limit, which at MemEye scale cost 0.25 CPU-s of a 2.6 s report on two cores
    (perf, issue 19). Read by OpenBLAS when numpy loads: set only before that, and never over a
    value the user set."""
    if "numpy" not in sys.modules:
        os.environ.setdefault("OPENBLAS_NUM_THREADS", "1")


def run(args: argparse.Namespace) -> int:
    blas_on_one_thread_from_start()
    # Imported here, for start-up speed: `memscope score --help` and argument errors need none of the
    # pipeline (numpy, the readers) or the renderers (matplotlib for png).
    from scorer.scoring import score

    formats = parse_formats(args.format)
    if args.out:
        from scorer.commands import check_writable

        check_writable(args.out, folder=True)  # before any work: a report must have somewhere to go
    if args.out and "png" in formats:
        from scorer.report import figures

        if not figures.available():
            raise UserError(figures.MISSING)
    options = options_from(args)
    sections = [s.strip() for s in args.sections.split(",") if s.strip()] if args.sections else None
    if args.db is not None and not Path(args.db).exists():
        raise UserError(f"{args.db}: no such annotation database")
    with _Progress() as progress:
        report = score(args.bench, args.runs, db=args.db, options=options, sections=sections,
                       allow_outside_root=args.allow_outside_root, progress=progress,
                       while_reading=_printer(bool(args.out)), encode=_encoder(args.out, formats))
    from rich.console import Console
    from rich.text import Text

    if args.out:
        from scorer.report.write import write_report

        written = write_report(report, Path(args.out), formats, decimals=args.decimals)
        out = Console(highlight=False)
        out.print(Text(plain(f"wrote {len(written)} file(s) to {args.out}")))
        for p in written:
            if p.parent == Path(args.out) or p.suffix in (".json", ".md", ".tex") and p.parent.name != "tables":
                out.print(Text(plain(f"  {p}")))
        # what may change a number's meaning is said where the command ran, not only inside the files
        for w in report.json_data()["warnings"]:
            print(plain(f"warning: {w}"), file=sys.stderr)
        return 0
    from scorer.report import terminal

    data = report.json_data()
    terminal.render(report.sections, data["warnings"], Console(highlight=False, file=sys.stdout))
    return 0
