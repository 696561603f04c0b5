"""Report section `oracle_evidence`: MemEye's oracle-evidence validation (App. "Oracle-Evidence
Validation Details") and the evolving visual-state probe (App. "Evolving Visual State Probe").

From clue-only (oracle) runs, per backbone, answerable items only:
- (a) reasoning depth: EM (MCQ), BLEU-1 and LLM-Judge (open) by Y for the multimodal oracle;
- (b) visual granularity: text-oracle vs visual-oracle score by X with Δ = V − T and a paired
  bootstrap CI (items both scored), for the judge and for EM;
- (c) evolving-state probe, when latest-only or stale-only runs are given: the judge/EM of the
  latest-only, stale-only and all-clue oracle controls beside every other run (memory systems) on the
  evolving visual-state subset = answerable Y3 items with at least two existing clues whose latest
  clue round carries an image or video.
Runs are recognised by method or display name (ctx.options.extra["oracle_methods"] = {"visual": [...],
"text": [...], "latest_only": [...], "stale_only": [...]}; entries starting with `re:` are regexes).
"""

from __future__ import annotations

import re
from typing import Mapping, Sequence

import pandas as pd

from scorer.metrics.bootstrap import paired_diff_cis
from scorer.model import X_LABELS, Y_LABELS
from scorer.sections.base import ScoreContext, SectionResult
from scorer.sections.evidence_tables import bootstrap_note, titled
from scorer.sections.methods import METRIC_TITLES
from scorer.sections.registry import name_of

NAME = name_of(__name__)
ROLES = ("visual", "text", "latest_only", "stale_only")
DEFAULT_METHODS: Mapping[str, tuple[str, ...]] = {
    "visual": ("clue_only_context__multimodal", "Oracle(V)"),
    "text": ("clue_only_context__text_only", "Oracle(T)"),
    "latest_only": ("re:latest[_-]?only",),
    "stale_only": ("re:stale[_-]?only",),
}
ROLE_TITLES = {"visual": "All-clue oracle", "latest_only": "Latest-only", "stale_only": "Stale-only"}
METRIC_MODE = {"em": "mcq", "judge": "open", "bleu_1": "open"}
TITLES = {"em": "EM", "bleu_1": "B-1", "judge": "Judge", "n_em": "n EM", "n_open": "n open", "text": "Text",
          "visual": "Visual", "delta": "Δ (V − T)", "ci": "95% CI", "metric": "Metric", "evaluation": "Evaluation",
          "n_judge": "n Judge"}


def matchers(ctx: ScoreContext) -> dict[str, list[re.Pattern[str]]]:
    given = (ctx.options.extra or {}).get("oracle_methods") or {}
    out = {}
    for role in ROLES:
        entries = given.get(role, DEFAULT_METHODS[role])
        entries = [entries] if isinstance(entries, str) else list(entries)
        out[role] = [re.compile(e[3:], re.I) if e.startswith("re:") else re.compile(f"^{re.escape(e)}$")
                     for e in entries]
    return out


def roles_of(frame: pd.DataFrame, pats: Mapping[str, list[re.Pattern[str]]]) -> dict[str, str]:
    """method → role for the oracle-type runs in the frame."""
    out = {}
    for method, display in frame[["method", "display"]].drop_duplicates().itertuples(index=False):
        for role in ROLES:
            if any(p.search(method) or p.search(str(display)) for p in pats[role]):
                out[method] = role
                break
    return out


def _mean(sub: pd.DataFrame, metric: str) -> tuple[float | None, int]:
    v = sub.loc[sub["mode"] == METRIC_MODE[metric], metric].dropna()
    return (float(v.mean()) if len(v) else None), len(v)


def _has(labels: pd.Series, label: str) -> pd.Series:
    return labels.map(lambda v: label in v)


def depth_rows(frame: pd.DataFrame, methods: Sequence[str]) -> list[dict]:
    out = []
    for backbone in sorted(frame["backbone"].unique()):
        sub = frame[(frame["backbone"] == backbone) & frame["method"].isin(methods)]
        for y in (*Y_LABELS, "all"):
            part = sub if y == "all" else sub[_has(sub["y"], y)]
            if part.empty:
                continue
            row = {"backbone": backbone, "method": part["display"].iloc[0], "y": y}
            for m in ("em", "bleu_1", "judge"):
                row[m], row[f"n_{m}"] = _mean(part, m)
            row["n_open"] = row["n_judge"]
            out.append(row)
    return out


