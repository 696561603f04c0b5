"""`--compare A:B`: paired bootstrap comparisons of two methods, per backbone, as the MemEye
bootstrap table (overall, by Y, and the Y3 − Y1 change of the difference).

report.json `bootstrap` rows: {backbone, a, b, a_method, b_method, metric, mode, slice, n, n_b,
mean_a, mean_b, diff, ci_low, ci_high, n_clusters, resamples, seed, clustered}. For `slice` "all" or
a Y level, diff = mean over items scored by both of (a − b), the CI a paired percentile bootstrap
over items (clusters with --clustered). For "Y3-Y1", diff = mean(a − b | Y3) − mean(a − b | Y1), the
two groups resampled independently (n = Y3 items, n_b = Y1 items). Answerable items only.
"""

from __future__ import annotations

import numpy as np
import pandas as pd

from scorer.metrics.comparisons import (
    PairedPlan,
    Slice,
    TwoSamplePlan,
    add_slices,
    item_labels,
    scores_by_method,
    slice_members,
)
from scorer.metrics.row_codes import RowCodes
from scorer.model import Y_LABELS
from scorer.names import method_matches
from scorer.sections.base import ScoreContext, SectionResult, Table
from scorer.sections.methods import answerable_scores
from scorer.sections.registry import name_of

NAME = name_of(__name__)
METRICS = (("judge", "open"), ("em", "mcq"))


def method_table(frame: pd.DataFrame, codes: RowCodes | None = None) -> dict[str, list[tuple[str, str]]]:
    """backbone → [(method, display)], computed once. `codes`: row_codes(frame), when the caller
    has them (the distinct rows are then found on integer codes, in the same order)."""
    out: dict[str, list[tuple[str, str]]] = {}
    triples = frame[["backbone", "method", "display"]]
    display, names = pd.factorize(frame["display"].to_numpy(object)) if codes is not None else (None, ())
    if codes is not None and codes.pair is not None and not (display < 0).any():
        # the first row of each distinct (pair, display), in row order: what drop_duplicates keeps
        first = np.sort(np.unique(codes.pair * max(len(names), 1) + display, return_index=True)[1])
        triples = triples.iloc[first]
    else:
        triples = triples.drop_duplicates()
    for b, m, d in triples.itertuples(index=False):
        out.setdefault(b, []).append((m, d))
    return out


def find_method(methods: dict[str, list[tuple[str, str]]], backbone: str, wanted: str, names) -> tuple[str | None, str]:
    """(method, problem): the backbone's one method named `wanted` (run or display name)."""
    hits = _named(methods, backbone, wanted, names)
    if len(hits) == 1:
        return hits[0], ""
    if not hits:
        return None, f"{backbone} has no method {wanted!r}"
    return None, f"{backbone}: {wanted!r} names several methods ({', '.join(hits)}); use the run's method name"


def _named(methods: dict[str, list[tuple[str, str]]], backbone: str, wanted: str, names) -> list[str]:
    """The backbone's methods that `wanted` names (its run or display name), sorted."""
    return sorted({m for m, d in methods.get(backbone, ()) if wanted in (m, d) or method_matches(m, wanted, names)})


def unknown_compared(frame: pd.DataFrame, compare, names) -> list[str]:
    """The `--compare` names that name no method on any backbone (a misspelling: the comparison would
    only be a warning and a null value); a name missing on some backbones only is that warning."""
    methods = method_table(frame)
    known = sorted({d for pairs in methods.values() for _, d in pairs})
    return [f"--compare {a}:{b}: {w!r} names no method of the runs (their methods: {', '.join(known[:20])})"
            for a, b in compare for w in (a, b)
            if not any(_named(methods, backbone, w, names) for backbone in methods)]


def clusters_of(frame: pd.DataFrame) -> dict[str, str]:
    return dict(zip(frame["item_id"], frame["cluster"]))


