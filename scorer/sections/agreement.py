"""Agreement (DESIGN §5 "Agreement") from the annotation store and the run rows: the LLM judge
against human accept/reject verdicts, annotators' verdicts against each other, LLM judges against
each other, and annotators' X / Y labels against each other and the gold labels.

report.json `agreement` = {"judge_vs_human": [...], "human_vs_human": [...], "judge_vs_judge": [...],
"labels": [...], "label_confusion": [...], "boundary": [...]}; a part without data is
{"value": null, "reason": …}.
- judge_vs_human rows: the judge (score ≥ 0.5 → accept, on the report's judge scale) against each
  annotator and, with two or more annotators, against their strict majority; overall (`stratum`
  "all"), per method and per (X, Y) cell. κ with its percentile bootstrap CI (`ci_low`/`ci_high`)
  and the analytic one; borderline verdicts excluded and counted.
- labels rows: κ_X / κ_Y per annotator pair, each annotator against the gold labels, and
  Krippendorff's α (nominal) across all annotators; with three annotators or more, Fleiss' κ
  (`kind` "fleiss") over the items every annotator labelled. An item's label set is one category
  ("X2+X3").
- judge_vs_judge rows (no --db needed): every two judges whose scores a run row carries
  (`judge_panel`, or `judge_previous` beside `judge`), Cohen's κ unweighted, linear and quadratic
  over the report's judge levels; with three judges or more, Fleiss' κ and α (ordinal, nominal).
- human_vs_human rows: every two annotators' verdicts on the same predictions, as the ordinal scale
  reject < borderline < accept (unweighted, linear, quadratic κ); with three or more, Fleiss' κ and
  α. Rows and their fields: scorer.sections.agreement_raters.
- boundary rows: of the X disagreements, how many lie on the X2/X3 boundary only.
"""

from __future__ import annotations

from itertools import combinations
from typing import Any, Mapping

import pandas as pd

from scorer.metrics.agreement import (
    VERDICT_SCALE,
    cohen_kappa,
    fleiss_bootstrap_ci,
    fleiss_kappa,
    human_majority,
    judge_vs_human,
    kappa_bootstrap_ci,
    krippendorff_alpha,
    normalise_verdict,
)
from scorer.metrics.constants import JUDGE_THRESHOLD
from scorer.metrics.matrix import ALL
from scorer.sections import agreement_raters as raters
from scorer.sections.base import ScoreContext, SectionResult, Table
from scorer.sections.registry import name_of
from scorer.store.adjudicate import adjudicated

NAME = name_of(__name__)
BOUNDARY = frozenset({"X2", "X3"})


def _absent(reason: str) -> dict:
    return {"value": None, "reason": reason}


