"""Report section `evidence`: retrieval diagnostics at K by Y, by X and per task for every run
group that logged a ranked retrieval list, and the chain metrics (required-fact recall, complete-
chain retrieval and delivery) for every group that logged retrieval or delivery.

report.json rows: {backbone, method, display, mode, y, x, task, metric, k, value, n}. `y`/`x`/`task`
are "all" when the row does not slice on them; temporal metrics (latest_clue_recall, stale_dominance,
rank_inversion, latest_miss) are only on y = "Y3" rows, over Y3 items with at least two existing
clues. Chain metrics read the retriever's output as the top K of the logged ranking (a longer logged
pool is a candidate list for diagnostics, not what the reader could have been given).
"""

from __future__ import annotations

from typing import Iterable, Sequence

from scorer.metrics.evidence import (
    RETRIEVAL_METRICS,
    TEMPORAL_METRICS,
    Diagnosis,
    item_diagnosis,
    item_evidence,
)
from scorer.model import X_LABELS, Y_LABELS
from scorer.sections import evidence_records
from scorer.sections.base import ScoreContext, SectionResult
from scorer.sections.evidence_records import (
    FOLD_NOTE,
    Record,
    by_group,
    collect,
    fold_modes,
    group_fields,
    mean_or_none,
    method_order,
    titled,
)
from scorer.sections.registry import name_of

NAME = name_of(__name__)
prepare = evidence_records.prepare  # shared evidence records, computed before sections fork
ALL = "all"
CHAIN_METRICS = ("required_fact_recall", "chain_retrieved", "chain_delivered")
DIAG_COLUMNS = ("method", "backbone", "mode", "n", *RETRIEVAL_METRICS, "n_y3", *TEMPORAL_METRICS)


def diagnosed(records: Sequence[Record], k: int) -> list[tuple[Record, Diagnosis]]:
    hit = _DIAGNOSED.get((id(records), k))
    if hit is not None and hit[0] is records:  # a group's list, diagnosed already for another table
        return hit[1]
    out = _diagnosed(records, k)
    if len(_DIAGNOSED) > 4096:  # bounded: a long-lived process (the app) scores many contexts
        _DIAGNOSED.clear()
    _DIAGNOSED[(id(records), k)] = (records, out)
    return out


_DIAGNOSED: dict[tuple[int, int], tuple[Sequence[Record], list]] = {}


def _diagnosed(records: Sequence[Record], k: int) -> list[tuple[Record, Diagnosis]]:
    out = []
    for r in records:
        if not r.item.answerable:  # an abstention control's clue marks absent evidence: nothing to retrieve
            continue
        d = item_diagnosis(r.task, r.item, r.prediction.retrieved, k)
        if d is not None:
            out.append((r, d))
    return out


def category_of(item) -> str | None:
    """An imported benchmark's own question category (LoCoMo's 1–5), kept on the item."""
    c = item.raw.get("category")
    return None if c is None or isinstance(c, (dict, list)) else str(c)


def _slice_rows(fields: dict, pairs: list[tuple[Record, Diagnosis]], k: int, y: str, x: str, task: str,
                temporal: bool, category: str = ALL) -> list[dict]:
    rows = []
    where = {"y": y, "x": x, "task": task, "category": category}
    for m in RETRIEVAL_METRICS:
        value, n = mean_or_none(d.value(m) for _, d in pairs)
        rows.append({**fields, **where, "metric": m, "k": k, "value": value, "n": n})
    if temporal:
        eligible = [d for _, d in pairs if d.temporal]  # temporal implies Y3 with two or more clues
        for m in TEMPORAL_METRICS:
            value, n = mean_or_none(d.value(m) for d in eligible)
            rows.append({**fields, **where, "y": "Y3", "metric": m, "k": k, "value": value, "n": n})
    return rows


