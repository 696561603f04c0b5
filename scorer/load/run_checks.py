"""Checks of one run folder against its benchmark that change what its numbers mean (DESIGN §3, §5).

Each is said once per run folder, in one line, by `memscope validate`; `memscope score` repeats the
ones that touch a published number in its warnings.
- partial rotation sets: the MemEye runner's rotation loop can stop after the first rotation, so a
  row logs 1 of 4 rotations and its `em` is em₀ / 4;
- a partial run (fewer rows than the task has questions, or metrics.json `num_qas_run` < `num_qas`);
- a stale or hand-edited metrics.json `summary`: its overall / by_x / by_y / by_cell means differ
  from the same means recomputed from the rows, as the runner's summariser computes them;
- `context_round_count` that is not the length of `context_round_ids`;
- scores outside [0, 1]: a judge on a 1–5 or 1–10 scale (needs `score --judge-scale`), or any
  other value that cannot be a score;
- recorded text metrics (BLEU, F1, exact match, contains) that are not what upstream's functions
  give for the row's pred and gt;
- a MOSAIC condition (`condition`, `stage`, `budget`, `carrier`, `ranking`) that
  scorer.load.conditions refuses.
"""

from __future__ import annotations

import json
import math
from collections import Counter
from collections.abc import Iterable, Mapping, Sequence
from itertools import product
from typing import Any

from scorer.errors import DataError
from scorer.load.conditions import declared
from scorer.load.join import Joiner
from scorer.load.text_metrics import text_metric_problem
from scorer.metrics.scales import check_range, in_unit_interval, scale_text
from scorer.model import Benchmark, Run, RunProblem
from scorer.model.run import METRICS, PREDICTIONS
from scorer.load.row_checks import SCORE_FIELDS
from scorer.metrics.answers import letter
from scorer.model.rows import INVALID, NON_TEXT_CHOICE, num, placeable, row_rotation_oddity, unjudgeable

SUMMARY_METRICS = ("em", "contains_gt", "f1", "bleu", "bleu_1", "bleu_2", "bert", "judge")  # as the runner sums
SUMMARY_PARTS = ("overall", "by_x", "by_y", "by_cell")
SUMMARY_TOLERANCE = 1e-6
RANGE_FIELDS = ("judge", "bleu_1", "f1")  # recorded scores that must lie in [0, 1]


def _pred_file(run: Run) -> str:
    return str(run.folder / PREDICTIONS)