def build(ctx: ScoreContext) -> SectionResult:
    opts = ctx.options
    judges, warnings = raters.read_judge_scores(ctx)
    judge_part: dict[str, Any] = {}
    judge_tables_: list[Table] = []  # shown after the tables that involve humans
    if judges is None:
        judge_part["judge_vs_judge"] = _absent("no run row carries two judges' scores (`judge_panel`, or "
                                               "`judge_previous` beside `judge`)")
    else:
        rows = raters.rater_rows("judge_vs_judge", judges, raters.judge_scale(opts.judge_levels), opts.resamples,
                                 opts.seed, "judges")
        judge_part["judge_vs_judge"] = rows or _absent("no two judges scored the same row")
        if rows:
            judge_tables_.append(raters.judge_table(rows))
    tables: list[Table] = []
    ann = ctx.annotations
    if ann is None:
        if judges is None:
            return SectionResult.absent(NAME, "no annotation database given (--db)")
        return SectionResult(NAME, {**_all_absent("no annotation database given (--db)"), **judge_part},
                             judge_tables_, warnings=tuple(warnings))
    verdicts = ann[ann["kind"] == "verdict"] if len(ann) else ann
    labels = ann[ann["kind"] == "label"] if len(ann) else ann
    decided = adjudication_rows(ann)
    if verdicts.empty and labels.empty:
        reason = "the annotation database has no verdicts and no labels"
        if judges is None:
            return SectionResult.absent(NAME, reason)
        return SectionResult(NAME, {**_all_absent(reason), **judge_part}, judge_tables_, warnings=tuple(warnings))
    data: dict[str, Any] = {}
    if verdicts.empty:
        data["judge_vs_human"] = _absent("no accept/reject verdicts in the annotation database")
        data["human_vs_human"] = _absent("no accept/reject verdicts in the annotation database")
    else:
        resolve = _run_resolver(ctx.frame)
        rows, w = judge_rows(ctx, verdicts, resolve, decided)
        warnings += w
        data["judge_vs_human"] = rows if rows else _absent("no verdict matches a scored open prediction")
        if rows:
            tables += judge_tables(rows)
        human = human_rows(ctx, verdicts, resolve)
        data["human_vs_human"] = human or _absent("no two annotators judged the same prediction")
        if human:
            tables.append(raters.human_table(human))
    data.update(judge_part)
    tables += judge_tables_
    if labels.empty:
        for key in ("labels", "label_confusion", "boundary"):
            data[key] = _absent("no X/Y label acts in the annotation database")
    else:
        lab_rows, conf_rows, boundary_rows = label_rows(ctx, labels, warnings, decided)
        data["labels"] = lab_rows or _absent("no item was labelled by two annotators or against a gold label")
        data["label_confusion"] = conf_rows or _absent("no label comparisons")
        data["boundary"] = boundary_rows or _absent("no X label comparisons")
        tables += label_tables(lab_rows, boundary_rows)
    warnings += zero_width_warnings(data)
    return SectionResult(NAME, data, tables, warnings=tuple(warnings))


def _who(row: Mapping[str, Any]) -> str:
    if row.get("compared") == "judge_vs_human":
        where = {"all": "", "method": f" on {row.get('method')}", "cell": f" in {row.get('x')}×{row.get('y')}"}
        return f"judge vs {row.get('human')}{where.get(row.get('stratum'), '')}"
    a, b = row.get("rater_a"), row.get("rater_b")
    return f"{a} vs {b}" + (f" on {row['axis']}" if row.get("axis") else "") if a is not None else "a pair of raters"


def zero_width_warnings(data: Mapping[str, Any]) -> list[str]:
    """One line for the rows whose bootstrap CI has zero width: every resample agreed as the sample
    did (perfect agreement on a few pairs), so [1, 1] measures no uncertainty — it is not a narrow
    interval. The values stay the bootstrap's."""
    rows = [r for part in data.values() if isinstance(part, list) for r in part
            if isinstance(r, dict) and r.get("ci_low") is not None and r.get("ci_low") == r.get("ci_high")]
    if not rows:
        return []
    first = rows[0]
    return [f"{len(rows)} agreement row(s) have a bootstrap 95% CI of zero width (first: {_who(first)}, "
            f"n {first.get('n')}, [{first['ci_low']:g}, {first['ci_high']:g}]): every resample agreed as the "
            "sample did, which measures no uncertainty at that n — more pairs are needed for an interval"]


def adjudication_rows(ann: pd.DataFrame) -> list[dict]:
    """The store's current adjudications (the gold where they exist) as records."""
    if not len(ann) or "of" not in ann:
        return []
    return ann[ann["kind"] == "adjudication"].to_dict("records")


def _all_absent(reason: str) -> dict:
    return {key: _absent(reason) for key in ("judge_vs_human", "human_vs_human", "labels", "label_confusion",
                                             "boundary")}


# ---------------------------------------------------------------------------------------------
# Judge vs human


def _run_resolver(frame: pd.DataFrame):
    keys = set(frame["run_key"].unique())
    by_display: dict[str, list[str]] = {}
    for key, backbone, display in frame[["run_key", "backbone", "display"]].drop_duplicates().itertuples(index=False):
        by_display.setdefault(f"{backbone}/{display}", []).append(key)

    def resolve(run: Any) -> str | None:
        if not isinstance(run, str):
            return None
        if run in keys:
            return run
        found = by_display.get(run, [])
        return found[0] if len(found) == 1 else None

    return resolve


