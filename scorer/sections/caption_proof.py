"""Caption-proof gain (DESIGN §5): Δ = Score_V − Score_T for matched text / visual method pairs
(FC, SRAG, SimpleMem by default; `extra["caption_pairs"]` or --caption-pair T:V to change), per
(X, Y) cell, per X level, for low-X (X1–X2), high-X (X3–X4) and all items, each with a paired
percentile bootstrap CI over the items both methods scored. `pooled` averages each item's Δ over
the pairs present (the MemEye bootstrap table's "Cap.-Proof" rows). Answerable items only.

report.json `caption_proof` rows: {backbone, pair, t, v, metric, mode, x, y, n, score_t, score_v,
delta, ci_low, ci_high, n_clusters, resamples, seed}; x ∈ X1…X4 | low | high | all, y ∈ Y1…Y3 | all.
"""

from __future__ import annotations

import numpy as np

from scorer.metrics.comparisons import (
    PairedPlan,
    add_dense_slices,
    caption_slices,
    dense_scores,
    item_labels,
    slice_masks,
)
from scorer.model import X_LABELS, Y_LABELS
from scorer.names import CAPTION_PROOF_PAIRS
from scorer.sections.base import ScoreContext, SectionResult, Table
from scorer.sections.bootstrap import clusters_of, find_method, method_table
from scorer.sections.methods import answerable_codes, answerable_scores
from scorer.sections.registry import name_of

NAME = name_of(__name__)
METRICS = (("judge", "open"), ("em", "mcq"))
POOLED = "pooled"
X_ORDER = {x: i for i, x in enumerate([*X_LABELS, "low", "high", "all"])}


def pair_label(t: str, v: str) -> str:
    for suffix in ("(T)", "(V)"):
        t = t.replace(suffix, "")
    return t.strip() or f"{t}/{v}"


def build(ctx: ScoreContext) -> SectionResult:
    opts = ctx.options
    frame = answerable_scores(ctx.frame)
    if frame.empty:
        return SectionResult.absent(NAME, "no scored answerable predictions")
    wanted = tuple(opts.extra.get("caption_pairs") or CAPTION_PROOF_PAIRS)
    clusters = clusters_of(frame) if opts.clustered else None
    plan = PairedPlan(opts.resamples, opts.seed)
    pending = []
    prepared = {}
    codes = answerable_codes(ctx, frame)  # once for both metrics (and the matrix, in this process)
    for metric, mode in METRICS:
        labels = item_labels(frame, mode, codes)
        xs = sorted({x for v in labels["x"] for x in v if x in X_LABELS})
        ys = sorted({y for v in labels["y"] for y in v if y in Y_LABELS})
        dense = dense_scores(frame, metric, mode, labels, codes)
        members = slice_masks(dense.labels, caption_slices(xs, ys))  # masks over dense.ids
        cl = None if clusters is None else np.array([clusters.get(i, i) for i in dense.ids], dtype=object)
        prepared[metric] = (dense, members, cl)
    methods = method_table(frame, codes)
    for backbone in sorted(methods):
        present = []
        for t, v in wanted:
            mt, _ = find_method(methods, backbone, t, opts.names)
            mv, _ = find_method(methods, backbone, v, opts.names)
            if mt and mv:
                present.append((pair_label(t, v), t, v, mt, mv))
        for metric, mode in METRICS:
            pending += _plan_backbone(plan, prepared[metric], backbone, present, metric, mode, clusters)
    if not pending:
        names = ", ".join(f"{t}/{v}" for t, v in wanted)
        return SectionResult.absent(NAME, f"no backbone has both methods of a caption-proof pair ({names})")
    results = plan.run()
    rows = []
    for key, (t, v) in pending:
        _, backbone, metric, mode, pair, x, y = key
        r = results[key]
        rows.append({"backbone": backbone, "pair": pair, "t": t, "v": v, "metric": metric, "mode": mode,
                     "x": x, "y": y, "n": r.n, "score_t": r.mean_b, "score_v": r.mean_a, "delta": r.estimate,
                     "ci_low": r.ci_low, "ci_high": r.ci_high, "n_clusters": r.n_clusters,
                     "resamples": opts.resamples, "seed": opts.seed})
    rows.sort(key=lambda r: (r["backbone"], r["metric"] != "judge", r["pair"] == POOLED, r["pair"],
                             r["y"] != "all", r["y"], X_ORDER.get(r["x"], 99)))
    return SectionResult(NAME, rows, tables(rows))


