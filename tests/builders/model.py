"""Hand-built tasks, items, predictions and runs for the evidence / recency / delivery / abstention /
gates tests: small enough that every expected number is worked out by hand in the tests' comments.

Task "T" (chronological order in brackets):
  session D1 (2024-01-01): D1:1 [0] image, D1:2 [1] text, D1:3 [2] text
  session D2 (2024-02-01): D2:1 [3] video, D2:2 [4] image
  session D3 (2024-03-01): D3:1 [5] audio, D3:2 [6] text
"""

from __future__ import annotations

from pathlib import Path
from typing import Any, Sequence

from scorer.model import Benchmark, ChainFact, Item, Media, Prediction, Round, Rotation, Run, Session, Task

TASK = "T"
LAYOUT = {
    "D1": [("D1:1", "image"), ("D1:2", None), ("D1:3", None)],
    "D2": [("D2:1", "video"), ("D2:2", "image")],
    "D3": [("D3:1", "audio"), ("D3:2", None)],
}


def make_sessions() -> tuple[Session, ...]:
    sessions, order = [], 0
    for s_order, (sid, rounds) in enumerate(LAYOUT.items()):
        rs = []
        for pos, (rid, kind) in enumerate(rounds, start=1):
            media = (Media(kind, f"{rid}.bin", text=f"{kind} of {rid}"),) if kind else ()
            rs.append(Round(rid, sid, pos, order, user=f"user says {rid}", assistant="ok", media=media))
            order += 1
        sessions.append(Session(sid, s_order, f"2024-0{s_order + 1}-01", tuple(rs)))
    return tuple(sessions)


def item(idx: int, y: Sequence[str], clues: Sequence[str], sessions: Sequence[str] = (), x: Sequence[str] = ("X1",),
         mode: str = "open", answerable: bool = True, chain: Sequence[ChainFact] | None = None,
         cluster: str = "", rotations: Sequence[Rotation] = ()) -> Item:
    return Item(
        item_id=f"{TASK}:{idx}", task=TASK, index=idx, mode=mode, question=f"question {idx}?", answer="gold",
        x=frozenset(x), y=frozenset(y), session_ids=tuple(sessions), clue_rounds=tuple(clues),
        chain=tuple(chain) if chain is not None else tuple(ChainFact(c) for c in clues),
        rotations=tuple(rotations), mcq_form="rotation" if rotations else None,
        answerable=answerable, cluster=cluster or TASK,
    )


def task(items: Sequence[Item]) -> Task:
    return Task(TASK, make_sessions(), tuple(items))


def bench(items: Sequence[Item]) -> Benchmark:
    return Benchmark(Path("/nonexistent"), "hand", (task(items),))


def pred(it: Item, retrieved: Any = None, delivered: Any = None, *, pred: str = "answer", em: float | None = None,
         judge: float | None = None, abstained: bool | None = None, rotations: Any = None,
         choice: str | None = None, bleu_1: float | None = None, **raw: Any) -> Prediction:
    row: dict[str, Any] = dict(raw)
    if retrieved is not None:
        row["retrieved"] = retrieved
    if delivered is not None:
        row["delivered"] = delivered
    if rotations is not None:
        row["rotations"] = rotations
    row.update({"question": it.question, "gt": it.answer, "pred": pred, "em": em, "judge": judge,
                "bleu_1": bleu_1, "abstained": abstained, "choice": choice})
    return Prediction(task=TASK, mode=it.mode, idx=it.index, line=it.index, raw=row)


def run(method: str, predictions: Sequence[Prediction], backbone: str = "bb", mode: str = "open",
        config: dict | None = None) -> Run:
    return Run(backbone=backbone, method=method, mode=mode, task=TASK, folder=Path(f"/runs/{backbone}_{method}"),
               config=config or {}, predictions=tuple(predictions))


def context(items: Sequence[Item], runs: Sequence[Run], **options: Any):
    """A ScoreContext over a hand-built benchmark; the frame is predictions_frame's (recorded scores)."""
    from scorer.load.frame import predictions_frame
    from scorer.sections.base import ScoreContext, ScoreOptions

    b = bench(items)
    options.setdefault("resamples", 500)
    return ScoreContext(b, list(runs), predictions_frame(b, runs), None, ScoreOptions(**options))