def judge_rows(ctx: ScoreContext, verdicts: pd.DataFrame, resolve=None,
               decided: list[dict] | None = None) -> tuple[list[dict], list[str]]:
    """Judge vs each annotator, their strict majority, and — where verdicts were adjudicated — the
    adjudicated human: the adjudicated verdict where one exists, else the annotators' strict majority
    (`adjudicated` counts the pairs whose verdict is an adjudication)."""
    frame = ctx.frame
    opts = ctx.options
    resolve = resolve or _run_resolver(frame)
    wanted = {resolve(r) for r in set(verdicts["run_key"])} - {None}
    open_rows = frame[(frame["mode"] == "open") & frame["run_key"].isin(wanted) & frame["item_id"].isin(set(verdicts["item_id"]))]
    scores = {(k, i): (j, d, x, y) for k, i, j, d, x, y in zip(
        open_rows["run_key"], open_rows["item_id"], open_rows["judge"], open_rows["display"], open_rows["x"], open_rows["y"])}
    pairs: dict[tuple, dict] = {}  # (run_key, item_id) -> {annotator: verdict}
    unknown = 0
    bad = 0
    for annotator, item_id, run, verdict in verdicts[["annotator", "item_id", "run_key", "verdict"]].itertuples(index=False):
        key = resolve(run)
        try:
            v = normalise_verdict(verdict)
        except ValueError:
            bad += 1
            continue
        if key is None or (key, item_id) not in scores:
            unknown += 1
            continue
        pairs.setdefault((key, item_id), {})[annotator] = v
    warnings = []
    if unknown:
        warnings.append(f"{unknown} verdict(s) name a run/item with no scored open prediction; left out")
    if bad:
        warnings.append(f"{bad} verdict(s) with an unknown value; left out")
    if not pairs:
        return [], warnings
    ordered = sorted(pairs)
    annotators = sorted({a for votes in pairs.values() for a in votes})
    judge = [scores[p][0] for p in ordered]
    methods = [scores[p][1] for p in ordered]
    cells = [[f"{x}_{y}" for x in scores[p][2] for y in scores[p][3]] for p in ordered]
    strata = {"method": methods, "cell": cells}
    out = []
    gold: dict[tuple, str] = {}
    for (item_id, _mode, run), decision in adjudicated(decided or [], "verdict").items():
        key = resolve(run)
        if key is not None and (key, item_id) in pairs:
            gold[(key, item_id)] = decision["verdict"]
    n_adj = len(gold)
    humans = [(a, [pairs[p].get(a) for p in ordered], None) for a in annotators]
    everyone = human_majority([[pairs[p].get(a) for a in annotators] for p in ordered])
    if len(annotators) >= 2:
        humans.append(("majority", list(everyone.verdicts), everyone))
    if gold:
        humans.append(("adjudicated", [gold.get(p, m) for p, m in zip(ordered, everyone.verdicts)], everyone))
    for human, votes, maj in humans:
        keep = [i for i, v in enumerate(votes) if v is not None] if maj is None else list(range(len(votes)))
        res = judge_vs_human([judge[i] for i in keep], [votes[i] for i in keep],
                             strata={k: [s[i] for i in keep] for k, s in strata.items()},
                             n_resamples=opts.resamples, seed=opts.seed)
        extra = {"n_annotators": len(annotators) if maj else 1, "ties": maj.ties if maj else 0,
                 "adjudicated": n_adj if human == "adjudicated" else 0}
        if human == "adjudicated":  # a tie the adjudicator settled is no tie
            extra["ties"] = sum(1 for p, m in zip(ordered, everyone.verdicts) if m is None and p not in gold
                                and any(v is not None for v in pairs[p].values()))
        out.append(_judge_row(human, "all", ALL, ALL, ALL, res, extra))
        for st in res.strata:
            if st.dimension == "method":
                out.append(_judge_row(human, "method", st.key, ALL, ALL, st.result, extra))
            else:
                x, y = st.key.split("_", 1)
                out.append(_judge_row(human, "cell", ALL, x, y, st.result, extra))
    return out, warnings


