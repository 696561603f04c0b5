"""Recorded text metrics (issue 12, point 8): upstream's normalisation (a real "ǂ" survives), BLEU-n
against nltk, the per-row recomputation and comparison, `validate`'s one line per run folder,
`score`'s warning and --recompute-text-metrics, and the shipped demo recording exactly upstream's
values."""

from __future__ import annotations

import json
import math
import re
import shutil
import string
import subprocess
import sys
from pathlib import Path

import pandas as pd
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from nltk.translate.bleu_score import SmoothingFunction, sentence_bleu

from scorer.load.memeye import load_benchmark
from scorer.load.runs import load_runs
from scorer.metrics.answers import answer_tokens, bleu, normalize_answer
from scorer.metrics.text_metrics import (
    recompute_frame,
    recompute_row,
    row_differences,
    run_differences,
    upstream_mcq_metrics,
    upstream_open_metrics,
)
from scorer.scoring import score
from scorer.sections.base import ScoreOptions
from tests.paths import DEMO, REPO

SHELF = "Collectibles_Shelf_Assistant"


def memscope(*args: str) -> subprocess.CompletedProcess:
    return subprocess.run([sys.executable, "-m", "scorer", *args], capture_output=True, text=True, cwd=REPO)


# ---------------------------------------------------------------------------------------------
# Normalisation


def _upstream_normalise(text: str) -> str:
    """The runner's normalisation step by step, as its behaviour is documented: lower-case; protect
    decimal dots and underscores with upper-case ASCII placeholders (which cannot occur after
    lower()); drop articles before a word; every string.punctuation character → space; restore;
    collapse whitespace."""
    s = text.lower()
    s = re.sub(r"(?<=\d)\.(?=\d)", "XDOTX", s).replace("_", "XLOWX")
    s = re.sub(r"\b(a|an|the)\s+(?=\w)", " ", s)
    s = "".join(" " if c in string.punctuation else c for c in s)
    return " ".join(s.replace("XDOTX", ".").replace("XLOWX", "_").split())


def test_a_real_double_bar_survives_normalisation():
    # ǂ (U+01C2, a click letter) was memscope's placeholder for a protected decimal dot, so a real
    # one came out as ".".
    assert normalize_answer("Click ǂ 3.5") == "click ǂ 3.5"
    assert normalize_answer("ǂHoan") == "ǂhoan"
    assert normalize_answer("ǂ") == _upstream_normalise("ǂ") == "ǂ"


TEXT = st.lists(st.sampled_from(list("aAnNtThHeE ǂ_.,:!'-3 5\té") + ["the ", "a ", "An ", "3.5", "ǂ "]),
                max_size=16).map("".join)


@settings(max_examples=400, deadline=None)
@given(TEXT)
def test_normalize_answer_equals_upstreams(text):
    assert normalize_answer(text) == _upstream_normalise(text)


# ---------------------------------------------------------------------------------------------
# BLEU-n


def _nltk_bleu(pred: str, gt: str, weights) -> float:
    hyp, ref = answer_tokens(pred), answer_tokens(gt)
    if not hyp or not ref:
        return 0.0
    return sentence_bleu([ref], hyp, weights=weights, smoothing_function=SmoothingFunction().method1)


WORDS = st.sampled_from(["the", "a", "cat", "dog", "red", "blue", "3.5", "mat,", "on", "Cat!", "sat", "x_y", "ǂ"])
SENTENCE = st.lists(WORDS, max_size=9).map(" ".join)


@settings(max_examples=300, deadline=None)
@given(SENTENCE, SENTENCE)
def test_bleu_equals_nltk_sentence_bleu_for_the_runners_weights(pred, gt):
    for weights in ((0.25, 0.25, 0.25, 0.25), (0.5, 0.5, 0, 0), (1, 0, 0, 0)):
        assert bleu(pred, gt, weights) == pytest.approx(_nltk_bleu(pred, gt, weights), abs=1e-12)