def rotation_problems(run: Run, joiner: Joiner) -> list[RunProblem]:
    partial: list[tuple[int, int, int]] = []  # (line, logged, item's)
    extra: list[tuple[int, int, int]] = []
    single: list[tuple[int, int]] = []  # (line, item's): a bare `choice`, no rotations list
    unreadable: list[tuple[int, str]] = []  # (line, what): `rotations` not a list
    misplaced: list[tuple[int, str]] = []  # (line, rotation_idx): outside the item's, repeated or not a number
    not_text: list[tuple[int, str]] = []  # (line, the choice as logged): a rotation choice that is not text
    no_option: list[tuple[int, str]] = []  # (line, the choice as logged): text that is none of the options' letters
    no_option_legacy: list[tuple[int, str]] = []  # the same, in a row of a single-options (legacy) item
    mcq = 0
    for p in run.predictions:
        if p.mode != "mcq":
            continue
        rots = p.raw.get("rotations")
        if row_rotation_oddity(p.raw) & NON_TEXT_CHOICE:  # any MCQ row: a list or object where a letter goes is never read
            odd = next(c for r in rots if isinstance(r, dict) and (c := r.get("choice")) is not None and c.__class__ is not str)
            not_text.append((p.line, json.dumps(odd, ensure_ascii=False)[:40]))
        item = joiner.item(run, p)
        if item is not None and item.mcq_form == "legacy" and item.rotations:
            # scored as one rotation: the `rotations` list where the row logs one, else its `choice`
            odd = _off_option_choice(rots, item) if isinstance(rots, list) else \
                _off_option_choice([{"choice": p.raw.get("choice")}], item, "choice")
            if odd is not None:
                no_option_legacy.append((p.line, odd))
        if item is None or item.mcq_form != "rotation" or not item.rotations:
            continue
        mcq += 1
        rots = p.raw.get("rotations")
        logged = len(rots) if isinstance(rots, list) else 0
        n = len(item.rotations)
        if rots is not None and not isinstance(rots, list):
            unreadable.append((p.line, type(rots).__name__))
        elif not isinstance(rots, list) and isinstance(p.raw.get("choice"), str):
            single.append((p.line, n))
        if isinstance(rots, list):
            idx = [r.get("rotation_idx") if isinstance(r, dict) else None for r in rots]
            bad = [i for i in idx if not (isinstance(i, int) and not isinstance(i, bool) and 0 <= i < n)]
            if bad or len(set(idx)) != len(idx):
                misplaced.append((p.line, repr(bad[0] if bad else next(i for i in idx if idx.count(i) > 1))))
        if isinstance(rots, list):
            odd = _off_option_choice(rots, item)
            if odd is not None:
                no_option.append((p.line, odd))
        if 0 < logged < n:
            partial.append((p.line, logged, n))
        elif logged > n:
            extra.append((p.line, logged, n))
    out = []
    if partial:
        (logged, n), _ = Counter((lg, n) for _, lg, n in partial).most_common(1)[0]
        out.append(RunProblem(
            f"{_pred_file(run)}:{partial[0][0]}", "warning",
            f"{len(partial)} of {mcq} rotation MCQ row(s) log fewer rotations than their item has (mostly {logged} "
            f"of {n}): over the item's rotations (the paper's EM) each unlogged rotation counts as wrong, so their "
            f"EM is capped at {logged}/{n} = {logged / n:.2f}; `memscope score --rotations logged` scores the "
            "logged rotations only", "partial_rotations"))
    if extra:
        out.append(RunProblem(
            f"{_pred_file(run)}:{extra[0][0]}", "warning",
            f"{len(extra)} rotation MCQ row(s) log more rotations than their item has ({extra[0][1]} of "
            f"{extra[0][2]}): the extra rotations are not scored", "extra_rotations"))
    if single:
        n = single[0][1]
        out.append(RunProblem(
            f"{_pred_file(run)}:{single[0][0]}", "warning",
            f"{len(single)} rotation MCQ row(s) log a single `choice` and no `rotations` list although their item "
            f"has {n} rotations: scored as rotation 0, each other rotation counting as wrong (EM capped at 1/{n})",
            "single_choice_rotations"))
    if unreadable:
        out.append(RunProblem(
            f"{_pred_file(run)}:{unreadable[0][0]}", "error",
            f"{len(unreadable)} rotation MCQ row(s) log `rotations` as a {unreadable[0][1]}, not a list: their rotation "
            "choices cannot be read (only a bare `choice` is scored, as rotation 0)", "unreadable_rotations"))
    if misplaced:
        out.append(RunProblem(
            f"{_pred_file(run)}:{misplaced[0][0]}", "error",
            f"{len(misplaced)} rotation MCQ row(s) log a rotation_idx outside their item's rotations, repeated or "
            f"not a whole number (first: {misplaced[0][1]}): a choice at an index outside is not scored and the "
            "rotation it was meant for counts as wrong; when an index repeats or is not a whole number, the row's "
            "choices are scored in the order logged", "misplaced_rotations"))
    if no_option:
        out.append(RunProblem(
            f"{_pred_file(run)}:{no_option[0][0]}", "warning",
            f"{len(no_option)} rotation MCQ row(s) log a rotation `choice` that is none of its rotation's option "
            f"letters (first: {no_option[0][1]}): it is read as no answer, and that rotation counts as wrong "
            f"(upstream's runner logs a letter, or {INVALID} when it could not read one)", "off_option_choice"))
    if no_option_legacy:
        out.append(RunProblem(
            f"{_pred_file(run)}:{no_option_legacy[0][0]}", "warning",
            f"{len(no_option_legacy)} MCQ row(s) of single-options items log a `choice` that is none of the item's "
            f"option letters (first: {no_option_legacy[0][1]}): it is read as no answer, and the row counts as "
            f"wrong (upstream's runner logs a letter, or {INVALID} when it could not read one)", "off_option_choice"))
    if not_text:
        out.append(RunProblem(
            f"{_pred_file(run)}:{not_text[0][0]}", "error",
            f"{len(not_text)} MCQ row(s) log a rotation `choice` that is not text (first: {not_text[0][1]}): it is "
            "not read as a letter, and that rotation counts as wrong", "non_text_choice"))
    return out


