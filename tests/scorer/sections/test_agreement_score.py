"""Agreement between raters of one kind through `memscope score`: LLM judge vs LLM judge from the
scores run rows carry (a real `memscope judge` panel and re-judging against a loopback server,
tests/judge_server.py), human vs human on ordinal verdicts, and Fleiss' κ beside Krippendorff's α
for three or more raters. References: scikit-learn, statsmodels, krippendorff."""

from __future__ import annotations

import json
import re
from pathlib import Path

import krippendorff
import numpy as np
import pytest
from sklearn.metrics import cohen_kappa_score, confusion_matrix
from statsmodels.stats.inter_rater import aggregate_raters, cohens_kappa, fleiss_kappa

from scorer.cli import main
from tests.builders.benchmarks import write_labelled_bench
from tests.builders.runs import open_row, write_labelled_run
from tests.judge_server import JudgeServer

TASK = "Rater_Task"
N = 30
LEVELS = (0.0, 0.25, 0.5, 0.75, 1.0)
FAST = ["--timeout", "2", "--backoff", "0.01", "--max-retries", "1"]
KEY = re.compile(r"\[\[k:(\d+)\]\]")
C_FAILS = {4, 17}  # judge-c answers off the levels on these items: no score from it there
RESAMPLES = 300
SEED = 20260430


@pytest.fixture(autouse=True)
def _key(monkeypatch):
    monkeypatch.setenv("OPENAI_API_KEY", "sk-test-agreement-not-a-real-key")


def planned_scores() -> dict[str, list[float]]:
    """The three judges' scores per item (judge-b a quarter step off now and then, judge-c a
    coarser copy of judge-a) and the upstream judge's on the runner's three levels."""
    rng = np.random.default_rng(7)
    a = rng.choice(LEVELS, N)
    b = np.clip(a + rng.choice([-0.25, 0, 0, 0, 0.25, 0.5], N), 0, 1)
    c = np.where(rng.random(N) < 0.7, a, rng.choice(LEVELS, N))
    up = np.where(a < 0.25, 0.0, np.where(a < 0.75, 0.5, 1.0))
    up = np.where(rng.random(N) < 0.2, rng.choice([0.0, 0.5, 1.0], N), up)
    return {"judge-a": a.tolist(), "judge-b": b.tolist(), "judge-c": c.tolist(), "upstream": up.tolist()}


def bench_and_runs(tmp: Path, scores: dict) -> tuple[Path, Path]:
    labels = [(f"X{1 + i % 4}", f"Y{1 + i % 3}") for i in range(N)]
    bench = write_labelled_bench(tmp / "bench", TASK, labels)
    rows = [{**open_row(i + 1, scores["upstream"][i]), "pred": f"reply {i + 1} [[k:{i}]]"} for i in range(N)]
    runs = tmp / "runs"
    write_labelled_run(runs, TASK, "gpt-5.4-mini", "semantic_rag_multimodal", "multimodal", "open", rows)
    return bench, runs


def panel_server(scores: dict) -> JudgeServer:
    def score_fn(model: str, prompt: str) -> float:
        i = int(KEY.search(prompt).group(1))
        if model == "judge-c" and i in C_FAILS:
            return 0.3  # not a level: the judge's reply is refused and the row gets no score from it
        return scores[model][i]

    return JudgeServer(score_fn=score_fn)


def score(bench: Path, runs: Path, out: Path, *extra: str) -> dict:
    assert main(["score", str(bench), "--runs", str(runs), "--out", str(out), "--format", "json,md",
                 "--resamples", str(RESAMPLES), "--sections", "agreement", *extra]) == 0
    return json.loads((out / "report.json").read_text())


def codes(values, levels=LEVELS) -> np.ndarray:
    return np.array([levels.index(v) for v in values])


def by_key(rows: list[dict]) -> dict:
    return {(r["kind"], r["rater_a"], r["rater_b"], r["weights"], r["level"]): r for r in rows}