def gap_rows(frame: pd.DataFrame, text: Sequence[str], visual: Sequence[str], ctx: ScoreContext) -> list[dict]:
    o = ctx.options
    out, pending = [], []
    for backbone in sorted(frame["backbone"].unique()):
        sub = frame[frame["backbone"] == backbone]
        for metric in ("judge", "em"):
            mode = METRIC_MODE[metric]
            t = sub[sub["method"].isin(text) & (sub["mode"] == mode)].dropna(subset=[metric])
            v = sub[sub["method"].isin(visual) & (sub["mode"] == mode)].dropna(subset=[metric])
            if t.empty or v.empty:
                continue
            ts = t.drop_duplicates("item_id", keep="last").set_index("item_id")
            vs = v.drop_duplicates("item_id", keep="last").set_index("item_id")
            common = ts.index.intersection(vs.index)
            for x in (*X_LABELS, "all"):
                ids = common if x == "all" else common[_has(vs.loc[common, "x"], x).to_numpy()]
                if not len(ids):
                    continue
                a, b = vs.loc[ids, metric].to_numpy(float), ts.loc[ids, metric].to_numpy(float)
                cl = vs.loc[ids, "cluster"].tolist() if o.clustered else None
                pending.append(((a, b, cl), {"backbone": backbone, "metric": metric, "x": x,
                                             "text_method": ts["display"].iloc[0],
                                             "visual_method": vs["display"].iloc[0]}))
    # every CI in one call (paired_diff_ci's values): those over as many items share one drawing
    cis = paired_diff_cis([p for p, _ in pending], resamples=o.resamples, seed=o.seed)
    for (_, head), ci in zip(pending, cis):
        out.append({"backbone": head["backbone"], "metric": head["metric"], "x": head["x"], "n": ci.n,
                    "text": ci.mean_b, "visual": ci.mean_a, "delta": ci.estimate, "ci_low": ci.ci_low,
                    "ci_high": ci.ci_high, "n_clusters": ci.n_clusters,
                    "text_method": head["text_method"], "visual_method": head["visual_method"]})
    return out


def evolving_subset(ctx: ScoreContext) -> set[str]:
    out = set()
    for task in ctx.bench.tasks:
        for item in task.items:
            chain = task.clue_chain(item)
            if item.answerable and "Y3" in item.y and len(chain) >= 2 and any(
                    m.kind in ("image", "video") for m in chain[-1].media):
                out.add(item.item_id)
    return out


def probe_rows(frame: pd.DataFrame, roles: Mapping[str, str], subset: set[str]) -> list[dict]:
    sub = frame[frame["item_id"].isin(subset)]
    out = []
    for (backbone, method), part in sub.groupby(["backbone", "method"], sort=True):
        role = roles.get(method)
        if role == "text":
            continue  # the probe's controls are visual; the text oracle is in table (b)
        row = {"backbone": backbone, "method": part["display"].iloc[0], "role": role or "memory",
               "evaluation": "Oracle control" if role else "Memory system"}
        row["judge"], row["n_judge"] = _mean(part, "judge")
        row["em"], row["n_em"] = _mean(part, "em")
        out.append(row)
    order = {"stale_only": 0, "latest_only": 1, "visual": 2, "memory": 3}
    return sorted(out, key=lambda r: (r["backbone"], order[r["role"]], r["method"]))


def build(ctx: ScoreContext) -> SectionResult:
    frame = ctx.frame
    if frame is None or frame.empty:
        return SectionResult.absent(NAME, "no prediction row joins to a benchmark item")
    frame = frame[frame["answerable"].astype(bool)]
    roles = roles_of(frame, matchers(ctx))
    by_role = {r: [m for m, rr in roles.items() if rr == r] for r in ROLES}
    if not by_role["visual"] and not by_role["text"]:
        return SectionResult.absent(NAME, "no clue-only (oracle) run, e.g. clue_only_context__multimodal")
    depth = depth_rows(frame, by_role["visual"]) if by_role["visual"] else []
    gaps = gap_rows(frame, by_role["text"], by_role["visual"], ctx) if by_role["text"] and by_role["visual"] else []
    probe: list[dict] = []
    subset = evolving_subset(ctx)
    if (by_role["latest_only"] or by_role["stale_only"]) and subset:
        probe = probe_rows(frame, roles, subset)
    data = {"by_y": depth, "by_x": gaps, "evolving_state": probe}
    tables = []
    if depth:
        tables.append(titled("oracle_by_y", "Oracle evidence (a): reasoning depth by Y", depth,
                             ("backbone", "method", "y", "n_em", "em", "n_open", "bleu_1", "judge"),
                             "Gold clue rounds with original media delivered (clue-only multimodal runs); "
                             "answerable items.", TITLES,
                             {"em": "n_em", "bleu_1": "n_open", "judge": "n_open"}))
    if gaps:
        shown = [{**r, "ci": (r["ci_low"], r["ci_high"]), "metric": METRIC_TITLES.get(r["metric"], r["metric"])}
                 for r in gaps]
        tables.append(titled("oracle_by_x", "Oracle evidence (b): text vs visual gap by X", shown,
                             ("backbone", "metric", "x", "n", "text", "visual", "delta", "ci"),
                             f"Δ = visual − text oracle on items both scored; {bootstrap_note(ctx)}.", TITLES))
    if probe:
        for r in probe:
            r["shown"] = ROLE_TITLES.get(r["role"], r["method"])
        tables.append(titled("oracle_evolving_state", "Evolving visual-state probe", probe,
                             ("backbone", "evaluation", "shown", "n_judge", "judge", "n_em", "em"),
                             f"{len(subset)} answerable Y3 items with at least two clues whose latest clue carries "
                             "an image or video. Oracle controls get clue-only evidence with raw media; memory "
                             "systems their own retrieval or context.", {**TITLES, "shown": "Method"}))
    if not tables:
        return SectionResult.absent(NAME, "oracle runs found but none has scored answerable items")
    return SectionResult(NAME, data, tables)