def _judge_row(human: str, stratum: str, method: str, x: str, y: str, r, extra: dict) -> dict:
    k, b = r.kappa, r.bootstrap
    return {
        "compared": "judge_vs_human", "human": human, "stratum": stratum, "method": method, "x": x, "y": y,
        "n": r.n, "excluded": r.excluded, "excluded_borderline": r.excluded_borderline,
        "excluded_missing": r.excluded_missing, "agreements": r.agreements, "observed": r.observed,
        "kappa": k.kappa, "ci_low": b.ci_low, "ci_high": b.ci_high, "ci_method": "bootstrap percentile",
        "se": k.se, "ci_low_analytic": k.ci_low, "ci_high_analytic": k.ci_high, "ac1": r.ac1.ac1,
        "accept_accept": r.accept_accept, "accept_reject": r.accept_reject, "reject_accept": r.reject_accept,
        "reject_reject": r.reject_reject, "undefined_reason": k.undefined_reason, "warning": r.paradox_warning,
        **extra,
    }


def judge_tables(rows: list[dict]) -> list[Table]:
    def show(r: dict, head: dict) -> dict:
        return {**head, "n": r["n"], "excluded": r["excluded"], "agreement": r["observed"],
                "κ": r["kappa"] if r["kappa"] is not None else "undefined",
                "95% CI": (r["ci_low"], r["ci_high"]), "AC1": r["ac1"],
                "A/A": r["accept_accept"], "A/R": r["accept_reject"], "R/A": r["reject_accept"], "R/R": r["reject_reject"]}

    tail = ["n", "excluded", "agreement", "κ", "95% CI", "AC1", "A/A", "A/R", "R/A", "R/R"]
    counts = {"excluded": None, "adjudicated": None}  # counts of their own, not values over the n pairs
    overall = [{**show(r, {"Human": r["human"]}), "adjudicated": r["adjudicated"]} for r in rows if r["stratum"] == "all"]
    n_adj = max((r["adjudicated"] for r in rows), default=0)
    adj_note = (f"{n_adj} pair(s) adjudicated" + (": Human \"adjudicated\" = the adjudicated verdict where one exists, "
                                                 "else the annotators' strict majority." if n_adj else "."))
    per_method = [show(r, {"Human": r["human"], "Method": r["method"]}) for r in rows if r["stratum"] == "method"]
    per_cell = [show(r, {"Human": r["human"], "Y": r["y"], "X": r["x"]}) for r in rows if r["stratum"] == "cell"]
    note = (f"Judge score ≥ {JUDGE_THRESHOLD:g} → accept. Confusion judge-first: A/R = judge accepts, human rejects. "
            "excluded = borderline verdicts + pairs without a score. CI: percentile bootstrap over pairs. " + adj_note)
    return [
        Table("judge_vs_human", "LLM judge vs human verdicts", overall, ["Human", *tail, "adjudicated"], note, counts),
        Table("judge_vs_human_by_method", "LLM judge vs human verdicts, per method", per_method,
              ["Human", "Method", *tail], adj_note, counts),
        Table("judge_vs_human_by_cell", "LLM judge vs human verdicts, per (X, Y) cell", per_cell,
              ["Human", "Y", "X", *tail], adj_note, counts),
    ]


def human_rows(ctx: ScoreContext, verdicts: pd.DataFrame, resolve=None) -> list[dict]:
    """Annotator vs annotator on the verdicts as an ordinal scale (reject < borderline < accept),
    with Fleiss' κ and α across three annotators or more."""
    resolve = resolve or _run_resolver(ctx.frame)
    table, _ = raters.verdict_table(verdicts, resolve)  # unknown verdict values: judge_rows warns
    if table is None:
        return []
    opts = ctx.options
    return raters.rater_rows("human_vs_human", table, VERDICT_SCALE, opts.resamples, opts.seed, "annotators")


# ---------------------------------------------------------------------------------------------
# Labels


def _code(labels: Any, prefix: str) -> str | None:
    vals = sorted({str(v) for v in (labels or ()) if str(v).startswith(prefix)})
    return "+".join(vals) if vals else None


