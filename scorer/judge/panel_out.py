"""A judge panel's extra outputs: OUT/panel-median/… (ordinary runs whose judge score is the
panel median, so the scorer's judge-vs-human section can take it like any judge) and
OUT/panel.json (the panel's agreement, from scorer.metrics.panel), also printed as a table."""

from __future__ import annotations

from pathlib import Path
from typing import Any, Mapping, Sequence

from rich.console import Console
from rich.table import Table
from rich.text import Text

from scorer.judge import write
from scorer.judge.runner import LoadedRun, Result, Selection
from scorer.metrics.panel import BANDS, PanelAgreement, panel_agreement, panel_median


def median_targets(base: Path, rel: Sequence[Path]) -> list[Path]:
    return [base / write.PANEL_MEDIAN / r for r in rel]


def agreement_json(ag: PanelAgreement, scores: Mapping[str, Sequence[float | None]]) -> dict[str, Any]:
    def r(v):
        return None if v is None else round(float(v), 6)

    pairs = [{
        "judge_a": p.judge_a, "judge_b": p.judge_b, "n": p.n,
        "kappa_quadratic": r(p.kappa.kappa), "ci_low": r(p.kappa.ci_low), "ci_high": r(p.kappa.ci_high),
        "kappa_undefined_reason": p.kappa.undefined_reason,
        "spearman": r(p.spearman.rho), "spearman_undefined_reason": p.spearman.undefined_reason,
        "exact": r(p.exact.value), "same_band": r(p.same_band.value),
    } for p in ag.pairs]
    means = []
    for judge, vals in scores.items():
        present = [float(v) for v in vals if v is not None]
        means.append({"judge": judge, "mean": r(sum(present) / len(present)) if present else None, "n": len(present)})
    return {
        "judges": list(ag.judges), "n_rows": ag.n_rows, "pairs": pairs, "means": means,
        "alpha_ordinal": {"value": r(ag.alpha.alpha), "n": ag.alpha.n, "n_values": ag.alpha.n_values,
                          "undefined_reason": ag.alpha.undefined_reason},
        "bands": {format(k, "g"): v for k, v in BANDS.items()},
        "median_runs": write.PANEL_MEDIAN,
    }


def write_panel(console: Console, base: Path, runs: Sequence[LoadedRun], rel: Sequence[Path], sel: Selection,
                selected: Mapping[int, Sequence[int]], scores: Mapping[str, Sequence[float | None]],
                levels: Sequence[float], meta: Mapping[str, Any]) -> None:
    medians = panel_median(scores)
    index = {(ref.run, ref.row): i for i, ref in enumerate(sel.rows)}
    judges = list(scores)
    for ri, (lr, target) in enumerate(zip(runs, median_targets(base, rel))):
        rows = {}
        for pi in selected.get(ri, ()):
            i = index[(ri, pi)]
            panel = {j: scores[j][i] for j in judges}
            n = sum(v is not None for v in panel.values())
            med = medians[i]
            res = Result(med, f"median of {n} judge score(s)", None if med is not None else "no judge scored this row", "panel")
            row = write.judged_row(lr.run.predictions[pi].raw, write.PANEL_MEDIAN, res)
            row["judge_panel"] = panel
            rows[pi] = row
        write.write_run_folder(lr, target, rows, dict(model=write.PANEL_MEDIAN, judges=judges, **meta))
    ag = panel_agreement(scores, levels)
    data = agreement_json(ag, scores)
    write.write_json(base / "panel.json", data)
    render(console, data)


def _fmt(v) -> str:
    return "—" if v is None else f"{v:.3f}"


def render(console: Console, data: Mapping[str, Any]) -> None:
    t = Table(title=f"judge panel agreement over {data['n_rows']} rows", title_justify="left")
    for col in ("judge A", "judge B", "n", "κ (quadr.)", "95% CI", "ρ", "exact", "band"):
        if col.startswith("judge"):
            t.add_column(col, overflow="fold")
        else:
            t.add_column(col, justify="right", no_wrap=True)
    for p in data["pairs"]:
        ci = "—" if p["ci_low"] is None else f"{p['ci_low']:.3f}–{p['ci_high']:.3f}"
        t.add_row(Text(p["judge_a"]), Text(p["judge_b"]), str(p["n"]), _fmt(p["kappa_quadratic"]), ci,
                  _fmt(p["spearman"]), _fmt(p["exact"]), _fmt(p["same_band"]))
    wanted = console.measure(t, options=console.options.update_width(1000)).maximum
    # in a pipe or a log nothing stops a wide table: print it whole rather than wrapping model names
    if not console.is_terminal and wanted > console.width:
        Console(file=console.file, width=wanted, highlight=False).print(t)
    else:
        console.print(t)
    a = data["alpha_ordinal"]
    why = f" ({a['undefined_reason']})" if a["undefined_reason"] else ""
    console.print(Text(f"κ quadratic-weighted over the levels, ρ Spearman, exact = same level, band = same band "
                       f"(0 and 0.25 low, 0.5 mid, 0.75 and 1 high); Krippendorff's α (ordinal) "
                       f"{_fmt(a['value'])}{why}, n = {a['n']} rows"))
