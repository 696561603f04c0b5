"""What `memscope score` checks in the joined frame before any number is published (DESIGN §3, §5).

- Judge scores: with `--judge-scale MIN-MAX` every recorded judge score is rescaled linearly to
  [0, 1]. A run folder whose judge scores (after that) still lie outside [0, 1], or were logged as
  text, has none of its judge scores published: they are withheld (missing), and a warning says
  why — on a recognisable 1–5 / 1–10 scale, which flag to pass. The same for BLEU-1 outside [0, 1]
  (unless `--recompute-text-metrics` recomputes it from the texts).
- With `--judge-scale`, a folder whose judge scores all lie in [0, 1] is withheld (already on 0–1?);
  without it, judge scores between the levels (JUDGE_LEVELS) are counted and said.
- Rotation MCQ rows that logged fewer rotations than their item has (EM capped at logged / n), and
  rows whose rotation_idx reaches past their item's rotations, rows whose rotation_idx repeat or are
  not whole numbers (read in the order logged) and rows with a rotation choice that is not text.
- Rows whose question is not their item's (joined by idx all the same: a warning, DESIGN §3).
- What the readers noticed (scorer.load.row_checks): non-finite numbers read as missing values.

`before_scoring` works on the recorded values; `after_scoring` withholds and counts. Both return
warnings (one line each, aggregated over run folders) and a record for the report's inputs.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any

import numpy as np

from scorer.load.row_checks import TEXT_SCORE
from scorer.metrics.answers import partial_rotations
from scorer.metrics.constants import JUDGE_LEVELS
from scorer.metrics.scales import TOLERANCE, check_range, rescale, scale_text
from scorer.model import Run
from scorer.model.rows import LOGGED_ORDER, NON_TEXT_CHOICE, has_gold

if TYPE_CHECKING:
    import pandas as pd

CHECKED_FIELDS = ("judge", "bleu_1")  # recorded scores of open rows a published table shows
SHOWN = 3  # run folders named in one warning line


def _folders(names: Sequence[str]) -> str:
    shown = ", ".join(names[:SHOWN])
    return shown + (f" (+{len(names) - SHOWN} more)" if len(names) > SHOWN else "")


@dataclass
class Withheld:
    """Run folders whose recorded values of a field are not published, with why."""

    folders: dict[str, dict[str, str]] = field(default_factory=lambda: {f: {} for f in CHECKED_FIELDS})
    scales: set[str] = field(default_factory=set)  # known judge scales the withheld scores fit ("1-5")

    def add(self, field_name: str, folder: str, why: str, scale: str | None = None) -> None:
        self.folders[field_name].setdefault(folder, why)
        if scale:
            self.scales.add(scale)

    def record(self) -> dict[str, dict[str, str]]:
        return {f: dict(v) for f, v in self.folders.items() if v}


def rotations_beyond(choices: np.ndarray, item_rotations: np.ndarray) -> np.ndarray:
    """MCQ rows whose choices, placed at their rotation_idx, reach past the item's rotation count."""
    multi = np.flatnonzero(item_rotations > 1)
    out = np.zeros(len(choices), dtype=bool)
    if len(multi):
        sub = choices[multi]
        lengths = np.fromiter((len(c) if c.__class__ is tuple else 0 for c in sub), dtype=np.int64, count=len(sub))
        out[multi] = lengths > item_rotations[multi]
    return out


def unscaled_folders(judged: pd.DataFrame, judge_scale: tuple[float, float]) -> dict[str, str]:
    """Run folders whose recorded judge scores all lie in [0, 1] while `--judge-scale` names another
    scale: scored 0–1 already, most likely (a 0–1 judge's 1.0 would read as 0.1 on 0–10, as 0.0 on
    1–5). The scale is one flag for every folder, so such a folder is withheld, not rescaled."""
    lo, hi = judge_scale
    if (lo, hi) == (0.0, 1.0) or not len(judged):
        return {}
    x = judged["judge"].to_numpy(dtype=float)
    finite = np.isfinite(x)
    if not finite.any():
        return {}
    sub = judged.loc[finite, ["folder"]].assign(judge=x[finite])
    stats = sub.groupby("folder", sort=True)["judge"].agg(["min", "max", "size"])
    inside = stats[(stats["min"] >= -TOLERANCE) & (stats["max"] <= 1 + TOLERANCE)]
    scale = scale_text(judge_scale)
    return {str(f): (f"judge scores all within [0, 1] ({int(r['size'])} value(s), min {r['min']:g}, max {r['max']:g}) "
                     f"although --judge-scale {scale} was passed: already on 0-1? (rescaled, {r['max']:g} would read "
                     f"as {(r['max'] - lo) / (hi - lo):g}); score this folder without --judge-scale")
            for f, r in inside.iterrows()}