def _off_option_choice(rots: list, item, label: str = "rotation") -> str | None:
    """The first text `choice` of a rotations list that is not one of the option letters of the
    rotation it is scored against, and not its answer letter either — "Z", "AB", a letter with
    terminal escapes, "E" on a four-option item — as "rotation K 'TEXT'" (JSON-quoted: control
    characters escaped); None when there is none. Choices are placed as scoring places them
    (scorer.model.rows.choices_of_row: by rotation_idx where those place every entry, else in the
    order logged; entries past the item's rotations are not scored). Upstream's INVALID marker and
    a missing choice are answers the runner could not read, not this. `label`: "rotation" (shown
    with its index) or "choice" (a legacy row's bare choice, shown alone)."""
    n = len(item.rotations)
    entries = [r if isinstance(r, dict) else {} for r in rots]  # a non-object keeps its place, as scored
    idx = [r.get("rotation_idx") for r in entries]
    by_idx = placeable(idx)
    for pos, r in enumerate(entries):
        c = r.get("choice")
        if c.__class__ is not str or c == INVALID:
            continue
        k = idx[pos] if by_idx else pos
        if k >= n:
            continue  # not scored (extra_rotations / misplaced_rotations say so)
        rot = item.rotations[k]
        chosen = letter(c)
        if chosen not in rot.options and chosen != letter(rot.answer):
            shown = json.dumps(c[:32], ensure_ascii=False)
            return f"rotation {k} {shown}" if label == "rotation" else shown
    return None


def completeness_problems(run: Run, bench: Benchmark, joiner: Joiner) -> list[RunProblem]:
    task = bench.task(run.task)
    if task is None:
        return []
    expected = {i.item_id for i in task.items if i.mode == run.mode}
    covered = {it.item_id for p in run.predictions if (it := joiner.item(run, p)) is not None and it.mode == run.mode}
    m = run.metrics
    run_n, total = m.get("num_qas_run"), m.get("num_qas")
    counted = isinstance(run_n, int) and isinstance(total, int) and not isinstance(run_n, bool)
    if len(covered) >= len(expected) and not (counted and run_n < total):
        return []
    said = f" (metrics.json: num_qas_run {run_n} of num_qas {total})" if counted else ""
    return [RunProblem(
        _pred_file(run), "warning",
        f"partial run: rows for {len(covered)} of the {len(expected)} {run.mode} item(s) of task {run.task}{said}; "
        "its averages cover those items only", "partial_run")]


def _value(v: Any) -> float | None:
    if isinstance(v, bool):
        return float(v)
    if isinstance(v, (int, float)) and math.isfinite(v):
        return float(v)
    return None


