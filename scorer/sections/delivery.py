"""Report section `delivery` (MOSAIC's retrieve ≠ deliver): per run group, required-fact recall,
complete-chain retrieval and delivery, retrieved-but-not-delivered rounds by modality, the answer
score split by whether the chain was delivered; paired stage losses; a delivery-budget sweep.

Stage pairs come from ctx.options.extra["stage_pairs"] (`--stage-pair STAGE:"A"→"B"`, repeatable;
A and B are method, display or `backbone/method` names). Without any, the defaults are each
budgeted run against its unbudgeted family (delivery) and Oracle(V)→SRAG(V), Oracle(T)→SRAG(T)
(retrieval), where both sides exist. A pair is scored per backbone and mode on the items both sides
scored: loss = mean(score_A − score_B), paired bootstrap CI, win/tie/loss (A's).
"""

from __future__ import annotations

from typing import Sequence

import numpy as np

from scorer.metrics.delivery import (
    StagePair,
    budget_family,
    budget_of,
    budget_sort_key,
    count_by_modality,
    parse_stage_pair,
    stage_loss,
)
from scorer.metrics.evidence import fact_modality, item_evidence, round_modalities
from scorer.model import CHAIN_MODALITIES
from scorer.names import display_name
from scorer.sections import evidence_records
from scorer.sections.base import ScoreContext, SectionResult
from scorer.sections.evidence_records import (
    FOLD_NOTE,
    MODE_METRIC,
    Record,
    bootstrap_note,
    by_group,
    collect,
    find_groups,
    fold_modes,
    group_fields,
    mean_or_none,
    method_order,
    titled,
)
from scorer.sections.registry import name_of

NAME = name_of(__name__)
prepare = evidence_records.prepare  # shared evidence records, computed before sections fork
DEFAULT_PAIRS = ('retrieval:"Oracle(V)"->"SRAG(V)"', 'retrieval:"Oracle(T)"->"SRAG(T)"')
TITLES = {
    "n_items": "n", "retrieved_mean": "Retrieved/item", "delivered_mean": "Delivered/item",
    "not_delivered": "Retr. not deliv.", "facts_not_delivered": "Req. facts not deliv.",
    "score_delivered": "Score | chain deliv.", "n_delivered": "n deliv.", "score_missing": "Score | chain cut",
    "n_missing": "n cut", "gap": "Δ gap", "stage": "Stage", "pair": "A → B", "loss": "Δ loss (A − B)",
    "ci": "95% CI", "mean_a": "Score A", "mean_b": "Score B", "wins": "A wins", "ties": "Ties", "losses": "A loses",
    "budget": "Budget", "family": "Family", "score": "Score", "modality": "Modality", "rounds": "Rounds",
    "facts": "Required facts",
}


def _statuses(records: Sequence[Record], k: int):
    for r in records:
        if not r.item.answerable:  # abstention controls have no chain to deliver
            continue
        # the retriever's output is the top K of the logged ranking; a longer pool is only candidates
        ev = item_evidence(r.task, r.item, r.prediction, k)
        if ev.any_logged:
            yield r, ev.retrieved, ev.delivered, ev.facts, ev.chain, ev.not_delivered