def _plan_backbone(plan, prepared, backbone, present, metric, mode, _clusters) -> list[tuple]:
    dense, members, clusters = prepared
    pairs, meta = {}, {}
    for label, t, v, mt, mv in present:
        st, sv = dense.columns.get((backbone, mt)), dense.columns.get((backbone, mv))
        if st is not None and sv is not None:
            pairs[label] = (sv, st)  # a = visual, b = text: diff = V − T
            meta[label] = (t, v)
    if not pairs:
        return []
    if len(pairs) > 1:
        common = np.logical_and.reduce([~np.isnan(sv) & ~np.isnan(st) for sv, st in pairs.values()])
        if common.any():
            # each item's mean over the pairs: the columns summed in pair order, then divided by their
            # number (what DataFrame.mean(axis=1) gives on the items every pair scored)
            pairs[POOLED] = tuple(np.where(common, _row_mean([p[side] for p in pairs.values()]), np.nan)
                                  for side in (0, 1))
            meta[POOLED] = ("+".join(t for t, _ in meta.values()), "+".join(v for _, v in meta.values()))
    out = []
    for label, (sv, st) in pairs.items():
        for key in add_dense_slices(plan, ("cp", backbone, metric, mode, label), sv, st, members, clusters):
            out.append((key, meta[label]))
    return out


def _row_mean(columns: list[np.ndarray]) -> np.ndarray:
    total = columns[0].copy()
    for c in columns[1:]:
        total += c
    return total / len(columns)


def _x_label(x: str) -> str:
    return {"low": "Low-X (X1–X2)", "high": "High-X (X3–X4)", "all": "All"}.get(x, x)


def tables(rows: list[dict]) -> list[Table]:
    idx = {(r["backbone"], r["pair"], r["metric"], r["x"], r["y"]): r for r in rows}
    keys = sorted({(r["backbone"], r["pair"], r["x"], r["y"]) for r in rows},
                  key=lambda k: (k[0], k[1] == POOLED, k[1], k[3] != "all", k[3], X_ORDER.get(k[2], 99)))
    by_x, by_cell = [], []
    for backbone, pair, x, y in keys:
        j = idx.get((backbone, pair, "judge", x, y))
        e = idx.get((backbone, pair, "em", x, y))
        row = {"Backbone": backbone, "Pair": pair,
               "n (open)": j["n"] if j else None,
               "Judge(T)": j["score_t"] if j else None, "Judge(V)": j["score_v"] if j else None,
               "ΔJ": j["delta"] if j else None, "ΔJ 95% CI": (j["ci_low"], j["ci_high"]) if j else None,
               "n (MCQ)": e["n"] if e else None,
               "EM(T)": e["score_t"] if e else None, "EM(V)": e["score_v"] if e else None,
               "ΔEM": e["delta"] if e else None, "ΔEM 95% CI": (e["ci_low"], e["ci_high"]) if e else None}
        if y == "all":
            by_x.append({**row, "X": _x_label(x)})
        else:
            by_cell.append({**row, "Y": y, "X": x})
    tail = ["n (open)", "Judge(T)", "Judge(V)", "ΔJ", "ΔJ 95% CI", "n (MCQ)", "EM(T)", "EM(V)", "ΔEM", "ΔEM 95% CI"]
    r0 = rows[0]
    note = (f"Δ = Score_V − Score_T on the items both methods scored; paired percentile bootstrap, {r0['resamples']} "
            f"resamples, seed {r0['seed']}. pooled = each item's Δ averaged over the pairs present.")
    n_for = {**{c: "n (open)" for c in ("Judge(T)", "Judge(V)", "ΔJ")}, **{c: "n (MCQ)" for c in ("EM(T)", "EM(V)", "ΔEM")}}
    return [Table("caption_proof", "Caption-proof gain by X level", by_x, ["Backbone", "Pair", "X", *tail], note, n_for),
            Table("caption_proof_cells", "Caption-proof gain per (X, Y) cell", by_cell,
                  ["Backbone", "Pair", "Y", "X", *tail], note, n_for)]
