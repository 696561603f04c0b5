"""Every report table as a long ("tidy") CSV, `csv/long/<section>__<table>.csv`: one row per value.

Columns, the same in every file and every backbone's file: LEAD (backbone, method, mode, metric, x,
y, agg), then the table's own label columns (snake_case), then measure, value, n, ci_low, ci_high,
mark, reason. `value`, `n`, `ci_low`, `ci_high` are numbers or empty; a value the report could not
give (its cell held text such as "undefined", or nothing) is empty and `reason` says why.

The evaluation matrix comes from the section's own records (one per backbone × method × metric ×
cell or aggregate: the truth the wide tables are drawn from); every other table is melted from its
rows: text columns label a row, number and interval columns hold values. An interval column
("<V> 95% CI") gives `ci_low`/`ci_high` of the value column V (else of the value before it); an n
column gives `n`: "n <S>" to the value columns whose names end in S, else to the value columns after
it (a value's own n, where the table records one, wins). `measure` is the value's column header,
and `metric` too unless the table has a Metric column of its own.
"""

from __future__ import annotations

import csv
import io
import numbers
import re
from collections.abc import Mapping, Sequence
from typing import Any

from scorer.safe_text import csv_cell
from scorer.sections.base import Table

LEAD = ("backbone", "method", "mode", "metric", "x", "y", "agg")
TAIL = ("measure", "value", "n", "ci_low", "ci_high", "mark", "reason")
DECIMALS = 6
MATRIX_TABLES = {"main_": ("em", "judge"), "bleu_": ("bleu_1",), "marginals_": ("em", "judge", "bleu_1")}
MATRIX_EXTRA = ("family", "method_id")

_GREEK = {"Δ": "delta ", "κ": "kappa ", "α": "alpha ", "%": " pct ", "@": " at ", "+": " plus ", "−": " minus ",
          "≥": " ge ", "≤": " le ", "→": " to ", "·": " "}


def is_number(v: Any) -> bool:
    """A number, numpy's included (np.int64 is no int), never a bool."""
    return isinstance(v, numbers.Real) and not isinstance(v, bool)


def snake(header: str) -> str:
    """A header as snake_case: "Req.-Fact Recall" → req_fact_recall, "Δ Latest@K" → delta_latest_at_k."""
    text = "".join(_GREEK.get(ch, ch) for ch in str(header))
    text = re.sub(r"[^0-9A-Za-z]+", "_", text).strip("_").lower()
    if not text:
        return "column"
    return f"c_{text}" if text[0].isdigit() else text


def _number(v: Any) -> Any:
    if v is None or isinstance(v, bool):
        return ""
    if isinstance(v, numbers.Real) and not isinstance(v, numbers.Integral):  # numpy's floats too: written as plain numbers, not np.float64(…)
        if v != v:
            return ""
        r = round(float(v), DECIMALS)
        return repr(0.0 if r == 0 else r)
    return int(v) if is_number(v) else ""


def _text(v: Any) -> str:
    return "" if v is None else csv_cell(str(v))


def _is_n(column: str) -> bool:
    return column == "n" or column.startswith("n ")


def _roles(t: Table) -> tuple[list[str], list[str], list[str], list[str]]:
    """(label columns, value columns, interval columns, n columns) in table order."""
    labels, values, intervals, ns = [], [], [], []
    for c in t.columns:
        cells = [r.get(c) for r in t.rows if r.get(c) is not None]
        if any(isinstance(v, tuple) for v in cells):
            intervals.append(c)
        elif _is_n(c) and any(is_number(v) for v in cells):  # text in it ("15/21") is said in `reason`
            ns.append(c)
        elif any(is_number(v) for v in cells):
            values.append(c)
        else:
            labels.append(c)
    return labels, values, intervals, ns


def _pairs(t: Table, values: list[str], intervals: list[str], ns: list[str]) -> tuple[dict, dict]:
    """{value column: its interval column}, {value column: its n column}. The table's `n_for` first;
    then an "n <S>" column counts the value columns whose names end in S; then a value column takes
    the n column nearest before it."""
    order = list(t.columns)
    ci_of: dict[str, str] = {}
    for iv in intervals:
        if iv in t.ci_rows:  # its own row, not the value's interval
            continue
        named = [v for v in values if iv.startswith(v + " ") and v not in ci_of]
        before = [v for v in values if order.index(v) < order.index(iv) and v not in ci_of]
        target = max(named, key=len) if named else (before[-1] if before else None)
        if target is not None:
            ci_of[target] = iv
    declared = dict(t.n_for)
    n_of: dict[str, str] = {v: c for v, c in declared.items() if c is not None}  # an unshown n too
    for v, nc in _suffix_matches(values, ns).items():
        if v not in declared:
            n_of[v] = nc
    current = None
    for c in order:
        if c in ns and not any(n_of.get(v) == c for v in values):
            current = c
        elif c in values and c not in n_of and c not in declared and current is not None:
            n_of[c] = current
    return ci_of, n_of


def _suffix_matches(values: Sequence[str], ns: Sequence[str]) -> dict[str, str]:
    out: dict[str, str] = {}
    for nc in ns:
        suffix = nc[2:].strip()
        for v in values:
            if suffix and v.endswith(" " + suffix):
                out[v] = nc
    return out


