"""Agreement between raters of the same kind, for the report's agreement section: LLM judge vs LLM
judge where run rows carry several judges' scores, human vs human on accept/borderline/reject
verdicts, and Fleiss' κ beside Krippendorff's α wherever three or more raters rated the same units.

Where several judges' scores are in a run row (what `memscope judge` writes):
- `judge_panel` {judge: score}: a panel's scores (the panel-median runs; the row's `judge` is
  their median, not a rater of its own);
- `judge_previous` beside `judge`: a re-judged row keeps the score it had before. The current
  judge is named by `judge_model`, the earlier one by `judge_model_previous` when the row has it,
  else "previous judge" (e.g. the upstream runner's judge).
Rows are read again from the run folders' predictions.jsonl (the lean reader keeps no raw rows),
only for folders whose file names one of those fields; runs loaded with their raw rows (the full
reader, the app) are read from those rows, not from the files again. Units are the scored open predictions of
the report (a (run, item) pair); scores are put on the report's judge levels (`--judge-levels`:
0, .25, .5, .75, 1, or the runner's 0, .5, 1) with the same coercion as the judge column; a score
outside [0, 1] or off the levels is left out and counted (`excluded_off_scale`).

Human graded scores: an accept/reject/borderline verdict is read as an ordinal scale
reject < borderline < accept (borderline is the middle grade, not a missing verdict), compared
between every two annotators who judged the same (run, item).

Rows (flat, one per coefficient): pairs get Cohen's κ unweighted, linear and quadratic (`weights`
"none" | "linear" | "quadratic"), each with its percentile bootstrap CI (`ci_low`/`ci_high`) and
statsmodels' analytic SE and CI (`se`, `ci_low_analytic`/`ci_high_analytic`); `observed` = share of
units rated identically, `observed_weighted` and `expected` = the weighted p_o and p_e of the κ
formula. Three or more raters add Fleiss' κ (nominal; over the units every rater rated, the rest
counted in `excluded`; bootstrap CI only) and Krippendorff's α (ordinal and nominal; missing
ratings allowed, over units with two or more ratings).
"""

from __future__ import annotations

import json
import math
import os
from collections.abc import Iterator, Mapping, Sequence
from dataclasses import dataclass
from itertools import combinations
from typing import Any

from scorer.load.jsonio import jsonl_lines, loads
from scorer.metrics.agreement import (
    JUDGE_LEVELS,
    fleiss_bootstrap_ci,
    fleiss_kappa,
    krippendorff_alpha,
    normalise_verdict,
    ordinal_kappas,
)
from scorer.metrics.answers import coerce_judge
from scorer.model.run import PREDICTIONS
from scorer.sections.base import ScoreContext, Table

MARKERS = (b'"judge_panel"', b'"judge_previous"')
MARKER_PREFIX = b'"judge_p'  # what both field names start with
FIELDS = ("judge_panel", "judge_previous")  # the same, as a loaded row's keys
CURRENT, PREVIOUS = "current judge", "previous judge"
THREE_LEVELS = (0.0, 0.5, 1.0)
ROW_KEYS = ("compared", "kind", "coefficient", "rater_a", "rater_b", "raters", "weights", "level", "scale",
            "n", "excluded", "excluded_missing", "excluded_off_scale", "agreements", "observed",
            "observed_weighted", "expected", "kappa", "ci_low", "ci_high", "ci_method", "se",
            "ci_low_analytic", "ci_high_analytic", "alpha", "bootstrap_dropped", "undefined_reason")
_OFF = object()  # a score that is present but not on the scale


@dataclass
class RaterTable:
    """Ratings of named raters over units: `values[r][u]` is the rating on the scale, None (no
    rating, or a missing one) or _OFF; `present[r][u]` says the unit carries that rater's field."""

    raters: list[str]
    units: list[tuple]
    values: dict[str, list]
    present: dict[str, list[bool]]

    @classmethod
    def from_dicts(cls, per_unit: Mapping[tuple, Mapping[str, Any]]) -> RaterTable:
        units = list(per_unit)
        raters = list(dict.fromkeys(r for u in units for r in per_unit[u]))
        values = {r: [per_unit[u].get(r) for u in units] for r in raters}
        present = {r: [r in per_unit[u] for u in units] for r in raters}
        return cls(raters, units, values, present)


def judge_scale(levels: int) -> tuple[float, ...]:
    return THREE_LEVELS if levels == 3 else JUDGE_LEVELS


def _fmt_scale(labels: Sequence) -> str:
    return " < ".join(format(v, "g") if isinstance(v, float) else str(v) for v in labels)


# ---------------------------------------------------------------------------------------------
# Several judges' scores in run rows