def diagnostic_rows(records: Sequence[Record], k: int) -> list[dict]:
    out = []
    for recs in by_group(records).values():
        pairs = diagnosed(recs, k)
        if not pairs:
            continue
        fields = group_fields(recs)
        out += _slice_rows(fields, pairs, k, ALL, ALL, ALL, temporal=False)
        for y in Y_LABELS:
            part = [(r, d) for r, d in pairs if y in r.item.y]
            out += _slice_rows(fields, part, k, y, ALL, ALL, temporal=y == "Y3")
        for x in X_LABELS:
            part = [(r, d) for r, d in pairs if x in r.item.x]
            out += _slice_rows(fields, part, k, ALL, x, ALL, temporal=True)
        for task in sorted({r.item.task for r, _ in pairs}):
            part = [(r, d) for r, d in pairs if r.item.task == task]
            out += _slice_rows(fields, part, k, ALL, ALL, task, temporal=True)
        for cat in sorted({c for r, _ in pairs if (c := category_of(r.item)) is not None}):
            part = [(r, d) for r, d in pairs if category_of(r.item) == cat]
            out += _slice_rows(fields, part, k, ALL, ALL, ALL, temporal=False, category=cat)
    return [r for r in out if r["n"]]


def chain_rows(records: Sequence[Record], k: int) -> list[dict]:
    out = []
    for recs in by_group(records).values():
        statuses = []
        for r in recs:
            if not r.item.answerable:
                continue
            ev = item_evidence(r.task, r.item, r.prediction, k)  # the top K of the logged ranking
            if ev.any_logged:
                statuses.append((r, ev.chain))
        if not statuses:
            continue
        fields = group_fields(recs)
        for y in (ALL, *Y_LABELS):
            chosen = [s for r, s in statuses if y == ALL or y in r.item.y]
            for m in CHAIN_METRICS:
                value, n = mean_or_none(_chain_value(s, m) for s in chosen)
                if n or y == ALL:
                    out.append({**fields, "y": y, "x": ALL, "task": ALL, "metric": m, "k": k, "value": value,
                                "n": n})
    return out


def _chain_value(s, metric: str) -> float | None:
    v = getattr(s, metric)
    return None if v is None else float(v)


def _pivot(rows: Iterable[dict], key: str, order: Sequence[str]) -> list[dict]:
    """One table row per (group, slice value): metrics as columns, n for each family."""
    table: dict[tuple, dict] = {}
    for r in rows:
        if r[key] == ALL and key != "y":
            continue
        if key == "y" and any(r.get(o, ALL) != ALL for o in ("x", "task", "category")):
            continue
        if key != "y" and not (r["y"] in (ALL, "Y3")
                               and all(r.get(o, ALL) == ALL for o in ("x", "task", "category") if o != key)):
            continue
        row = table.setdefault((r["backbone"], r["method"], r["mode"], r[key]), {
            "method": r["display"], "method_name": r["method"], "backbone": r["backbone"], "mode": r["mode"],
            key: r[key]})
        row[r["metric"]] = r["value"]
        if r["metric"] in RETRIEVAL_METRICS:
            row["n"] = r["n"]
        elif r["metric"] in TEMPORAL_METRICS:
            row["n_y3"] = r["n"]
    rank = {v: i for i, v in enumerate(order)}
    return sorted(table.values(), key=lambda r: (method_order(r["method"]), r["backbone"], r["mode"],
                                                 rank.get(r[key], len(rank)), r[key]))


def provenance_rows(records: Sequence[Record], k: int) -> list[dict]:
    out = []
    for recs in by_group(records).values():
        logged = [r for r in recs if r.prediction.retrieved is not None and r.item.answerable]
        if not logged:
            continue
        valid = diagnosed(recs, k)  # the same pairs as over `logged`: no retrieval, no diagnosis
        y3 = [r for r in logged if "Y3" in r.item.y and r.task.clue_chain(r.item)]
        one_clue = sum(1 for r in y3 if len(r.task.clue_chain(r.item)) < 2)
        f = group_fields(recs)
        out.append({"method": f["display"], "method_name": f["method"], "backbone": f["backbone"],
                    "mode": f["mode"], "rows": len(recs),
                    "retrieval_logged": len(logged), "valid_provenance": len(valid),
                    "no_clue_round": len(logged) - len(valid), "y3_eligible": len(y3) - one_clue,
                    "y3_one_clue": one_clue})
    return sorted(out, key=lambda r: (method_order(r["method"]), r["backbone"], r["mode"]))


