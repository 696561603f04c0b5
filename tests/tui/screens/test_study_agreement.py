"""The judge-agreement study end to end on the demo: built with `memscope study new` (MemEye's
protocol: 3 per cell × FC(V), SRAG(V)), completed in the real app with Pilot — a/r/b, an undo, a
note, a flag, a restart in the middle — and then scored by the scorer: κ, n and the confusion equal
the hand count from what the test pressed and the judge scores revealed afterwards."""

from __future__ import annotations

import csv
import io
import json
from pathlib import Path

import pytest

from scorer.cli import main as cli_main
from scorer.load.runs import load_runs
from scorer.scoring import score
from scorer.sections.base import ScoreOptions
from scorer.store import Store
from tests.paths import DEMO, RUNS
from tests.tui.apphelpers import (
    LEAK,
    SIZE,
    demo_db,
    kappa,
    new_study,
    saved_line,
    screen_lines,
    screen_text,
    study_app,
    text_of,
    wait_ready,
)

pytestmark = pytest.mark.usefixtures("halfcell")

VERDICT = {"a": "accept", "r": "reject", "b": "borderline"}
STUDY = "judge-test"


def script(i: int) -> str:
    """The verdict key the test presses at its i-th answer: mostly accept, some reject, a few borderline."""
    return "b" if i % 11 == 5 else "r" if i % 3 == 1 else "a"


def judge_scores() -> dict[tuple[str, str], float | None]:
    """(run key, item id) → the judge score recorded in the demo's open runs."""
    out = {}
    for run in load_runs([RUNS]):
        if run.mode == "open":
            for p in run.predictions:
                out[(run.key, p.item_id)] = p.judge
    return out


