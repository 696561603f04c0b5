"""Sections of a score report. scorer.sections.registry lists them (name, module, whether they read
raw rows, cost), in report order; each module defines `build(ctx) -> SectionResult`
(scorer.sections.base) and takes its NAME from the registry.

scorer.scoring runs them; report renderers turn their tables into Markdown, CSV, LaTeX and JSON. A
section whose data is absent returns `SectionResult.absent(NAME, reason)`.
"""
