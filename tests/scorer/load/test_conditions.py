"""MOSAIC conditions (scorer.load.conditions): what a run or a conditions file may declare, and
one-line refusals naming the file and the key; `memscope score --conditions` end to end."""

from __future__ import annotations

import json
import subprocess
import sys

import pytest

from scorer.errors import DataError
from scorer.load.conditions import Condition, declared, load_file, parse
from tests.builders import mosaic
from tests.paths import REPO


def test_parse_defaults_the_stage_from_the_condition():
    c = parse({"condition": "retrieved_budget", "budget": 20}, "f.json", "'a/b'")
    assert (c.condition, c.stage, c.budget, c.carrier, c.ranking) == ("retrieved_budget", "delivery", 20, None,
                                                                       "default")
    c = parse({"carrier": "audio:transcript_reversed_tag", "stage": "write"}, "f.json", "'a/b'")
    assert (c.carrier_modality, c.carrier_variant, c.condition) == ("audio", "transcript_reversed_tag", None)


@pytest.mark.parametrize("value, message", [
    ({"condition": "gold"}, "condition 'gold' is not one of gold_symbolic"),
    ({"condition": "gold_native", "stage": "packing"}, "stage 'packing' is not one of write"),
    ({"budget": 0}, "budget must be a positive finite number"),
    ({"budget": True}, "budget must be a number or a text label"),
    ({"budget": [20]}, "budget must be a number or a text label"),
    ({"carrier": "ocr_text"}, "must be <modality>:<variant>"),
    ({"carrier": "image:shuffled_frames"}, "image variant must be one of native, ocr_text"),
    ({"budget": 5, "ranking": ""}, "ranking must be a non-empty text"),
    ({"stage": "write"}, "declares nothing"),
    ({"condition": "gold_native", "colour": "red"}, "unknown field(s) 'colour'"),
    ("gold_native", "expected an object"),
])
def test_bad_declarations_name_file_and_key(value, message):
    with pytest.raises(DataError) as e:
        parse(value, "conds.json", "'gpt/x'")
    assert str(e.value).startswith("conds.json:'gpt/x': ") and message in str(e.value)
    assert "\n" not in str(e.value)


def test_load_file(tmp_path):
    p = tmp_path / "c.json"
    p.write_text(json.dumps({"gpt/x": {"condition": "end_to_end"}, "gpt/y": {"budget": "top5", "ranking": "r1"}}))
    got = load_file(p)
    assert got["gpt/x"].condition == "end_to_end" and got["gpt/y"].budget == "top5"
    assert got["gpt/x"].source == f"{p}:'gpt/x'"
    p.write_text(json.dumps({"noslash": {"condition": "end_to_end"}}))
    with pytest.raises(DataError, match="a key must be a run key"):
        load_file(p)
    p.write_text("[1, 2]")
    with pytest.raises(DataError, match="expected a JSON object"):
        load_file(p)
    p.write_text("{")
    with pytest.raises(DataError, match=str(p)):
        load_file(p)


def test_declared_reads_metrics_json_then_config_json(tmp_path):
    assert declared(tmp_path, {"task": "t"}, {"model_name": "m"}) is None
    c = declared(tmp_path, {"condition": "gold_native"}, {"condition": "gold_symbolic"})
    assert c == Condition("gold_symbolic", "read", source=f"{tmp_path / 'metrics.json'}:condition")
    c = declared(tmp_path, {"condition": "gold_native"}, {"model_name": "m"})
    assert c.condition == "gold_native" and c.source.startswith(str(tmp_path / "config.json"))


def memscope(*args: str) -> subprocess.CompletedProcess:
    return subprocess.run([sys.executable, "-m", "scorer", *args], cwd=REPO, capture_output=True, text=True,
                          timeout=120)


def test_score_refuses_a_bad_conditions_file_with_one_line(tmp_path):
    mosaic.write_bench(tmp_path / "bench")
    mosaic.write_runs(tmp_path / "runs", declare=False)
    bad = tmp_path / "c.json"
    bad.write_text(json.dumps({"reader-1/semantic_rag__multimodal": {"condition": "retrieved", "budget": 3}}))
    r = memscope("score", str(tmp_path / "bench"), "--runs", str(tmp_path / "runs"), "--conditions", str(bad))
    assert r.returncode == 2 and "Traceback" not in r.stderr
    lines = r.stderr.strip().splitlines()
    assert len(lines) == 1 and str(bad) in lines[0] and "'reader-1/semantic_rag__multimodal'" in lines[0]
    assert "condition 'retrieved' is not one of" in lines[0]
    r = memscope("score", str(tmp_path / "bench"), "--runs", str(tmp_path / "runs"), "--conditions",
                 str(tmp_path / "missing.json"))
    assert r.returncode == 2 and len(r.stderr.strip().splitlines()) == 1 and "missing.json" in r.stderr


def test_score_with_a_conditions_file_writes_the_ladder(tmp_path):
    mosaic.write_bench(tmp_path / "bench")
    mosaic.write_runs(tmp_path / "runs", declare=False)
    cond = mosaic.conditions_file(tmp_path / "c.json")
    r = memscope("score", str(tmp_path / "bench"), "--runs", str(tmp_path / "runs"), "--conditions", str(cond),
                 "--sections", "mosaic_ladder,mosaic_sweep", "--out", str(tmp_path / "out"), "--format", "json,md")
    assert r.returncode == 0, r.stderr
    data = json.loads((tmp_path / "out" / "report.json").read_text())
    assert [x["condition"] for x in data["mosaic_ladder"]["ladder"]][:2] == ["gold_symbolic", "gold_native"]
    assert data["inputs"]["options"]["extra"]["conditions_file"] == str(cond)
    assert [x["budget"] for x in data["mosaic_sweep"]] == ["full", "2", "1"]


def test_validate_reports_a_bad_run_declaration_as_one_finding(tmp_path):
    mosaic.write_bench(tmp_path / "bench")
    mosaic.write_runs(tmp_path / "runs", only=("semantic_rag__multimodal",))
    r = memscope("validate", str(tmp_path / "bench"), "--runs", str(tmp_path / "runs"))
    assert r.returncode == 0, r.stdout + r.stderr
    metrics = next((tmp_path / "runs").rglob("metrics.json"))
    metrics.write_text(json.dumps({**json.loads(metrics.read_text()), "carrier": "image:shuffled_frames"}))
    r = memscope("validate", str(tmp_path / "bench"), "--runs", str(tmp_path / "runs"))
    assert r.returncode == 1 and "Traceback" not in r.stderr
    found = [ln for ln in r.stdout.splitlines() if str(metrics) in ln]
    assert len(found) == 1 and f"{metrics}:condition: error: carrier 'image:shuffled_frames'" in found[0]