def chain_table_rows(chains: Sequence[dict]) -> list[dict]:
    table: dict[tuple, dict] = {}
    for r in chains:
        if r["y"] != ALL:
            continue
        row = table.setdefault((r["display"], r["backbone"], r["mode"]),
                               {"method": r["display"], "method_name": r["method"], "backbone": r["backbone"],
                                "mode": r["mode"]})
        row[r["metric"]] = r["value"]
        row["n_delivered" if r["metric"] == "chain_delivered" else "n_retrieved"] = r["n"]
    return sorted(table.values(), key=lambda r: (method_order(r["method"]), r["backbone"], r["mode"]))


def build(ctx: ScoreContext) -> SectionResult:
    k = ctx.options.k
    records, warnings = collect(ctx)
    diag = diagnostic_rows(records, k)
    chains = chain_rows(records, k)
    if not diag and not chains:
        return SectionResult.absent(NAME, "no run logged a retrieved or delivered list")
    mirrored = evidence_records.mirrored(ctx)
    def fold(rows: list[dict]) -> list[dict]:
        return fold_modes(rows, mirrored) if mirrored else rows

    extra_note = FOLD_NOTE if mirrored else ""
    tables = []
    if diag:
        base_note = (f"K = {k}. n = answerable items with valid provenance (retrieval logged, at least one "
                     "existing clue round); Y3 columns over Y3 items with at least two existing clues (n Y3). latest = the "
                     "chronologically last clue; stale = a retrieved round from one of the item's source sessions "
                     "before it. Stale-Dom. = stale ranked above the latest, or stale present while the latest is "
                     "absent; Rank-Inv. = both present, stale higher (tied scores share a rank); Latest-Miss = "
                     "latest absent from the top-K.")
        slices = [("y", "Y", (*Y_LABELS, ALL)), ("x", "X", X_LABELS), ("task", "Task", ())]
        if any(r["category"] != ALL for r in diag):
            slices.append(("category", "category", ()))
        for key, label, order in slices:
            cols = (*DIAG_COLUMNS[:3], key, *DIAG_COLUMNS[3:])
            tables.append(titled(f"evidence_by_{key}", f"Retrieval diagnostics by {label} (K = {k})",
                                 fold(_pivot(diag, key, order)), cols,
                                 (base_note if key == "y" else f"K = {k}; definitions as under the table by Y.")
                                 + extra_note))
        tables.append(titled("evidence_provenance", "Retrieval provenance per run", fold(provenance_rows(records, k)),
                             ("method", "backbone", "mode", "rows", "retrieval_logged", "valid_provenance",
                              "no_clue_round", "y3_eligible", "y3_one_clue"),
                             "Rows without valid provenance, and Y3 items with a single clue, are left out of the "
                             "diagnostics (never counted as misses)."))
    if chains:
        cols = ("method", "backbone", "mode", "required_fact_recall", "chain_retrieved", "n_retrieved",
                "chain_delivered", "n_delivered")
        tables.append(titled("evidence_chain", "Gold-chain retrieval and delivery (all items)",
                             fold(chain_table_rows(chains)), cols,
                             f"Required-fact recall and Chain Retr. over the top K = {k} of the logged ranking; "
                             "Chain Deliv. needs a logged `delivered` list (unknown delivery is left out, never "
                             "read as 'same as retrieved')." + extra_note))
    return SectionResult(NAME, diag + chains, tables, warnings=warnings)