def before_scoring(frame: pd.DataFrame, runs: Sequence[Run], judge_scale: tuple[float, float] | None,
                   recompute_text: bool) -> tuple[pd.DataFrame, Withheld, list[str], dict[str, Any]]:
    """(frame with judge scores rescaled when asked, what to withhold, warnings, inputs record)."""
    warnings: list[str] = []
    withheld = Withheld()
    record: dict[str, Any] = {"judge_scale": scale_text(judge_scale) if judge_scale else None}
    is_open = (frame["mode"] == "open").to_numpy() if len(frame) else np.zeros(0, dtype=bool)
    if judge_scale is not None and len(frame):
        for folder, why in unscaled_folders(frame.loc[is_open, ["folder", "judge"]], judge_scale).items():
            withheld.add("judge", folder, why)
        frame = frame.copy()
        frame.loc[is_open, "judge"] = rescale(frame.loc[is_open, "judge"].to_numpy(dtype=float), judge_scale)
    for run in runs:  # scores logged as text (the readers said where)
        for prob in run.problems:
            if prob.kind.startswith(TEXT_SCORE):
                name = prob.kind[len(TEXT_SCORE):]
                if name in CHECKED_FIELDS and not (name == "bleu_1" and recompute_text):
                    withheld.add(name, str(run.folder), f"{prob.message} ({prob.location})")
    if len(frame):
        sub = frame.loc[is_open, ["folder", *CHECKED_FIELDS]]
        # Only a folder with a finite value outside [0, 1] can fail its check (RangeCheck.ok): found
        # for all rows at once, so that a million rows in 20,000 folders are not split by folder.
        bad = np.zeros(len(sub), dtype=bool)
        for name in CHECKED_FIELDS:
            x = sub[name].to_numpy(dtype=float)
            with np.errstate(invalid="ignore"):
                bad |= np.isfinite(x) & ((x < -TOLERANCE) | (x > 1 + TOLERANCE))
        suspect = sub[sub["folder"].isin(set(sub["folder"].to_numpy()[bad]))] if bad.any() else sub.iloc[:0]
        for folder, rows in suspect.groupby("folder", sort=True):
            for name in CHECKED_FIELDS:
                if name == "bleu_1" and recompute_text:
                    continue
                check = check_range(rows[name].to_numpy(dtype=float), guess=name == "judge" and judge_scale is None)
                if check.ok:
                    continue
                scale = scale_text(check.scale) if check.scale is not None else None
                why = (f"judge scores on a {scale} scale? ({check.describe()})" if scale
                       else f"{name}: {check.describe()}")
                withheld.add(name, folder, why, scale)
    if len(frame):
        frame, found, rows_record = _unusable_rows(frame, is_open)
        warnings += found
        if rows_record:
            record["withheld_rows"] = rows_record
    for name, folders in withheld.folders.items():
        if not folders:
            continue
        whys = list(folders.values())
        scales = sorted(withheld.scales)
        hint = (f"; pass --judge-scale {scales[0]} if that is the judge's scale" if scales and name == "judge"
                else "; --recompute-text-metrics recomputes BLEU-1 from pred and gt" if name == "bleu_1" else "")
        warnings.append(f"{name} withheld for {len(folders)} run folder(s) — not published, not averaged: "
                        f"{whys[0]}{hint}; folders: {_folders(sorted(folders))}")
    if judge_scale is None and len(frame):
        off = off_level_judge(frame.loc[is_open, ["folder", "line", "judge"]], set(withheld.folders["judge"]))
        if off is not None:
            n, folders, first = off
            record["judge_off_levels"] = n
            warnings.append(f"{n} judge score(s) in {folders} run folder(s) are not on the judge levels "
                            f"{', '.join(f'{v:g}' for v in JUDGE_LEVELS)} (first: {first}): averaged as recorded; "
                            "a judge on another scale needs --judge-scale")
    record["withheld"] = withheld.record()
    return frame, withheld, warnings, record


