"""`memscope study plan` and the live "κ so far / pairs to go" of a running agreement study (issue 16
point 5), against statsmodels' cohens_kappa computed directly; and the pairwise agreement and
progress `study list` shows (point 6)."""

from __future__ import annotations

from pathlib import Path

import numpy as np
import pytest
from statsmodels.stats.inter_rater import cohens_kappa

from scorer.metrics.kappa_plan import expected_table, plan_kappa
from scorer.store import Store
from scorer.store.status import status_lines, study_status
from tui.cli import main

TRIPLES = [(0.9, 0.55, 0.05), (0.94, 0.5, 0.1), (0.6, 0.3, 0.08), (0.2, 0.8, 0.15), (0.75, 0.65, 0.03),
           (-0.2, 0.5, 0.2)]


def sm_half_width(table: np.ndarray) -> float:
    r = cohens_kappa(table, return_results=True)
    return (r.kappa_upp - r.kappa_low) / 2


@pytest.mark.parametrize(("kappa", "prevalence", "width"), TRIPLES)
def test_plan_is_the_least_n_statsmodels_gives_that_width(kappa: float, prevalence: float, width: float) -> None:
    plan = plan_kappa(kappa, width, prevalence)
    # the table: equal marginals at the prevalence, and that κ (statsmodels says so too)
    t = expected_table(kappa, prevalence)
    assert t.sum(0) == pytest.approx([prevalence, 1 - prevalence]) and t.sum(1) == pytest.approx(t.sum(0))
    assert cohens_kappa(t * 100).kappa == pytest.approx(kappa)
    n = plan.pairs
    assert sm_half_width(t * n) <= width + 1e-12
    assert sm_half_width(t * (n - 1)) > width
    assert plan.expected_half_width == pytest.approx(sm_half_width(t * n), rel=1e-9)


def test_plan_command_prints_the_pairs(capsys: pytest.CaptureFixture[str]) -> None:
    assert main(["study", "plan", "--kappa", "0.9", "--half-width", "0.05", "--prevalence", "0.55"]) == 0
    out = capsys.readouterr().out
    t = expected_table(0.9, 0.55)
    n = int(out.split()[0])
    assert sm_half_width(t * n) <= 0.05 < sm_half_width(t * (n - 1))
    assert "0.5252" in out and "equal marginals" in out  # the expected table is stated
    assert main(["study", "plan", "--kappa", "0.9", "--half-width", "0.05", "--raters", "3"]) == 0
    assert "3 pairs" in capsys.readouterr().out


@pytest.mark.parametrize(("argv", "message"), [
    (["--kappa", "-0.9", "--half-width", "0.1", "--prevalence", "0.9"], "impossible with equal marginals"),
    (["--kappa", "1", "--half-width", "0.1"], "strictly between"),
    (["--kappa", "0.9", "--half-width", "0"], "--half-width must lie between 0 and 1, got 0"),
    (["--kappa", "0.9", "--half-width", "inf"], "--half-width must lie between 0 and 1, got inf"),
    (["--kappa", "0.9", "--half-width", "nan"], "--half-width must lie between 0 and 1, got nan"),
    (["--kappa", "0.9", "--half-width", "1.5"], "--half-width must lie between 0 and 1"),
    (["--kappa", "0.9", "--half-width", "1e-300"], "takes more pairs than 1,000,000,000"),
    (["--kappa", "0.9", "--half-width", "1e-160"], "takes more pairs than 1,000,000,000"),
    (["--kappa", "0.9", "--half-width", "1e-6"], "takes about 7.3e+11 pairs, more than 1,000,000,000"),
    (["--kappa", "0.9", "--half-width", "0.1", "--prevalence", "1.2"], "--prevalence must lie"),
    (["--kappa", "0.9", "--half-width", "0.1", "--raters", "1"], "--raters"),
])
def test_plan_refuses_what_has_no_answer(argv: list[str], message: str, capsys: pytest.CaptureFixture[str]) -> None:
    assert main(["study", "plan", *argv]) == 2
    err = capsys.readouterr().err.strip().splitlines()
    assert len(err) == 1 and message in err[0], err


