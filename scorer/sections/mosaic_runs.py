"""What the MOSAIC sections share: each run group's declared condition (scorer.load.conditions) and
its per-item outcomes on answerable items — answer score, complete-chain delivery, required-fact
coverage (facts delivered) and recall (facts retrieved, top K), cluster, and the item's strata (the
modalities and challenges of its required facts). Computed once per context (`prepare`).
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any, Callable, Mapping

import numpy as np

from scorer.errors import DataError
from scorer.load.conditions import Condition, declared, parse
from scorer.metrics.delivery import chain_status
from scorer.metrics.evidence import fact_modality, item_evidence
from scorer.metrics.mosaic import paired_drop, paired_drops, strata_of
from scorer.names import display_name
from scorer.sections.base import ScoreContext
from scorer.sections.evidence_records import by_group, collect

Group = tuple[str, str, str]  # (backbone, method, mode)
# the n of each value of a paired-drop row (scorer.sections.mosaic_ladder / mosaic_strata tables)
DROP_N = {"mean_a": "n", "mean_b": "n", "drop": "n", "wins": "n", "ties": "n", "losses": "n", "chain_drop": "n_chain"}
EXPLORATORY = ("Strata are exploratory: one CI per stratum, no correction for multiple comparisons "
               "(as MOSAIC reports them).")


@dataclass(frozen=True)
class Outcome:
    score: float
    chain: bool | None  # complete chain delivered (None: delivery not logged)
    coverage: float | None  # required facts delivered / required facts
    recall: float | None  # required facts in the top K retrieved / required facts
    retrieved: tuple[str, ...] | None  # the top K, to check that a sweep shares one ranking
    cluster: str
    modalities: frozenset[str]
    challenges: frozenset[str]


@dataclass(frozen=True)
class MosaicData:
    conditions: Mapping[Group, Condition]
    outcomes: Mapping[Group, Mapping[str, Outcome]]  # item id → outcome, answerable and scored only
    displays: Mapping[Group, str]
    warnings: tuple[str, ...]


def _file_conditions(ctx: ScoreContext) -> dict[str, Condition]:
    given = (ctx.options.extra or {}).get("conditions") or {}
    source = (ctx.options.extra or {}).get("conditions_file") or "--conditions"
    return {k: parse(v, str(source), repr(k)) for k, v in given.items()}


def _conditions(ctx: ScoreContext) -> tuple[dict[Group, Condition], list[str]]:
    from_file = _file_conditions(ctx)
    out: dict[Group, Condition] = {}
    warnings: list[str] = []
    for run in ctx.runs:
        group = (run.backbone, run.method, run.mode)
        cond = from_file.get(run.key)
        if cond is None:
            try:
                cond = declared(run.folder, run.config, run.metrics)
            except DataError as err:
                warnings.append(f"{err} (run left out of the MOSAIC tables)")
                continue
        if cond is None:
            continue
        prev = out.get(group)
        if prev is not None and (prev.condition, prev.budget, prev.carrier, prev.ranking) != (
                cond.condition, cond.budget, cond.carrier, cond.ranking):
            warnings.append(f"{run.key} ({run.mode}): {cond.source} declares a different condition than "
                            f"{prev.source}; the first is used")
            continue
        out.setdefault(group, cond)
    keys = {run.key for run in ctx.runs}
    unused = sorted(k for k in from_file if k not in keys)
    if unused:
        source = (ctx.options.extra or {}).get("conditions_file") or "--conditions"
        warnings.append(f"{source}: {len(unused)} run key(s) match no run read: {', '.join(unused[:5])}"
                        + (" …" if len(unused) > 5 else ""))
    return out, warnings


def _outcomes(ctx: ScoreContext, conditions: Mapping[Group, Condition]
              ) -> tuple[dict[Group, dict[str, Outcome]], dict[Group, str]]:
    records, _ = collect(ctx)
    k = ctx.options.k
    out: dict[Group, dict[str, Outcome]] = {}
    displays: dict[Group, str] = {}
    for group, recs in by_group(records).items():
        cond = conditions.get(group)
        if cond is None:
            continue
        # what was retrieved matters on the sweep only (recall, one frozen ranking): the other runs'
        # rankings are not parsed; their chain and coverage read `delivered`, as item_evidence does
        ranked = cond.budget is not None or cond.condition == "retrieved_full"
        displays[group] = recs[0].display
        items: dict[str, Outcome] = {}
        for r in recs:
            if not r.item.answerable or r.score is None or r.score != r.score:
                continue
            if ranked:
                ev = item_evidence(r.task, r.item, r.prediction, k)
                s, facts, retrieved = ev.chain, ev.facts, ev.retrieved
            else:
                facts = tuple(f for f in r.item.chain if r.task.has_round(f.round_id))
                s, retrieved = chain_status([f.round_id for f in facts], None, r.prediction.delivered), None
            mods, chs = strata_of((f.modality or fact_modality(r.task, f.round_id), f.challenge) for f in facts)
            coverage = None if s.n_delivered is None or not s.n_facts else s.n_delivered / s.n_facts
            items[r.item.item_id] = Outcome(float(r.score), s.chain_delivered, coverage, s.required_fact_recall,
                                            retrieved, r.cluster, mods, chs)
        out[group] = items
    return out, displays


def data(ctx: ScoreContext) -> MosaicData:
    hit = ctx.memo.get("mosaic")
    if hit is None:
        conditions, warnings = _conditions(ctx)
        # no run declares a condition (every MemEye report): the joined records are not even built
        outcomes, displays = _outcomes(ctx, conditions) if conditions else ({}, {})
        for g in conditions:
            displays.setdefault(g, display_name(g[1], ctx.options.names))
        hit = ctx.memo["mosaic"] = MosaicData(conditions, outcomes, displays, tuple(warnings))
    return hit


def prepare(ctx: ScoreContext) -> None:
    data(ctx)


def run_label(d: MosaicData, g: Group) -> str:
    return d.displays.get(g, g[1])


def ci_fields(prefix: str, ci: Any) -> dict[str, Any]:
    if ci is None:
        return {f"{prefix}ci_low": None, f"{prefix}ci_high": None}
    return {f"{prefix}ci_low": ci.ci_low, f"{prefix}ci_high": ci.ci_high}


def note(ctx: ScoreContext, clustered: bool = True) -> str:
    o = ctx.options
    return (f"Answerable items only; paired on the items both runs scored. 95% CI: percentile, {o.resamples:,} "
            f"resamples of items, seed {o.seed}"
            + ("; cluster CI: the same resampling clusters (personas), a sensitivity check" if clustered else "")
            + ". W/T/L: items where the upper run scores higher / the same / lower.")


def paired(ctx: ScoreContext, d: MosaicData, upper: Group, lower: Group,
           keep: Callable[[Outcome], bool] | None = None, clustered: bool = True) -> dict[str, Any] | None:
    """Row fields of the paired drop upper − lower (score, with CIs and W/T/L; chain, point only) on
    the answerable items both scored (and `keep` accepts), or None when they share none. The
    cluster-bootstrap CI (sensitivity) only when `clustered`: the strata and carrier tables, which
    hold hundreds of comparisons, give the item CI alone."""
    a, b = d.outcomes.get(upper, {}), d.outcomes.get(lower, {})
    common = [i for i in a if i in b and (keep is None or keep(a[i]))]
    if not common:
        return None
    o = ctx.options
    res = paired_drop([a[i].score for i in common], [b[i].score for i in common],
                      [a[i].cluster for i in common] if clustered else None, o.resamples, o.seed)
    chain = [(a[i].chain, b[i].chain) for i in common if a[i].chain is not None and b[i].chain is not None]
    return {"n": len(common), "mean_a": res.items.mean_a, "mean_b": res.items.mean_b, "drop": res.items.estimate,
            **ci_fields("", res.items), **ci_fields("cluster_", res.clusters),
            "n_clusters": res.clusters.n_clusters if res.clusters else len({a[i].cluster for i in common}),
            "wins": res.wtl.wins, "ties": res.wtl.ties, "losses": res.wtl.losses,
            "chain_drop": (sum(float(x) - float(y) for x, y in chain) / len(chain)) if chain else None,
            "n_chain": len(chain)}


__all__ = ["EXPLORATORY", "Group", "MosaicData", "Outcome", "ci_fields", "data", "note", "paired", "paired_many", "prepare",
           "run_label"]


def paired_many(ctx: ScoreContext, d: MosaicData, pairs: list[tuple[Group, Group]],
                keep: Callable[[Outcome], bool] | None = None) -> list[dict[str, Any] | None]:
    """`paired` without the cluster CI for several (upper, lower) pairs: pairs over the same items
    share one set of bootstrap draws (scorer.metrics.mosaic.paired_drops), the same values."""
    o = ctx.options
    commons = []
    for upper, lower in pairs:
        a, b = d.outcomes.get(upper, {}), d.outcomes.get(lower, {})
        commons.append(tuple(i for i in a if i in b and (keep is None or keep(a[i]))))
    out: list[dict[str, Any] | None] = [None] * len(pairs)
    batches: dict[tuple, list[int]] = {}
    for j, common in enumerate(commons):
        if common:
            batches.setdefault(common, []).append(j)
    for common, js in batches.items():
        ua = np.array([[d.outcomes[pairs[j][0]][i].score for j in js] for i in common])
        lb = np.array([[d.outcomes[pairs[j][1]][i].score for j in js] for i in common])
        for j, res in zip(js, paired_drops(ua, lb, o.resamples, o.seed)):
            a, b = d.outcomes[pairs[j][0]], d.outcomes[pairs[j][1]]
            chain = [(a[i].chain, b[i].chain) for i in common if a[i].chain is not None and b[i].chain is not None]
            out[j] = {"n": len(common), "mean_a": res.items.mean_a, "mean_b": res.items.mean_b,
                      "drop": res.items.estimate, **ci_fields("", res.items), **ci_fields("cluster_", None),
                      "n_clusters": len({a[i].cluster for i in common}),
                      "wins": res.wtl.wins, "ties": res.wtl.ties, "losses": res.wtl.losses,
                      "chain_drop": (sum(float(x) - float(y) for x, y in chain) / len(chain)) if chain else None,
                      "n_chain": len(chain)}
    return out


def ladders(d: MosaicData) -> tuple[dict[tuple[str, str], dict[str, Group]], list[str]]:
    """(backbone, mode) → {condition: run group}; a condition declared by two runs of one backbone
    and mode keeps the first (by method name) and says so."""
    out: dict[tuple[str, str], dict[str, Group]] = {}
    warnings = []
    for g in sorted(d.conditions):
        c = d.conditions[g].condition
        if c is None:
            continue
        rungs = out.setdefault((g[0], g[2]), {})
        if c in rungs:
            warnings.append(f"{g[0]} ({g[2]}): condition {c} is declared by {rungs[c][1]} and {g[1]}; "
                            f"{rungs[c][1]} is used")
            continue
        rungs[c] = g
    return out, warnings