def judges_in_row(row: Mapping[str, Any]) -> dict[str, Any] | None:
    """{judge name: raw score} for a row that carries two judges' fields or more, else None."""
    panel = row.get("judge_panel")
    has_prev = "judge_previous" in row
    out: dict[str, Any] = {}
    if isinstance(panel, Mapping) and panel:
        out.update((str(k), v) for k, v in panel.items())
    elif has_prev:
        cur = row.get("judge_model")
        out[cur.strip() if isinstance(cur, str) and cur.strip() else CURRENT] = row.get("judge")
    else:
        return None
    if has_prev:
        prev = row.get("judge_model_previous")
        name = prev.strip() if isinstance(prev, str) and prev.strip() else PREVIOUS
        out[f"{name} (previous)" if name in out else name] = row.get("judge_previous")
    return out


def on_judge_scale(v: Any, levels: int) -> Any:
    """A judge score on the report's levels, None when missing, _OFF when not on the scale."""
    if v is None or isinstance(v, bool):
        return None if v is None else _OFF
    try:
        f = float(v)
    except (TypeError, ValueError):
        return _OFF
    if math.isnan(f):
        return None
    if not 0.0 <= f <= 1.0:
        return _OFF
    f = coerce_judge(f, levels)
    for lev in judge_scale(levels):
        if abs(f - lev) < 1e-9:
            return lev
    return _OFF


def _parse(line: bytes) -> Any:
    try:
        return loads(line)
    except ValueError:
        try:
            return json.loads(line)  # bare NaN / Infinity (what Python's json writes) read as floats
        except ValueError:
            return None


def _wanted_rows(data: bytes | Mapping[int, Mapping[str, Any]],
                 lines: Mapping[int, tuple]) -> Iterator[tuple[tuple, Mapping[str, Any]]]:
    """(unit, row) of the `lines` wanted, in line order: from a file's bytes, or from the rows of a
    loaded run (line → raw row)."""
    if isinstance(data, Mapping):
        for line_no in sorted(lines):
            row = data.get(line_no)
            if isinstance(row, Mapping):
                yield lines[line_no], row
        return
    for line_no, raw in enumerate(jsonl_lines(data), start=1):
        unit = lines.get(line_no)
        if unit is None:
            continue
        row = _parse(raw)
        if isinstance(row, dict):
            yield unit, row


def read_judge_scores(ctx: ScoreContext) -> tuple[RaterTable | None, list[str]]:
    """The judges' scores carried in the report's scored open rows, or None when no row carries
    two judges' fields."""
    frame = ctx.frame
    warnings: list[str] = []
    if frame is None or frame.empty:
        return None, warnings
    import pandas as pd

    hits: dict[str, bytes | dict[int, Mapping[str, Any]]] = {}
    is_open = frame["mode"].to_numpy() == "open"
    # runs loaded with their raw rows (the full reader, the app): their rows, not the file again
    held = {str(r.folder): r for r in ctx.runs if r.predictions and r.predictions[0].raw}
    # One search for the prefix both field names share, then the names themselves.
    for folder in pd.unique(frame["folder"].to_numpy()[is_open]):
        run = held.get(folder)
        if run is not None:
            if any(f in p.raw for p in run.predictions for f in FIELDS):
                hits[folder] = {p.line: p.raw for p in run.predictions}
            continue
        path = os.path.join(folder, PREDICTIONS)
        try:
            with open(path, "rb") as fh:
                data = fh.read()
        except OSError as err:
            warnings.append(f"{path}: cannot read it again for judge-vs-judge agreement ({err.strerror or err})")
            continue
        if MARKER_PREFIX in data and any(m in data for m in MARKERS):
            hits[folder] = data
    if not hits:
        return None, warnings
    opn = frame[is_open]
    sub = opn[opn["folder"].isin(list(hits))]
    wanted: dict[str, dict[int, tuple]] = {}
    for folder, line, key, item in zip(sub["folder"], sub["line"], sub["run_key"], sub["item_id"]):
        wanted.setdefault(folder, {})[int(line)] = (key, item)
    levels = ctx.options.judge_levels
    per_unit: dict[tuple, dict[str, Any]] = {}
    bad_panel = off = 0
    for folder, data in hits.items():
        for unit, row in _wanted_rows(data, wanted.get(folder, {})):
            if "judge_panel" in row and not (isinstance(row["judge_panel"], Mapping) and row["judge_panel"]):
                bad_panel += 1
            judges = judges_in_row(row)
            if not judges:
                continue
            scored = {name: on_judge_scale(v, levels) for name, v in judges.items()}
            off += sum(v is _OFF for v in scored.values())
            per_unit[unit] = scored
    if bad_panel:
        warnings.append(f"{bad_panel} row(s) carry a `judge_panel` that is not a non-empty object of judge scores; "
                        "its scores are ignored")
    if off:
        warnings.append(f"{off} judge score(s) in `judge_panel` / `judge_previous` rows are not on the report's judge "
                        f"levels ({_fmt_scale(judge_scale(levels)).replace(' < ', ', ')}): left out of judge-vs-judge "
                        "agreement and counted as excluded_off_scale")
    if not per_unit:
        return None, warnings
    table = RaterTable.from_dicts(per_unit)
    warnings += _scale_warnings(table, levels)
    return table, warnings