def _scripted(tmp_path: Path) -> tuple[Store, list, list[float]]:
    """An agreement study of 40 entries whose judge scores are recorded, planned at ± 0.2."""
    store = Store(tmp_path / "s.db")
    entries = [(f"T:{i}", "open", "bb/m", "X1_Y1") for i in range(40)]
    judge = [1.0 if i % 3 else 0.0 for i in range(40)]
    store.create_study("ag", "agreement", 7, {"judge_scores": judge, "plan": {"half_width": 0.2}}, entries)
    return store, entries, judge


def test_live_kappa_and_pairs_to_go_on_a_scripted_study(tmp_path: Path) -> None:
    store, entries, judge = _scripted(tmp_path)
    # ann1 agrees with the judge except on entries 0, 4; ann2 answers 20, says borderline on 5
    for i, (item, mode, run, _) in enumerate(entries[:30]):
        j = "accept" if judge[i] >= 0.5 else "reject"
        v = {"accept": "reject", "reject": "accept"}[j] if i in (0, 4) else j
        store.verdict("ann1", item, mode, run, v, study="ag")
        if i < 20:
            store.verdict("ann2", item, mode, run, "borderline" if i == 5 else j, study="ag")
    st = study_status(store, "ag")
    by = {lk.human: lk for lk in st.live}
    # ann1: 30 pairs; the table judge-first, accept first, counted by hand
    pairs = [("accept" if judge[i] >= 0.5 else "reject",
              ({"accept": "reject", "reject": "accept"}["accept" if judge[i] >= 0.5 else "reject"]
               if i in (0, 4) else ("accept" if judge[i] >= 0.5 else "reject"))) for i in range(30)]
    table = np.array([[sum(1 for j, h in pairs if j == a and h == b) for b in ("accept", "reject")]
                      for a in ("accept", "reject")])
    ref = cohens_kappa(table, return_results=True)
    lk = by["ann1"]
    assert (lk.n, lk.excluded) == (30, 0)
    assert lk.kappa == pytest.approx(ref.kappa) and lk.ci_low == pytest.approx(ref.kappa_low)
    assert lk.ci_high == pytest.approx(ref.kappa_upp)
    # pairs to go, directly: the least m with statsmodels' half-width of the same proportions ≤ 0.2
    m = next(m for m in range(0, 10_000) if sm_half_width(table * (30 + m) / 30) <= 0.2)
    assert lk.to_go == m and m > 0
    assert by["ann2"].excluded == 1 and by["ann2"].n == 19
    # the strict majority of those who answered (as the scorer's): 0, 4 and 5 are ties; 20–29 ann1's own
    assert (by["majority"].n, by["majority"].excluded, by["majority"].kappa) == (27, 3, 1.0)
    assert by["majority"].to_go is None  # no disagreement yet: the analytic SE is 0 and says nothing
    # ... nor is [1.000, 1.000] an interval: statsmodels' CI has zero width there, whatever n
    assert cohens_kappa(np.array([[20, 0], [0, 7]]), return_results=True).std_kappa == 0
    assert (by["majority"].ci_low, by["majority"].ci_high, by["majority"].half_width) == (None, None, None)
    lines = "\n".join(status_lines(st))
    majority = next(x for x in lines.splitlines() if "judge vs majority" in x)
    assert "CI 1.000, 1.000" not in majority and "± 0.000" not in majority
    assert "1.000, no 95% CI yet (the analytic SE is 0 while no pair disagrees)" in majority and "n 27" in majority
    assert f"about {m} more pairs to ± 0.2" in lines and "n 30" in lines
    assert "ann1: 0/40" not in lines  # no queue asked for yet: progress lists queues only
    # a wider target is reached already; an override on the command line wins over the plan
    wide = study_status(store, "ag", half_width=0.9)
    assert {lk.human: lk.to_go for lk in wide.live}["ann1"] == 0
    # pairwise: ann1 vs ann2 on the 20 entries both judged (verdicts as categories)
    pw = next(p for p in st.pairwise if (p.rater_a, p.rater_b, p.on) == ("ann1", "ann2", "verdict"))
    a1 = [pairs[i][1] for i in range(20)]
    a2 = ["borderline" if i == 5 else pairs[i][0] for i in range(20)]
    labels = sorted(set(a1) | set(a2))
    conf = np.array([[sum(1 for u, v in zip(a1, a2) if u == x and v == y) for y in labels] for x in labels])
    assert pw.n == 20 and pw.kappa == pytest.approx(cohens_kappa(conf).kappa)
    store.close()


