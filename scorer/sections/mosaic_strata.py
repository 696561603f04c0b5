"""Report section `mosaic_strata`: the ladder's paired drops by required modality (image, video,
audio) and by challenge (fine attribute … prosody). Strata overlap: an item is in every stratum its
required facts name. n per stratum, a flag where it holds fewer than SMALL_STRATUM items; the
comparisons are exploratory (no multiple-comparison correction, as MOSAIC reports them)."""

from __future__ import annotations

from scorer.metrics.mosaic_labels import CONDITION_TITLES, DROPS, SMALL_STRATUM
from scorer.model import CHAIN_CHALLENGES
from scorer.sections import mosaic_runs as mr
from scorer.sections.base import ScoreContext, SectionResult
from scorer.sections.evidence_tables import titled
from scorer.sections.mosaic_ladder import TITLES, shown_ci
from scorer.sections.registry import name_of

NAME = name_of(__name__)
prepare = mr.prepare
MODALITIES = ("image", "video", "audio")
STRATA = (("modality", MODALITIES), ("challenge", CHAIN_CHALLENGES))


def strata_rows(ctx: ScoreContext, d: mr.MosaicData, ladders: dict) -> list[dict]:
    rows = []
    for (backbone, mode), rungs in sorted(ladders.items()):
        drops = [(name, title, upper, lower) for name, title, upper, lower in DROPS if upper in rungs and lower in rungs]
        for kind, values in STRATA:
            for v in values:
                if kind == "modality":
                    keep = lambda o, v=v: v in o.modalities  # noqa: E731
                else:
                    keep = lambda o, v=v: v in o.challenges  # noqa: E731
                got = mr.paired_many(ctx, d, [(rungs[u], rungs[lo]) for _, _, u, lo in drops], keep)
                for (name, title, upper, lower), fields in zip(drops, got):
                    if fields is None:
                        continue
                    rows.append({"backbone": backbone, "mode": mode, "drop_name": name, "title": title,
                                 "upper": upper, "lower": lower,
                                 "pair": f"{CONDITION_TITLES[upper]} → {CONDITION_TITLES[lower]}",
                                 "stratum_kind": kind, "stratum": v, **fields,
                                 "small": fields["n"] < SMALL_STRATUM, "exploratory": True})
    order = {name: i for i, (name, *_) in enumerate(DROPS)}
    kinds = {kind: i for i, (kind, _) in enumerate(STRATA)}
    values = {v: i for _, vs in STRATA for i, v in enumerate(vs)}
    rows.sort(key=lambda r: (r["backbone"], r["mode"], kinds[r["stratum_kind"]], order[r["drop_name"]],
                             values[r["stratum"]]))
    return rows


def build(ctx: ScoreContext) -> SectionResult:
    d = mr.data(ctx)
    ladders, _ = mr.ladders(d)
    if not ladders:
        return SectionResult.absent(NAME, "no run declares a MOSAIC condition")
    rows = strata_rows(ctx, d, ladders)
    if not rows:
        return SectionResult.absent(NAME, "no ladder pair shares answerable items with a modality or challenge")
    small = [r for r in rows if r["small"]]
    warnings = []
    if small:
        warnings.append(f"mosaic_strata: {len(small)} of {len(rows)} stratum comparisons have fewer than "
                        f"{SMALL_STRATUM} items (smallest n = {min(r['n'] for r in small)}); read them as "
                        "underpowered")
    tables = []
    for kind, heading in (("modality", "by required modality"), ("challenge", "by challenge")):
        part = [{**shown_ci(r), "flag": "small" if r["small"] else ""} for r in rows if r["stratum_kind"] == kind]
        if part:
            tables.append(titled(f"drops_by_{kind}", f"Paired drops {heading} (exploratory)", part,
                                 ("backbone", "mode", "title", "stratum", "n", "flag", "mean_a", "mean_b", "drop",
                                  "ci", "wins", "ties", "losses", "chain_drop", "n_chain"),
                                 f"Overlapping strata: an item counts in every {kind} its required facts carry. "
                                 f"small = fewer than {SMALL_STRATUM} items. {mr.EXPLORATORY} "
                                 + mr.note(ctx, clustered=False),
                                 {**TITLES, "stratum": kind.capitalize(), "flag": "Flag"}, mr.DROP_N))
    return SectionResult(NAME, rows, tables, warnings=warnings)