def _scale_warnings(table: RaterTable, levels: int) -> list[str]:
    """A judge that never used a quarter level beside one that did: they are not on one scale."""
    if levels != 5:
        return []
    quarter, three = [], []
    for r in table.raters:
        vals = [v for v in table.values[r] if isinstance(v, float)]
        if any(v in (0.25, 0.75) for v in vals):
            quarter.append(r)
        elif len(vals) >= 10:
            three.append(r)
    if quarter and three:
        return [f"judge(s) {', '.join(three)} scored only 0, 0.5 and 1 while {', '.join(quarter)} also used 0.25 and "
                "0.75: their weighted κ compares a three-level scale with a five-level one; --judge-levels 3 puts "
                "every judge on the runner's three levels"]
    return []


# ---------------------------------------------------------------------------------------------
# Human verdicts as an ordinal scale


def verdict_table(verdicts: Any, resolve) -> tuple[RaterTable | None, int]:
    """Annotators' verdicts per (run, item, mode), as the ordinal scale; (table, unknown values)."""
    per_unit: dict[tuple, dict[str, Any]] = {}
    bad = 0
    cols = verdicts[["annotator", "item_id", "mode", "run_key", "verdict"]].itertuples(index=False)
    for annotator, item_id, mode, run, verdict in cols:
        try:
            v = normalise_verdict(verdict)
        except ValueError:
            bad += 1
            continue
        run_key = (resolve(run) or run) if isinstance(run, str) else None
        per_unit.setdefault((run_key, item_id, mode), {})[annotator] = v
    if not per_unit:
        return None, bad
    return RaterTable.from_dicts(dict(sorted(per_unit.items(), key=lambda kv: tuple(map(str, kv[0]))))), bad


# ---------------------------------------------------------------------------------------------
# Rows


def _row(**values: Any) -> dict:
    row = dict.fromkeys(ROW_KEYS)
    row.update(values)
    return row


def pair_rows(compared: str, table: RaterTable, labels: Sequence, resamples: int, seed: int) -> list[dict]:
    """κ unweighted, linear and quadratic for every two raters with a unit in common."""
    out = []
    scale = _fmt_scale(labels)
    for a, b in combinations(table.raters, 2):
        va, vb, pa, pb = table.values[a], table.values[b], table.present[a], table.present[b]
        units = [u for u in range(len(table.units)) if pa[u] or pb[u]]
        if not any(pa[u] and pb[u] for u in units):
            continue
        both = [u for u in units if va[u] is not None and va[u] is not _OFF and vb[u] is not None and vb[u] is not _OFF]
        off = sum(1 for u in units if va[u] is _OFF or vb[u] is _OFF)
        ra, rb = [va[u] for u in both], [vb[u] for u in both]
        agreements = sum(x == y for x, y in zip(ra, rb))
        head = {"compared": compared, "kind": "pair", "coefficient": "cohen", "rater_a": a, "rater_b": b, "raters": 2,
                "scale": scale, "n": len(both), "excluded": len(units) - len(both), "excluded_off_scale": off,
                "excluded_missing": len(units) - len(both) - off, "agreements": agreements,
                "observed": agreements / len(both) if both else None, "ci_method": "bootstrap percentile"}
        for ok in ordinal_kappas(ra, rb, labels, n_resamples=resamples, seed=seed):
            k, bt = ok.result, ok.bootstrap
            out.append(_row(**head, weights=ok.weights or "none", observed_weighted=k.observed, expected=k.expected,
                            kappa=k.kappa, ci_low=bt.ci_low, ci_high=bt.ci_high, se=k.se, ci_low_analytic=k.ci_low,
                            ci_high_analytic=k.ci_high, bootstrap_dropped=bt.dropped,
                            undefined_reason=k.undefined_reason or bt.undefined_reason))
    return out


