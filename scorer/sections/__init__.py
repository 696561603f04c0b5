"""Sections of a score report. Each module defines NAME and `build(ctx) -> SectionResult`.

scorer.scoring runs them in SECTION_MODULES order; report renderers turn their tables into
Markdown, CSV, LaTeX and JSON. A section whose data is absent returns `SectionResult.absent(reason)`.
"""
