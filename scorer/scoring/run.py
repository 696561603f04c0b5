"""Running the chosen sections over a built context, in report order: in this process, or on a
big frame in forked workers (scorer.forked), heaviest first by the registry's cost, with results
identical to a serial run (tested)."""

from __future__ import annotations

from collections.abc import Callable, Sequence

from scorer.forked import fork_map, worker_count
from scorer.sections.base import ScoreContext, SectionResult
from scorer.sections.registry import Section

Progress = Callable[[str, int, int], None]  # (stage description, done, total)

# Below this many scored rows the sections are computed in this process: forking costs more than
# it saves on a small benchmark (the demo has 1,512 rows).
MIN_ROWS_PARALLEL = 10_000


def run_sections(ctx: ScoreContext, sections: Sequence[Section],
                 progress: Progress | None = None) -> list[SectionResult]:
    """Every section's result, in `sections` order. Sections are independent once the context is
    built; each module's optional `prepare(ctx)` (shared derived data) runs here first, once, so
    that forked workers inherit what it computed."""
    modules = [s.load() for s in sections]
    default = None if len(ctx.frame) >= MIN_ROWS_PARALLEL else 1
    workers = worker_count(len(sections), default)
    if progress:
        progress("sections" if workers > 1 else f"section {sections[0].name}" if sections else "done", 0, len(sections))
    if workers > 1:
        for prepare in dict.fromkeys(getattr(m, "prepare", None) for m in modules):
            if prepare is not None:
                prepare(ctx)
        order = sorted(range(len(sections)), key=lambda i: -sections[i].cost)
        out = fork_map(lambda mod: mod.build(ctx), modules, workers, order)
    else:
        out = []
        for i, (section, mod) in enumerate(zip(sections, modules)):
            if progress:
                progress(f"section {section.name}", i, len(sections))
            out.append(mod.build(ctx))
    if progress:
        progress("done", len(sections), len(sections))
    return out
