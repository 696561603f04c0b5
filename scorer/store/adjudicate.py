"""Adjudication (DESIGN §4, issue 16): the entries where annotators disagree — and, with
`include_judge`, where the human majority and the LLM judge disagree — as a study plan, and the
adjudicated decisions back as the gold the scorer uses.

An entry is one (item_id, mode, run_key) that annotators acted on with the kind adjudicated
(`label`, `verdict` or `oracle`). Two acts agree when they say the same thing: the same X and Y label
sets; the same verdict; the same option (an MCQ choice is read in the rotation the annotator saw,
so annotators shown different rotations who chose the same option agree) or the same open answer
after case and whitespace folding. The judge accepts when its score is ≥ JUDGE_THRESHOLD; the human
majority is a strict majority of the annotators' verdicts; a borderline or tied majority is no
disagreement with the judge (the annotators' own disagreement already queues a tie).

The gold of an entry: the latest live adjudication of that kind on it (any adjudicator), where one
exists. No Textual, no printing.
"""

from __future__ import annotations

from collections import Counter
from collections.abc import Mapping, Sequence
from typing import Any

from scorer.errors import UserError
from scorer.metrics.constants import JUDGE_THRESHOLD
from scorer.model import Benchmark
from scorer.store.payload import ADJUDICATED_KINDS
from scorer.store.sampling import StudyPlan

# --of as the CLI and the form spell it → the event kind adjudicated (the kind names work too)
OF_CHOICES = ("labels", "verdicts", "oracle")
OF_KIND = {"labels": "label", "verdicts": "verdict", "oracle": "oracle", **{k: k for k in ADJUDICATED_KINDS}}
Entry = tuple[str, "str | None", "str | None"]  # (item_id, mode, run_key)


def of_kind(of: str | None) -> str:
    if of not in OF_KIND:
        raise UserError(f"an adjudication study needs --of {'|'.join(OF_CHOICES)}, got {of!r}")
    return OF_KIND[of]


def act_value(kind: str, row: Mapping[str, Any], bench: Benchmark | None = None) -> Any:
    """What an act says, comparable across annotators (see the module's doc)."""
    if kind == "label":
        return (tuple(sorted(row.get("x") or ())), tuple(sorted(row.get("y") or ())))
    if kind == "verdict":
        return row.get("verdict")
    choice = row.get("choice")
    if isinstance(choice, str):
        rotation = row.get("rotation") or 0
        item = bench.item(row["item_id"], "mcq") if bench is not None else None
        if item is not None and 0 <= rotation < len(item.rotations):
            text = item.rotations[rotation].options.get(choice)
            if text is not None:
                return ("option", " ".join(str(text).split()).casefold())
        return ("letter", rotation, choice)
    answer = row.get("answer")
    return ("answer", " ".join(str(answer or "").split()).casefold())


def entries_of(rows: Sequence[Mapping[str, Any]]) -> dict[Entry, dict[str, Mapping[str, Any]]]:
    """Current acts (Store.current rows) grouped by entry: {entry: {annotator: row}}."""
    out: dict[Entry, dict[str, Mapping[str, Any]]] = {}
    for r in rows:
        out.setdefault((r["item_id"], r["mode"], r["run_key"]), {})[r["annotator"]] = r
    return out


def strict_majority(values: Sequence[Any]) -> Any:
    """The value more than half of `values` share, or None."""
    if not values:
        return None
    value, count = Counter(values).most_common(1)[0]
    return value if 2 * count > len(values) else None


def judge_verdict(score: float | None) -> str | None:
    if score is None or score != score:
        return None
    return "accept" if score >= JUDGE_THRESHOLD else "reject"