def build(ctx: ScoreContext) -> SectionResult:
    opts = ctx.options
    if not opts.compare:
        return SectionResult.absent(NAME, "no --compare A:B given")
    frame = answerable_scores(ctx.frame)
    if frame.empty:
        return SectionResult.absent(NAME, "no scored answerable predictions")
    clusters = clusters_of(frame) if opts.clustered else None
    plan, plan2 = PairedPlan(opts.resamples, opts.seed), TwoSamplePlan(opts.resamples, opts.seed)
    pending, warnings = [], []
    methods = method_table(frame)
    prepared = {metric: _prepare(frame, metric, mode) for metric, mode in METRICS}
    for a_name, b_name in opts.compare:
        for backbone in sorted(frame["backbone"].unique()):
            a, pa = find_method(methods, backbone, a_name, opts.names)
            b, pb = find_method(methods, backbone, b_name, opts.names)
            if a is None or b is None:
                warnings.append(pa or pb)
                continue
            for metric, mode in METRICS:
                pending += plan_compare(plan, plan2, prepared[metric], backbone, a_name, b_name, a, b, metric, mode,
                                        clusters, opts)
    results, results2 = plan.run(), plan2.run()
    rows = []
    for kind, base, key in pending:
        if kind == "paired":
            r = results[key]
            rows.append({**base, "slice": key[-1], "n": r.n, "n_b": None, "mean_a": r.mean_a, "mean_b": r.mean_b,
                         "diff": r.estimate, "ci_low": r.ci_low, "ci_high": r.ci_high, "n_clusters": r.n_clusters})
        else:
            r = results2[key]
            rows.append({**base, "slice": key[-1], "n": r.n, "n_b": r.n_b, "mean_a": r.mean_a, "mean_b": r.mean_b,
                         "diff": r.estimate, "ci_low": r.ci_low, "ci_high": r.ci_high, "n_clusters": None})
    if not rows:
        return SectionResult(NAME, {"value": None, "reason": "no compared pair has both methods scored on one backbone"},
                             reason="no compared pair found", warnings=tuple(warnings))
    return SectionResult(NAME, rows, tables(rows), warnings=tuple(warnings))


def _prepare(frame: pd.DataFrame, metric: str, mode: str) -> tuple[dict, dict, list[str]]:
    scores = scores_by_method(frame, metric, mode)
    labels = item_labels(frame, mode)
    ys = [y for y in Y_LABELS if any(y in v for v in labels["y"])]
    members = slice_members(labels, [Slice("all", "all")] + [Slice("all", y) for y in ys])
    return scores, members, ys


def plan_compare(plan, plan2, prepared, backbone, a_name, b_name, a, b, metric, mode, clusters, opts) -> list[tuple]:
    """Add the comparisons of one (backbone, metric) to the plans; returns (kind, base row, plan
    key) in report order."""
    scores, members, ys = prepared
    sa, sb = scores.get((backbone, a)), scores.get((backbone, b))
    if sa is None or sb is None or sa.empty or sb.empty:
        return []
    base = {"backbone": backbone, "a": a_name, "b": b_name, "a_method": a, "b_method": b, "metric": metric,
            "mode": mode, "resamples": opts.resamples, "seed": opts.seed, "clustered": bool(opts.clustered)}
    key = ("compare", a_name, b_name, backbone, metric)
    out = [("paired", base, k) for k in add_slices(plan, key, sa, sb, members, clusters)]
    if len(ys) >= 2:
        hi, lo = ys[-1], ys[0]
        common = sa.index.intersection(sb.index).sort_values()
        d = (sa.reindex(common) - sb.reindex(common)).to_numpy(float)
        k2 = (*key, f"{hi}-{lo}")
        plan2.add(k2, d[common.isin(members[Slice("all", hi)])], d[common.isin(members[Slice("all", lo)])])
        out.append(("two_sample", {**base, "clustered": False}, k2))
    return out


def tables(rows: list[dict]) -> list[Table]:
    shown = []
    for r in rows:
        n = r["n"] if r["n_b"] is None else f"{r['n']}/{r['n_b']}"
        shown.append({"Backbone": r["backbone"], "Comparison": f"{r['a']} − {r['b']}",
                      "Metric": "LLM-Judge" if r["metric"] == "judge" else "EM", "Slice": r["slice"], "n": n,
                      "A": r["mean_a"], "B": r["mean_b"], "Δ": r["diff"], "Δ 95% CI": (r["ci_low"], r["ci_high"])})
    note = ("Paired percentile bootstrap over items (same resampled items for both methods); "
            f"{rows[0]['resamples']} resamples, seed {rows[0]['seed']}. Y3-Y1: change of the difference between "
            "Y levels (A, B columns then hold the mean differences at each level; n = items per level).")
    return [Table("compare", "Paired bootstrap comparisons (--compare)", shown,
                  ["Backbone", "Comparison", "Metric", "Slice", "n", "A", "B", "Δ", "Δ 95% CI"], note)]