def run_rows(records: Sequence[Record], k: int) -> tuple[list[dict], list[dict], list[dict], list[dict]]:
    """(per-run summary, not-delivered by modality, score join, per-item join)."""
    runs, modal, joins, items = [], [], [], []
    for recs in by_group(records).values():
        st = list(_statuses(recs, k))
        if not st:
            continue
        f = group_fields(recs)
        rounds_nd: dict[str, int] = {}
        facts_nd: dict[str, int] = {}
        n_ret, n_del = [], []
        for r, retrieved, delivered, facts, s, dropped in st:
            if retrieved is not None:
                n_ret.append(len(set(retrieved)))
            if delivered is not None:
                n_del.append(len(set(delivered)))
            if dropped is not None:  # both logged
                for m, c in count_by_modality(dropped, lambda rid, t=r.task: round_modalities(t, rid)).items():
                    rounds_nd[m] = rounds_nd.get(m, 0) + c
                gone = set(dropped)
                for fact in facts:
                    if fact.round_id in gone:
                        m = fact.modality or fact_modality(r.task, fact.round_id)
                        facts_nd[m] = facts_nd.get(m, 0) + 1
            items.append({**f, "item_id": r.item.item_id, "required_fact_recall": s.required_fact_recall,
                          "chain_retrieved": s.chain_retrieved, "chain_delivered": s.chain_delivered,
                          "score": r.score, "answerable": r.item.answerable})
        rfr, n_rfr = mean_or_none(s.required_fact_recall for *_, s, _ in st)
        cr, _ = mean_or_none(None if s.chain_retrieved is None else float(s.chain_retrieved) for *_, s, _ in st)
        cd, n_cd = mean_or_none(None if s.chain_delivered is None else float(s.chain_delivered) for *_, s, _ in st)
        both = bool(n_ret) and bool(n_del)
        runs.append({**f, "n_items": len(st), "required_fact_recall": rfr, "chain_retrieved": cr, "n_retrieved": n_rfr,
                     "chain_delivered": cd, "n_delivered": n_cd,
                     "retrieved_mean": float(np.mean(n_ret)) if n_ret else None,
                     "delivered_mean": float(np.mean(n_del)) if n_del else None,
                     "not_delivered": sum(rounds_nd.values()) if both else None,
                     "facts_not_delivered": sum(facts_nd.values()) if both else None})
        if both:
            for m in CHAIN_MODALITIES:
                modal.append({**f, "modality": m, "rounds": rounds_nd.get(m, 0), "facts": facts_nd.get(m, 0)})
        dl = [(s.chain_delivered, r.score) for r, *_, s, _ in st
              if s.chain_delivered is not None and r.score is not None]
        if dl:
            yes, n_yes = mean_or_none(sc for ok, sc in dl if ok)
            no, n_no = mean_or_none(sc for ok, sc in dl if not ok)
            joins.append({**f, "metric": MODE_METRIC.get(f["mode"], "score"), "score_delivered": yes,
                          "n_delivered": n_yes, "score_missing": no, "n_missing": n_no,
                          "gap": None if yes is None or no is None else yes - no})
    return runs, modal, joins, items


def stage_pairs(ctx: ScoreContext, records: Sequence[Record]) -> tuple[list[StagePair], bool]:
    given = (ctx.options.extra or {}).get("stage_pairs") or ()
    if given:
        return [p if isinstance(p, StagePair) else parse_stage_pair(str(p)) for p in given], True
    pairs = [parse_stage_pair(p) for p in DEFAULT_PAIRS]
    methods = {g[1] for g in by_group(records)}
    for m in sorted(methods):
        fam = budget_family(m)
        if budget_of(m) is not None and fam in methods and fam != m:
            pairs.append(StagePair("delivery", fam, m))
    return pairs, False


def loss_rows(ctx: ScoreContext, records: Sequence[Record]) -> tuple[list[dict], list[str]]:
    pairs, explicit = stage_pairs(ctx, records)
    o = ctx.options
    groups = by_group(records)
    rows, warnings = [], []
    for sp in pairs:
        ga, gb = find_groups(records, sp.a, o.names), find_groups(records, sp.b, o.names)
        if not ga or not gb:
            if explicit:
                missing = sp.a if not ga else sp.b
                warnings.append(f"stage pair {sp.label}: no run named {missing!r}")
            continue
        for a in ga:
            for b in gb:
                if (a[0], a[2]) != (b[0], b[2]) or a == b:
                    continue  # pair within one backbone and mode
                sa = {r.item.item_id: r for r in groups[a] if r.score is not None and r.item.answerable}
                sb = {r.item.item_id: r for r in groups[b] if r.score is not None and r.item.answerable}
                common = sorted(set(sa) & set(sb))
                if not common:
                    continue
                va = np.array([sa[i].score for i in common])
                vb = np.array([sb[i].score for i in common])
                res = stage_loss(va, vb, [sa[i].cluster for i in common] if o.clustered else None, o.resamples, o.seed)
                rows.append({
                    "stage": sp.stage, "a": display_name(a[1], o.names), "b": display_name(b[1], o.names),
                    "pair": f"{display_name(a[1], o.names)} → {display_name(b[1], o.names)}",
                    "backbone": a[0], "mode": a[2], "metric": MODE_METRIC.get(a[2], "score"),
                    "loss": res.ci.estimate, "ci_low": res.ci.ci_low, "ci_high": res.ci.ci_high,
                    "mean_a": res.ci.mean_a, "mean_b": res.ci.mean_b,
                    "n": res.ci.n, "n_clusters": res.ci.n_clusters, "wins": res.wtl.wins, "ties": res.wtl.ties,
                    "losses": res.wtl.losses})
    return rows, warnings