def summarize_rows(rows: Iterable[Mapping[str, Any]]) -> dict[str, dict]:
    """overall / by_x / by_y / by_cell means of SUMMARY_METRICS over rows, as the MemEye runner's
    summariser computes them: a row counts once per X label, once per Y label and once per (X, Y)
    pair of its own `point`; missing values are skipped; a mean exists where a value does."""
    sums: dict[str, dict[str, dict[str, list[float]]]] = {part: {} for part in SUMMARY_PARTS}

    def add(part: str, key: str, vals: dict[str, float]) -> None:
        bucket = sums[part].setdefault(key, {})
        for metric, v in vals.items():
            bucket.setdefault(metric, []).append(v)

    for row in rows:
        vals = {m: v for m in SUMMARY_METRICS if (v := _value(row.get(m))) is not None}
        if not vals:
            continue
        add("overall", "", vals)
        point = row.get("point")
        xs, ys = point if isinstance(point, list) and len(point) == 2 and all(isinstance(a, list) for a in point) \
            else ([], [])
        for x in dict.fromkeys(map(str, xs)):
            add("by_x", x, vals)
        for y in dict.fromkeys(map(str, ys)):
            add("by_y", y, vals)
        for x, y in product(xs, ys):
            add("by_cell", f"{x}_{y}", vals)
    out: dict[str, dict] = {}
    for part, buckets in sums.items():
        means = {k: {m: sum(v) / len(v) for m, v in b.items()} for k, b in buckets.items()}
        out[part] = means.get("", {}) if part == "overall" else means
    return out


def summary_differences(recorded: Mapping[str, Any], rows: Sequence[Mapping[str, Any]]) -> list[str]:
    """`part.key.metric: recorded r, rows give v` for every figure of the recorded summary that the
    rows do not reproduce (a recorded non-finite figure is skipped: the rows' NaN is said apart)."""
    fresh = summarize_rows(rows)
    out = []
    for part in SUMMARY_PARTS:
        rec = recorded.get(part)
        if not isinstance(rec, Mapping):
            continue
        groups = {"": rec} if part == "overall" else {k: v for k, v in rec.items() if isinstance(v, Mapping)}
        now = {"": fresh[part]} if part == "overall" else fresh[part]
        for key, figures in groups.items():
            for metric, value in figures.items():
                if metric not in SUMMARY_METRICS or isinstance(value, bool) or not isinstance(value, (int, float)):
                    continue
                if not math.isfinite(value):
                    continue
                mine = now.get(key, {}).get(metric)
                name = f"{part}.{key}.{metric}" if key else f"{part}.{metric}"
                if mine is None:
                    out.append(f"{name}: recorded {value:.6g}, the rows have no value")
                elif abs(mine - value) > SUMMARY_TOLERANCE:
                    out.append(f"{name}: recorded {value:.6g}, rows give {mine:.6g}")
        for key in sorted(set(now) - set(groups)):
            if now[key]:
                out.append(f"{part}.{key}: the rows have figures the summary lacks")
    return out


def summary_problems(run: Run) -> list[RunProblem]:
    summary = run.metrics.get("summary")
    if not isinstance(summary, Mapping) or not run.predictions:
        return []
    diffs = summary_differences(summary, [p.raw for p in run.predictions])
    if not diffs:
        return []
    shown = "; ".join(diffs[:3]) + (f"; (+{len(diffs) - 3} more)" if len(diffs) > 3 else "")
    return [RunProblem(str(run.folder / METRICS), "warning",
                       f"stale or edited summary: {len(diffs)} figure(s) differ from the rows — {shown}; "
                       "memscope scores the rows", "stale_summary")]


def context_problems(run: Run) -> list[RunProblem]:
    bad = [p for p in run.predictions
           if isinstance(ids := p.raw.get("context_round_ids"), list)
           and isinstance(n := p.raw.get("context_round_count"), int) and not isinstance(n, bool) and n != len(ids)]
    if not bad:
        return []
    first = bad[0].raw
    return [RunProblem(f"{_pred_file(run)}:{bad[0].line}", "warning",
                       f"{len(bad)} row(s) log a context_round_count that is not the length of context_round_ids "
                       f"(first: {first['context_round_count']} vs {len(first['context_round_ids'])}); "
                       "the ids are read as delivered", "context_count")]


def _em_values(p: Any) -> list[Any]:
    rots = p.raw.get("rotations")
    values = [p.raw.get("em")]
    if isinstance(rots, list):
        values += [r.get("em") for r in rots if isinstance(r, dict)]
    return values


