"""The scoring context of a report: the benchmark and runs (read from their paths, or as already
loaded), the joined predictions frame scored (scorer.scoring.scored), the annotations, and the
inputs record.

The frame has the columns of the readers' joined frame (one row per prediction row that joins to an
item; scorer.load.lean builds it, from the files or from loaded runs, same values) with the answer
scores set as DESIGN §5 defines them, a `family` column (text / multimodal / other) and `choices`;
where several run folders score the same (backbone, method, mode, item), the last folder's row is
kept and a warning says so. `ctx.annotations` is the store's current state of label, verdict and
oracle acts, one DataFrame with a `kind` column (None without a database).
"""

from __future__ import annotations

from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING, Any

from scorer.load.lean import read_frame, read_loaded, run_folders
from scorer.load.hashes import run_files
from scorer.load.joined_rows import JOINED, JoinedRows
from scorer.load.memeye import load_benchmark
from scorer.model import Benchmark, Run
from scorer.scoring import inputs as record
from scorer.scoring.annotations import read_annotations
from scorer.scoring.scored import score_answers
from scorer.sections.base import ScoreContext, ScoreOptions

if TYPE_CHECKING:
    import pandas as pd

Progress = Callable[[str, int, int], None]  # (stage description, done, total)


@dataclass
class ReadRuns:
    runs: list[Run]
    frame: pd.DataFrame  # the joined frame, not scored yet
    files: list[tuple[str, str]]  # (path, sha256) of every file read
    unmatched: int  # prediction rows that join to no item
    paths: list[str | Path]  # as given, or the loaded runs' folders
    reader: str  # "full" (raw rows kept) or "lean"
    joined: JoinedRows | None = None  # what the evidence sections read (the lean reader: with `evidence`)


def is_loaded(runs: Sequence[Any]) -> bool:
    """Whether `runs` are Run objects (already read, with their rows) rather than paths."""
    if not runs or not isinstance(runs[0], Run):
        return False
    if not all(isinstance(r, Run) for r in runs):
        raise TypeError("runs: either run folder paths or Run objects, not both")
    return True


def read_runs(bench: Benchmark, runs: Sequence[str | Path] | Sequence[Run], options: ScoreOptions, needs_raw: bool,
              note: Progress, meanwhile: Callable[[], Any] | None = None, evidence: bool = False,
              hashes: Mapping[str, str] | None = None) -> ReadRuns:
    """The runs and their joined frame: loaded Run objects as they are; paths by the full reader
    (load_runs, raw rows kept) or, without `needs_raw`, the lean one (columns only, and with
    `evidence` the fields the evidence sections read; `meanwhile` runs in this process while forked
    workers read). `hashes`: the loaded runs' file hashes taken when they were read (build_context)."""
    if is_loaded(runs):
        loaded = list(runs)
        frame, unmatched, joined = read_loaded(bench, loaded, options.names)
        files = [f for r in loaded for f in run_files(r.folder, hashes)]
        return ReadRuns(loaded, frame, files, unmatched, list(dict.fromkeys(str(r.folder) for r in loaded)), "full",
                        joined)
    if needs_raw:
        from scorer.load.runs import load_runs  # the full reader: only for sections that read raw rows

        folders = run_folders(runs)
        note("reading runs", 0, len(folders))
        loaded = load_runs(folders, benchmark=bench)
        frame, unmatched, joined = read_loaded(bench, loaded, options.names)
        files = [f for r in loaded for f in run_files(r.folder)]
        return ReadRuns(loaded, frame, files, unmatched, list(runs), "full", joined)
    lean = read_frame(bench, runs, options.names,
                      progress=lambda done, total: note("reading runs", done, total), meanwhile=meanwhile,
                      evidence=evidence)
    return ReadRuns(list(lean.runs), lean.frame, [(p, h) for p, h, _ in lean.files], lean.unmatched, list(runs),
                    "lean", lean.joined)


