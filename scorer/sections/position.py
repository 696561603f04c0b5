"""Position bias of rotation MCQ (how often each letter is chosen, per backbone and method)."""

from __future__ import annotations

from scorer.metrics.answers import position_bias
from scorer.sections.base import ScoreContext, SectionResult, Table
from scorer.sections.methods import method_columns
from scorer.sections.registry import name_of

NAME = name_of(__name__)


def build(ctx: ScoreContext) -> SectionResult:
    f = ctx.frame
    if f.empty or "choices" not in f:
        return SectionResult.absent(NAME, "no MCQ predictions")
    mask = (f["mode"] == "mcq").to_numpy(bool) & f["choices"].notna().to_numpy(bool)
    mcq = f.loc[mask, ["backbone", "method", "display", "family", "item_id", "choices"]]
    if mcq.empty:
        return SectionResult.absent(NAME, "no MCQ prediction logged its per-rotation choices")
    answers = {it.item_id: tuple(r.answer for r in it.rotations) for it in ctx.bench.items("mcq")}
    # Plain object arrays: iterating pandas string columns element by element is slow.
    keys = list(zip(mcq["backbone"].to_numpy(object), mcq["method"].to_numpy(object)))
    rows = position_bias(keys, mcq["choices"].to_numpy(object).tolist(),
                         [answers.get(i) for i in mcq["item_id"].to_numpy(object)])
    meta = mcq.drop_duplicates(["backbone", "method"])[["backbone", "method", "display", "family"]]
    display = dict(zip(meta["method"], meta["display"]))
    data = []
    for r in rows:
        backbone, method = r.pop("key")
        data.append({"backbone": backbone, "method": method, "display": display.get(method, method), **r})
    by_backbone: dict[str, list[dict]] = {}
    for d in data:
        by_backbone.setdefault(d["backbone"], []).append(d)
    tables = []
    for backbone in sorted(by_backbone):
        sub = by_backbone[backbone]
        letters = sorted({d["letter"] for d in sub}, key=lambda v: (v == "invalid", v))
        out = []
        for method, label, _ in method_columns(meta[meta["backbone"] == backbone]):
            mine = {d["letter"]: d for d in sub if d["method"] == method}
            if not mine:
                continue
            row = {"Method": label, "n": next(iter(mine.values()))["n"]}
            for lt in letters:
                row[lt] = mine[lt]["share"] if lt in mine else 0.0
            out.append(row)
        tables.append(Table(name=f"position_bias_{backbone}", title=f"{backbone}: share of MCQ rotations answered with each letter",
                            rows=out, columns=["Method", "n", *letters],
                            note="n = rotations; a balanced design puts the answer at each letter equally often."))
    return SectionResult(NAME, data, tables)
