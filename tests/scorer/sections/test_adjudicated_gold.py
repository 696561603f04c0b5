"""Adjudicated decisions are the gold where they exist (DESIGN §4, issue 16 point 4): the labels'
"vs gold" κ uses the adjudicated labels, the oracle's key the adjudicated answer, and every table
says how many entries were adjudicated — each checked against a computation by hand (scikit-learn
for κ) on the demo's annotations."""

from __future__ import annotations

import json
from collections import Counter
from pathlib import Path

import pytest
from sklearn.metrics import cohen_kappa_score

from scorer.load.memeye import load_benchmark
from scorer.store import Store
from tests.paths import DEMO, RUNS
from tui.cli import main

pytestmark = pytest.mark.needs_demo


def _db(tmp_path: Path, of: str) -> Path:
    db = tmp_path / "g.db"
    assert main(["annotations", "import", str(DEMO / "annotations.jsonl"), "--db", str(db)]) == 0
    assert main(["study", "new", "--kind", "adjudicate", "--of", of, "--name", "adj", "--db", str(db), str(DEMO)]) == 0
    return db


def _score(tmp_path: Path, db: Path, sections: str) -> tuple[dict, str]:
    out = tmp_path / "rep"
    assert main(["score", str(DEMO), "--runs", str(RUNS), "--db", str(db), "--sections", sections,
                 "--format", "json,md", "--out", str(out), "--resamples", "200"]) == 0
    return json.loads((out / "report.json").read_text()), (out / "report.md").read_text()


def test_adjudicated_labels_are_the_gold(tmp_path: Path) -> None:
    db = _db(tmp_path, "labels")
    bench = load_benchmark(DEMO)
    with Store(db) as store:
        entries = store.study_items("adj")
        # the adjudicator sides with ann2 on every disputed item
        ann2 = {r["item_id"]: r for r in store.labels() if r["annotator"] == "ann2"}
        for it in entries:
            store.add("adjudication", "adj", it.item_id, {"of": "label", "decision": {"x": ann2[it.item_id]["x"],
                      "y": ann2[it.item_id]["y"]}, "reason": "ann2"}, mode=it.mode, run_key=it.run_key, study="adj")
        labels = store.labels()
    decided = {it.item_id: (ann2[it.item_id]["x"], ann2[it.item_id]["y"]) for it in entries}
    report, md = _score(tmp_path, db, "agreement")
    rows = report["agreement"]["labels"]
    gold = {}
    for it in bench.items():
        gold.setdefault(it.item_id, (sorted(it.x), sorted(it.y)))
    for annotator in ("ann1", "ann2", "ann3"):
        mine = {r["item_id"]: r for r in labels if r["annotator"] == annotator}
        for axis, col in (("X", 0), ("Y", 1)):
            a = ["+".join(sorted(mine[i]["x" if col == 0 else "y"])) for i in sorted(mine)]
            g = ["+".join(sorted(decided[i][col] if i in decided else gold[i][col])) for i in sorted(mine)]
            row = next(r for r in rows if (r["axis"], r["rater_a"], r["rater_b"]) == (axis, annotator, "gold"))
            assert row["kappa"] == pytest.approx(cohen_kappa_score(a, g), abs=1e-6), (annotator, axis)
            assert row["adjudicated"] == len(decided) and row["n"] == len(mine)
    # ann2 now agrees with the gold wherever it was adjudicated: more often than with the benchmark's
    bench_vs = next(r for r in rows if (r["axis"], r["rater_a"], r["rater_b"]) == ("X", "benchmark", "adjudicated"))
    assert bench_vs["n"] == len(decided) == bench_vs["adjudicated"]
    assert f"{len(decided)} item(s) adjudicated" in md


def test_adjudicated_oracle_answers_are_the_key(tmp_path: Path) -> None:
    db = _db(tmp_path, "oracle")
    bench = load_benchmark(DEMO)
    with Store(db) as store:
        entries = store.study_items("adj")
        answers = store.oracle_answers()
        for it in entries:  # the adjudicator names a key other than the benchmark's: the first wrong option
            rot0 = bench.item(it.item_id, "mcq").rotations[0]
            wrong = next(L for L in rot0.options if L != rot0.answer)
            store.add("adjudication", "adj", it.item_id, {"of": "oracle", "decision": {"choice": wrong, "rotation": 0},
                      "reason": "the gold is wrong"}, mode=it.mode, run_key=it.run_key, study="adj")
    key = {}
    for it in {a["item_id"] for a in answers}:
        rot0 = bench.item(it, "mcq").rotations[0]
        key[it] = rot0.options[rot0.answer]
    for it in entries:
        rot0 = bench.item(it.item_id, "mcq").rotations[0]
        key[it.item_id] = rot0.options[next(L for L in rot0.options if L != rot0.answer)]
    votes: dict = {}
    for a in answers:  # each choice as the option's text, in the rotation the annotator saw
        rot = bench.item(a["item_id"], "mcq").rotations[a["rotation"] or 0]
        votes.setdefault(a["item_id"], []).append(rot.options.get(a["choice"]))
    correct = 0
    for item_id, vs in votes.items():
        top, count = Counter(vs).most_common(1)[0]
        correct += 2 * count > len(vs) and top == key[item_id]
    report, md = _score(tmp_path, db, "oracle")
    (overall,) = [r for r in report["oracle"] if r["y"] == "all"]
    assert overall["majority_correct"] == correct and overall["n_items"] == len(votes)
    assert overall["adjudicated"] == len(entries)
    assert f"{len(entries)} item(s) adjudicated" in md and "adjudicated keys" in md