def check_pair(row: dict, a, b, weights, k: int) -> None:
    """One pair row against scikit-learn (κ) and statsmodels (analytic SE and CI)."""
    ia, ib = codes(a, LEVELS if k == 5 else (0.0, 0.5, 1.0)), codes(b, LEVELS if k == 5 else (0.0, 0.5, 1.0))
    w = None if weights == "none" else weights
    assert row["kappa"] == pytest.approx(cohen_kappa_score(ia, ib, weights=w, labels=list(range(k))), abs=1e-6)
    table = confusion_matrix(ia, ib, labels=list(range(k)))
    sm = cohens_kappa(table) if w is None else cohens_kappa(table, wt=w)
    assert row["se"] == pytest.approx(sm.std_kappa, abs=1e-6)
    assert (row["ci_low_analytic"], row["ci_high_analytic"]) == (pytest.approx(sm.kappa_low, abs=1e-6),
                                                                 pytest.approx(sm.kappa_upp, abs=1e-6))
    assert row["n"] == len(ia) and row["observed"] == pytest.approx(float(np.mean(ia == ib)), abs=1e-6)
    assert row["ci_low"] <= row["kappa"] <= row["ci_high"] and row["ci_method"] == "bootstrap percentile"


# ---------------------------------------------------------------------------------------------
# A judge panel: `memscope judge` with three models, then `memscope score` on its median runs


@pytest.fixture(scope="module")
def panel(tmp_path_factory):
    tmp = tmp_path_factory.mktemp("panel")
    scores = planned_scores()
    bench, runs = bench_and_runs(tmp, scores)
    with panel_server(scores) as srv:
        rc = main(["judge", "--runs", str(runs), "--model", "judge-a", "--model", "judge-b", "--model", "judge-c",
                   "--base-url", srv.url, "--out", str(tmp / "judged"), "--cache", str(tmp / "c.sqlite"), *FAST])
    assert rc == 1  # judge-c failed on two rows (and says so)
    return tmp, bench, scores


def test_panel_judges_pairwise_weighted_kappa(panel):
    tmp, bench, scores = panel
    data = score(bench, tmp / "judged" / "panel-median", tmp / "report")
    ag = data["agreement"]
    assert ag["judge_vs_human"] == {"value": None, "reason": "no annotation database given (--db)"}
    rows = by_key(ag["judge_vs_judge"])
    named = {"judge-a": scores["judge-a"], "judge-b": scores["judge-b"], "judge-c": scores["judge-c"],
             "previous judge": scores["upstream"]}  # the upstream score each row had before
    pairs = [("judge-a", "judge-b"), ("judge-a", "judge-c"), ("judge-a", "previous judge"), ("judge-b", "judge-c"),
             ("judge-b", "previous judge"), ("judge-c", "previous judge")]
    assert {(k[1], k[2]) for k in rows if k[0] == "pair"} == set(pairs)
    for x, y in pairs:
        keep = [i for i in range(N) if not ({x, y} & {"judge-c"} and i in C_FAILS)]
        for w in ("none", "linear", "quadratic"):
            row = rows[("pair", x, y, w, None)]
            check_pair(row, [named[x][i] for i in keep], [named[y][i] for i in keep], w, 5)
            assert row["excluded"] == row["excluded_missing"] == N - len(keep) and row["excluded_off_scale"] == 0
            assert row["compared"] == "judge_vs_judge" and row["scale"] == "0 < 0.25 < 0.5 < 0.75 < 1"
    # the three weightings differ here (judge-b is often one level off): each is really computed
    ab = [rows[("pair", "judge-a", "judge-b", w, None)]["kappa"] for w in ("none", "linear", "quadratic")]
    assert ab[0] < ab[1] < ab[2]


def test_panel_bootstrap_ci_is_the_items_percentile_interval(panel):
    tmp, bench, scores = panel
    rows = by_key(score(bench, tmp / "judged" / "panel-median", tmp / "report_boot")["agreement"]["judge_vs_judge"])
    a, b = codes(scores["judge-a"]), codes(scores["judge-b"])
    idx = np.random.default_rng(SEED).integers(0, N, size=(RESAMPLES, N))  # the report's item draws
    for w in (None, "quadratic"):
        ref = np.array([cohen_kappa_score(a[r], b[r], weights=w, labels=list(range(5)))
                        if len(set(a[r]) | set(b[r])) > 1 else np.nan for r in idx])
        low, high = np.quantile(ref[np.isfinite(ref)], [0.025, 0.975])
        row = rows[("pair", "judge-a", "judge-b", w or "none", None)]
        assert (row["ci_low"], row["ci_high"]) == (pytest.approx(low, abs=1e-6), pytest.approx(high, abs=1e-6))


