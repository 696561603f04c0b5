"""A score report as `score` returns it: the inputs record, one SectionResult per section, warnings.
`json_data()` is what report.json holds; every renderer (scorer.report) reads a Report."""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

from scorer.sections.base import SectionResult
from scorer.sections.registry import REQUIRED


@dataclass
class Report:
    inputs: dict
    sections: list[SectionResult]
    warnings: list[str] = field(default_factory=list)
    # Section name → its data's text in report.json (scorer.report.jsonfile.section_text), for the
    # sections encoded where they were built (`score(..., encode=...)`); the writer encodes the rest.
    texts: dict[str, bytes] = field(default_factory=dict)

    def section(self, name: str) -> SectionResult | None:
        return next((s for s in self.sections if s.name == name), None)

    def json_data(self) -> dict:
        out: dict[str, Any] = {"inputs": self.inputs}
        for s in self.sections:
            out[s.name] = s.data
        # The keys report.json always has (DESIGN §6); `score` lists each, a Report built otherwise may not.
        for name in REQUIRED:
            out.setdefault(name, {"value": None, "reason": "not computed for this report"})
        out["warnings"] = list(self.warnings) + [f"{s.name}: {w}" for s in self.sections for w in s.warnings]
        return out