def plan_adjudication(rows: Sequence[Mapping[str, Any]], of: str, seed: int, *, bench: Benchmark | None = None,
                      include_judge: bool = False, judge: Mapping[Entry, float] | None = None,
                      source: str | None = None) -> StudyPlan:
    """The adjudication queue over the current acts `rows` of kind `of` (Store.current rows, those of
    study `source` when one was named). `judge` maps a verdict entry to the judge's score
    (needed with include_judge). Entries keep a sorted order (each annotator's is shuffled by the
    store); their stratum says why each is queued: "annotators", "judge" or "annotators+judge"."""
    kind = of_kind(of)
    if include_judge and kind != "verdict":
        raise UserError("--include-judge compares the judge with human verdicts: it needs --of verdicts")
    if include_judge and not judge:
        raise UserError("--include-judge needs the judge's scores: pass the runs (--runs DIR…)")
    grouped = entries_of(rows)
    entries, reasons = [], Counter()
    for entry in sorted(grouped, key=lambda e: (e[0], e[1] or "", e[2] or "")):
        acts = grouped[entry]
        values = [act_value(kind, r, bench) for r in acts.values()]
        why = []
        if len(acts) >= 2 and len(set(values)) > 1:
            why.append("annotators")
        if include_judge:
            human = strict_majority(values)
            said = judge_verdict((judge or {}).get(entry))
            if human in ("accept", "reject") and said is not None and human != said:
                why.append("judge")
        if why:
            stratum = "+".join(why)
            reasons[stratum] += 1
            entries.append((*entry, stratum))
    if not entries:
        what = "annotators disagree" + (" or their majority and the judge do" if include_judge else "")
        where = f" in study {source!r}" if source else ""
        raise UserError(f"no {kind} entry{where} where {what} ({len(grouped)} entries with {kind} acts): "
                        "nothing to adjudicate")
    params = {"of": kind, "include_judge": bool(include_judge), "from": source, "blind": False,
              "bench": bench.name if bench is not None else None, "candidates": len(grouped),
              "strata": dict(sorted(reasons.items())),
              "annotators": sorted({r["annotator"] for r in rows})}
    return StudyPlan("adjudicate", seed, params, tuple(entries))


def adjudicated(rows: Sequence[Mapping[str, Any]], of: str) -> dict[Entry, Mapping[str, Any]]:
    """Gold decisions of kind `of` from the store's current adjudication rows (Store.current or the
    scorer's frame as records): {entry: decision payload}; the latest one where several adjudicators
    decided the same entry."""
    kind = of_kind(of)
    best: dict[Entry, tuple[tuple, Mapping[str, Any]]] = {}
    for r in rows:
        if r.get("of") != kind or not isinstance(r.get("decision"), Mapping):
            continue
        entry = (r["item_id"], _none(r.get("mode")), _none(r.get("run_key")))
        order = (str(r.get("ts")), int(r.get("event_id") or 0))
        if entry not in best or order > best[entry][0]:
            best[entry] = (order, r["decision"])
    return {e: d for e, (_, d) in best.items()}


def _none(value: Any) -> Any:
    """pandas' NaN (a missing mode or run in a frame) as None."""
    return None if value is None or (isinstance(value, float) and value != value) else value


def disputed_acts(store: Any, study: Any) -> dict[Entry, dict[str, dict[str, Any]]]:
    """For an adjudication study (a `Study`): per entry, per annotator, what they did — their act of
    the adjudicated kind (`act`, a Store.current row), and their live notes and flags on the item
    (`notes`, `flags`: lists of rows) — unblinded, for the adjudicator to see side by side."""
    kind = study.params.get("of")
    source = study.params.get("from")
    wanted = {(it.item_id, it.mode, it.run_key) for it in store.study_items(study.name)}
    items = {e[0] for e in wanted}
    out: dict[Entry, dict[str, dict[str, Any]]] = {e: {} for e in wanted}
    for entry, acts in entries_of(store.current(kind, study=source)).items():
        if entry in out:
            for annotator, row in acts.items():
                out[entry].setdefault(annotator, {"act": None, "notes": [], "flags": []})["act"] = row
    for remark in ("note", "flag"):
        for row in store.current(remark):
            if row["item_id"] not in items or row.get("study") == study.name:
                continue
            for entry, by in out.items():
                # a remark on the item, or on this very prediction
                if entry[0] == row["item_id"] and row["run_key"] in (None, entry[2]) and row["annotator"] in by:
                    by[row["annotator"]][remark + "s"].append(row)
    return out