@pytest.mark.needs_demo
async def test_agreement_study_completed_in_the_app_scores_to_the_hand_count(tmp_path: Path, capsys) -> None:
    db = demo_db(tmp_path)  # the demo's own annotations are there too: the study must score alone
    new_study(db, "agreement", STUDY, "3", "--methods", "FC(V),SRAG(V)", "--backbone", "gpt-5.4-mini", runs=True)
    pressed: dict[str, str] = {}  # blind id → the verdict that counts
    answered = 0
    async with study_app(db, STUDY, "tester").run_test(size=SIZE) as pilot:
        screen = await wait_ready(pilot)
        total = screen.session.total
        assert total == 70  # 35 items (cell X2_Y2 has only 2) × 2 methods
        while answered < 30:
            blind = screen.session.entry.blind_id
            shown = screen_text(pilot.app)
            assert blind in shown and not LEAK.search(shown), shown
            if answered == 2:  # accept, undo it, then reject: the reject counts
                await pilot.press("a")
                screen = await wait_ready(pilot)
                await pilot.press("u")
                await pilot.pause()
                assert screen.session.entry.blind_id == blind and "↶ undone verdict accept" in saved_line(screen)
            if answered == 4:  # a note and a flag on this entry, then its verdict
                await pilot.press("N", *"odd", "enter")
                await pilot.pause()
                assert "note “odd”" in saved_line(screen)
                await pilot.press("f", "4", *"strict", "enter")
                await pilot.pause()
                assert "flag wrong_gold" in saved_line(screen)
            key = "r" if answered == 2 else script(answered)
            await pilot.press(key)
            screen = await wait_ready(pilot)
            line = saved_line(screen)
            assert line.startswith(f"✓ saved {blind}") and VERDICT[key] in line and not LEAK.search(line), line
            pressed[blind] = VERDICT[key]
            answered += 1
    # A restart resumes at the next unanswered entry, with the progress kept.
    async with study_app(db, STUDY, "tester").run_test(size=SIZE) as pilot:
        screen = await wait_ready(pilot)
        queue = screen.session.queue
        assert screen.session.entry.position == 31 and all(q.done for q in queue[:30])
        assert "30/70 done" in screen_text(pilot.app)
        while answered < total:
            blind = screen.session.entry.blind_id
            assert not LEAK.search(screen_text(pilot.app))
            key = script(answered)
            await pilot.press(key)
            screen = await wait_ready(pilot)
            assert saved_line(screen).startswith(f"✓ saved {blind}")
            pressed[blind] = VERDICT[key]
            answered += 1
        assert "study complete" in text_of(screen, "#study-head") and "70/70 done" in screen_text(pilot.app)
        assert len(screen.latencies) == 40 and all(0 < t < 5 for t in screen.latencies)

    # Revealed afterwards: the run behind each blind id, and the judge's score on it.
    with Store(db) as store:
        reveal = {r["blind_id"]: r for r in store.reveal(STUDY, "tester")}
        assert store.progress(STUDY) == [{"annotator": "tester", "done": 70, "total": 70}]
        (note,) = store.current("note", study=STUDY)
        (flag,) = store.current("flag", study=STUDY)
    assert note["text"] == "odd" and flag["flag"] == "wrong_gold" and flag["text"] == "strict"
    assert len(pressed) == 70 and set(pressed) == set(reveal)
    scores = judge_scores()
    judge, human, methods, borderline = [], [], [], 0
    for blind, verdict in pressed.items():
        r = reveal[blind]
        if verdict == "borderline":
            borderline += 1
            continue
        s = scores[(r["run_key"], r["item_id"])]
        judge.append("accept" if s >= 0.5 else "reject")
        human.append(verdict)
        methods.append(r["run_key"].split("/")[1])
    by_hand = kappa(judge, human)

    report = score(DEMO, [RUNS], db=db, options=ScoreOptions(study=STUDY, resamples=300), sections=["agreement"])
    rows = report.section("agreement").data["judge_vs_human"]
    (overall,) = [r for r in rows if r["human"] == "tester" and r["stratum"] == "all"]
    assert overall["n"] == len(judge) == 70 - borderline and overall["excluded_borderline"] == borderline
    assert overall["agreements"] == sum(j == h for j, h in zip(judge, human))
    assert overall["kappa"] == pytest.approx(by_hand, abs=1e-12)
    assert overall["ci_low"] <= overall["kappa"] <= overall["ci_high"]
    assert overall["accept_reject"] == sum(j == "accept" and h == "reject" for j, h in zip(judge, human))
    per_method = {r["method"]: r["n"] for r in rows if r["human"] == "tester" and r["stratum"] == "method"}
    assert per_method == {"FC(V)": methods.count("full_context__multimodal"),
                          "SRAG(V)": methods.count("semantic_rag__multimodal")}

    # The export: blind without --reveal, the runs with it.
    capsys.readouterr()
    assert cli_main(["study", "list", "--db", str(db)]) == 0
    assert "tester: 70/70 (100%)" in capsys.readouterr().out
    blind_out, open_out = tmp_path / "blind.jsonl", tmp_path / "open.csv"
    assert cli_main(["study", "export", "--db", str(db), "--name", STUDY, "--out", str(blind_out)]) == 0
    assert cli_main(["study", "export", "--db", str(db), "--name", STUDY, "--out", str(open_out), "--reveal"]) == 0
    assert not LEAK.search(blind_out.read_text())
    blind_rows = [json.loads(line) for line in blind_out.read_text().splitlines()]
    assert {r["blind_id"]: r["answer"] for r in blind_rows if r["kind"] == "verdict"} == pressed
    open_rows = list(csv.DictReader(io.StringIO(open_out.read_text(), newline="")))
    assert {r["blind_id"]: r["run"] for r in open_rows if r["kind"] == "verdict"} == \
        {b: reveal[b]["run_key"] for b in pressed}
    assert sorted(r["kind"] for r in open_rows if r["kind"] != "verdict") == ["flag", "note"]


@pytest.mark.needs_demo
async def test_the_judge_score_shows_only_after_commit_when_asked(tmp_path: Path) -> None:
    db = tmp_path / "j.db"
    new_study(db, "agreement", "peek", "1", "--backbone", "gpt-5.4-mini", "--show-judge-after", runs=True)
    scores = judge_scores()
    async with study_app(db, "peek", "ann").run_test(size=SIZE) as pilot:
        screen = await wait_ready(pilot)
        await pilot.press("2", "3")  # started with --study: the other screens stay shut
        assert pilot.app.screen is screen
        await pilot.press("escape", "1")  # esc: the list of studies, and still no way out of them
        assert type(pilot.app.screen).__name__ == "StudyHomeScreen"
        await pilot.press("enter")
        screen = await wait_ready(pilot)
        for key in "ar":
            entry = screen.session.entry
            before = [line for line in screen_lines(pilot.app) if "✓ saved" not in line]  # the last item's line
            assert not LEAK.search("\n".join(before))  # nothing of this entry's judge before the commit
            await pilot.press(key)
            screen = await wait_ready(pilot)
            judge = scores[(entry.run_key, entry.item_id)]
            line = saved_line(screen)
            assert f"judge {judge:.2f} → {'accept' if judge >= 0.5 else 'reject'}" in line, line
