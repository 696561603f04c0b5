"""Report section `recency`: the recency counterfactual (scorer.metrics.recency) for every run group
with a ranked retrieval list, on its Y3 items with at least two existing clues.

Options (ctx.options.extra): `recency_alphas` (default 1.0, 0.7, 0.5; 1.0 is always the baseline),
`recency_lambda` (default 0.02), `recency_age_source`: "logged" (default: the row's `recency_age`) or
"dialogue" (Δt = rounds from the candidate to the end of the task's history, the question's
position, when a row logged no age).

report.json: {"rows": [{backbone, method, display, mode, alpha, lambda, metric, k, value, n, delta,
ci_low, ci_high, n_clusters}], "not_reranked": [{backbone, method, display, mode, reason, items}]}.
"""

from __future__ import annotations

from dataclasses import replace
from typing import Sequence

from scorer.errors import UserError
from scorer.metrics.evidence import dedupe, temporal_eligible
from scorer.metrics.recency import (
    DEFAULT_ALPHAS,
    DEFAULT_LAMBDA,
    RECENCY_METRICS,
    RecencyCase,
    missing_inputs,
    recency_counterfactuals,
)
from scorer.model import Retrieved, Task
from scorer.sections import evidence_records
from scorer.sections.base import ScoreContext, SectionResult
from scorer.sections.evidence_records import Record, by_group, collect, group_fields
from scorer.sections.evidence_tables import FOLD_NOTE, bootstrap_note, fold_modes, method_order, titled
from scorer.sections.registry import name_of

NAME = name_of(__name__)
prepare = evidence_records.prepare  # shared evidence records, computed before sections fork
TITLES = {"alpha": "Ranking", "latest_clue_recall": "Latest@K", "d_stale_dominance": "Δ Stale-Dom.",
          "ci_stale_dominance": "Δ Stale-Dom. 95% CI", "d_rank_inversion": "Δ Rank-Inv.",
          "ci_rank_inversion": "Δ Rank-Inv. 95% CI", "d_latest_clue_recall": "Δ Latest@K",
          "ci_latest_clue_recall": "Δ Latest@K 95% CI", "d_latest_miss": "Δ Latest-Miss",
          "ci_latest_miss": "Δ Latest-Miss 95% CI", "reason": "Reason", "items": "Y3 items"}


def options(ctx: ScoreContext) -> tuple[tuple[float, ...], float, str]:
    extra = ctx.options.extra or {}
    try:
        alphas = tuple(float(a) for a in extra.get("recency_alphas", DEFAULT_ALPHAS))
        lam = float(extra.get("recency_lambda", DEFAULT_LAMBDA))
    except (TypeError, ValueError):
        raise UserError("recency options: alphas and lambda must be numbers") from None
    if any(not 0 <= a <= 1 for a in alphas) or lam < 0:
        raise UserError("recency options: every alpha must be in [0, 1] and lambda >= 0")
    source = str(extra.get("recency_age_source", "logged"))
    if source not in ("logged", "dialogue"):
        raise UserError("recency_age_source must be 'logged' or 'dialogue'")
    return alphas, lam, source


def with_dialogue_ages(task: Task, pool: Sequence[Retrieved]) -> tuple[Retrieved, ...]:
    """Fill missing ages with the round distance to the question (asked after the last round)."""
    end = len(task.rounds)
    out = []
    for e in pool:
        order = task.order_of(e.round_id)
        out.append(e if e.recency_age is not None or order is None else replace(e, recency_age=float(end - order)))
    return tuple(out)


def cases_of(records: Sequence[Record], age_source: str,
             facts: dict | None = None) -> tuple[list[RecencyCase], dict[str, int]]:
    """The re-rankable cases of one group's records and why the others were left out. `facts`: a
    dict shared by the calls of one report (the same items recur in every run): per item, whether
    it is eligible, its clue chain and which rounds are stale, each computed once."""
    cases, skipped = [], {}
    facts = {} if facts is None else facts
    for r in records:
        item = r.item
        known = facts.get(id(item))
        if known is None or known[0] is not item:  # the item is held, so its id cannot be reused
            eligible = item.answerable and temporal_eligible(r.task, item)
            chain = r.task.clue_chain(item) if eligible else ()
            known = (item, eligible, tuple(c.round_id for c in chain), chain[-1].round_id if chain else None, {})
            facts[id(item)] = known
        _, eligible, clues, latest, stale_of = known
        if not eligible:
            continue
        retrieved = r.prediction.retrieved  # parsed for eligible rows only
        if retrieved is None:
            continue
        pool = dedupe(retrieved)
        if age_source == "dialogue":
            pool = with_dialogue_ages(r.task, pool)
        why = missing_inputs(pool)
        if why:
            skipped[why] = skipped.get(why, 0) + 1
            continue
        stale = []
        for e in pool:
            rid = e.round_id
            hit = stale_of.get(rid)
            if hit is None:
                hit = stale_of[rid] = r.task.is_stale(item, rid)
            if hit:
                stale.append(rid)
        cases.append(RecencyCase(pool, clues, latest, frozenset(stale), r.cluster))
    return cases, skipped


