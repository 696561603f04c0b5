"""Report section `mosaic_ladder`: MOSAIC's write→retrieve→deliver→read ladder. Per backbone and
mode, one row per declared condition (scorer.load.conditions) with Score and Chain delivered as
two columns (answerable items, n beside each), then the paired drops between neighbouring rungs
(scorer.metrics.mosaic_labels.DROPS) with the item-bootstrap 95% CI, win/tie/loss and the
cluster-bootstrap CI as a sensitivity check."""

from __future__ import annotations

from scorer.metrics.mosaic import mean_n
from scorer.metrics.mosaic_labels import CONDITION_NAMES, CONDITION_TITLES, DROPS
from scorer.sections import mosaic_runs as mr
from scorer.sections.base import ScoreContext, SectionResult
from scorer.sections.evidence_tables import titled
from scorer.sections.registry import name_of

NAME = name_of(__name__)
prepare = mr.prepare
TITLES = {
    "condition": "Condition", "stage": "Stage", "run": "Run", "n": "n", "score": "Score", "n_chain": "n Chain",
    "chain": "Chain", "title": "Drop", "pair": "Upper → lower", "mean_a": "Score upper", "mean_b": "Score lower",
    "drop": "Δ drop", "ci": "95% CI", "cluster_ci": "Cluster 95% CI", "n_clusters": "n clusters", "wins": "W",
    "ties": "T", "losses": "L", "chain_drop": "Δ Chain", "backbone": "Backbone", "mode": "Mode",
}


def ladder_rows(d: mr.MosaicData, ladders: dict) -> list[dict]:
    rows = []
    for (backbone, mode), rungs in sorted(ladders.items()):
        for c in CONDITION_NAMES:
            g = rungs.get(c)
            if g is None:
                continue
            out = d.outcomes.get(g, {})
            score, n = mean_n(o.score for o in out.values())
            chain, n_chain = mean_n(None if o.chain is None else float(o.chain) for o in out.values())
            rows.append({"backbone": backbone, "mode": mode, "condition": c, "title": CONDITION_TITLES[c],
                         "stage": d.conditions[g].stage, "run": mr.run_label(d, g), "method": g[1],
                         "n": n, "score": score, "n_chain": n_chain, "chain": chain})
    return rows


def drop_rows(ctx: ScoreContext, d: mr.MosaicData, ladders: dict) -> list[dict]:
    rows = []
    for (backbone, mode), rungs in sorted(ladders.items()):
        for name, title, upper, lower in DROPS:
            if upper not in rungs or lower not in rungs:
                continue
            fields = mr.paired(ctx, d, rungs[upper], rungs[lower])
            if fields is None:
                continue
            rows.append({"backbone": backbone, "mode": mode, "drop_name": name, "title": title, "upper": upper,
                         "lower": lower, "pair": f"{CONDITION_TITLES[upper]} → {CONDITION_TITLES[lower]}",
                         **fields})
    return rows


def shown_ci(r: dict) -> dict:
    return {**r, "ci": (r["ci_low"], r["ci_high"]), "cluster_ci": (r["cluster_ci_low"], r["cluster_ci_high"])}


def build(ctx: ScoreContext) -> SectionResult:
    d = mr.data(ctx)
    ladders, warnings = mr.ladders(d)
    if not ladders:
        return SectionResult.absent(NAME, "no run declares a MOSAIC condition (metrics.json/config.json "
                                          "`condition`, or --conditions FILE)")
    ladder = ladder_rows(d, ladders)
    drops = drop_rows(ctx, d, ladders)
    shown = [{**r, "condition": r["title"]} for r in ladder]
    tables = [titled("ladder", "Write → retrieve → deliver → read ladder", shown,
                     ("backbone", "mode", "condition", "stage", "run", "n", "score", "n_chain", "chain"),
                     "Score = MCQ EM / open judge, Chain = complete chain delivered (share of items whose run "
                     "logged delivery): two different measures, never interchangeable. Answerable items only; "
                     "n beside each value.", TITLES, {"score": "n", "chain": "n_chain"})]
    if drops:
        tables.append(titled("drops", "Paired drops between rungs", [shown_ci(r) for r in drops],
                             ("backbone", "mode", "title", "pair", "n", "mean_a", "mean_b", "drop", "ci",
                              "wins", "ties", "losses", "cluster_ci", "n_clusters", "chain_drop", "n_chain"),
                             "Δ drop = mean(score upper − score lower). " + mr.note(ctx), TITLES,
                             {**mr.DROP_N, "cluster_ci": "n_clusters"}, {"cluster_ci": "drop"}))
    return SectionResult(NAME, {"ladder": ladder, "drops": drops}, tables, warnings=[*d.warnings, *warnings])
