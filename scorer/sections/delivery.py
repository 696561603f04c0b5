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

from typing import Mapping, Sequence

import numpy as np

from scorer.metrics.delivery import (
    StagePair,
    budget_family,
    budget_of,
    budget_sort_key,
    parse_stage_pair,
    stage_losses,
)
from scorer.metrics.evidence_flat import FlatEvidence
from scorer.metrics.evidence_at_k import AtK, at_k
from scorer.model import CHAIN_MODALITIES
from scorer.names import display_name
from scorer.sections import evidence_records
from scorer.sections.base import ScoreContext, SectionResult
from scorer.sections.evidence_records import MODE_METRIC, Record, by_group, collect, find_groups, group_fields
from scorer.sections.evidence_tables import FOLD_NOTE, bootstrap_note, fold_modes, mean_or_none, method_order, titled
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
    """Per counted record (answerable, a retrieved or delivered list logged): (record, top-K round
    ids, delivered list, counted chain facts, ChainStatus, top-K rounds not delivered), read from
    the vectorised values the tables count (what the app's marks are checked against)."""
    fe = evidence_records.flat_for(records)
    a = at_k(fe, k)
    for i, r in enumerate(records):
        if fe.answerable[i] and (fe.has_ret[i] or fe.has_del[i]):
            facts = tuple(f for f in r.item.chain if r.task.has_round(f.round_id))
            yield r, a.top(fe, i), r.prediction.delivered, facts, a.chain_status(fe, i), a.not_delivered(fe, i)


def run_rows(records: Sequence[Record], a: AtK, fe: FlatEvidence, groups: Mapping[tuple, np.ndarray]
             ) -> tuple[list[dict], list[dict], list[dict], list[dict]]:
    """(per-run summary, not-delivered by modality, score join, per-item join). An item counts when
    its run logged a retrieved or a delivered list (abstention controls have no chain to deliver);
    the retriever's output is the top K of the logged ranking, a longer pool is only candidates."""
    runs, modal, joins, items = [], [], [], []
    counted = fe.answerable & (fe.has_ret | fe.has_del)
    group_of = np.full(fe.n, -1, dtype=np.int64)
    for gi, idx in enumerate(groups.values()):
        group_of[idx] = gi
    n_groups, n_mod = len(groups), len(fe.modality_names)
    # retrieved rounds left out of the request, by the round's modalities, per group
    dropped = a.dropped & counted[fe.e_row]
    rounds_nd = np.zeros((n_groups, len(CHAIN_MODALITIES)), dtype=np.int64)
    np.add.at(rounds_nd, group_of[fe.e_row[dropped]], fe.round_modality(fe.e_code[dropped]).astype(np.int64))
    # required facts among them, by the fact's modality
    gone = a.dropped_facts & counted[fe.f_row]
    facts_nd = np.zeros((n_groups, max(n_mod, 1)), dtype=np.int64)
    np.add.at(facts_nd, (group_of[fe.f_row[gone]], fe.f_modality[gone]), 1)
    scores = [r.score for r in records]
    for gi, idx in enumerate(groups.values()):
        st = idx[counted[idx]]
        if not len(st):
            continue
        f = group_fields([records[idx[0]]])
        ret, dlv = st[fe.has_ret[st]], st[fe.has_del[st]]
        rfr_v, cr_v, cd_v = (a.chain[m][st] for m in ("required_fact_recall", "chain_retrieved", "chain_delivered"))
        for i, rfr, cr, cd in zip(st.tolist(), rfr_v.tolist(), cr_v.tolist(), cd_v.tolist()):
            r = records[i]
            items.append({**f, "item_id": r.item.item_id, "required_fact_recall": None if rfr != rfr else rfr,
                          "chain_retrieved": None if cr != cr else cr == 1.0,
                          "chain_delivered": None if cd != cd else cd == 1.0,
                          "score": r.score, "answerable": r.item.answerable})
        rfr, n_rfr = _mean(rfr_v)
        cr, _ = _mean(cr_v)
        cd, n_cd = _mean(cd_v)
        both = bool(len(ret)) and bool(len(dlv))
        runs.append({**f, "n_items": len(st), "required_fact_recall": rfr, "chain_retrieved": cr, "n_retrieved": n_rfr,
                     "chain_delivered": cd, "n_delivered": n_cd, "n_retrieved_lists": len(ret), "n_delivered_lists": len(dlv),
                     "retrieved_mean": float(np.mean(a.n_top[ret])) if len(ret) else None,
                     "delivered_mean": float(np.mean(a.n_delivered[dlv])) if len(dlv) else None,
                     "not_delivered": int(rounds_nd[gi].sum()) if both else None,
                     "facts_not_delivered": int(facts_nd[gi].sum()) if both else None})
        if both:
            for j, m in enumerate(CHAIN_MODALITIES):
                facts = fe.modality_names.index(m)
                modal.append({**f, "modality": m, "rounds": int(rounds_nd[gi, j]), "facts": int(facts_nd[gi, facts])})
        dl = [(ok == 1.0, scores[i]) for i, ok in zip(st.tolist(), cd_v.tolist()) if ok == ok and scores[i] is not None]
        if dl:
            yes, n_yes = mean_or_none(sc for ok, sc in dl if ok)
            no, n_no = mean_or_none(sc for ok, sc in dl if not ok)
            joins.append({**f, "metric": MODE_METRIC.get(f["mode"], "score"), "score_delivered": yes,
                          "n_delivered": n_yes, "score_missing": no, "n_missing": n_no,
                          "gap": None if yes is None or no is None else yes - no})
    return runs, modal, joins, items


def _mean(v: np.ndarray) -> tuple[float | None, int]:
    """mean_or_none over a per-record value array (NaN = no value), in record order."""
    v = v[v == v]
    return (float(np.add.reduce(v) / v.size) if v.size else None), int(v.size)  # v.mean(), without its overhead


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
    rows, warnings, pending = [], [], []
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
                pending.append(((sp, a, b), (va, vb, [sa[i].cluster for i in common] if o.clustered else None)))
    # every pair's CI in one call: those over as many items share one drawing (stage_loss's values)
    for ((sp, a, b), _), res in zip(pending, stage_losses([p for _, p in pending], o.resamples, o.seed)):
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
    runs, modal, joins, items = run_rows(records, evidence_records.at(ctx, ctx.options.k), evidence_records.flat(ctx),
                                         evidence_records.group_rows(ctx))
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
                             "out of the reader's request (totals)." + (FOLD_NOTE if mirrored else ""), TITLES,
                             {"retrieved_mean": "n_retrieved_lists", "delivered_mean": "n_delivered_lists",
                              "required_fact_recall": "n_retrieved", "chain_retrieved": "n_retrieved",
                              "chain_delivered": "n_delivered", "not_delivered": None, "facts_not_delivered": None}))
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
                             "(delivery.items).", TITLES,
                             {"score_delivered": "n_delivered", "score_missing": "n_missing", "gap": None}))
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
