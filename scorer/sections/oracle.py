"""Human oracle accuracy (DESIGN §5; MemEye's human sanity-check table), from the store's `oracle`
acts on MCQ items: majority-vote and mean individual accuracy by Y level and overall.

report.json `oracle` rows: {y, majority_accuracy, mean_individual_accuracy, n_items, n_annotators,
ties, majority_correct, n_answers}; `y` = "Y1"… or "all". Choices are read in the rotation the
annotator saw (`rotation`, default the first) and compared as options, so annotators who saw
different rotations vote together; Y labels are the benchmark's. The key of an item is its gold
answer, or the adjudicated answer where the item's oracle answers were adjudicated (DESIGN §4);
`adjudicated` counts those items per row.
"""

from __future__ import annotations

from scorer.metrics.oracle import ALL as ORACLE_ALL
from scorer.metrics.oracle import oracle_accuracy
from scorer.sections.base import ScoreContext, SectionResult, Table
from scorer.sections.registry import name_of
from scorer.store.adjudicate import adjudicated

NAME = name_of(__name__)


def canonical(item, rotation: int, letter: str) -> str:
    """A choice made in one rotation, as the letter its option has in the first rotation: annotators
    who saw different rotations then vote on the same options (a letter without an option stays as
    it is, and counts as wrong)."""
    letter = letter.strip().upper()
    text = item.rotations[rotation].options.get(letter)
    if text is None:
        return f"?{letter}"
    for lt, t in item.rotations[0].options.items():
        if t == text:
            return lt
    return f"?{letter}"


def _adjudicated_keys(ctx: ScoreContext, ann) -> dict[str, str]:
    """item_id → the adjudicated answer of its MCQ form, as a first-rotation letter."""
    if not len(ann) or "of" not in ann:
        return {}
    out = {}
    for (item_id, mode, _run), decision in adjudicated(ann[ann["kind"] == "adjudication"].to_dict("records"),
                                                      "oracle").items():
        item = ctx.bench.item(item_id, "mcq")
        rot = decision.get("rotation")
        if mode not in (None, "mcq") or item is None or not isinstance(decision.get("choice"), str) \
                or not isinstance(rot, int) or not 0 <= rot < len(item.rotations):
            continue
        out[item_id] = canonical(item, rot, decision["choice"])
    return out


def build(ctx: ScoreContext) -> SectionResult:
    ann = ctx.annotations
    if ann is None:
        return SectionResult.absent(NAME, "no annotation database given (--db)")
    acts = ann[ann["kind"] == "oracle"] if len(ann) else ann
    if acts.empty:
        return SectionResult.absent(NAME, "the annotation database has no oracle answers")
    warnings = []
    keys = _adjudicated_keys(ctx, ann)
    answers, open_answers, unknown, bad_rotation = [], 0, 0, 0
    for annotator, item_id, mode, choice, rotation in acts[["annotator", "item_id", "mode", "choice", "rotation"]].itertuples(index=False):
        if mode not in (None, "mcq") or not isinstance(choice, str):
            open_answers += 1
            continue
        item = ctx.bench.item(item_id, "mcq")
        if item is None or not item.rotations:
            unknown += 1
            continue
        r = 0 if rotation is None or rotation != rotation else int(rotation)
        if not 0 <= r < len(item.rotations):
            bad_rotation += 1
            continue
        correct = keys.get(item_id) or canonical(item, r, item.rotations[r].answer)
        answers.append({"item_id": item_id, "y": sorted(item.y), "annotator": annotator,
                        "choice": canonical(item, r, choice), "correct": correct})
    if open_answers:
        warnings.append(f"{open_answers} oracle act(s) on open items (free-text answers) are not scored here")
    if unknown:
        warnings.append(f"{unknown} oracle answer(s) name an item with no MCQ form in the benchmark; left out")
    if bad_rotation:
        warnings.append(f"{bad_rotation} oracle answer(s) name a rotation the item does not have; left out")
    if not answers:
        return SectionResult(NAME, {"value": None, "reason": "no oracle answer on a benchmark MCQ item"},
                             reason="no oracle answer on a benchmark MCQ item", warnings=tuple(warnings))
    rows = []
    scored = {a["item_id"]: a["y"] for a in answers}
    for r in oracle_accuracy(answers):
        y = "all" if r.y == ORACLE_ALL else r.y
        n_adj = sum(1 for i, ys in scored.items() if i in keys and (y == "all" or y in ys))
        rows.append({"y": y, "majority_accuracy": r.majority_accuracy,
                     "mean_individual_accuracy": r.mean_individual_accuracy, "n_items": r.n_items,
                     "n_annotators": r.n_annotators, "ties": r.ties, "majority_correct": r.majority_correct,
                     "n_answers": r.n_answers, "adjudicated": n_adj})
    cols = [r["y"] for r in rows]
    label = {c: ("All" if c == "all" else c) for c in cols}
    shown = [
        {"Metric": "Majority-vote accuracy", **{label[r["y"]]: r["majority_accuracy"] for r in rows},
         "_n": {label[r["y"]]: r["n_items"] for r in rows}},  # over items; the mean individual one over annotators
        {"Metric": "Mean individual accuracy", **{label[r["y"]]: r["mean_individual_accuracy"] for r in rows},
         "_n": {label[r["y"]]: r["n_annotators"] for r in rows}},
        {"Metric": "n items", **{label[r["y"]]: r["n_items"] for r in rows}},
        {"Metric": "annotators", **{label[r["y"]]: r["n_annotators"] for r in rows}},
        {"Metric": "ties (no strict majority, counted wrong)", **{label[r["y"]]: r["ties"] for r in rows}},
        {"Metric": "adjudicated keys", **{label[r["y"]]: r["adjudicated"] for r in rows}},
    ]
    n_adj = next((r["adjudicated"] for r in rows if r["y"] == "all"), 0)
    table = Table("oracle", "Human oracle accuracy (gold clue rounds only), by Y", shown,
                  ["Metric", *[label[c] for c in cols]],
                  "An item with several Y labels counts in each of its Y columns and once in All. "
                  f"{n_adj} item(s) adjudicated" + (": their key is the adjudicated answer, not the gold one."
                                                   if n_adj else "."))
    return SectionResult(NAME, rows, (table,), warnings=tuple(warnings))
