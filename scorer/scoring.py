"""`memscope score` without the command line: build the context, run every section, record inputs.

    report = score("fixtures/demo", ["fixtures/demo/runs"], db="memscope.db")
    report.json_data()   # what report.json holds

A section is a module with NAME and `build(ctx) -> SectionResult` (scorer.sections.base), optionally
`NEEDS_RAW = True` when it reads the raw upstream rows (`ctx.runs[i].predictions`). SECTION_MODULES
is the one list of them, in report order; a module listed here but not present in this checkout is
reported as absent. When no selected section needs the raw rows, runs are read by the lean columnar
reader (scorer.load.lean), which scores a million rows in a fraction of the memory.

The context's frame has scorer.frame.predictions_frame's columns (one row per prediction row that
joins to an item; built by scorer.load.lean, same values) with
the answer scores set as DESIGN §5 defines them (scorer.metrics.answers.score_frame: MCQ EM from the
rotation choices, the judge at the chosen number of levels, BLEU-1 filled where a row has none), a
`family` column (text / multimodal / other) and `choices`; where several run folders score the same
(backbone, method, mode, item), the last folder's row is kept and a warning says so.
`ctx.annotations` is the store's current state of label, verdict and oracle acts, one DataFrame
with a `kind` column (None without --db).
"""

from __future__ import annotations

import hashlib
import os
import importlib
import platform
from collections.abc import Callable, Iterable, Mapping, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING, Any

import numpy as np

from scorer import __version__, frame_checks
from scorer.forked import fork_map, worker_count
from scorer.load.lean import frame_from_runs, read_frame, run_folders
from scorer.load.memeye import load_benchmark
from scorer.model import Benchmark
from scorer.names import family_of
from scorer.sections.base import ScoreContext, ScoreOptions, SectionResult

if TYPE_CHECKING:  # imported where used: runs are read while pandas loads (see `score`)
    import pandas as pd

# Report sections, in order. Other modules append theirs here (a module path per entry).
SECTION_MODULES: list[str] = [
    "scorer.sections.matrix",
    "scorer.sections.position",
    "scorer.sections.agreement",
    "scorer.sections.oracle",
    "scorer.sections.bootstrap",
    "scorer.sections.caption_proof",
    "scorer.sections.evidence",
    "scorer.sections.evidence_curve",
    "scorer.sections.recency",
    "scorer.sections.delivery",
    "scorer.sections.abstention",
    "scorer.sections.oracle_evidence",
    "scorer.sections.gates",
]
# Section names (NAME or module name) known not to read raw rows, so that `score` can read runs
# with the lean reader before importing their modules (a test keeps this in step with NEEDS_RAW).
LEAN_SECTION_NAMES = frozenset({"matrix", "position", "position_bias", "agreement", "oracle", "bootstrap",
                                "caption_proof", "oracle_evidence"})
# Keys report.json always has (DESIGN §6), present as {"value": null, "reason": …} when absent.
REQUIRED_SECTIONS = ("matrix", "agreement", "oracle", "evidence", "abstention")
ANNOTATION_KINDS = ("label", "verdict", "oracle")

Progress = Callable[[str, int, int], None]  # (stage description, done, total)


@dataclass
class Report:
    inputs: dict
    sections: list[SectionResult]
    warnings: list[str] = field(default_factory=list)

    def section(self, name: str) -> SectionResult | None:
        return next((s for s in self.sections if s.name == name), None)

    def json_data(self) -> dict:
        out: dict[str, Any] = {"inputs": self.inputs}
        for s in self.sections:
            out[s.name] = s.data
        for name in REQUIRED_SECTIONS:
            out.setdefault(name, {"value": None, "reason": "this section is not available in this build"})
        out["warnings"] = list(self.warnings) + [f"{s.name}: {w}" for s in self.sections for w in s.warnings]
        return out


def sha256_file(path: Path) -> str:
    h = hashlib.sha256()
    with open(path, "rb") as fh:
        for block in iter(lambda: fh.read(1 << 20), b""):
            h.update(block)
    return h.hexdigest()


def digest_of(files: Sequence[Mapping[str, str]]) -> str:
    """One sha256 over a list of {path, sha256}: changes when any file or name changes."""
    h = hashlib.sha256()
    for f in files:
        h.update(f"{f['path']}\t{f['sha256']}\n".encode())
    return h.hexdigest()