def undeclared_pairs(t: Table) -> list[str]:
    """Columns whose n or interval the order of columns alone would decide where that is ambiguous:
    value columns, in a table with more than one n column or before its only one, that neither
    `n_for` nor an "n <suffix>" column names; intervals, two or more in a table, that neither name a
    value ("<value> 95% CI") nor are `ci_rows`. Every report table must have none (a test checks
    every table of the demo's two benchmarks, with annotations)."""
    _, values, intervals, ns = _roles(t)
    loose = [iv for iv in intervals if iv not in t.ci_rows and not any(iv.startswith(v + " ") for v in values)]
    out = loose if len(loose) > 1 else []  # two intervals named by no value: which bounds what?
    if not ns:
        return out
    named = set(t.n_for) | set(_suffix_matches(values, ns))
    order = list(t.columns)
    first_n = min(order.index(c) for c in ns)
    return out + [v for v in values if v not in named and (len(ns) > 1 or order.index(v) < first_n)]


def _melt(t: Table, backbone: str = "") -> tuple[list[str], list[dict]]:
    labels, values, intervals, ns = _roles(t)
    ci_of, n_of = _pairs(t, values, intervals, ns)
    lead_of = {snake(c): c for c in labels if snake(c) in LEAD}
    name_of: dict[str, str] = {}  # the table's own label columns: snake_case, clear of LEAD / TAIL and each other
    for c in labels:
        if snake(c) in LEAD:
            continue
        name = snake(c) + ("_label" if snake(c) in TAIL else "")
        while name in name_of.values() or name in LEAD:
            name += "_2"
        name_of[c] = name
    own = list(name_of.values())
    has_metric = "metric" in lead_of
    rows = []
    for r in t.rows:
        base = {k: r.get(c) for k, c in lead_of.items()}
        if backbone and not base.get("backbone"):
            base["backbone"] = backbone
        for c, name in name_of.items():
            base[name] = r.get(c)
        for v in values:
            out = dict(base, measure=v)
            if not has_metric:
                out["metric"] = v
            raw = r.get(v)
            if is_number(raw):
                out["value"] = raw
            else:
                out["value"] = None
                out["reason"] = str(raw) if raw is not None and str(raw).strip() else "no value"
            n = (r.get("_n") or {}).get(v)
            if n is None and v in n_of:
                n = r.get(n_of[v])
            if n is not None and not is_number(n):
                out["reason"] = "; ".join(filter(None, [out.get("reason"), f"n = {n}"]))
                n = None
            out["n"] = n
            iv = r.get(ci_of[v]) if v in ci_of else None
            if isinstance(iv, tuple) and len(iv) == 2:
                out["ci_low"], out["ci_high"] = iv
            out["mark"] = (r.get("_marks") or {}).get(v, "")
            rows.append(out)
        for iv, v in t.ci_rows.items():  # a value's second interval: a row of its own
            raw, bounds, n = r.get(v), r.get(iv), r.get(n_of[iv]) if iv in n_of else None
            out = dict(base, measure=f"{v} ({iv})")
            if not has_metric:
                out["metric"] = out["measure"]
            out["value"] = raw if is_number(raw) else None
            if not is_number(raw):
                out["reason"] = str(raw) if raw is not None and str(raw).strip() else "no value"
            out["n"] = n if is_number(n) else None
            if isinstance(bounds, tuple) and len(bounds) == 2:
                out["ci_low"], out["ci_high"] = bounds
            rows.append(out)
    return own, rows


def _matrix_rows(data: Sequence[Mapping[str, Any]], table: str) -> list[dict] | None:
    """The matrix section's records behind one of its wide tables (main_, bleu_, marginals_<backbone>)."""
    for prefix, metrics in MATRIX_TABLES.items():
        if table.startswith(prefix):
            backbone = table[len(prefix):]
            marginal = prefix == "marginals_"
            return [{"backbone": d["backbone"], "method": d.get("display") or d["method"], "mode": d.get("mode"),
                     "metric": d["metric"], "x": d["x"], "y": d["y"], "agg": d["agg"], "family": d.get("family"),
                     "method_id": d["method"], "value": d["value"], "n": d["n"], "mark": d.get("mark") or "",
                     "reason": "" if d["value"] is not None else "no items"}
                    for d in data if d["backbone"] == backbone and d["metric"] in metrics
                    and ((d["agg"] == "marginal") == marginal)]
    return None


def long_csv(columns: Sequence[str], rows: Sequence[Mapping[str, Any]]) -> str:
    numeric = {"value", "n", "ci_low", "ci_high"}
    buf = io.StringIO()
    w = csv.writer(buf, lineterminator="\n")
    w.writerow(columns)
    for r in rows:
        w.writerow([_number(r.get(c)) if c in numeric else _text(r.get(c)) for c in columns])
    return buf.getvalue()


def table_long(section: Any, t: Table, backbones: Sequence[str]) -> str:
    """The long CSV of one report table."""
    if section.name == "matrix" and isinstance(section.data, list):
        rows = _matrix_rows(section.data, t.name)
        if rows is not None:
            return long_csv([*LEAD, *MATRIX_EXTRA, *TAIL], rows)
    # a table drawn per backbone is named <table>_<backbone>: the name says whose rows these are
    backbone = next((b for b in sorted(backbones, key=len, reverse=True) if t.name.endswith("_" + b)), "")
    own, rows = _melt(t, backbone)
    return long_csv([*LEAD, *own, *TAIL], rows)


def backbones_of(sections: Sequence[Any]) -> list[str]:
    found: set[str] = set()
    for s in sections:
        if not s.reason and isinstance(s.data, list):
            found |= {str(d["backbone"]) for d in s.data if isinstance(d, Mapping) and d.get("backbone")}
    return sorted(found)