def benchmark_warnings(benchmark: Benchmark) -> list[str]:
    """What in the benchmark itself makes a score wrong however the runs answered: an MCQ rotation
    whose answer letter is none of its options (every choice on it counts as wrong)."""
    from scorer.load.validate import unkeyed_rotations

    unkeyed = [(it, k, rot) for it in benchmark.items() if it.mode == "mcq" for k, rot in unkeyed_rotations(it)]
    if not unkeyed:
        return []
    it, k, rot = unkeyed[0]
    items = len({(i.item_id, i.mode) for i, _, _ in unkeyed})
    return [f"{items} MCQ item(s) have a rotation whose answer letter is not one of its options (first: {it.item_id} "
            f"rotation {k}, answer {rot.answer!r}): every choice on it counts as wrong — fix the benchmark "
            "(`memscope validate` lists them)"]


def rowless_runs(runs: Sequence[Run], frame: Any) -> list[str]:
    """Run folders that add no scored row (an empty predictions.jsonl, or no row joins an item)."""
    scored = set(frame["folder"].unique()) if len(frame) else set()
    empty = [r for r in runs if str(r.folder) not in scored]
    if not empty:
        return []
    return [f"{len(empty)} run folder(s) add no scored row (an empty predictions.jsonl, or no row matches an item): "
            f"{empty[0].folder}" + (f" and {len(empty) - 1} more" if len(empty) > 1 else "")]


def build_context(
    bench: str | Path | Benchmark,
    runs: Sequence[str | Path] | Sequence[Run],
    db: str | Path | None = None,
    options: ScoreOptions | None = None,
    needs_raw: bool = True,
    allow_outside_root: bool = False,
    progress: Progress | None = None,
    meanwhile: Callable[[], Any] | None = None,
    evidence: bool = False,
    hashes: Mapping[str, str] | None = None,
) -> tuple[ScoreContext, dict, list[str]]:
    """(context, inputs record, warnings). `bench` and `runs` are paths, or already loaded (a
    Benchmark; Run objects as scorer.load.runs.load_runs reads them, rows included). `meanwhile`
    (the lean reader only) runs in this process while forked workers read the runs. `hashes`
    (loaded inputs): str(path) → sha256 of the files they were read from, taken when they were
    loaded (scorer.load.hashes.file_hashes): the inputs record uses them, so that scoring what is
    in memory opens no dialog or run file; a file they lack is hashed from disk."""
    options = options or ScoreOptions()
    note = progress or (lambda *_: None)
    warnings: list[str] = []
    if isinstance(bench, Benchmark):
        benchmark, bench_path = bench, bench.root
    else:
        note("reading the benchmark", 0, 1)
        benchmark, bench_path = load_benchmark(bench, allow_outside_root=allow_outside_root), bench
    inputs: dict[str, Any] = {"benchmark": record.benchmark_record(benchmark, bench_path, hashes)}
    read = read_runs(benchmark, runs, options, needs_raw, note, meanwhile, evidence, hashes)
    inputs["runs"] = record.runs_record(read.paths, read.files, len(read.runs), read.reader)
    if not read.runs:
        warnings.append("no run folder (a folder with predictions.jsonl) under "
                        + ", ".join(Path(p).as_posix() for p in read.paths) + ": nothing to score")
    if read.unmatched:
        warnings.append(f"{read.unmatched} prediction row(s) match no benchmark item and are not scored "
                        "(`memscope validate` lists them)")
    warnings += benchmark_warnings(benchmark) + rowless_runs(read.runs, read.frame)
    note("scoring answers", 0, 1)
    frame, rows, checks, found = score_answers(read.frame, benchmark, read.runs, options, read.unmatched)
    warnings += found
    if options.compare and len(frame):
        from scorer.errors import UserError
        from scorer.sections.bootstrap import unknown_compared

        unknown = unknown_compared(frame, options.compare, options.names)
        if unknown:
            raise UserError(unknown[0])
    annotations = None
    if db is not None:
        note("reading annotations", 0, 1)
        annotations, inputs["annotations"] = read_annotations(db, options.study)
    else:
        inputs["annotations"] = None
    inputs["rows"] = rows
    inputs["options"] = record.options_record(options, checks.get("judge_scale"))
    inputs["checks"] = {k: v for k, v in checks.items() if k != "judge_scale"}  # what was withheld, and why
    inputs["versions"] = record.versions()
    memo = {} if read.joined is None else {JOINED: read.joined}  # read by scorer.sections.evidence_records
    ctx = ScoreContext(bench=benchmark, runs=read.runs, frame=frame, annotations=annotations, options=options,
                       memo=memo)
    return ctx, inputs, warnings