def label_rows(ctx: ScoreContext, labels: pd.DataFrame, warnings: list[str],
               decided: list[dict] | None = None) -> tuple[list, list, list]:
    """κ per pair and against the gold: the benchmark's labels, or the adjudicated ones where an
    item's labels were adjudicated (`adjudicated` counts those among the items compared); with any
    adjudication, one row more compares the benchmark's labels with the adjudicated ones."""
    opts = ctx.options
    latest = labels.sort_values(["ts", "event_id"]).drop_duplicates(["annotator", "item_id"], keep="last")
    gold: dict[str, tuple] = {}
    for it in ctx.bench.items():
        gold.setdefault(it.item_id, (it.x, it.y))
    bench_gold = dict(gold)
    adj: dict[str, tuple] = {}
    for (item_id, _mode, _run), decision in sorted(adjudicated(decided or [], "label").items(),
                                                   key=lambda kv: (kv[0][0], kv[0][1] or "", kv[0][2] or "")):
        adj[item_id] = (tuple(decision.get("x") or ()), tuple(decision.get("y") or ()))
    gold.update(adj)
    unknown = sorted(set(latest["item_id"]) - set(gold))
    if unknown:
        warnings.append(f"{len(unknown)} labelled item id(s) are not in the benchmark (e.g. {unknown[0]!r}); "
                        "compared between annotators only")
    items = sorted(set(latest["item_id"]))
    annotators = sorted(set(latest["annotator"]))
    rows, confusion, boundary = [], [], []
    for axis, col, prefix in (("X", "x", "X"), ("Y", "y", "Y")):
        ratings = {a: [None] * len(items) for a in annotators}
        pos = {i: k for k, i in enumerate(items)}
        for a, item_id, value in latest[["annotator", "item_id", col]].itertuples(index=False):
            ratings[a][pos[item_id]] = _code(value, prefix)
        gold_codes = [_code(gold[i][0 if axis == "X" else 1], prefix) if i in gold else None for i in items]
        comparisons = [(a, b, ratings[a], ratings[b], "pair") for a, b in combinations(annotators, 2)]
        comparisons += [(a, "gold", ratings[a], gold_codes, "gold") for a in annotators]
        if adj:
            comparisons.append(("benchmark", "adjudicated",
                                [_code(bench_gold[i][0 if axis == "X" else 1], prefix) if i in bench_gold and i in adj
                                 else None for i in items],
                                [_code(adj[i][0 if axis == "X" else 1], prefix) if i in adj else None for i in items],
                                "gold"))
        for a, b, ra, rb, kind in comparisons:
            both = [(u, v) for u, v in zip(ra, rb) if u is not None and v is not None]
            n_adj = sum(1 for i, u, v in zip(items, ra, rb) if u is not None and v is not None and i in adj) \
                if b in ("gold", "adjudicated") else 0
            if not both:
                continue
            ua, ub = [u for u, _ in both], [v for _, v in both]
            cats = tuple(sorted(set(ua) | set(ub)))
            k = cohen_kappa(ua, ub, labels=cats)
            boot = kappa_bootstrap_ci(ua, ub, labels=cats, n_resamples=opts.resamples, seed=opts.seed)
            either = sum(1 for u, v in zip(ra, rb) if (u is None) != (v is None))
            rows.append({"compared": "labels", "axis": axis, "kind": kind, "coefficient": "cohen",
                         "rater_a": a, "rater_b": b,
                         "n": k.n, "excluded": either, "agreements": sum(u == v for u, v in both),
                         "observed": k.observed, "kappa": k.kappa, "ci_low": boot.ci_low, "ci_high": boot.ci_high,
                         "se": k.se, "ci_low_analytic": k.ci_low, "ci_high_analytic": k.ci_high, "alpha": None,
                         "undefined_reason": k.undefined_reason, "adjudicated": n_adj})
            for i, la in enumerate(k.labels):
                for j, lb in enumerate(k.labels):
                    if k.confusion[i][j]:
                        confusion.append({"axis": axis, "rater_a": a, "rater_b": b, "label_a": la, "label_b": lb,
                                          "count": k.confusion[i][j]})
            if axis == "X":
                dis = [(u, v) for u, v in both if u != v]
                on_boundary = sum(1 for u, v in dis if set(u.split("+")) ^ set(v.split("+")) <= BOUNDARY)
                boundary.append({"rater_a": a, "rater_b": b, "n": len(both), "disagreements": len(dis),
                                 "x2_x3": on_boundary, "share": on_boundary / len(dis) if dis else None})
        if len(annotators) >= 2:
            res = krippendorff_alpha([ratings[a] for a in annotators], level="nominal")
            rows.append({"compared": "labels", "axis": axis, "kind": "all", "coefficient": "alpha", "rater_a": "all",
                         "rater_b": f"{len(annotators)} annotators", "n": res.n, "excluded": len(items) - res.n,
                         "agreements": None, "observed": None, "kappa": None, "ci_low": None, "ci_high": None,
                         "se": None, "ci_low_analytic": None, "ci_high_analytic": None, "alpha": res.alpha,
                         "undefined_reason": res.undefined_reason, "adjudicated": 0})
        if len(annotators) >= 3:  # Fleiss' κ beside α: the items every annotator labelled
            table = [ratings[a] for a in annotators]
            fk = fleiss_kappa(table)
            bt = fleiss_bootstrap_ci(table, n_resamples=opts.resamples, seed=opts.seed)
            rows.append({"compared": "labels", "axis": axis, "kind": "fleiss", "coefficient": "fleiss",
                         "rater_a": "all", "rater_b": f"{len(annotators)} annotators", "n": fk.n,
                         "excluded": fk.excluded, "agreements": None, "observed": fk.observed, "kappa": fk.kappa, "ci_low": bt.ci_low,
                         "ci_high": bt.ci_high, "se": None, "ci_low_analytic": None, "ci_high_analytic": None,
                         "alpha": None, "undefined_reason": fk.undefined_reason or bt.undefined_reason,
                         "adjudicated": 0})
    return rows, confusion, boundary


