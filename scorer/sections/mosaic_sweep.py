"""Report section `mosaic_sweep`: the delivery-budget sweep. Runs that declare a `budget` (and a
`retrieved_full` run without one, as the "full" point) over one `ranking`, per backbone and mode,
loosest budget first: Score and Chain delivered, required-fact coverage (facts delivered) and
recall (facts in the top K retrieved, which a frozen ranking keeps constant), and each point's
paired score drop from the loosest one. A sweep whose runs logged different rankings is flagged."""

from __future__ import annotations

from scorer.metrics.mosaic import budget_key, budget_text, budget_value, mean_n
from scorer.sections import mosaic_runs as mr
from scorer.sections.base import ScoreContext, SectionResult
from scorer.sections.evidence_tables import titled
from scorer.sections.mosaic_ladder import TITLES
from scorer.sections.registry import name_of

NAME = name_of(__name__)
prepare = mr.prepare
SWEEP_TITLES = {**TITLES, "budget": "Budget", "coverage": "Req.-fact coverage", "n_coverage": "n cov.",
                "recall": "Req.-fact recall", "ranking": "Ranking", "drop": "Δ vs loosest", "n_pair": "n pair"}


def sweeps(d: mr.MosaicData) -> dict[tuple[str, str, str], list[tuple]]:
    """(backbone, mode, ranking) → [(budget, group)] loosest first, for sweeps of two points or more."""
    out: dict[tuple[str, str, str], list[tuple]] = {}
    for g, c in sorted(d.conditions.items()):
        if c.budget is None and c.condition != "retrieved_full":
            continue
        out.setdefault((g[0], g[2], c.ranking), []).append((c.budget, g))
    return {k: sorted(v, key=lambda t: (budget_key(t[0]), t[1])) for k, v in out.items() if len(v) >= 2}


def ranking_changes(d: mr.MosaicData, members: list[tuple]) -> int:
    """Items whose logged top-K ranking differs between the sweep's runs."""
    logs = [d.outcomes.get(g, {}) for _, g in members]
    items = set.intersection(*(set(x) for x in logs)) if logs else set()
    n = 0
    for i in items:
        seen = {x[i].retrieved for x in logs if x[i].retrieved is not None}
        n += len(seen) > 1
    return n


def sweep_rows(ctx: ScoreContext, d: mr.MosaicData) -> tuple[list[dict], list[str]]:
    rows, warnings = [], []
    for (backbone, mode, ranking), members in sorted(sweeps(d).items()):
        changed = ranking_changes(d, members)
        if changed:
            warnings.append(f"mosaic_sweep {backbone} ({mode}), ranking {ranking!r}: {changed} item(s) have a "
                            "different logged ranking across the sweep's runs; the sweep is not over one frozen "
                            "ranking")
        first = members[0][1]
        for budget, g in members:
            out = d.outcomes.get(g, {}).values()
            score, n = mean_n(o.score for o in out)
            chain, n_chain = mean_n(None if o.chain is None else float(o.chain) for o in out)
            cov, n_cov = mean_n(o.coverage for o in out)
            rec, n_rec = mean_n(o.recall for o in out)
            pair = mr.paired(ctx, d, first, g) if g != first else None
            rows.append({"backbone": backbone, "mode": mode, "ranking": ranking, "budget": budget_text(budget),
                         "budget_value": budget_value(budget), "run": mr.run_label(d, g), "method": g[1],
                         "n": n, "score": score, "n_chain": n_chain, "chain": chain, "n_coverage": n_cov,
                         "coverage": cov, "recall": rec, "n_recall": n_rec, "ranking_changed_items": changed,
                         "drop": None if pair is None else pair["drop"],
                         "ci_low": None if pair is None else pair["ci_low"],
                         "ci_high": None if pair is None else pair["ci_high"],
                         "n_pair": None if pair is None else pair["n"]})
    return rows, warnings


def build(ctx: ScoreContext) -> SectionResult:
    d = mr.data(ctx)
    rows, warnings = sweep_rows(ctx, d)
    if not rows:
        return SectionResult.absent(NAME, "no two runs over one ranking declare delivery budgets")
    table = titled("sweep", "Delivery-budget sweep (one frozen ranking)",
                   [{**r, "ci": (r["ci_low"], r["ci_high"])} for r in rows],
                   ("backbone", "mode", "ranking", "budget", "run", "n", "score", "n_chain", "chain", "n_coverage",
                    "coverage", "recall", "n_pair", "drop", "ci"),
                   "Only the packer's budget changes. Coverage = required facts delivered / required facts; "
                   "recall = required facts in the top K retrieved. Δ vs loosest = paired score drop from the "
                   "loosest budget. " + mr.note(ctx), SWEEP_TITLES,
                   {"score": "n", "chain": "n_chain", "coverage": "n_coverage", "recall": "n_recall", "drop": "n_pair"})
    return SectionResult(NAME, rows, [table], warnings=warnings)