def em_range_problems(run: Run) -> list[RunProblem]:
    """Recorded `em` values (a row's, a rotation's) that cannot be an exact match: one error per run."""
    found = [(p.line, v) for p in run.predictions for v in _em_values(p)
             if v.__class__ in (int, float) and math.isfinite(x := num(v)) and not in_unit_interval(x)]
    if not found:
        return []
    line, v = found[0]
    shown = f"{v:g}"
    return [RunProblem(f"{_pred_file(run)}:{line}", "error",
                       f"{len(found)} recorded em value(s) outside [0, 1] (first: {shown}): an exact match is 0 or 1; "
                       "score withholds the EM of MCQ rows that log no choices to recompute it from, and the gates "
                       "leave such an em out", "out_of_range:em")]


def overflow_problems(run: Run) -> list[RunProblem]:
    """Recorded scores too large for a number (1e400, an integer of hundreds of digits: ±inf once
    read), which score withholds row by row: one error per run."""
    found = [(p.line, name) for p in run.predictions for name in SCORE_FIELDS
             if (v := p.raw.get(name)).__class__ in (int, float) and math.isinf(num(v))]
    rots = [(p.line, "rotation em") for p in run.predictions for v in _em_values(p)[1:]
            if v.__class__ in (int, float) and math.isinf(num(v))]
    found += rots
    if not found:
        return []
    line, name = min(found)
    return [RunProblem(f"{_pred_file(run)}:{line}", "error",
                       f"{len(found)} recorded score(s) too large for a number (first: {name}; 1e400 or an integer "
                       "of hundreds of digits): score withholds them", "overflow")]


def unjudgeable_problems(run: Run) -> list[RunProblem]:
    """Open rows a judge cannot be asked about (scorer.model.rows.unjudgeable): one error each."""
    file = _pred_file(run)
    return [RunProblem(f"{file}:{p.line}", "error", f"{why}: the row cannot be judged", "unjudgeable")
            for p in run.predictions if p.mode == "open" and (why := unjudgeable(p.raw))]


def range_problems(run: Run) -> list[RunProblem]:
    out = []
    for field in RANGE_FIELDS:
        rows = [(p.line, v) for p in run.predictions if p.mode == "open" and (v := getattr(p, field)) is not None]
        check = check_range([v for _, v in rows], guess=field == "judge")
        if check.ok:
            continue
        first = next(line for line, v in rows if not -1e-9 <= v <= 1 + 1e-9)
        where = f"{_pred_file(run)}:{first}"
        if check.scale is not None:
            flag = scale_text(check.scale)
            out.append(RunProblem(where, "warning",
                                  f"judge scores look like a {flag} scale ({check.describe()}): pass "
                                  f"`memscope score --judge-scale {flag}`; without it none of this run's judge "
                                  "scores is published", "judge_scale"))
        else:
            hint = ("; `--recompute-text-metrics` recomputes it from pred and gt" if field != "judge" else "")
            out.append(RunProblem(where, "error",
                                  f"{field}: {check.describe()}, which cannot be a score; none of this run's "
                                  f"{field} values is published{hint}", f"out_of_range:{field}"))
    return out


def condition_problems(run: Run) -> list[RunProblem]:
    """A MOSAIC condition declared in metrics.json / config.json that scorer.load.conditions refuses
    (`score` leaves the run out of the MOSAIC tables, with a warning)."""
    try:
        declared(run.folder, run.config, run.metrics)
    except DataError as err:
        return [RunProblem(f"{err.file}:{err.location}", "error", err.message, "condition")]
    return []


def check_run(run: Run, bench: Benchmark, joiner: Joiner) -> list[RunProblem]:
    """Everything above, what the reader noticed (run.problems) and recorded text metrics that are
    not upstream's (scorer.load.text_metrics), for one run folder."""
    text = text_metric_problem(run)
    return [*run.problems, *rotation_problems(run, joiner), *completeness_problems(run, bench, joiner),
            *summary_problems(run), *context_problems(run), *range_problems(run), *em_range_problems(run), *overflow_problems(run),
            *unjudgeable_problems(run), *([text] if text else []),
            *condition_problems(run)]