def label_tables(rows: list[dict], boundary: list[dict]) -> list[Table]:
    out = []
    if rows:
        statistic = {"cohen": "Cohen's κ", "fleiss": "Fleiss' κ", "alpha": "Krippendorff's α"}
        shown = [{"Axis": r["axis"], "n": r["n"], "agreement": r["observed"],
                  "Raters": (f"all {r['rater_b']}" if r["kind"] in ("all", "fleiss")
                             else f"{r['rater_a']} vs {r['rater_b']}"),
                  "Statistic": statistic[r["coefficient"]],
                  "κ": r["kappa"] if r["kappa"] is not None or r["kind"] == "all" else "undefined", "95% CI": (r["ci_low"], r["ci_high"]),
                  "α": r["alpha"], "adjudicated": r["adjudicated"]} for r in rows]
        n_adj = max((r["adjudicated"] for r in rows if r["rater_b"] == "adjudicated"), default=0)
        out.append(Table("labels", "X / Y label agreement (κ_X, κ_Y per pair; vs gold; Krippendorff's α across all)",
                         shown, ["Axis", "Raters", "Statistic", "n", "agreement", "κ", "95% CI", "α", "adjudicated"],
                         "A label set is one category (X2+X3). α: nominal, missing labels allowed. Fleiss' κ "
                         "(three annotators or more): the items every annotator labelled; agreement = mean share "
                         "of agreeing annotator pairs. CI: percentile bootstrap over items. "
                         f"{n_adj} item(s) adjudicated" + (": \"gold\" is the adjudicated labels there, the "
                                                          "benchmark's elsewhere; benchmark vs adjudicated compares "
                                                          "the two." if n_adj else ".")))
    if boundary:
        shown = [{"Raters": f"{b['rater_a']} vs {b['rater_b']}", "n": b["n"], "X disagreements": b["disagreements"],
                  "on X2/X3 boundary": b["x2_x3"], "share": b["share"]} for b in boundary]
        out.append(Table("boundary", "X disagreements on the X2/X3 boundary", shown,
                         ["Raters", "n", "X disagreements", "on X2/X3 boundary", "share"]))
    return out
