"""Report section `mosaic_carriers`: within-item carrier interventions (image → OCR text / object
text / spatial description; video → ordered / shuffled frames / event description; audio →
transcript / + gold prosody tag / + reversed tag), each paired against native on the answerable
items with a required fact of that modality, overall and by that modality's challenges.
Δ = mean(score native − score variant): what replacing the carrier costs. The native side is the
run declaring `<modality>:native`, else the backbone's and mode's `gold_native` run."""

from __future__ import annotations

from scorer.metrics.mosaic_labels import CARRIERS, MODALITY_CHALLENGES, NATIVE, SMALL_STRATUM
from scorer.sections import mosaic_runs as mr
from scorer.sections.base import ScoreContext, SectionResult
from scorer.sections.evidence_tables import titled
from scorer.sections.mosaic_ladder import TITLES, shown_ci
from scorer.sections.registry import name_of

NAME = name_of(__name__)
prepare = mr.prepare
CARRIER_TITLES = {**TITLES, "modality": "Modality", "variant": "Variant", "native_run": "Native run",
                  "stratum": "Stratum", "flag": "Flag", "mean_a": "Score native", "mean_b": "Score variant",
                  "drop": "Δ native − variant"}


def native_runs(d: mr.MosaicData) -> dict[tuple[str, str, str], mr.Group]:
    out: dict[tuple[str, str, str], mr.Group] = {}
    for g, c in sorted(d.conditions.items()):
        if c.carrier_variant == NATIVE:
            out.setdefault((g[0], g[2], c.carrier_modality), g)
    for g, c in sorted(d.conditions.items()):
        if c.condition == "gold_native":
            for m in CARRIERS:
                out.setdefault((g[0], g[2], m), g)
    return out


def carrier_rows(ctx: ScoreContext, d: mr.MosaicData) -> tuple[list[dict], list[str]]:
    natives = native_runs(d)
    rows, warnings = [], []
    todo: dict[tuple[str, str, str], list[tuple[mr.Group, mr.Group, str]]] = {}  # (backbone, mode, modality)
    for g, c in sorted(d.conditions.items()):
        if c.carrier is None or c.carrier_variant == NATIVE:
            continue
        m = c.carrier_modality
        base = natives.get((g[0], g[2], m))
        if base is None:
            warnings.append(f"mosaic_carriers: {g[0]}/{g[1]} ({g[2]}) declares carrier {c.carrier} but no run of "
                            f"that backbone and mode is {m}:native or gold_native")
            continue
        todo.setdefault((g[0], g[2], m), []).append((base, g, c.carrier_variant))
    for (_, _, m), runs in todo.items():
        for ch in ("all", *MODALITY_CHALLENGES[m]):
            if ch == "all":
                keep = lambda o, m=m: m in o.modalities  # noqa: E731
            else:
                keep = lambda o, m=m, ch=ch: m in o.modalities and ch in o.challenges  # noqa: E731
            got = mr.paired_many(ctx, d, [(base, g) for base, g, _ in runs], keep)
            for (base, g, variant), fields in zip(runs, got):
                if fields is None:
                    continue
                rows.append({"backbone": g[0], "mode": g[2], "modality": m, "variant": variant,
                             "run": mr.run_label(d, g), "method": g[1], "native_run": mr.run_label(d, base),
                             "stratum": ch, **fields, "small": fields["n"] < SMALL_STRATUM})
    strata = {m: ("all", *chs) for m, chs in MODALITY_CHALLENGES.items()}
    rows.sort(key=lambda r: (r["backbone"], r["mode"], list(CARRIERS).index(r["modality"]),
                             CARRIERS[r["modality"]].index(r["variant"]), strata[r["modality"]].index(r["stratum"])))
    return rows, warnings


def build(ctx: ScoreContext) -> SectionResult:
    d = mr.data(ctx)
    rows, warnings = carrier_rows(ctx, d)
    if not rows:
        return SectionResult.absent(NAME, "no run declares a carrier variant paired with a native run")
    shown = [{**shown_ci(r), "flag": "small" if r["small"] else ""} for r in rows]
    table = titled("carriers", "Carrier interventions, paired against native", shown,
                   ("backbone", "mode", "modality", "variant", "native_run", "stratum", "n", "flag", "mean_a",
                    "mean_b", "drop", "ci", "wins", "ties", "losses"),
                   "Items with a required fact of the modality (stratum: all, then each of the modality's challenges, "
                   f"overlapping; small = fewer than {SMALL_STRATUM} items; challenge rows are exploratory, no "
                   "multiple-comparison correction). Δ = mean(score native − score variant). "
                   + mr.note(ctx, clustered=False),
                   CARRIER_TITLES)
    return SectionResult(NAME, rows, [table], warnings=warnings)