def test_panel_fleiss_beside_alpha(panel):
    tmp, bench, scores = panel
    out = tmp / "report_fleiss"
    data = score(bench, tmp / "judged" / "panel-median", out)
    rows = by_key(data["agreement"]["judge_vs_judge"])
    judges = [scores["judge-a"], scores["judge-b"], scores["judge-c"], scores["upstream"]]
    complete = [i for i in range(N) if i not in C_FAILS]
    matrix = np.array([codes([j[i] for i in complete]) for j in judges])  # 4 judges × 28 rows
    fk = rows[("fleiss", "all", "4 judges", "none", None)]
    assert fk["kappa"] == pytest.approx(fleiss_kappa(aggregate_raters(matrix.T, n_cat=5)[0]), abs=1e-6)
    assert (fk["n"], fk["excluded"], fk["raters"]) == (28, 2, 4) and fk["ci_low"] <= fk["kappa"] <= fk["ci_high"]
    assert fk["ci_low_analytic"] is None  # no analytic interval for Fleiss' κ
    full = np.array([codes(j) for j in judges], dtype=float)
    full[2, sorted(C_FAILS)] = np.nan
    for level in ("ordinal", "nominal"):
        al = rows[("alpha", "all", "4 judges", None, level)]
        assert al["alpha"] == pytest.approx(krippendorff.alpha(reliability_data=full, level_of_measurement=level,
                                                               value_domain=list(range(5))), abs=1e-6)
        assert al["n"] == N and al["kappa"] is None
    # the upstream judge never used a quarter level: the report says the scales differ
    assert any("previous judge scored only 0, 0.5 and 1" in w for w in data["warnings"])
    md = (out / "report.md").read_text()
    assert "### LLM judge vs LLM judge" in md
    q = rows[("pair", "judge-a", "judge-b", "quadratic", None)]
    assert f"| judge-a vs judge-b | κ quadratic | 30 | 0 | {q['observed']:.4f} | {q['kappa']:.4f} |" in md
    assert "| all 4 judges | Fleiss' κ | 28 | 2 |" in md
    assert "| all 4 judges | Krippendorff's α (ordinal) | 30 |" in md


def test_panel_on_three_levels(panel):
    """--judge-levels 3: every judge's score coerced as the runner does before comparing."""
    tmp, bench, scores = panel
    data = score(bench, tmp / "judged" / "panel-median", tmp / "report3", "--judge-levels", "3")
    rows = by_key(data["agreement"]["judge_vs_judge"])
    coerce = lambda v: 0.0 if v < 0.25 else 0.5 if v < 0.75 else 1.0
    keep = [i for i in range(N) if i not in C_FAILS]
    for w in ("none", "quadratic"):
        row = rows[("pair", "judge-b", "judge-c", w, None)]
        check_pair(row, [coerce(scores["judge-b"][i]) for i in keep], [coerce(scores["judge-c"][i]) for i in keep],
                   w, 3)
        assert row["scale"] == "0 < 0.5 < 1"
    assert not any("scored only 0, 0.5 and 1" in w for w in data["warnings"])


# ---------------------------------------------------------------------------------------------
# Re-judging: the score a row had before is the other judge


def test_rejudged_rows_compare_the_new_judge_with_the_one_before(tmp_path):
    scores = planned_scores()
    bench, runs = bench_and_runs(tmp_path, scores)
    with panel_server(scores) as srv:
        for model, src, dst in (("judge-a", runs, tmp_path / "one"), ("judge-b", tmp_path / "one", tmp_path / "two")):
            assert main(["judge", "--runs", str(src), "--model", model, "--base-url", srv.url, "--out", str(dst),
                         "--cache", str(tmp_path / "c.sqlite"), *FAST]) == 0
    first = by_key(score(bench, tmp_path / "one", tmp_path / "r1")["agreement"]["judge_vs_judge"])
    assert {(k[1], k[2]) for k in first} == {("judge-a", "previous judge")}  # the upstream score, unnamed
    check_pair(first[("pair", "judge-a", "previous judge", "linear", None)], scores["judge-a"], scores["upstream"],
               "linear", 5)
    second = by_key(score(bench, tmp_path / "two", tmp_path / "r2")["agreement"]["judge_vs_judge"])
    assert {(k[1], k[2]) for k in second} == {("judge-b", "judge-a")}  # the earlier judge named by its row
    for w in ("none", "linear", "quadratic"):
        check_pair(second[("pair", "judge-b", "judge-a", w, None)], scores["judge-b"], scores["judge-a"], w, 5)