def multi_rater_rows(compared: str, table: RaterTable, labels: Sequence, resamples: int, seed: int, noun: str,
                     alpha_levels: Sequence[str] = ("ordinal", "nominal")) -> list[dict]:
    """With three raters or more: Fleiss' κ over the units every rater rated, and Krippendorff's α
    (each level in `alpha_levels`) over all units, missing ratings allowed."""
    m = len(table.raters)
    if m < 3:
        return []
    data = [[None if v is _OFF else v for v in table.values[r]] for r in table.raters]
    carried = [u for u in range(len(table.units)) if any(table.present[r][u] for r in table.raters)]
    off_units = {u for u in carried if any(table.values[r][u] is _OFF for r in table.raters)}
    scale = _fmt_scale(labels)
    head = {"compared": compared, "rater_a": "all", "rater_b": f"{m} {noun}", "raters": m, "scale": scale}
    fk = fleiss_kappa(data, labels)
    bt = fleiss_bootstrap_ci(data, labels, n_resamples=resamples, seed=seed)
    complete = [u for u in carried if all(data[i][u] is not None for i in range(m))]
    agreements = sum(1 for u in complete if len({data[i][u] for i in range(m)}) == 1)
    rows = [_row(**head, kind="fleiss", coefficient="fleiss", weights="none", n=fk.n, excluded=len(carried) - fk.n,
                 excluded_off_scale=len(off_units), excluded_missing=len(carried) - fk.n - len(off_units),
                 agreements=agreements, observed=fk.observed, observed_weighted=fk.observed, expected=fk.expected,
                 kappa=fk.kappa, ci_low=bt.ci_low, ci_high=bt.ci_high, ci_method="bootstrap percentile",
                 bootstrap_dropped=bt.dropped, undefined_reason=fk.undefined_reason or bt.undefined_reason)]
    for level in alpha_levels:
        al = krippendorff_alpha(data, level, labels=labels)
        rows.append(_row(**head, kind="alpha", coefficient="alpha", level=level, n=al.n, excluded=len(carried) - al.n,
                         alpha=al.alpha, undefined_reason=al.undefined_reason))
    return rows


def rater_rows(compared: str, table: RaterTable, labels: Sequence, resamples: int, seed: int, noun: str) -> list[dict]:
    return pair_rows(compared, table, labels, resamples, seed) + \
        multi_rater_rows(compared, table, labels, resamples, seed, noun)


# ---------------------------------------------------------------------------------------------
# Tables

STATISTIC = {("cohen", "none"): "Cohen's κ", ("cohen", "linear"): "κ linear", ("cohen", "quadratic"): "κ quadratic",
             ("fleiss", "none"): "Fleiss' κ"}


def _statistic(r: Mapping) -> str:
    if r["coefficient"] == "alpha":
        return f"Krippendorff's α ({r['level']})"
    return STATISTIC[(r["coefficient"], r["weights"])]


def rater_table(name: str, title: str, rows: Sequence[Mapping], who: str, note: str) -> Table:
    shown = []
    for r in rows:
        value = r["alpha"] if r["coefficient"] == "alpha" else r["kappa"]
        shown.append({
            who: f"{r['rater_a']} vs {r['rater_b']}" if r["kind"] == "pair" else f"all {r['rater_b']}",
            "Statistic": _statistic(r), "n": r["n"], "excluded": r["excluded"], "agreement": r["observed"],
            "κ / α": value if value is not None else "undefined",
            "95% CI bootstrap": (r["ci_low"], r["ci_high"]),
            "95% CI analytic": (r["ci_low_analytic"], r["ci_high_analytic"]),
        })
    cols = [who, "Statistic", "n", "excluded", "agreement", "κ / α", "95% CI bootstrap", "95% CI analytic"]
    return Table(name, title, shown, cols, note, n_for={"agreement": "n", "κ / α": "n", "excluded": None,
                                                        "95% CI analytic": "n"},
                 ci_rows={"95% CI analytic": "κ / α"})


JUDGE_NOTE = ("Scores on the report's judge levels; weighted κ: disagreement weights over the levels linear "
              "in their distance (linear) or in its square (quadratic). agreement = share of identical scores "
              "(Fleiss: mean share of agreeing judge pairs). excluded = rows where one of the judges has no score "
              "on the levels. CI bootstrap: percentile over rows; CI analytic: κ ± 1.96·SE as statsmodels. "
              "Fleiss' κ (nominal) over the rows every judge scored; α over all rows with two scores or more.")
HUMAN_NOTE = ("Verdicts as an ordinal scale: reject, borderline, accept (borderline the middle grade). agreement = "
              "share of identical verdicts (Fleiss: mean share of agreeing annotator pairs). excluded = "
              "predictions judged by only one of the two (Fleiss: not by every annotator). CI bootstrap: "
              "percentile over judged predictions; CI analytic: κ ± 1.96·SE as statsmodels. Fleiss' κ (nominal) "
              "over the predictions every annotator judged; α over all with two verdicts or more.")


def judge_table(rows: Sequence[Mapping]) -> Table:
    return rater_table("judge_vs_judge", "LLM judge vs LLM judge (several judges' scores in the run rows)", rows,
                       "Judges", JUDGE_NOTE)


def human_table(rows: Sequence[Mapping]) -> Table:
    return rater_table("human_vs_human", "Human vs human verdicts (ordinal: reject, borderline, accept)", rows,
                       "Annotators", HUMAN_NOTE)