def test_bleu_hand_computed():
    # No unigram in common: 0, as nltk returns (no smoothing of p1).
    assert bleu("dog", "cat") == 0.0
    # "cat sat" vs "cat sat on mat": p1 = 2/2, p2 = 1/1, p3, p4 smoothed 0.1/1; BP = exp(1 − 4/2).
    expected = math.exp(1 - 2) * (1 * 1 * 0.1 * 0.1) ** 0.25
    assert bleu("cat sat", "cat sat on mat") == pytest.approx(expected)


# ---------------------------------------------------------------------------------------------
# One row


def test_open_row_recomputed_as_upstream_records_it():
    got = upstream_open_metrics("The answer is 3.5 kg.", "3.5 kg")
    assert got["exact_match"] is False and got["contains_gt"] is True and got["em"] == 0.0
    assert got["f1"] == pytest.approx(2 * (2 / 4) * 1 / (2 / 4 + 1))  # answer is 3.5 kg vs 3.5 kg
    assert got["bleu_1"] == pytest.approx(0.5)
    assert list(got) == ["exact_match", "em", "contains_gt", "f1", "bleu", "bleu_1", "bleu_2"]
    assert upstream_open_metrics("", "")["exact_match"] is False  # empty never matches
    assert upstream_open_metrics("anything", "")["contains_gt"] is False  # empty gold never contained


def test_mcq_row_values_come_from_em_and_the_last_choice():
    assert upstream_mcq_metrics(1.0, "B", "b") == {"exact_match": True, "f1": 1.0, "contains_gt": True}
    assert upstream_mcq_metrics(0.75, "B", "A beach") == {"exact_match": False, "f1": 0.75, "contains_gt": False}
    assert upstream_mcq_metrics(None, None, "B") == {"contains_gt": False}  # no em: nothing to derive from it


def test_row_differences_tolerance_booleans_and_missing_values():
    row = {"mode": "open", "pred": "red car", "gt": "red bus", **upstream_open_metrics("red car", "red bus")}
    assert row_differences(row) == {}
    assert row_differences({**row, "exact_match": 0, "contains_gt": False}) == {}  # booleans as 0/1
    assert row_differences({**row, "bleu_1": row["bleu_1"] + 9e-7}) == {}  # within 1e-6
    assert row_differences({**row, "f1": 0.5 + 2e-6}) == {"f1": (0.5 + 2e-6, 0.5)}
    assert row_differences({**row, "bleu_1": 0.5, "exact_match": True}) == {"exact_match": (1.0, 0.0)}
    # Missing, null, NaN or text values are not differences (other checks name text scores).
    for value in (None, float("nan"), "high"):
        assert row_differences({**row, "f1": value}) == {}
    assert row_differences({"mode": "open", "pred": "x", "gt": "x", "bleu_1": 0.3}) == {"bleu_1": (0.3, 1.0)}
    assert recompute_row({"mode": "open", "retrieval_only": True, "bleu_1": 0.3}) == {}
    mcq = {"mode": "mcq", "gt": "A beach", "em": 0.5, "choice": "C", "exact_match": False, "f1": 0.5,
           "contains_gt": True, "bleu_1": 0.9}
    assert row_differences(mcq) == {"contains_gt": (1.0, 0.0)}  # BLEU is not compared on MCQ rows
    assert row_differences({**mcq, "mode": None}, "mcq") == {"contains_gt": (1.0, 0.0)}  # the run's mode


def test_run_differences_counts_rows_per_metric_and_names_the_first():
    good = {"mode": "open", "pred": "red car", "gt": "red bus", **upstream_open_metrics("red car", "red bus")}
    rows = [(1, None, good), (2, None, {**good, "f1": 0.25}), (4, None, {**good, "f1": 0.3, "bleu_1": 0.9})]
    found = run_differences(rows)
    assert found["rows"] == 3 and found["differ"] == 2 and found["differ_open"] == 2
    assert found["by_metric"] == {"f1": 2, "bleu_1": 1}
    assert found["first"] == (2, "open", {"f1": (0.25, 0.5)})
    assert run_differences(rows[:1]) is None