def test_off_scale_and_malformed_judge_scores_are_counted_not_used(tmp_path):
    labels = [(f"X{1 + i % 4}", "Y1") for i in range(12)]
    bench = write_labelled_bench(tmp_path / "bench", TASK, labels)
    rng = np.random.default_rng(3)
    a, b = rng.choice(LEVELS, 12).tolist(), rng.choice(LEVELS, 12).tolist()
    rows = []
    for i in range(12):
        r = {**open_row(i + 1, a[i]), "judge_model": "new-judge", "judge_previous": b[i]}
        if i == 2:
            r["judge_previous"] = 4  # a 1–5 scale score: off the levels
        if i == 5:
            r["judge_previous"] = "high"
        if i == 7:
            r["judge"] = None  # the new judge failed here
        rows.append(r)
    write_labelled_run(tmp_path / "runs", TASK, "bb", "full_context_multimodal", "multimodal", "open", rows)
    bad = {**open_row(1, 0.5), "judge_panel": ["not", "an", "object"]}  # another run: a panel that is not one
    write_labelled_run(tmp_path / "runs", TASK, "bb", "semantic_rag_multimodal", "multimodal", "open", [bad])
    data = score(bench, tmp_path / "runs", tmp_path / "out")
    (pair,) = [r for r in data["agreement"]["judge_vs_judge"] if r["weights"] == "quadratic"]
    keep = [i for i in range(12) if i not in (2, 5, 7)]
    check_pair(pair, [a[i] for i in keep], [b[i] for i in keep], "quadratic", 5)
    assert (pair["rater_a"], pair["rater_b"]) == ("new-judge", "previous judge")
    assert (pair["excluded"], pair["excluded_off_scale"], pair["excluded_missing"]) == (3, 2, 1)
    warnings = " ".join(data["warnings"])
    assert "2 judge score(s)" in warnings and "not on the report's judge levels" in warnings
    assert "1 row(s) carry a `judge_panel` that is not a non-empty object" in warnings


def test_runs_with_one_judge_keep_the_section_absent_without_a_db(tmp_path):
    bench = write_labelled_bench(tmp_path / "bench", TASK, [("X1", "Y1")] * 4)
    write_labelled_run(tmp_path / "runs", TASK, "bb", "full_context_multimodal", "multimodal", "open",
              [open_row(i, 0.5) for i in range(1, 5)])
    data = score(bench, tmp_path / "runs", tmp_path / "out")
    assert data["agreement"] == {"value": None, "reason": "no annotation database given (--db)"}


# ---------------------------------------------------------------------------------------------
# Humans: ordinal verdicts between annotators, Fleiss' κ for labels and verdicts


SCALE = ("reject", "borderline", "accept")