def sweep_rows(runs: Sequence[dict], records: Sequence[Record]) -> list[dict]:
    """Budget families with at least two budgeted runs: one row per budget (the unbudgeted run first)."""
    configs = {r.group: r.method_config for r in records}
    families: dict[tuple, list[dict]] = {}
    for row in runs:
        fam = budget_family(row["method"])
        budget = budget_of(row["method"], configs.get((row["backbone"], row["method"], row["mode"])))
        families.setdefault((fam, row["backbone"], row["mode"]), []).append({**row, "budget": budget})
    scores = {g: mean_or_none(r.score for r in recs if r.item.answerable) for g, recs in by_group(records).items()}
    out = []
    for (fam, backbone, mode), members in sorted(families.items()):
        if sum(1 for m in members if m["budget"] is not None) < 2:
            continue
        for m in sorted(members, key=lambda m: budget_sort_key(m["budget"])):
            score, n = scores.get((backbone, m["method"], mode), (None, 0))
            out.append({"family": fam, "method": m["display"], "backbone": backbone, "mode": mode,
                        "budget": m["budget"] or "none (full)", "n": n, "delivered_mean": m["delivered_mean"],
                        "required_fact_recall": m["required_fact_recall"], "chain_delivered": m["chain_delivered"],
                        "score": score})
    return out


def build(ctx: ScoreContext) -> SectionResult:
    records, warnings = collect(ctx)
    runs, modal, joins, items = run_rows(records, ctx.options.k)
    losses, pair_warnings = loss_rows(ctx, records)
    sweep = sweep_rows(runs, records)
    if not runs and not losses:
        return SectionResult.absent(NAME, "no run logged retrieved or delivered rounds, and no stage pair matched")
    data = {"runs": runs, "not_delivered": modal, "score_join": joins, "stage_losses": losses,
            "budget_sweep": sweep, "items": items}
    mirrored = evidence_records.mirrored(ctx)

    def show(rows: Sequence[dict], fold: bool = False) -> list[dict]:
        out = [{**r, "method": r.get("display", r.get("method")), "method_name": r.get("method")} for r in rows]
        out.sort(key=lambda r: (method_order(r["method"]), r["backbone"], r["mode"]))
        return fold_modes(out, mirrored) if fold else out

    tables = []
    if runs:
        tables.append(titled("delivery_runs", "Delivery of the gold chain per run", show(runs, True),
                             ("method", "backbone", "mode", "n_items", "retrieved_mean", "delivered_mean",
                              "required_fact_recall", "chain_retrieved", "chain_delivered", "n_delivered",
                              "not_delivered", "facts_not_delivered"),
                             f"Required-fact recall / Chain Retr. over the top K = {ctx.options.k} retrieved; Chain Deliv. over "
                             "items whose run logged `delivered` (n deliv.). Retr. not deliv. = retrieved rounds left "
                             "out of the reader's request (totals)." + (FOLD_NOTE if mirrored else ""), TITLES))
    if modal:
        tables.append(titled("delivery_modality", "Retrieved but not delivered, by modality",
                             [r for r in show(modal, True) if r["rounds"] or r["facts"]],
                             ("method", "backbone", "mode", "modality", "rounds", "facts"),
                             "Rounds: every retrieved round missing from the request (a round with several media "
                             "kinds counts under each). Required facts: gold-chain facts among them, by the fact's "
                             "modality." + (FOLD_NOTE if mirrored else ""), TITLES))
    if joins:
        tables.append(titled("delivery_score_join", "Answer score by chain delivery", show(joins),
                             ("method", "backbone", "mode", "score_delivered", "n_delivered", "score_missing",
                              "n_missing", "gap"),
                             "Answerable items. Score = MCQ EM / open judge of the same rows; per-item join in report.json "
                             "(delivery.items).", TITLES))
    if losses:
        tables.append(titled("delivery_stage_losses", "Stage losses (paired)",
                             [{**r, "ci": (r["ci_low"], r["ci_high"])} for r in losses],
                             ("stage", "pair", "backbone", "mode", "n", "mean_a", "mean_b", "loss", "ci", "wins",
                              "ties", "losses"),
                             f"Loss = mean(score A − score B) on answerable items both runs scored; {bootstrap_note(ctx)}.",
                             TITLES))
    if sweep:
        tables.append(titled("delivery_budget_sweep", "Delivery-budget sweep", sweep,
                             ("family", "method", "backbone", "mode", "budget", "n", "delivered_mean",
                              "required_fact_recall", "chain_delivered", "score"),
                             "Same retrieval, tighter packing: the ranking is fixed, only the packer's budget "
                             "changes.", TITLES))
    return SectionResult(NAME, data, tables, warnings=[*warnings, *pair_warnings])
