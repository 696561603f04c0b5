"""`memscope score` without the command line: build the context, run the chosen sections, record
the inputs.

    report = score("fixtures/demo", ["fixtures/demo/runs"], db="memscope.db")
    report = score(state.bench, state.runs)   # a Benchmark and Run objects already loaded (the app)
    report.json_data()                        # what report.json holds

The modules, each one step (each imports only those before it):
    frame_checks  what may be published: judge / BLEU-1 ranges and scales, partial rotations,
                  question mismatches, non-finite numbers (withheld values, warnings, a record)
    inputs        the inputs record: files and their sha256, options, versions
    annotations   the annotation store's current state as one frame
    scored        the joined frame scored (DESIGN §5): checks, answer scores, duplicates, families
    context       benchmark and runs (paths or loaded) → the scored ScoreContext and its inputs
    result        Report: the inputs, one SectionResult per section, warnings; `json_data()`
    run           the sections over a context, in forked workers on big frames
    pipeline      `score`: sections from the registry (scorer.sections.registry), the reader they
                  need (runs read while the section modules import), the report in order
"""

from scorer.scoring.context import build_context
from scorer.scoring.pipeline import score
from scorer.scoring.result import Report
from scorer.scoring.run import run_sections

__all__ = ["Report", "build_context", "run_sections", "score"]