def _rel(path: str | Path, base: Path) -> str:
    # abspath, not resolve(): no file-system calls for each of thousands of run files
    try:
        return Path(os.path.abspath(path)).relative_to(os.path.abspath(base)).as_posix()
    except ValueError:
        return Path(path).as_posix()


def load_sections(names: Sequence[str] | None = None) -> tuple[list[Any], list[SectionResult]]:
    """(imported section modules, absent results for listed modules missing from this checkout).
    `names` selects sections by NAME or module name (None: all)."""
    mods, missing = [], []
    for path in SECTION_MODULES:
        short = path.rsplit(".", 1)[-1]
        try:
            mod = importlib.import_module(path)
        except ModuleNotFoundError as err:
            if err.name != path:
                raise
            if names is None or short in names:
                missing.append(SectionResult.absent(short, "this section is not available in this build"))
            continue
        if names is None or mod.NAME in names or short in names:
            mods.append(mod)
    return mods, missing


def rotation_answers(bench: Benchmark) -> dict[str, tuple[str, ...]]:
    return {it.item_id: tuple(r.answer for r in it.rotations) for it in bench.items("mcq") if it.rotations}


def _dedupe(frame: pd.DataFrame) -> tuple[pd.DataFrame, int]:
    """Keep the last row per (backbone, method, mode, item). Integer keys: hashing four string
    columns of a million rows would cost seconds for what is nearly always no duplicate at all."""
    import pandas as pd

    if frame.empty:
        return frame, 0
    key = np.zeros(len(frame), dtype=np.int64)
    for col in ("backbone", "method", "mode", "item_id"):
        code, uniques = pd.factorize(frame[col])
        key = key * max(len(uniques), 1) + code  # mixed radix: unique per combination
    dup = pd.Series(key).duplicated(keep="last").to_numpy()
    n = int(dup.sum())
    return (frame.loc[~dup].reset_index(drop=True), n) if n else (frame, 0)


def read_annotations(db: str | Path, study: str | None) -> tuple[pd.DataFrame, dict]:
    import pandas as pd

    from scorer.store import Store

    parts = []
    with Store(db, create=False) as store:
        for kind in ANNOTATION_KINDS:
            f = store.frame(kind, study)
            f.insert(0, "kind", kind)
            parts.append(f)
    frame = pd.concat([p for p in parts if not p.empty], ignore_index=True) if any(not p.empty for p in parts) \
        else pd.concat(parts, ignore_index=True)
    canon = frame.drop(columns=[c for c in ("event_id",) if c in frame]).sort_values(["uid"]) if "uid" in frame else frame
    digest = hashlib.sha256(canon.to_json(orient="records", force_ascii=False).encode()).hexdigest()
    counts = {k: int((frame["kind"] == k).sum()) for k in ANNOTATION_KINDS}
    return frame, {"db": Path(db).as_posix(), "study": study, "acts": counts, "sha256": digest}


def _versions() -> dict[str, str]:
    from importlib.metadata import PackageNotFoundError, version

    out = {"memscope": __version__, "python": platform.python_version()}
    for dist in ("numpy", "pandas", "nltk", "krippendorff"):
        try:
            out[dist] = version(dist)  # metadata only: importing nltk would cost seconds
        except PackageNotFoundError:  # pragma: no cover
            pass
    return out