def test_recompute_frame_compares_open_rows_and_replaces_only_when_asked():
    nan = float("nan")
    frame = pd.DataFrame({
        "mode": ["open", "open", "open", "mcq", "open"],
        "pred": ["red car", "red car", "", "A", "x"],
        "gt": ["red bus", "red bus", "cat", "A beach", "x"],
        "bleu_1": [0.5, 0.9, nan, nan, nan],
        "f1": [0.5, 0.2, nan, 0.25, nan],  # row 1's F1 is compared only with use=True
        "exact_match": [0.0, 0.0, nan, 1.0, nan],
        "contains_gt": [0.0, nan, nan, 1.0, nan],
    }).astype({"pred": object, "gt": object})
    same, counts = recompute_frame(frame, use=False)
    assert same is frame
    assert counts == {"compared": 4, "differ": 1, "recomputed": 0,
                      "differ_by_metric": {"bleu_1": 1, "exact_match": 0, "contains_gt": 0}}
    out, counts = recompute_frame(frame, use=True)
    assert counts["differ_by_metric"] == {"bleu_1": 1, "f1": 1, "exact_match": 0, "contains_gt": 0}
    assert counts["recomputed"] == 3  # rows 0, 1 and 4; row 2 has no text and records nothing
    assert out["bleu_1"].tolist()[:2] == [0.5, 0.5] and out["f1"].tolist()[:2] == [0.5, 0.5]
    assert out["exact_match"][4] == 1.0 and out["contains_gt"][4] == 1.0
    assert out.loc[2, ["bleu_1", "f1", "exact_match", "contains_gt"]].isna().all()
    assert out.loc[3].equals(frame.loc[3])  # MCQ rows are never replaced
    assert frame["bleu_1"][1] == 0.9  # the input frame is left alone


# ---------------------------------------------------------------------------------------------
# The shipped demo records exactly what upstream's functions give


def test_every_demo_row_records_upstreams_text_metrics():
    bench = load_benchmark(DEMO)
    runs = load_runs([DEMO / "runs"], benchmark=bench)
    rows = [(p.line, p.mode, p.raw) for r in runs for p in r.predictions]
    assert len(rows) == 1512
    assert run_differences(rows) is None
    compared = sum(bool(recompute_row(row, mode)) for _, mode, row in rows)
    assert compared == 1512
    # Every open row records all seven, exactly (to 1e-12, booleans as booleans).
    for _, mode, row in rows:
        if mode == "open":
            want = upstream_open_metrics(row["pred"], row["gt"])
            assert {k: row[k] for k in want} == pytest.approx(want, abs=1e-12)
            assert all(isinstance(row[k], bool) for k in ("exact_match", "contains_gt"))


# ---------------------------------------------------------------------------------------------
# validate and score on a demo copy whose recorded values were edited


def _shelf_open_run(root: Path, backbone: str = "gpt-5.4-mini", method: str = "semantic_rag__text_only") -> Path:
    return next(p for p in sorted((root / "runs" / SHELF).iterdir())
                if p.name.endswith(f"_{backbone}_{method}") and json.loads(
                    (p / "metrics.json").read_text())["mode"] == "open")


def _edit_rows(folder: Path, edits: dict[int, dict]) -> None:
    f = folder / "predictions.jsonl"
    lines = f.read_text(encoding="utf-8").splitlines()
    for k, change in edits.items():
        lines[k] = json.dumps({**json.loads(lines[k]), **change}, ensure_ascii=False)
    f.write_text("\n".join(lines) + "\n", encoding="utf-8")