def test_study_list_shows_progress_agreement_and_kappa(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    store, entries, judge = _scripted(tmp_path)
    for ann in ("ann1", "ann2"):
        store.annotator_queue("ag", ann)
    for i, (item, mode, run, _) in enumerate(entries[:10]):
        j = "accept" if judge[i] >= 0.5 else "reject"
        store.verdict("ann1", item, mode, run, j, study="ag")
        store.verdict("ann2", item, mode, run, "reject" if i == 1 else j, study="ag")
    store.close()
    assert main(["study", "list", "--db", str(tmp_path / "s.db")]) == 0
    out = capsys.readouterr().out
    assert "ann1: 10/40 (25%)" in out and "ann2: 10/40 (25%)" in out
    assert "agreement ann1 vs ann2 on verdict: κ" in out and "n 10" in out
    assert "κ so far, judge vs ann2:" in out and "more pairs to ± 0.2" in out


def test_live_kappa_interval_past_one_is_shown_within_kappas_range(tmp_path: Path) -> None:
    """Nine pairs, one disagreement: statsmodels' κ ± 1.96·se runs past 1; `study list` shows the
    interval within [−1, 1] and says it was cut there (the stored bounds stay statsmodels')."""
    store, entries, judge = _scripted(tmp_path)
    for i, (item, mode, run, _) in enumerate(entries[:9]):
        j = "accept" if judge[i] >= 0.5 else "reject"
        v = {"accept": "reject", "reject": "accept"}[j] if i == 1 else j
        store.verdict("ann1", item, mode, run, v, study="ag")
    lk = study_status(store, "ag").live[0]
    table = np.array([[5, 1], [0, 3]])  # judge-first: entries 1,2,4,5,7,8 accept (1 flipped); 0,3,6 reject
    ref = cohens_kappa(table, return_results=True)
    assert lk.kappa == pytest.approx(ref.kappa) and lk.ci_high == pytest.approx(ref.kappa_upp) and ref.kappa_upp > 1
    text = next(t for t in status_lines(study_status(store, "ag")) if "κ so far" in t)
    assert f"[95% CI {ref.kappa_low:.3f}, 1.000]" in text, text
    assert f"{ref.kappa_upp:.3f}" in text and "cut at 1" in text, text
    assert "n 9" in text


def test_answers_without_a_queue_are_counted_not_called_no_start(tmp_path: Path) -> None:
    """Verdicts that came in by `annotations import` (no queue in the app): `study list` says who
    answered how many entries, and does not say "no annotator has started" beside their κ."""
    store, entries, judge = _scripted(tmp_path)
    for i, (item, mode, run, _) in enumerate(entries[:6]):
        store.verdict("imported1", item, mode, run, "accept" if judge[i] >= 0.5 else "reject", study="ag")
    lines = status_lines(study_status(store, "ag"))
    assert not any("no annotator has started" in t for t in lines), lines
    assert "  imported1: 6 of 40 entries answered (no queue: events imported, not answered in the app)" in lines, lines
    fresh = Store(tmp_path / "fresh.db")
    fresh.create_study("ag", "agreement", 7, {"judge_scores": judge}, entries)
    assert "  no annotator has started" in status_lines(study_status(fresh, "ag"))