def human_study(tmp: Path) -> tuple[Path, Path, Path, dict, dict]:
    n_items = 16
    labels = [(f"X{1 + i % 4}", f"Y{1 + i % 3}") for i in range(n_items)]
    bench = write_labelled_bench(tmp / "bench", TASK, labels)
    runs = tmp / "runs"
    methods = ("full_context_multimodal", "semantic_rag_multimodal")
    rng = np.random.default_rng(11)
    for m in methods:
        write_labelled_run(runs, TASK, "gpt-5.4-mini", m, "multimodal", "open",
                  [open_row(i, float(rng.choice(LEVELS))) for i in range(1, n_items + 1)])
    truth = rng.integers(0, 3, 2 * n_items)
    verdicts = {}
    for k, who in enumerate(("ann1", "ann2", "ann3")):
        v = np.where(rng.random(truth.size) < 0.7, truth, np.clip(truth + rng.choice([-1, 1], truth.size), 0, 2))
        verdicts[who] = [SCALE[x] for x in v]
    for u in (3, 9, 20):  # ann3 did not judge three predictions
        verdicts["ann3"][u] = None
    gold = {i: (f"X{1 + (i - 1) % 4}", f"Y{1 + (i - 1) % 3}") for i in range(1, n_items + 1)}
    label_sets: dict = {}
    events = []
    for who in ("ann1", "ann2", "ann3"):
        for u in range(2 * n_items):
            if verdicts[who][u] is None:
                continue
            item = u % n_items + 1
            events.append({"ts": f"2026-11-29T10:{len(events) // 60:02d}:{len(events) % 60:02d}Z", "annotator": who,
                           "kind": "verdict", "item_id": f"{TASK}:{item}", "mode": "open",
                           "run": f"gpt-5.4-mini/{methods[u // n_items]}", "study": None,
                           "payload": {"verdict": verdicts[who][u]}})
        for i in range(1, n_items + 1):
            x, y = gold[i]
            if (i + len(who) + int(who[-1])) % 4 == 0:
                x = "X3" if x != "X3" else "X2"
            label_sets[(who, i)] = x
            events.append({"ts": f"2026-11-29T11:{len(events) // 60 % 60:02d}:{len(events) % 60:02d}Z",
                           "annotator": who, "kind": "label", "item_id": f"{TASK}:{i}", "mode": "mcq", "run": None,
                           "study": None, "payload": {"x": [x], "y": [y]}})
    jsonl = tmp / "events.jsonl"
    jsonl.write_text("".join(json.dumps(e) + "\n" for e in events))
    db = tmp / "study.db"
    assert main(["annotations", "import", str(jsonl), "--db", str(db)]) == 0
    return bench, runs, db, verdicts, label_sets