def build_context(
    bench_path: str | Path,
    run_paths: Sequence[str | Path],
    db: str | Path | None = None,
    options: ScoreOptions | None = None,
    needs_raw: bool = True,
    allow_outside_root: bool = False,
    progress: Progress | None = None,
    meanwhile: Callable[[], Any] | None = None,
) -> tuple[ScoreContext, dict, list[str]]:
    """(context, inputs record, warnings). `meanwhile` (lean reader only) runs in this process
    while forked workers read the runs."""
    options = options or ScoreOptions()
    note = progress or (lambda *_: None)
    warnings: list[str] = []
    note("reading the benchmark", 0, 1)
    bench = load_benchmark(bench_path, allow_outside_root=allow_outside_root)
    bench_files = sorted({f for t in bench.tasks for f in t.files})
    inputs: dict[str, Any] = {
        "benchmark": {"path": Path(bench_path).as_posix(),
                      "files": [{"path": _rel(f, bench.root), "sha256": sha256_file(f)} for f in bench_files]},
    }
    inputs["benchmark"]["digest"] = digest_of(inputs["benchmark"]["files"])
    if needs_raw:
        from scorer.load.runs import load_runs

        folders = run_folders(run_paths)
        note("reading runs", 0, len(folders))
        runs = load_runs(folders, benchmark=bench)
        frame, unmatched = frame_from_runs(bench, runs, options.names)
        files = []
        for r in runs:
            for name in ("config.json", "metrics.json", "predictions.jsonl"):
                p = r.folder / name
                if p.is_file():
                    files.append((str(p), sha256_file(p)))
    else:
        lean = read_frame(bench, run_paths, options.names,
                          progress=lambda done, total: note("reading runs", done, total), meanwhile=meanwhile)
        runs, frame = list(lean.runs), lean.frame
        files = [(p, h) for p, h, _ in lean.files]
        unmatched = lean.unmatched
    inputs["runs"] = {
        "paths": [Path(p).as_posix() for p in run_paths],
        "folders": len(runs),
        "files": [{"path": _rel_to_any(p, run_paths), "sha256": h} for p, h in sorted(files)],
        "reader": "full" if needs_raw else "lean",
    }
    inputs["runs"]["digest"] = digest_of(inputs["runs"]["files"])
    if not runs:
        warnings.append("no run folder (a folder with predictions.jsonl) under "
                        + ", ".join(Path(p).as_posix() for p in run_paths) + ": nothing to score")
    if unmatched:
        warnings.append(f"{unmatched} prediction row(s) match no benchmark item and are not scored "
                        "(`memscope validate` lists them)")
    note("scoring answers", 0, 1)
    import pandas as pd

    from scorer.metrics import text_metrics
    from scorer.metrics.answers import score_frame

    frame, withheld, found, checks = frame_checks.before_scoring(frame, runs, options.judge_scale,
                                                                 options.recompute_text_metrics)
    warnings += found
    frame, counts = score_frame(frame, rotation_answers(bench), options.judge_levels, rotations=options.rotations)
    if counts["em_recorded_differs"]:
        warnings.append(f"{counts['em_recorded_differs']} MCQ row(s) record an `em` that differs from the one "
                        "recomputed from their rotation choices; the recomputed value is used")
    # Recorded text metrics against upstream's functions (issue 12.8); --recompute-text-metrics uses these.
    frame, text_counts = text_metrics.recompute_frame(frame, options.recompute_text_metrics)
    if not options.recompute_text_metrics and (why := text_metrics.frame_warning(text_counts)):
        warnings.append(why)
    frame, found, more = frame_checks.after_scoring(frame, runs, withheld, options.rotations)
    warnings += found
    checks.update(more)
    frame, dropped = _dedupe(frame)
    if dropped:
        warnings.append(f"{dropped} row(s) repeat an item already scored by the same backbone, method and mode "
                        "(several run folders for one task?); the row from the last folder is used")
    per_method = {m: family_of(m, mod, d, options.families) for m, mod, d in
                  frame[["method", "modality", "display"]].drop_duplicates("method").itertuples(index=False)}
    frame["family"] = frame["method"].map(per_method) if len(frame) else pd.Series([], dtype=object)
    annotations = None
    if db is not None:
        note("reading annotations", 0, 1)
        annotations, record = read_annotations(db, options.study)
        inputs["annotations"] = record
    else:
        inputs["annotations"] = None
    inputs["rows"] = {"scored": len(frame), "unmatched": int(unmatched), "duplicates_dropped": dropped,
                      **{k: int(v) for k, v in counts.items()}, "text_metrics": text_counts}
    inputs["options"] = {
        "seed": options.seed, "resamples": options.resamples, "k": options.k, "judge_levels": options.judge_levels,
        "compare": [list(p) for p in options.compare], "clustered": options.clustered, "study": options.study,
        "rotations": options.rotations, "judge_scale": checks.get("judge_scale"),
        "mark_all": options.mark_all,  # best/second marked among reference baselines too
        "recompute_text_metrics": options.recompute_text_metrics,
        "extra": {str(k): v for k, v in (options.extra or {}).items()},  # section options (stage pairs, …)
    }
    inputs["checks"] = {k: v for k, v in checks.items() if k != "judge_scale"}  # what was withheld, and why
    inputs["versions"] = _versions()
    ctx = ScoreContext(bench=bench, runs=runs, frame=frame, annotations=annotations, options=options)
    return ctx, inputs, warnings


