"""The label study end to end on the demo: two annotators label X and Y in the real app with the
taxonomy's definitions and boundary rules on screen and the gold labels hidden until each commit;
the scorer's κ_X / κ_Y (pair and against gold) equal the hand count from what the test pressed."""

from __future__ import annotations

import re
from pathlib import Path

import pytest

from scorer.load.memeye import load_benchmark
from scorer.model import X_LABELS, Y_LABELS
from scorer.scoring import score
from scorer.sections.base import ScoreOptions
from scorer.store import Store
from tests.paths import DEMO, RUNS
from tests.tui.apphelpers import SIZE, kappa, new_study, saved_line, screen_lines, study_app, text_of, wait_ready
from tui.widgets.labels import X_KEYS, Y_KEYS

pytestmark = pytest.mark.usefixtures("halfcell")

STUDY = "labels-test"
KEY = {v: k for k, v in {**X_KEYS, **Y_KEYS}.items()}  # "X3" → "3"
GOLD_SHOWN = re.compile(r"gold [XY—]")


def code(labels) -> str:
    return "+".join(sorted(labels))


def scripted(ann: str, j: int, x: frozenset, y: frozenset) -> tuple[list[str], list[str]]:
    """The labels the test gives: the gold ones, except ann1 shifts X on every third item and ann2
    shifts Y on every fourth (one label, the next level up, wrapping)."""
    xs, ys = sorted(x), sorted(y)
    if ann == "ann1" and j % 3 == 0:
        xs = [X_LABELS[(X_LABELS.index(xs[0]) + 1) % 4]]
    if ann == "ann2" and j % 4 == 1:
        ys = [Y_LABELS[(Y_LABELS.index(ys[0]) + 1) % 3]]
    return xs, ys


@pytest.mark.needs_demo
async def test_label_study_by_two_annotators_scores_to_the_hand_count(tmp_path: Path) -> None:
    db = tmp_path / "l.db"
    new_study(db, "labels", STUDY, "1")
    bench = load_benchmark(DEMO)
    given: dict[str, dict[str, tuple[str, str]]] = {"ann1": {}, "ann2": {}}
    for ann, mine in given.items():
        async with study_app(db, STUDY, ann, runs=False).run_test(size=SIZE) as pilot:
            screen = await wait_ready(pilot)
            defs = text_of(screen, "#lab-defs")
            for words in ("X1 Scene", "X2 Region", "X3 Instance", "X4 Pixel", "Y1 Atomic", "Y2 Relational",
                          "Y3 Evolutionary", "Highest bottleneck", "WHERE", "WHICH", "Y3 only when"):
                assert words in defs
            for j in range(screen.session.total):
                entry = screen.session.entry
                item = bench.item(entry.item_id, "open")
                before = "\n".join(line for line in screen_lines(pilot.app) if "✓ saved" not in line)
                assert not GOLD_SHOWN.search(before) and not GOLD_SHOWN.search(text_of(screen, "#lab-selection"))
                assert item.question in text_of(screen, "#lab-item")
                xs, ys = scripted(ann, j, item.x, item.y)
                if j == 0:
                    await pilot.press("enter")  # nothing picked yet: refused, nothing saved
                    assert screen.session.entry == entry and screen.session.n_done == 0
                await pilot.press(*[KEY[v] for v in xs + ys])
                assert f"your labels: {code(xs)} · {code(ys)}" in text_of(screen, "#lab-selection")
                await pilot.press("enter")
                screen = await wait_ready(pilot)
                line = saved_line(screen)
                assert line.startswith(f"✓ saved {entry.blind_id}"), line
                assert f"you {code(xs)} · {code(ys)} | gold {code(item.x)} · {code(item.y)}" in line, line
                mine[item.item_id] = (code(xs), code(ys))
            assert "study complete" in text_of(screen, "#study-head")

    with Store(db) as store:
        stored = {(r["annotator"], r["item_id"]): (code(r["x"]), code(r["y"])) for r in store.labels(STUDY)}
    assert stored == {(a, i): v for a, d in given.items() for i, v in d.items()}
    items = sorted(given["ann1"])
    gold = {i: (code(bench.item(i, "open").x), code(bench.item(i, "open").y)) for i in items}
    report = score(DEMO, [RUNS], db=db, options=ScoreOptions(study=STUDY, resamples=100), sections=["agreement"])
    rows = report.section("agreement").data["labels"]
    for axis, k in (("X", 0), ("Y", 1)):
        a1 = [given["ann1"][i][k] for i in items]
        a2 = [given["ann2"][i][k] for i in items]
        g = [gold[i][k] for i in items]
        (pair,) = [r for r in rows if r["axis"] == axis and r["kind"] == "pair"]
        assert (pair["rater_a"], pair["rater_b"], pair["n"]) == ("ann1", "ann2", 12)
        assert pair["agreements"] == sum(u == v for u, v in zip(a1, a2))
        assert pair["kappa"] == pytest.approx(kappa(a1, a2), abs=1e-12)
        for ann, mine in (("ann1", a1), ("ann2", a2)):
            (vs_gold,) = [r for r in rows if r["axis"] == axis and r["kind"] == "gold" and r["rater_a"] == ann]
            if mine == g:
                assert vs_gold["agreements"] == 12 and vs_gold["observed"] == 1.0
            else:
                assert vs_gold["kappa"] == pytest.approx(kappa(mine, g), abs=1e-12)