def _unusable_rows(frame: pd.DataFrame, is_open: np.ndarray) -> tuple[pd.DataFrame, list[str], dict[str, Any]]:
    """Values of single rows that cannot be right, withheld (missing) row by row, with a warning
    each: the recorded `em` of an MCQ row that logs no rotation choices to recompute it from, when
    it lies outside [0, 1] (an exact match cannot be 7, −1 or 1e400); the recorded judge score of an
    open row with no gold answer (gt null, absent or blank: scorer.model.rows.has_gold), which a
    judge shown nothing to compare with gave; an open row's judge or BLEU-1 too large for a number
    (±inf: the readers read 1e400 so; it had been dropped without a word)."""
    masks: dict[str, np.ndarray] = {}
    for name in CHECKED_FIELDS:  # ±inf on open rows: 1e400, or an integer too large for a float
        if name in frame:
            inf = is_open & np.isinf(frame[name].to_numpy(dtype=float))
            if inf.any():
                masks[f"{name}:inf"] = inf
    if "em" in frame:
        em = frame["em"].to_numpy(dtype=float)
        with np.errstate(invalid="ignore"):  # ±inf (1e400) is outside too
            bad = ~is_open & ~np.isnan(em) & ((em < -TOLERANCE) | (em > 1 + TOLERANCE))
        if bad.any() and "choices" in frame:
            bad[bad] = [not c for c in frame["choices"].to_numpy()[bad].tolist()]
        if bad.any():
            masks["em"] = bad
    if "judge" in frame and "gt" in frame:
        judged = is_open & ~np.isnan(frame["judge"].to_numpy(dtype=float))
        if judged.any():
            judged[judged] = [not has_gold(g) for g in frame["gt"].to_numpy()[judged].tolist()]
            if judged.any():
                masks["judge"] = judged
    if not masks:
        return frame, [], {}
    frame = frame.copy()
    warnings, record = [], {}
    why = {"em": "a recorded em outside [0, 1] on MCQ rows that log no rotation choices to recompute it from",
           "judge": "a recorded judge score on open rows with no gold answer (gt null, absent or blank)",
           **{f"{n}:inf": f"a recorded {n} too large for a number (1e400, or an integer of hundreds of digits)"
              for n in CHECKED_FIELDS}}
    for key, mask in masks.items():
        name = key.split(":")[0]
        rows = frame.loc[mask, ["folder", "line"]]
        first = f"{rows['folder'].iloc[0]}/predictions.jsonl:{int(rows['line'].iloc[0])}"
        folders = sorted(set(rows["folder"].tolist()))
        frame.loc[mask, name] = np.nan
        record[key] = {"rows": int(mask.sum()), "first": first}
        warnings.append(f"{name} withheld for {int(mask.sum())} row(s) in {len(folders)} run folder(s) — not published, "
                        f"not averaged: {why[key]} (first: {first}); `memscope validate` lists them; folders: "
                        f"{_folders(folders)}")
    return frame, warnings, record


def off_level_judge(judged: pd.DataFrame, withheld: set[str]) -> tuple[int, int, str] | None:
    """(how many, in how many folders, the first's file:line) of the finite judge scores that are
    none of JUDGE_LEVELS, in folders not withheld."""
    x = judged["judge"].to_numpy(dtype=float)
    off = np.isfinite(x)
    if off.any():
        near = np.min(np.abs(x[off, None] - np.asarray(JUDGE_LEVELS)[None, :]), axis=1)
        off[off] = near > 1e-6
    if withheld and off.any():
        off &= ~judged["folder"].isin(withheld).to_numpy()
    if not off.any():
        return None
    first = judged.loc[off].iloc[0]
    return int(off.sum()), int(judged.loc[off, "folder"].nunique()), f"{first['folder']}/predictions.jsonl:{int(first['line'])}"


ODDITY_EFFECTS = (
    (LOGGED_ORDER, "rotations_in_logged_order",
     "log a rotation_idx that repeats or is not a whole number", "the row's choices are scored in the order logged, "
     "which may not be the order of its item's rotations"),
    (NON_TEXT_CHOICE, "non_text_choices",
     "log a rotation `choice` that is not text", "it is not read as a letter, and that rotation counts as wrong"),
)