def _rel_to_any(path: str, bases: Iterable[str | Path]) -> str:
    """`path` as the first base that holds it (as given) joined with its path below that base;
    string work only (thousands of run files: Path objects cost a tenth of a second here)."""
    p = os.path.abspath(path)
    for b in bases:
        root = os.path.abspath(b)
        if p == root:
            return Path(b).as_posix()
        if p.startswith(root.rstrip(os.sep) + os.sep):
            rel = p[len(root.rstrip(os.sep)) + 1:].replace(os.sep, "/")
            return Path(b).as_posix().rstrip("/") + "/" + rel
    return Path(path).as_posix()


# Below this many scored rows the sections are computed in this process: forking costs more than
# it saves on a small benchmark (the demo has 1,512 rows).
MIN_ROWS_PARALLEL = 10_000


def run_sections(ctx: ScoreContext, modules: Sequence[Any], progress: Progress | None = None) -> list[SectionResult]:
    """Every module's section, in `modules` order. Sections are independent once the context is
    built: on a big frame they are computed by forked workers (scorer.forked; heaviest first, by
    each module's COST hint), with results identical to a serial run (tested)."""
    default = None if len(ctx.frame) >= MIN_ROWS_PARALLEL else 1
    workers = worker_count(len(modules), default)
    if progress:
        progress("sections" if workers > 1 else f"section {modules[0].NAME}" if modules else "done", 0, len(modules))
    if workers > 1:
        for prepare in dict.fromkeys(getattr(m, "prepare", None) for m in modules):
            if prepare is not None:
                prepare(ctx)  # shared derived data, computed once here and inherited by the workers
        order = sorted(range(len(modules)), key=lambda i: -getattr(modules[i], "COST", 1))
        out = fork_map(lambda mod: mod.build(ctx), modules, workers, order)
    else:
        out = []
        for i, mod in enumerate(modules):
            if progress:
                progress(f"section {mod.NAME}", i, len(modules))
            out.append(mod.build(ctx))
    if progress:
        progress("done", len(modules), len(modules))
    return out


def score(
    bench_path: str | Path,
    run_paths: Sequence[str | Path],
    db: str | Path | None = None,
    options: ScoreOptions | None = None,
    sections: Sequence[str] | None = None,
    lean: bool | None = None,
    allow_outside_root: bool = False,
    progress: Progress | None = None,
) -> Report:
    """Score a benchmark's runs (and annotations). `lean`: None = the lean reader exactly when no
    selected section needs raw rows; True/False force it (True with a raw-needing section is an
    error)."""
    from scorer.errors import UserError

    options = options or ScoreOptions()
    if lean is not False and sections is not None and all(s in LEAN_SECTION_NAMES for s in sections):
        # Known not to need raw rows: read the runs while the section modules (and pandas, a
        # third of a second) load.
        loaded: list = []
        ctx, inputs, warnings = build_context(bench_path, run_paths, db, options, False, allow_outside_root, progress,
                                              meanwhile=lambda: loaded.append(load_sections(sections)))
        mods, missing = loaded[0]
        return _finish(ctx, inputs, warnings, mods, missing, sections, progress)
    mods, missing = load_sections(sections)
    needs_raw = any(getattr(m, "NEEDS_RAW", False) for m in mods)
    if lean is True and needs_raw:
        raise UserError("the lean reader keeps no raw rows, but section(s) "
                        + ", ".join(m.NAME for m in mods if getattr(m, "NEEDS_RAW", False)) + " need them")
    use_raw = needs_raw if lean is None else not lean
    ctx, inputs, warnings = build_context(bench_path, run_paths, db, options, use_raw, allow_outside_root, progress)
    return _finish(ctx, inputs, warnings, mods, missing, sections, progress)


def _finish(ctx: ScoreContext, inputs: dict, warnings: list[str], mods: list[Any], missing: list[SectionResult],
            sections: Sequence[str] | None, progress: Progress | None) -> Report:
    results = run_sections(ctx, mods, progress) + missing
    chosen = {r.name for r in results}
    results += [SectionResult.absent(name, "not selected (--sections)") for name in REQUIRED_SECTIONS
                if sections is not None and name not in chosen]
    order = {m.NAME: i for i, m in enumerate(mods)}
    results.sort(key=lambda r: order.get(r.name, len(order)))
    return Report(inputs=inputs, sections=results, warnings=warnings)


__all__ = [
    "REQUIRED_SECTIONS",
    "SECTION_MODULES",
    "Report",
    "build_context",
    "load_sections",
    "run_sections",
    "score",
]