@pytest.fixture()
def edited(tmp_path) -> tuple[Path, Path, list[dict]]:
    root = tmp_path / "demo"
    shutil.copytree(DEMO, root, ignore=shutil.ignore_patterns("audio", "video"))
    folder = _shelf_open_run(root)
    rows = [json.loads(line) for line in (folder / "predictions.jsonl").read_text().splitlines()]
    _edit_rows(folder, {2: {"bleu_1": round(rows[2]["bleu_1"], 2) + 0.05, "f1": 0.01},
                        5: {"bleu_1": 1.0, "exact_match": not rows[5]["exact_match"]},
                        7: {"f1": "high"}})  # a text score: another check's error, not a difference here
    return root, folder, rows


def test_validate_warns_once_per_run_folder(edited):
    root, folder, rows = edited
    proc = memscope("validate", str(root), "--runs", str(root / "runs"))
    assert "Traceback" not in proc.stdout + proc.stderr
    lines = [line for line in proc.stdout.splitlines() if "recorded text metrics differ" in line]
    assert len(lines) == 1, proc.stdout
    line = lines[0]
    assert line.startswith(f"{folder / 'predictions.jsonl'}:3: warning: ")
    assert f"in 2 of n={len(rows)} rows" in line
    assert "f1 in 1, bleu_1 in 2" in line and "exact_match in 1" in line
    assert f"first at line 3: f1 recorded 0.01, recomputed {rows[2]['f1']:.6g}" in line
    assert "--recompute-text-metrics" in line


def test_score_warns_and_recompute_uses_upstreams_values(edited):
    root, folder, rows = edited
    clean = score(DEMO, [DEMO / "runs"], sections=["matrix"])
    plain = score(root, [root / "runs"], sections=["matrix"])
    said = [w for w in plain.warnings if "record text metrics that differ" in w]
    assert len(said) == 1 and said[0].startswith("2 of n=756 open row(s)") and "--recompute-text-metrics" in said[0]
    assert plain.inputs["rows"]["text_metrics"] == {
        "compared": 756, "differ": 2, "differ_by_metric": {"bleu_1": 2, "exact_match": 1, "contains_gt": 0},
        "recomputed": 0}
    assert plain.inputs["options"]["recompute_text_metrics"] is False
    assert json.dumps(plain.section("matrix").data) != json.dumps(clean.section("matrix").data)

    again = score(root, [root / "runs"], sections=["matrix"], options=ScoreOptions(recompute_text_metrics=True))
    assert not [w for w in again.warnings if "record text metrics that differ" in w]
    assert again.inputs["options"]["recompute_text_metrics"] is True
    counts = again.inputs["rows"]["text_metrics"]
    assert counts["compared"] == 756 and counts["recomputed"] == 756
    assert counts["differ_by_metric"] == {"bleu_1": 2, "f1": 1, "exact_match": 1, "contains_gt": 0}
    # The published BLEU-1 is upstream's again: the same tables as the untouched demo.
    assert json.dumps(again.section("matrix").data) == json.dumps(clean.section("matrix").data)


def test_score_cli_flag_and_no_warning_on_the_demo(tmp_path, capsys):
    out = tmp_path / "out"
    assert memscope("score", str(DEMO), "--runs", str(DEMO / "runs"), "--sections", "matrix", "--out", str(out),
                    "--format", "json", "--recompute-text-metrics").returncode == 0
    report = json.loads((out / "report.json").read_text())
    assert report["inputs"]["options"]["recompute_text_metrics"] is True
    assert report["inputs"]["rows"]["text_metrics"]["differ"] == 0
    assert not [w for w in report["warnings"] if "text metrics" in w]


@settings(max_examples=300, deadline=None)
@given(st.lists(st.sampled_from("a b c the red 1.5 ?".split())), st.lists(st.sampled_from("a b c the red 1.5 ?".split())))
def test_token_overlap_is_the_multiset_intersection(a, b):
    """BLEU-1's and F1's matches (issue 19: counted without building two Counters)."""
    from collections import Counter

    from scorer.metrics.answers import overlap

    assert overlap(a, b) == overlap(b, a) == sum((Counter(a) & Counter(b)).values())
