"""The one table of report sections: name, module, title, whether it reads the raw rows, cost.

Everything that names sections reads it: scorer.scoring (which sections `--sections` selects, which
reader the runs need, which modules to import, in what order workers take them, which keys
report.json always has), the renderers (titles) and, through `score(…, sections=…)`, the app's
Scores screen. Importing
this module imports no section, so `score` chooses the reader from here and reads the runs while
the chosen section modules import.

A section module defines `build(ctx) -> SectionResult` (scorer.sections.base), and optionally
`prepare(ctx)`: derived data several sections share, computed once before the sections are
forked. It takes its name from here: `NAME = name_of(__name__)`.
"""

from __future__ import annotations

import importlib
from collections.abc import Iterable
from dataclasses import dataclass
from types import ModuleType

from scorer.errors import UserError


@dataclass(frozen=True)
class Section:
    name: str  # the key in report.json, the `--sections` name
    module: str  # where `build(ctx)` is
    title: str  # the heading renderers give it
    raw: bool = False  # reads the raw upstream rows (ctx.runs[i].predictions): runs need the full reader
    evidence: bool = False  # reads the joined records (evidence_records.collect): the lean reader keeps their fields
    cost: int = 1  # relative run time (about 10 ms a unit at MemEye and MOSAIC scale): heavier sections start first in parallel
    required: bool = False  # report.json always has it (DESIGN §6), as {"value": null, "reason": …} if absent

    def load(self) -> ModuleType:
        """The section's module. One listed here but missing from the install is an error, never
        a quietly absent section."""
        try:
            return importlib.import_module(self.module)
        except ModuleNotFoundError as err:
            if err.name != self.module:
                raise
            raise ImportError(f"report section {self.name!r}: module {self.module} is missing from this "
                              "install (scorer/sections/registry.py lists it)", name=self.module) from err


_S = "scorer.sections."
# In report order.
SECTIONS: tuple[Section, ...] = (
    Section("matrix", _S + "matrix", "Evaluation matrix", cost=12, required=True),
    Section("position_bias", _S + "position", "MCQ position bias", cost=3),
    Section("agreement", _S + "agreement", "Agreement", cost=6, required=True),
    Section("oracle", _S + "oracle", "Human oracle accuracy", required=True, cost=1),
    Section("bootstrap", _S + "bootstrap", "Paired comparisons", cost=1),
    Section("caption_proof", _S + "caption_proof", "Caption-proof gain", cost=30),
    Section("evidence", _S + "evidence", "Evidence diagnostics", evidence=True, required=True, cost=10),  # retrieved, delivered
    Section("evidence_curve", _S + "evidence_curve", "Recall@K curve", evidence=True, cost=2),  # ranked retrieved lists
    Section("recency", _S + "recency", "Recency counterfactual", evidence=True, cost=7),  # ranked lists, re-ranked
    Section("delivery", _S + "delivery", "Delivery and chains", evidence=True, cost=20),  # retrieved, delivered
    Section("abstention", _S + "abstention", "Abstention", evidence=True, required=True, cost=30),  # each rotation's choice
    Section("oracle_evidence", _S + "oracle_evidence", "Oracle-evidence validation", cost=5),
    Section("gates", _S + "gates", "Validation gates", evidence=True, cost=2),  # per-rotation results
    # MOSAIC's paired diagnosis (runs' declared conditions; the joined records' retrieved and delivered for Chain)
    Section("mosaic_ladder", _S + "mosaic_ladder", "MOSAIC ladder: write → retrieve → deliver → read", evidence=True,
            cost=50),
    Section("mosaic_strata", _S + "mosaic_strata", "MOSAIC drops by modality and challenge", evidence=True, cost=25),
    Section("mosaic_sweep", _S + "mosaic_sweep", "MOSAIC delivery-budget sweep", evidence=True, cost=7),
    Section("mosaic_carriers", _S + "mosaic_carriers", "MOSAIC carrier interventions", evidence=True, cost=9),
    Section("mosaic_composition", _S + "mosaic_composition", "MOSAIC benchmark composition", cost=1),
)
NAMES: tuple[str, ...] = tuple(s.name for s in SECTIONS)
REQUIRED: tuple[str, ...] = tuple(s.name for s in SECTIONS if s.required)
_BY_NAME = {s.name: s for s in SECTIONS}
_BY_MODULE = {s.module: s for s in SECTIONS}


def select(names: Iterable[str] | None = None) -> tuple[Section, ...]:
    """The named sections in report order (every section for None). An unknown name is a
    one-line error that lists the known ones."""
    if names is None:
        return SECTIONS
    wanted = list(dict.fromkeys(names))
    unknown = [n for n in wanted if n not in _BY_NAME]
    if unknown:
        raise UserError(f"unknown report section(s): {', '.join(unknown)} (known: {', '.join(NAMES)})")
    return tuple(s for s in SECTIONS if s.name in wanted)


def title_of(name: str) -> str:
    """A section's heading (a name not registered, e.g. from an old report, made readable)."""
    s = _BY_NAME.get(name)
    return s.title if s is not None else name.replace("_", " ").replace("-", " ").capitalize()


def name_of(module: str) -> str:
    """A section module's name (call with `__name__`)."""
    try:
        return _BY_MODULE[module].name
    except KeyError:
        raise LookupError(f"{module} is not a report section in scorer/sections/registry.py") from None
