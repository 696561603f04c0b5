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

from collections import Counter

from scorer.errors import UserError
from scorer.metrics.recency import DEFAULT_ALPHAS, DEFAULT_LAMBDA, RECENCY_METRICS, recency_counterfactuals
from scorer.metrics.recency_flat import AGE_SOURCES, RERANKABLE, pools_of, recency_rows
from scorer.sections import evidence_records
from scorer.sections.base import ScoreContext, SectionResult
from scorer.sections.evidence_records import by_group, collect, group_fields
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
    if source not in AGE_SOURCES:
        raise UserError("recency_age_source must be 'logged' or 'dialogue'")
    return alphas, lam, source


def build(ctx: ScoreContext) -> SectionResult:
    alphas, lam, age_source = options(ctx)
    k, o = ctx.options.k, ctx.options
    records, _ = collect(ctx)
    mirrored = evidence_records.mirrored(ctx)
    fe = evidence_records.flat(ctx)  # row i = record i: every logged ranking, parsed once, shared
    cases = recency_rows(fe, age_source)
    group_rows = evidence_records.group_rows(ctx)
    rows, skipped_rows, reranked = [], [], []
    for g, recs in by_group(records).items():
        at = group_rows[g]  # the group's record indices, in record order
        if not fe.has_ret[at].any():
            continue
        fields = group_fields(recs)
        why = cases.why[at]
        ok = at[why == RERANKABLE]
        for why_text, n in sorted(Counter(cases.reason(c) for c in why[why > RERANKABLE].tolist()).items()):
            skipped_rows.append({**fields, "reason": why_text, "items": n, "reranked": len(ok)})
        if len(ok):
            reranked.append((fields, pools_of(fe, cases, ok, [records[i].cluster for i in ok.tolist()])))
    # every group's CIs in one call: those over as many items share one drawing
    results = recency_counterfactuals([pools for _, pools in reranked], k, alphas, lam, o.clustered,
                                      o.resamples, o.seed)
    for (fields, _), group_result in zip(reranked, results):
        for row in group_result:
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
