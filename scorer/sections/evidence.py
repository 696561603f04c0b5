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

from typing import Iterable, Mapping, Sequence

import numpy as np

from scorer.metrics.evidence import RETRIEVAL_METRICS, TEMPORAL_METRICS, Y3, Diagnosis
from scorer.metrics.evidence_flat import FlatEvidence
from scorer.metrics.evidence_at_k import AtK, at_k
from scorer.model import X_LABELS, Y_LABELS
from scorer.sections import evidence_records
from scorer.sections.base import ScoreContext, SectionResult
from scorer.sections.evidence_records import Record, collect, group_fields
from scorer.sections.evidence_tables import FOLD_NOTE, fold_modes, method_order, titled
from scorer.sections.registry import name_of

NAME = name_of(__name__)
prepare = evidence_records.prepare  # shared evidence records, computed before sections fork
ALL = "all"
CHAIN_METRICS = ("required_fact_recall", "chain_retrieved", "chain_delivered")
DIAG_COLUMNS = ("method", "backbone", "mode", "n", *RETRIEVAL_METRICS, "n_y3", *TEMPORAL_METRICS)
DIAG_N = {**{m: "n" for m in RETRIEVAL_METRICS}, **{m: "n_y3" for m in TEMPORAL_METRICS}}


def diagnosed(records: Sequence[Record], k: int) -> list[tuple[Record, Diagnosis]]:
    """The (record, Diagnosis) pairs the tables average: answerable items with valid provenance, each
    Diagnosis read from the vectorised values (what the app's marks are checked against)."""
    fe = evidence_records.flat_for(records)
    a = at_k(fe, k)
    return [(r, a.diagnosis(fe, i)) for i, r in enumerate(records) if a.valid[i] and fe.answerable[i]]


def _mean(v: np.ndarray) -> tuple[float | None, int]:
    """mean_or_none over a per-record value array (NaN = no value), in record order."""
    v = v[v == v]
    return (float(np.add.reduce(v) / v.size) if v.size else None), int(v.size)  # v.mean(), without its overhead


def category_of(item) -> str | None:
    """An imported benchmark's own question category (LoCoMo's 1–5), kept on the item."""
    c = item.raw.get("category")
    return None if c is None or isinstance(c, (dict, list)) else str(c)


def _slice_rows(fields: dict, a: AtK, rows: np.ndarray, k: int, y: str, x: str, task: str,
                temporal: bool, category: str = ALL) -> list[dict]:
    out = []
    where = {"y": y, "x": x, "task": task, "category": category}
    for m in RETRIEVAL_METRICS:
        value, n = _mean(a.values[m][rows])
        out.append({**fields, **where, "metric": m, "k": k, "value": value, "n": n})
    if temporal:
        eligible = rows[a.temporal[rows]]  # temporal implies Y3 with two or more clues
        for m in TEMPORAL_METRICS:
            value, n = _mean(a.values[m][eligible])
            out.append({**fields, **where, "y": "Y3", "metric": m, "k": k, "value": value, "n": n})
    return out


def diagnostic_rows(records: Sequence[Record], a: AtK, fe: FlatEvidence, groups: Mapping[tuple, np.ndarray]
                    ) -> list[dict]:
    """Per run group, the retrieval diagnostics at K over its answerable items with valid
    provenance: all, by Y, X, task and the benchmark's own category."""
    k = a.k
    out = []
    counted = a.valid & fe.answerable
    for idx in groups.values():
        rows = idx[counted[idx]]
        if not len(rows):
            continue
        fields = group_fields([records[idx[0]]])
        items = [records[i].item for i in rows.tolist()]

        def part(keep: list[bool]) -> np.ndarray:
            return rows[np.asarray(keep, dtype=bool)] if keep else rows[:0]

        out += _slice_rows(fields, a, rows, k, ALL, ALL, ALL, temporal=False)
        for y in Y_LABELS:
            out += _slice_rows(fields, a, part([y in it.y for it in items]), k, y, ALL, ALL, temporal=y == "Y3")
        for x in X_LABELS:
            out += _slice_rows(fields, a, part([x in it.x for it in items]), k, ALL, x, ALL, temporal=True)
        tasks = [it.task for it in items]
        for task in sorted(set(tasks)):
            out += _slice_rows(fields, a, part([t == task for t in tasks]), k, ALL, ALL, task, temporal=True)
        cats = [category_of(it) for it in items]
        for cat in sorted({c for c in cats if c is not None}):
            out += _slice_rows(fields, a, part([c == cat for c in cats]), k, ALL, ALL, ALL, temporal=False,
                               category=cat)
    return [r for r in out if r["n"]]


def chain_rows(records: Sequence[Record], a: AtK, fe: FlatEvidence, groups: Mapping[tuple, np.ndarray]) -> list[dict]:
    k = a.k
    out = []
    counted = fe.answerable & (fe.has_ret | fe.has_del)  # the top K of the logged ranking, or a delivered list
    for idx in groups.values():
        rows = idx[counted[idx]]
        if not len(rows):
            continue
        fields = group_fields([records[idx[0]]])
        items = [records[i].item for i in rows.tolist()]
        for y in (ALL, *Y_LABELS):
            chosen = rows if y == ALL else rows[np.asarray([y in it.y for it in items], dtype=bool)]
            for m in CHAIN_METRICS:
                value, n = _mean(a.chain[m][chosen])
                if n or y == ALL:
                    out.append({**fields, "y": y, "x": ALL, "task": ALL, "metric": m, "k": k, "value": value,
                                "n": n})
    return out


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


def provenance_rows(records: Sequence[Record], a: AtK, fe: FlatEvidence,
                    groups: Mapping[tuple, np.ndarray]) -> list[dict]:
    out = []
    logged_all = fe.has_ret & fe.answerable
    y3_all = np.zeros(fe.n, dtype=bool)
    rows = np.nonzero(logged_all)[0]
    y3_all[rows] = [Y3 in records[i].item.y for i in rows.tolist()]
    for idx in groups.values():
        logged = logged_all[idx]
        if not logged.any():
            continue
        valid = int((a.valid & fe.answerable)[idx].sum())  # no retrieval, no diagnosis
        y3 = logged & y3_all[idx] & (fe.chain_len[idx] > 0)
        one_clue = int((y3 & (fe.chain_len[idx] < 2)).sum())
        n_logged = int(logged.sum())
        f = group_fields([records[idx[0]]])
        out.append({"method": f["display"], "method_name": f["method"], "backbone": f["backbone"],
                    "mode": f["mode"], "rows": len(idx),
                    "retrieval_logged": n_logged, "valid_provenance": valid,
                    "no_clue_round": n_logged - valid, "y3_eligible": int(y3.sum()) - one_clue,
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
    fe, a, groups = evidence_records.flat(ctx), evidence_records.at(ctx, k), evidence_records.group_rows(ctx)
    diag = diagnostic_rows(records, a, fe, groups)
    chains = chain_rows(records, a, fe, groups)
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
                                 + extra_note, n_for=DIAG_N))
        tables.append(titled("evidence_provenance", "Retrieval provenance per run",
                             fold(provenance_rows(records, a, fe, groups)),
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
                             "read as 'same as retrieved')." + extra_note,
                             n_for={"required_fact_recall": "n_retrieved", "chain_retrieved": "n_retrieved",
                                    "chain_delivered": "n_delivered"}))
    return SectionResult(NAME, diag + chains, tables, warnings=warnings)