def test_human_verdicts_ordinal_kappa_fleiss_and_alpha(tmp_path):
    bench, runs, db, verdicts, label_sets = human_study(tmp_path)
    out = tmp_path / "out"
    data = score(bench, runs, out, "--db", str(db))
    ag = data["agreement"]
    rows = by_key(ag["human_vs_human"])
    # the units are (run, item) in run-then-item order, as the store's verdicts name them
    order = sorted(range(32), key=lambda u: (u // 16, str(u % 16 + 1)))
    code = {v: i for i, v in enumerate(SCALE)}
    for x, y in (("ann1", "ann2"), ("ann1", "ann3"), ("ann2", "ann3")):
        both = [u for u in order if verdicts[x][u] is not None and verdicts[y][u] is not None]
        for w in ("none", "linear", "quadratic"):
            row = rows[("pair", x, y, w, None)]
            ia = np.array([code[verdicts[x][u]] for u in both])
            ib = np.array([code[verdicts[y][u]] for u in both])
            wt = None if w == "none" else w
            assert row["kappa"] == pytest.approx(cohen_kappa_score(ia, ib, weights=wt, labels=[0, 1, 2]), abs=1e-6)
            sm = cohens_kappa(confusion_matrix(ia, ib, labels=[0, 1, 2]), **({} if wt is None else {"wt": wt}))
            assert row["se"] == pytest.approx(sm.std_kappa, abs=1e-6)
            assert row["ci_low_analytic"] == pytest.approx(sm.kappa_low, abs=1e-6)
            assert row["n"] == len(both) and row["excluded"] == 32 - len(both)
            assert row["scale"] == "reject < borderline < accept"
    complete = [u for u in range(32) if all(verdicts[a][u] is not None for a in verdicts)]
    matrix = np.array([[code[verdicts[a][u]] for u in complete] for a in ("ann1", "ann2", "ann3")])
    fk = rows[("fleiss", "all", "3 annotators", "none", None)]
    assert fk["kappa"] == pytest.approx(fleiss_kappa(aggregate_raters(matrix.T, n_cat=3)[0]), abs=1e-6)
    assert (fk["n"], fk["excluded"]) == (29, 3)
    full = np.array([[np.nan if verdicts[a][u] is None else code[verdicts[a][u]] for u in range(32)]
                     for a in ("ann1", "ann2", "ann3")])
    for level in ("ordinal", "nominal"):
        al = rows[("alpha", "all", "3 annotators", None, level)]
        assert al["alpha"] == pytest.approx(krippendorff.alpha(reliability_data=full, level_of_measurement=level,
                                                               value_domain=[0, 1, 2]), abs=1e-6)
    # labels: Fleiss' κ over the items all three labelled, beside α
    lab = [r for r in ag["labels"] if r["axis"] == "X" and r["kind"] == "fleiss"]
    assert len(lab) == 1 and lab[0]["n"] == 16 and lab[0]["excluded"] == 0
    xs = sorted({v for v in label_sets.values()})
    xm = np.array([[xs.index(label_sets[(a, i)]) for i in range(1, 17)] for a in ("ann1", "ann2", "ann3")])
    assert lab[0]["kappa"] == pytest.approx(fleiss_kappa(aggregate_raters(xm.T)[0]), abs=1e-6)
    assert lab[0]["ci_low"] <= lab[0]["kappa"] <= lab[0]["ci_high"]
    md = (out / "report.md").read_text()
    assert "### Human vs human verdicts (ordinal: reject, borderline, accept)" in md
    assert "| all 3 annotators | Fleiss' κ | 29 | 3 |" in md and "| X | all 3 annotators | Fleiss' κ | 16 |" in md
    # the judge-vs-human rows are still there, unchanged in kind
    assert {r["human"] for r in ag["judge_vs_human"]} == {"ann1", "ann2", "ann3", "majority"}


def test_two_annotators_pairs_only(tmp_path):
    """With two annotators there are only pairs: no Fleiss' κ and no α across all."""
    bench, runs, _, _, _ = human_study(tmp_path)
    lines = (tmp_path / "events.jsonl").read_text().splitlines()
    two = [line for line in lines if json.loads(line)["annotator"] != "ann3"]
    (tmp_path / "two.jsonl").write_text("".join(line + "\n" for line in two))
    db2 = tmp_path / "two.db"
    assert main(["annotations", "import", str(tmp_path / "two.jsonl"), "--db", str(db2)]) == 0
    ag = score(bench, runs, tmp_path / "out2", "--db", str(db2))["agreement"]
    assert {r["kind"] for r in ag["human_vs_human"]} == {"pair"} and len(ag["human_vs_human"]) == 3
    assert "fleiss" not in {r["kind"] for r in ag["labels"]}


def test_judges_and_annotators_in_one_report(panel, tmp_path):
    """Several judges in the rows and an annotation store: every part, tables in order."""
    tmp, bench, scores = panel
    _, _, db, _, _ = human_study(tmp_path)  # verdicts name this run for items 1–16 too
    out = tmp_path / "both"
    ag = score(bench, tmp / "judged" / "panel-median", out, "--db", str(db))["agreement"]
    assert {r["kind"] for r in ag["judge_vs_judge"]} == {"pair", "fleiss", "alpha"}
    assert ag["human_vs_human"] and ag["labels"] and ag["judge_vs_human"]
    assert by_key(ag["judge_vs_judge"]) == by_key(score(bench, tmp / "judged" / "panel-median",
                                                        tmp_path / "nodb")["agreement"]["judge_vs_judge"])
    md = (out / "report.md").read_text()
    heads = ["### LLM judge vs human verdicts", "### Human vs human verdicts", "### LLM judge vs LLM judge",
             "### X / Y label agreement"]
    assert [md.index(h) for h in heads] == sorted(md.index(h) for h in heads)


def test_loaded_runs_give_the_same_judge_agreement_without_reading_their_files_again(tmp_path, monkeypatch):
    """Runs loaded with their raw rows (the app) are read from those rows: the same pairs, counts and
    warnings as from the files, and no run file opened again (issue 17 point 1)."""
    import builtins

    from scorer.load.hashes import file_hashes
    from scorer.load.memeye import load_benchmark
    from scorer.load.runs import load_runs
    from scorer.scoring import build_context, run_sections
    from scorer.sections.registry import select

    test_off_scale_and_malformed_judge_scores_are_counted_not_used(tmp_path)  # writes the bench and runs
    bench, runs = tmp_path / "bench", tmp_path / "runs"
    ctx, _, _ = build_context(bench, [runs], needs_raw=False)  # the lean reader: no raw rows, files read again
    (from_files,) = run_sections(ctx, select(["agreement"]))
    loaded_bench, loaded_runs = load_benchmark(bench), load_runs([runs])
    hashes = file_hashes(loaded_bench, loaded_runs)
    opened = []
    real_open = builtins.open
    monkeypatch.setattr(builtins, "open", lambda f, *a, **k: opened.append(str(f)) or real_open(f, *a, **k))
    ctx, _, _ = build_context(loaded_bench, loaded_runs, hashes=hashes)
    (from_memory,) = run_sections(ctx, select(["agreement"]))
    monkeypatch.undo()
    assert not [f for f in opened if f.startswith(str(runs))]
    assert from_memory.data["judge_vs_judge"] and from_memory.reason is None
    assert repr(from_memory.data) == repr(from_files.data)
    assert list(from_memory.warnings) == list(from_files.warnings) and from_files.warnings


def test_a_zero_width_bootstrap_ci_is_said_to_be_no_interval(tmp_path):
    """Four pairs, the judge and the annotator agreeing on all: every resample's κ is 1 (or
    undefined), so the percentile CI is [1, 1] — that is no measure of uncertainty at n 4, and the
    report says so beside the table (the values stay the bootstrap's)."""
    labels = [("X1", "Y1"), ("X2", "Y1"), ("X1", "Y2"), ("X2", "Y2")]
    bench = write_labelled_bench(tmp_path / "bench", TASK, labels)
    runs = tmp_path / "runs"
    judge = [1.0, 0.0, 1.0, 0.0]
    write_labelled_run(runs, TASK, "gpt-5.4-mini", "semantic_rag_multimodal", "multimodal", "open",
                       [open_row(i + 1, judge[i]) for i in range(4)])
    events = [{"ts": f"2026-11-29T10:00:0{i}Z", "annotator": "ann1", "kind": "verdict", "item_id": f"{TASK}:{i + 1}",
               "mode": "open", "run": "gpt-5.4-mini/semantic_rag_multimodal", "study": None,
               "payload": {"verdict": "accept" if judge[i] >= 0.5 else "reject"}} for i in range(4)]
    (tmp_path / "e.jsonl").write_text("".join(json.dumps(e) + "\n" for e in events))
    db = tmp_path / "a.db"
    assert main(["annotations", "import", str(tmp_path / "e.jsonl"), "--db", str(db)]) == 0
    report = score(bench, runs, tmp_path / "out", "--db", str(db))
    row = next(r for r in report["agreement"]["judge_vs_human"] if r["stratum"] == "all" and r["human"] == "ann1")
    assert (row["kappa"], row["ci_low"], row["ci_high"], row["n"]) == (1.0, 1.0, 1.0, 4)
    warning = next((w for w in report["warnings"] if "zero width" in w), None)
    assert warning is not None and warning.startswith("agreement: "), report["warnings"]
    assert "judge vs ann1" in warning and "n 4" in warning, warning
    md = (tmp_path / "out" / "report.md").read_text()
    assert "zero width" in md


def test_judged_rows_in_a_file_ending_lines_in_carriage_returns_give_the_same_agreement(tmp_path):
    """The judges' scores are read back from the file by line number (agreement_raters): a file whose
    lines end in bare carriage returns is numbered as the readers number it (jsonio.jsonl_lines), so
    the judge-vs-judge rows are those of the same file written with newlines."""
    scores = planned_scores()
    bench, runs = bench_and_runs(tmp_path, scores)
    with panel_server(scores) as srv:
        assert main(["judge", "--runs", str(runs), "--model", "judge-a", "--base-url", srv.url, "--out",
                     str(tmp_path / "one"), "--cache", str(tmp_path / "c.sqlite"), *FAST]) == 0
    want = by_key(score(bench, tmp_path / "one", tmp_path / "r1")["agreement"]["judge_vs_judge"])
    (pred,) = (tmp_path / "one").rglob("predictions.jsonl")
    pred.write_bytes(pred.read_bytes().replace(b"\n", b"\r"))
    got = by_key(score(bench, tmp_path / "one", tmp_path / "r2")["agreement"]["judge_vs_judge"])
    assert want and got == want