def rotation_oddity_warnings(frame: pd.DataFrame) -> tuple[list[str], dict[str, int]]:
    """What the readers found in MCQ rows' rotations lists (scorer.model.rows.rotation_oddity) of
    items with rotations: one warning line per kind, first row named, and the counts."""
    odd = frame["rotation_oddity"].to_numpy()
    if not odd.any():
        return [], {}
    rotation_items = frame["rotations_item"].to_numpy() > 0 if "rotations_item" in frame else np.ones(len(odd), bool)
    warnings, record = [], {}
    for bit, key, what, effect in ODDITY_EFFECTS:
        hit = ((odd & bit) != 0) & rotation_items
        if hit.any():
            first = frame.loc[hit].iloc[0]
            record[key] = int(hit.sum())
            warnings.append(f"{int(hit.sum())} MCQ row(s) in {frame.loc[hit, 'folder'].nunique()} run folder(s) {what} "
                            f"(first: {first['folder']}/predictions.jsonl:{int(first['line'])}): {effect} — "
                            "`memscope validate` lists them")
    return warnings, record


def after_scoring(frame: pd.DataFrame, runs: Sequence[Run], withheld: Withheld,
                  rotations: str) -> tuple[pd.DataFrame, list[str], dict[str, Any]]:
    """(frame with withheld values missing, warnings, inputs record)."""
    warnings: list[str] = []
    record: dict[str, Any] = {}
    if len(frame):
        for name, folders in withheld.folders.items():
            if folders:
                mask = frame["folder"].isin(list(folders)).to_numpy() & (frame["mode"] == "open").to_numpy()
                frame.loc[mask, name] = np.nan
        if "rotations_logged" in frame and "rotations_item" in frame:
            partial = partial_rotations(frame["rotations_logged"].to_numpy(), frame["rotations_item"].to_numpy())
            if partial.any():
                counts = frame.loc[partial].groupby("folder", sort=True).size()
                rotation = frame["folder"].isin(counts.index) & (frame["rotations_item"] > 1)
                total = frame.loc[rotation].groupby("folder").size()
                record["partial_rotations"] = {f: {"rows": int(n), "rotation_rows": int(total.get(f, n))}
                                               for f, n in counts.items()}
                typical = frame.loc[partial, ["rotations_logged", "rotations_item"]].value_counts().idxmax()
                lg, n = int(typical[0]), int(typical[1])
                effect = ("EM over the logged rotations only (--rotations logged, a deviation from the paper's EM)"
                          if rotations == "logged" else
                          f"their EM is capped at {lg}/{n} = {lg / n:.2f} (each unlogged rotation counts as wrong, "
                          "the paper's definition); --rotations logged scores the logged rotations only")
                warnings.append(f"{int(partial.sum())} MCQ row(s) in {len(counts)} run folder(s) log fewer rotations "
                                f"than their item has (mostly {lg} of {n}): {effect}; folders: "
                                f"{_folders(list(counts.index))}")
        if "choices" in frame and "rotations_item" in frame:
            beyond = rotations_beyond(frame["choices"].to_numpy(), frame["rotations_item"].to_numpy())
            if beyond.any():
                first = frame.loc[beyond].iloc[0]
                record["rotations_beyond_item"] = int(beyond.sum())
                warnings.append(f"{int(beyond.sum())} MCQ row(s) in {frame.loc[beyond, 'folder'].nunique()} run folder(s) "
                                f"log a rotation_idx beyond their item's rotations (first: {first['folder']}/"
                                f"predictions.jsonl:{int(first['line'])}): that choice is not scored and the rotation "
                                "it was meant for counts as wrong — `memscope validate` lists them")
        if "rotation_oddity" in frame:
            odd_warnings, odd_record = rotation_oddity_warnings(frame)
            warnings += odd_warnings
            record.update(odd_record)
        bad_q = ~frame["question_ok"].to_numpy(bool)
        if bad_q.any():
            first = frame.loc[bad_q].iloc[0]
            folders = frame.loc[bad_q, "folder"].nunique()
            warnings.append(f"{int(bad_q.sum())} row(s) in {folders} run folder(s) log a question that is not their "
                            f"item's (first: {first['folder']}/predictions.jsonl:{int(first['line'])}, item "
                            f"{first['item_id']}); joined by idx all the same — `memscope validate` lists them")
            record["question_mismatches"] = int(bad_q.sum())
    non_finite = [p for r in runs for p in r.problems if p.kind == "non_finite"]
    if non_finite:
        folders = len({p.location.rsplit(":", 1)[0] for p in non_finite})
        warnings.append(f"{len(non_finite)} row(s) in {folders} run folder(s) hold bare NaN/Infinity (not JSON), "
                        f"read as missing values (first: {non_finite[0].location})")
        record["non_finite_rows"] = len(non_finite)
    notes = [str(p) for r in runs for p in r.problems if p.severity == "note"]
    if notes:
        record["notes"] = notes
    return frame, warnings, record