def build(ctx: ScoreContext) -> SectionResult:
    alphas, lam, age_source = options(ctx)
    k, o = ctx.options.k, ctx.options
    records, _ = collect(ctx)
    mirrored = evidence_records.mirrored(ctx)
    logged = evidence_records.flat(ctx).has_ret  # per record: it logged a ranking (parsed once, shared)
    group_rows = evidence_records.group_rows(ctx)
    rows, skipped_rows, reranked = [], [], []
    facts: dict = {}  # per item, shared by every group's cases_of
    for g, recs in by_group(records).items():
        if not logged[group_rows[g]].any():
            continue
        fields = group_fields(recs)
        cases, skipped = cases_of(recs, age_source, facts)
        for why, n in sorted(skipped.items()):
            skipped_rows.append({**fields, "reason": why, "items": n, "reranked": len(cases)})
        if cases:
            reranked.append((fields, cases))
    # every group's CIs in one call: those over as many items share one drawing
    results = recency_counterfactuals([cases for _, cases in reranked], k, alphas, lam, o.clustered,
                                      o.resamples, o.seed)
    for (fields, _), group_rows in zip(reranked, results):
        for row in group_rows:
            rows.append({**fields, "alpha": row.alpha, "lambda": lam, "metric": row.metric, "k": k,
                         "value": row.value, "n": row.n, "delta": row.delta, "ci_low": row.ci_low,
                         "ci_high": row.ci_high, "n_clusters": row.n_clusters})
    if not rows and not skipped_rows:
        return SectionResult.absent(NAME, "no run logged a ranked retrieval list with Y3 items to re-rank")
    data = {"rows": rows, "not_reranked": skipped_rows}
    tables = []
    if rows:
        levels, deltas = _tables(rows)
        note = (f"Y3 items with at least two existing clues; the logged candidate pool re-ranked by "
                f"α·sim + (1−α)·exp(−λ·Δt), λ = {lam:g}, Δt = "
                f"{'logged recency_age' if age_source == 'logged' else 'recency_age, else rounds to the question'}"
                f"; metrics at K = {k}. α = 1.0 is similarity alone (the baseline).")
        levels, deltas = fold_modes(levels, mirrored), fold_modes(deltas, mirrored)
        if mirrored:
            note += FOLD_NOTE
        tables.append(titled("recency", f"Recency counterfactual (Y3, K = {k})", levels,
                             ("method", "backbone", "mode", "alpha", "n", *RECENCY_METRICS), note, TITLES))
        tables.append(titled("recency_deltas", "Recency counterfactual: paired deltas vs α = 1.0", deltas,
                             ("method", "backbone", "mode", "alpha", "n", "d_stale_dominance", "ci_stale_dominance",
                              "d_rank_inversion", "ci_rank_inversion", "d_latest_clue_recall",
                              "ci_latest_clue_recall", "d_latest_miss", "ci_latest_miss"),
                             f"Paired per item; {bootstrap_note(ctx)}.", TITLES))
    if skipped_rows:
        tables.append(titled("recency_not_reranked", "Runs or items that cannot be re-ranked",
                             fold_modes([{**r, "method": r["display"], "method_name": r["method"]}
                                         for r in skipped_rows], mirrored),
                             ("method", "backbone", "mode", "items", "reason"),
                             "Re-ranking needs a similarity score and a recency age for every candidate in the "
                             "pool (upstream logs scores for its top 5 only). These Y3 items are left out; a run "
                             "with no re-rankable item has no row above.", TITLES))
    return SectionResult(NAME, data, tables)


def _tables(rows: list[dict]) -> tuple[list[dict], list[dict]]:
    levels: dict[tuple, dict] = {}
    deltas: dict[tuple, dict] = {}
    for r in rows:
        key = (method_order(r["display"]), r["backbone"], r["mode"], -r["alpha"])
        base = {"method": r["display"], "method_name": r["method"], "backbone": r["backbone"], "mode": r["mode"], "n": r["n"],
                "alpha": f"α = {r['alpha']:g}" if r["alpha"] != 1.0 else "α = 1.0 (sim)"}
        levels.setdefault(key, dict(base))[r["metric"]] = r["value"]
        if r["delta"] is not None:
            d = deltas.setdefault(key, dict(base))
            d[f"d_{r['metric']}"] = r["delta"]
            d[f"ci_{r['metric']}"] = (r["ci_low"], r["ci_high"])
    return [levels[k] for k in sorted(levels)], [deltas[k] for k in sorted(deltas)]
