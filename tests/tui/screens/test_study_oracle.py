"""The human-oracle study end to end on the demo: three annotators answer MCQ items in the real app
seeing only the gold clue rounds (and the Y3 instruction), one key per letter; the scorer's
majority-vote and mean individual accuracy by Y equal the hand count from what the test pressed."""

from __future__ import annotations

from collections import Counter
from pathlib import Path

import pytest
from textual.widgets import Static

from scorer.load.memeye import load_benchmark
from scorer.scoring import score
from scorer.sections.base import ScoreOptions
from scorer.store import Store, oracle_rotation
from tests.paths import DEMO, RUNS
from tests.tui.apphelpers import SIZE, new_study, saved_line, screen_text, study_app, text_of, wait_ready

pytestmark = pytest.mark.usefixtures("halfcell")

STUDY = "oracle-test"
ANNOTATORS = ("ann1", "ann2", "ann3")


def shown_texts(screen) -> str:
    """Every Static's text in the entry body, scrolled into view or not."""
    return "\n".join(str(w.content) for w in screen.query_one("#study-body").query(Static))


def hand_count(answers: dict, ys: dict) -> dict[str, tuple[float, float, int, int]]:
    """y → (majority accuracy, mean individual accuracy, items, ties), by the definitions of DESIGN §5."""
    out = {}
    for group in ("Y1", "Y2", "Y3", "all"):
        items = sorted({i for (_, i) in answers if group == "all" or group in ys[i]})
        if not items:
            continue
        right = ties = 0
        for i in items:
            votes = [c for (a, j), (c, _) in answers.items() if j == i]
            correct = next(k for (a, j), (_, k) in answers.items() if j == i)
            top, n = Counter(votes).most_common(1)[0]
            if n * 2 > len(votes):
                right += top == correct
            else:
                ties += 1
        per_ann = []
        for a in ANNOTATORS:
            mine = [(c, k) for (b, i), (c, k) in answers.items() if b == a and i in items]
            per_ann.append(sum(c == k for c, k in mine) / len(mine))
        out[group] = (right / len(items), sum(per_ann) / len(per_ann), len(items), ties)
    return out


@pytest.mark.needs_demo
async def test_oracle_study_by_three_annotators_scores_to_the_hand_count(tmp_path: Path) -> None:
    db = tmp_path / "o.db"
    new_study(db, "oracle", STUDY, "1")
    bench = load_benchmark(DEMO)
    # (annotator, item) → (the option pressed, the correct option), as texts: annotators see different
    # rotations, so they vote on options, not letters
    answers: dict[tuple[str, str], tuple[str, str]] = {}
    rotations: dict[str, set[int]] = {}
    for k, ann in enumerate(ANNOTATORS):
        async with study_app(db, STUDY, ann, runs=False).run_test(size=SIZE) as pilot:
            screen = await wait_ready(pilot)
            assert screen.session.total == 12
            for j in range(screen.session.total):
                entry = screen.session.entry
                item = bench.item(entry.item_id, "mcq")
                task = bench.task_of(item)
                chain = task.clue_chain(item)
                r = screen.session.rotation()
                assert r == oracle_rotation(screen.session.study.seed, ann, item.item_id, len(item.rotations))
                rotations.setdefault(item.item_id, set()).add(r)
                # Only the gold clue rounds, in time order; no roles, latest/stale marks or explanation.
                assert len(screen.query(".oracle-clue")) == len(chain) and "Clue round 1 of" in screen_text(pilot.app)
                body = shown_texts(screen)
                heads = [line for line in body.splitlines() if line.startswith("Clue round")]
                assert heads == [f"Clue round {n} of {len(chain)}" + (f" · {c.date}" if c.date else "")
                                 for n, c in enumerate(chain, 1)]
                clue_ids = {c.round_id for c in chain}
                for other in task.rounds:
                    if other.round_id not in clue_ids and other.user and all(other.user != c.user for c in chain):
                        assert other.user not in body
                assert not {"★", "⟲", "✓"} & set(body) and "stale" not in body  # the Item screen's marks
                assert not item.explanation or item.explanation not in body
                assert ("latest valid state" in text_of(screen, "#or-instruction")) == ("Y3" in item.y)
                rot = item.rotations[r]
                options = text_of(screen, "#or-options")
                assert all(text in options for text in rot.options.values())
                wrong = next(L for L in rot.options if L != rot.answer)
                if k == 0 and j == 0:  # a wrong answer, undone
                    await pilot.press(wrong.lower())
                    screen = await wait_ready(pilot)
                    await pilot.press("u")
                    await pilot.pause()
                    assert screen.session.entry == entry
                choice = wrong if (j + k) % 4 == 0 or (k == 2 and j % 5 == 1) else rot.answer
                await pilot.press(choice.lower())
                screen = await wait_ready(pilot)
                line = saved_line(screen)
                assert line.startswith(f"✓ saved {entry.blind_id}") and f"{choice} (rotation {r + 1})" in line, line
                answers[(ann, item.item_id)] = (rot.options[choice], rot.options[rot.answer])  # as options
            assert "study complete" in text_of(screen, "#study-head")
    assert any(len(rs) > 1 for rs in rotations.values())  # annotators see different rotations

    with Store(db) as store:
        rows = store.oracle_answers(STUDY)
    assert len(rows) == 36 and all(r["seconds"] > 0 for r in rows)
    assert {(r["annotator"], r["item_id"]): bench.item(r["item_id"], "mcq").rotations[r["rotation"]].options[r["choice"]]
            for r in rows} == {k: v[0] for k, v in answers.items()}

    ys = {i: sorted(bench.item(i, "mcq").y) for _, i in answers}
    expected = hand_count(answers, ys)
    report = score(DEMO, [RUNS], db=db, options=ScoreOptions(study=STUDY, resamples=100), sections=["oracle"])
    got = {r["y"]: r for r in report.section("oracle").data}
    assert set(got) == set(expected)
    for y, (maj, mean, n_items, ties) in expected.items():
        assert got[y]["majority_accuracy"] == pytest.approx(maj, abs=1e-12)
        assert got[y]["mean_individual_accuracy"] == pytest.approx(mean, abs=1e-12)
        assert (got[y]["n_items"], got[y]["ties"], got[y]["n_annotators"]) == (n_items, ties, 3)
    assert expected["all"][0] < 1.0 and expected["all"][1] < 1.0  # the script did get some wrong
