"""`score`: the sections chosen (scorer.sections.registry), the reader they need, the context
built, the sections run, the report in registry order.

When no chosen section reads raw rows, runs are read by the lean columnar reader (scorer.load.lean),
which scores a million rows in a fraction of the memory, and the section modules (and pandas, a
third of a second) import in this process while forked workers read the runs.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from pathlib import Path
from typing import Any

from scorer.errors import UserError
from scorer.model import Benchmark, Run
from scorer.scoring.context import Progress, build_context, is_loaded
from scorer.scoring.inputs import versions
from scorer.scoring.result import Report
from scorer.scoring.run import Encode, run_sections_encoded
from scorer.sections.base import ScoreOptions, SectionResult
from scorer.sections.registry import REQUIRED, Section, select


def score(
    bench: str | Path | Benchmark,
    runs: Sequence[str | Path] | Sequence[Run],
    db: str | Path | None = None,
    options: ScoreOptions | None = None,
    sections: Sequence[str] | None = None,
    lean: bool | None = None,
    allow_outside_root: bool = False,
    progress: Progress | None = None,
    while_reading: Callable[[], Any] | None = None,
    encode: Encode | None = None,
) -> Report:
    """Score a benchmark's runs (and annotations). `bench` and `runs` are paths, or already loaded
    (a Benchmark; Run objects as scorer.load.runs.load_runs reads them): the app scores what it
    has. `sections`: names (None: all); an unknown name is a UserError listing the known ones.
    `lean` (paths only): None = the lean reader exactly when no chosen section needs raw rows;
    True/False force it (True with a raw-needing section is an error). `while_reading`, if given, is
    called once in this process, while forked workers read the runs where they do (the command
    line imports its printer there). `encode`, if given, turns each section's data into its text
    in the report file where the section is built (Report.texts; the command line writing
    report.json passes scorer.report.jsonfile.section_text)."""
    options = options or ScoreOptions()
    chosen = select(sections)
    raw = [s.name for s in chosen if s.raw]
    if lean is True and raw:
        raise UserError("the lean reader keeps no raw rows, but section(s) " + ", ".join(raw) + " need them")
    loaded = is_loaded(runs)
    if lean is True and loaded:
        raise ValueError("lean=True is for runs given as paths: loaded runs are scored as they are")
    if (not raw if lean is None else lean) and not loaded:
        # Read the runs while the section modules load.
        ctx, inputs, warnings = build_context(bench, runs, db, options, False, allow_outside_root, progress,
                                              meanwhile=lambda: _meanwhile(chosen, while_reading),
                                              evidence=any(s.evidence for s in chosen))
    else:
        _meanwhile(chosen, while_reading)
        ctx, inputs, warnings = build_context(bench, runs, db, options, True, allow_outside_root, progress)
    return _report(ctx, inputs, warnings, chosen, sections is not None, progress, encode)


def _meanwhile(chosen: Sequence[Section], also: Callable[[], Any] | None) -> None:
    for s in chosen:
        s.load()
    versions()  # the report's inputs record: package metadata, read once
    if also is not None:
        also()


def _report(ctx, inputs: dict, warnings: list[str], chosen: Sequence[Section], selected: bool,
            progress: Progress | None, encode: Encode | None = None) -> Report:
    built = run_sections_encoded(ctx, chosen, encode, progress)
    results = [r for r, _ in built]
    texts = {r.name: t for r, t in built if t is not None}
    if selected:
        names = {s.name for s in chosen}
        results += [SectionResult.absent(name, "not selected (--sections)") for name in REQUIRED if name not in names]
    return Report(inputs=inputs, sections=results, warnings=warnings, texts=texts)
