"""Running the chosen sections over a built context, in report order: in this process, or on a
big frame in this process and forked workers (scorer.forked.fork_staged), heaviest first by the
registry's cost, with results identical to a serial run (tested)."""

from __future__ import annotations

from collections.abc import Callable, Sequence

from scorer.forked import fork_staged, gc_paused, worker_count
from scorer.metrics.resample import one_blas_thread
from scorer.sections.base import ScoreContext, SectionResult
from scorer.sections.registry import Section

Progress = Callable[[str, int, int], None]  # (stage description, done, total)

# Below this many scored rows the sections are computed in this process: forking costs more than
# it saves on a small benchmark (the demo has 1,512 rows).
MIN_ROWS_PARALLEL = 10_000


Encode = Callable[[object], bytes]  # a section's data → its text in the report file (scorer.report.jsonfile.section_text)


def run_sections(ctx: ScoreContext, sections: Sequence[Section],
                 progress: Progress | None = None) -> list[SectionResult]:
    """Every section's result, in `sections` order. Sections are independent once the context is
    built; each module's optional `prepare(ctx)` (shared derived data) runs in this process, once,
    before that module's section (forked processes that run such sections are forked after it and
    inherit what it computed; the other sections start meanwhile)."""
    return [r for r, _ in run_sections_encoded(ctx, sections, None, progress)]


def run_sections_encoded(ctx: ScoreContext, sections: Sequence[Section], encode: Encode | None,
                         progress: Progress | None = None) -> list[tuple[SectionResult, bytes | None]]:
    """run_sections, each result with `encode(result.data)` (None without `encode`), encoded in the
    process that built it: a forked process's sections are encoded there while the others are
    built, not one after another by the writer at the end."""
    with gc_paused():  # sections build acyclic results; the collector would rescan what they read
        return _run_sections(ctx, sections, progress, encode)


def _run_sections(ctx: ScoreContext, sections: Sequence[Section], progress: Progress | None,
                  encode: Encode | None) -> list[tuple[SectionResult, bytes | None]]:
    modules = [s.load() for s in sections]
    default = None if len(ctx.frame) >= MIN_ROWS_PARALLEL else 1
    workers = worker_count(len(sections), default)
    if progress:
        progress("sections" if workers > 1 else f"section {sections[0].name}" if sections else "done", 0, len(sections))
    if workers > 1:
        # Sections that neither have a `prepare` nor read the joined rows (decoded when first read)
        # start in a forked process at once while this one prepares the shared data; the others run
        # here and in processes forked after it, which inherit it.
        prepares = [p for p in dict.fromkeys(getattr(m, "prepare", None) for m in modules) if p is not None]
        order = sorted(range(len(sections)), key=lambda i: -sections[i].cost)
        waits = [getattr(m, "prepare", None) is not None or s.evidence for s, m in zip(sections, modules)]
        later = [i for i in order if waits[i]]
        first = [i for i in order if not waits[i]]

        def stage() -> None:
            for prepare in prepares:
                prepare(ctx)

        out = fork_staged(lambda mod: _built(mod, ctx, encode), modules, workers, first, later, stage)
    else:
        out = []
        with one_blas_thread():  # as fork_staged runs each process: values independent of the cores
            for i, (section, mod) in enumerate(zip(sections, modules)):
                if progress:
                    progress(f"section {section.name}", i, len(sections))
                out.append(_built(mod, ctx, encode))
    if progress:
        progress("done", len(sections), len(sections))
    return out


def _built(module, ctx: ScoreContext, encode: Encode | None) -> tuple[SectionResult, bytes | None]:
    result = module.build(ctx)
    return result, None if encode is None else encode(result.data)
