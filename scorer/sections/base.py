"""The interface between score sections, the pipeline (scorer.scoring) and the renderers."""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any, Mapping, Sequence

from scorer.metrics.constants import DEFAULT_K, DEFAULT_RESAMPLES, DEFAULT_SEED
from scorer.model import Benchmark, Run
from scorer.names import DEFAULT_DISPLAY_NAMES, DEFAULT_FAMILIES, DEFAULT_REFERENCES

if TYPE_CHECKING:  # pandas costs half a second to import: not for `memscope --help`
    import pandas as pd


@dataclass(frozen=True)
class ScoreOptions:
    seed: int = DEFAULT_SEED
    resamples: int = DEFAULT_RESAMPLES
    k: int = DEFAULT_K
    judge_levels: int = 5  # 3 reproduces the upstream runner's {0, .5, 1} coercion
    compare: tuple[tuple[str, str], ...] = ()  # --compare A:B pairs (run or display names)
    clustered: bool = False  # resample clusters (persona/conversation) instead of items
    study: str | None = None  # restrict annotations to one study
    names: Mapping[str, str] = field(default_factory=lambda: dict(DEFAULT_DISPLAY_NAMES))
    families: Mapping[str, str] = field(default_factory=lambda: dict(DEFAULT_FAMILIES))  # method/display → family
    references: frozenset[str] = DEFAULT_REFERENCES  # reference baselines: shown, not marked
    mark_all: bool = False  # mark best/second among reference baselines too
    rotations: str = "item"  # one of scorer.model.ROTATION_RULES
    judge_scale: tuple[float, float] | None = None  # --judge-scale MIN-MAX: recorded judge scores rescaled to [0, 1]
    recompute_text_metrics: bool = False  # BLEU-1 / F1 / exact / contains from pred and gt, not as recorded
    extra: Mapping[str, Any] = field(default_factory=dict)  # section-specific options (e.g. stage pairs)


@dataclass(frozen=True)
class ScoreContext:
    bench: Benchmark
    runs: Sequence[Run]
    frame: pd.DataFrame  # scorer.load.frame.predictions_frame(bench, runs)
    annotations: pd.DataFrame | None  # current annotation state from the store, or None without --db
    options: ScoreOptions
    # Derived data several sections share (e.g. the evidence records), computed once per context;
    # filled before sections are forked, so that workers inherit it. See scorer.scoring.run.
    memo: dict[str, Any] = field(default_factory=dict, compare=False, repr=False)


@dataclass(frozen=True)
class Table:
    """One rendered table: rows are flat dicts; `columns` fixes their order and which are shown.

    `n_for` says which n column counts a value column (value heading → n heading, or None for a
    value no n counts: a count itself, a difference of two means). The long CSV takes a value's n
    from it before any rule of column order (scorer.report.csvlong); a table with more than one n
    column declares every value column there that no "n <suffix>" names. `ci_rows` names a value's
    second interval (interval heading → value heading: a cluster bootstrap's beside the item one):
    in the long CSV it is a row of its own, measure "<value> (<interval>)", with the n `n_for` gives
    the interval."""

    name: str
    title: str
    rows: Sequence[Mapping[str, Any]]
    columns: Sequence[str]
    note: str = ""
    n_for: Mapping[str, str | None] = field(default_factory=dict)
    ci_rows: Mapping[str, str] = field(default_factory=dict)


@dataclass(frozen=True)
class SectionResult:
    name: str
    data: Any  # what report.json holds under `name`: a list of flat rows, or a dict of such lists
    tables: Sequence[Table] = ()
    reason: str | None = None  # set when the section's data is absent
    warnings: Sequence[str] = ()

    @classmethod
    def absent(cls, name: str, reason: str) -> "SectionResult":
        return cls(name=name, data={"value": None, "reason": reason}, reason=reason)
