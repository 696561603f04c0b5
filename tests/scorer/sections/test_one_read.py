"""One read for every section (issue 19): the evidence, delivery, recency, abstention and gates
sections read the rows the lean reader kept (scorer.load.joined_rows.JoinedRows) and give the same
report, value for value, as when the runs are read whole by the full reader — on the demo, on the
demo with repeated items, and on the synthetic MemEye set.

The records are also checked against an independent join: the full reader's rows joined with
scorer.load.join.Joiner and kept last-per-(group, item) in a plain dict (how the sections joined
before), and the gate observations against scorer.metrics.gates.gate_observations over those runs.
"""

from __future__ import annotations

import json
import math
import shutil
import subprocess
import sys

import numpy as np
import pytest

from scorer.load.join import Joiner
from scorer.load.joined_rows import LazyRow
from scorer.load.memeye import load_benchmark
from scorer.load.runs import load_runs
from scorer.metrics.gates import gate_observations
from scorer.scoring import build_context, score
from scorer.sections import gates as gates_section
from scorer.sections.base import ScoreOptions
from scorer.sections.evidence_records import by_group, collect, group_rows, grouped, item_score
from scorer.sections.registry import SECTIONS
from tests.paths import DEMO, REPO, RUNS

pytestmark = pytest.mark.needs_demo
# The sections that read runs whole before (every section but MOSAIC's, which keep their own reader)
ONE_READ = [s.name for s in SECTIONS if not s.raw]
FIELDS = ("retrieved", "delivered", "rotations", "abstained", "pred", "choice", "em", "judge", "mode")


def _same(a, b, path="") -> list[str]:
    """Every place two report values differ (NaN equals NaN)."""
    if isinstance(a, dict) and isinstance(b, dict):
        out = [f"{path}/{k}: only on one side" for k in set(a) ^ set(b)]
        return out + [d for k in a if k in b for d in _same(a[k], b[k], f"{path}/{k}")]
    if isinstance(a, list) and isinstance(b, list):
        out = [f"{path}: {len(a)} vs {len(b)} entries"] if len(a) != len(b) else []
        return out + [d for i, (x, y) in enumerate(zip(a, b)) for d in _same(x, y, f"{path}/{i}")]
    if isinstance(a, float) and isinstance(b, float) and math.isnan(a) and math.isnan(b):
        return []
    return [] if a == b and type(a) is type(b) else [f"{path}: {a!r} vs {b!r}"]


def _reports_agree(bench, runs, options: ScoreOptions) -> dict:
    lean = score(bench, runs, options=options, sections=ONE_READ, lean=True).json_data()
    full = score(bench, runs, options=options, sections=ONE_READ, lean=False).json_data()
    assert lean["inputs"]["runs"]["reader"] == "lean" and full["inputs"]["runs"]["reader"] == "full"
    lean["inputs"]["runs"]["reader"] = full["inputs"]["runs"]["reader"]
    assert _same(full, lean) == []
    return lean


@pytest.mark.parametrize("options", [
    ScoreOptions(resamples=400),
    ScoreOptions(resamples=400, rotations="logged", k=5, clustered=True, judge_levels=3,
                 extra={"abstain_patterns": ("no idea", "cannot tell"), "recency_age_source": "dialogue"}),
], ids=["default", "options"])
def test_the_lean_read_gives_the_full_readers_report(options):
    data = _reports_agree(DEMO, [RUNS], options)
    for name in ("evidence", "evidence_curve", "recency", "delivery", "abstention", "gates"):
        assert data[name] and not (isinstance(data[name], dict) and data[name].get("value", 0) is None), name


def _reference_records(bench, runs):
    """The sections' records as they were joined before: every joined row of the full reader, the
    last one per (backbone, method, mode, item) kept where the first one was seen."""
    kept = {}
    for run, p, item in Joiner(bench).pairs(runs):
        kept[(run.backbone, run.method, p.mode, item.item_id)] = (run, p, item)
    return kept


def test_records_and_gate_observations_match_an_independent_join(tmp_path):
    # A second folder for one demo run: its items are answered twice (the last folder's rows count).
    src = next(p.parent for p in sorted(RUNS.rglob("predictions.jsonl")) if '"retrieved"' in p.read_text())
    copy = tmp_path / "again" / src.parent.name / (src.name + "_again")
    shutil.copytree(src, copy)
    rows = (copy / "predictions.jsonl").read_text().splitlines()
    (copy / "predictions.jsonl").write_text("\n".join(reversed(rows)) + "\n")  # the same items, another order
    paths = [RUNS, tmp_path / "again"]
    bench = load_benchmark(DEMO)
    ctx, _, _ = build_context(bench, paths, needs_raw=False, evidence=True)
    assert ctx.memo["joined_rows"].rows and isinstance(ctx.memo["joined_rows"].rows[0], LazyRow)  # the lean read
    records, warnings = collect(ctx)
    assert any("answered by several run folders" in w for w in warnings)

    full_runs = load_runs(paths, benchmark=bench)
    ref = _reference_records(bench, full_runs)
    assert [(r.backbone, r.method, r.mode, r.item.item_id) for r in records] == list(ref)
    scored = {k: v for k, v in zip(zip(ctx.frame["backbone"], ctx.frame["method"], ctx.frame["mode"],
                                       ctx.frame["item_id"]), ctx.frame["em"].where(ctx.frame["mode"] == "mcq",
                                                                                   ctx.frame["judge"]))}
    for r in records:
        run, p, item = ref[(r.backbone, r.method, r.mode, r.item.item_id)]
        assert r.item is item and r.task is bench.task_of(item)
        assert (p.line, r.prediction.line) == (p.line, p.line)
        for f in FIELDS:
            assert getattr(r.prediction, f) == getattr(p, f), (r.group, item.item_id, f)
        s = scored.get((r.backbone, r.method, r.mode, item.item_id))
        want = float(s) if s is not None and s == s else item_score(item, p)
        assert r.score == want or (r.score is None and want is None)
    assert any(r.prediction.retrieved for r in records) and any(r.prediction.delivered for r in records)
    assert any(r.prediction.rotations for r in records)

    want = gate_observations(bench, full_runs)
    got = gates_section.observations(ctx, None)
    assert got == want and len(want) > 0

    # The run groups collect keeps (from its integer codes) are the plain grouping of the records:
    # the same groups in order of first appearance, each with its records and their indices in order.
    plain, plain_rows = {}, {}
    for i, r in enumerate(records):
        plain.setdefault(r.group, []).append(r)
        plain_rows.setdefault(r.group, []).append(i)
    assert list(by_group(records)) == list(plain) and len(plain) > 2
    assert all(by_group(records)[g] == plain[g] for g in plain)
    assert {g: v.tolist() for g, v in group_rows(ctx).items()} == plain_rows
    assert list(group_rows(ctx)) == list(plain_rows)
    assert [list(x) for x in grouped(records)] == [list(plain), list(plain_rows)]  # found from the records
    number = {g: i for i, g in enumerate(plain)}  # codes whose order is not the groups' order of appearance
    shuffled = np.random.default_rng(0).permutation(len(plain))
    for code in ([len(plain) - number[r.group] for r in records], [shuffled[number[r.group]] for r in records]):
        groups, rows = grouped(records, np.array(code))
        assert list(groups) == list(plain) and {g: v.tolist() for g, v in rows.items()} == plain_rows
        assert all(groups[g] == plain[g] for g in plain)


@pytest.fixture(scope="module")
def memeye(tmp_path_factory):
    out = tmp_path_factory.mktemp("memeye") / "bench"
    subprocess.run([sys.executable, str(REPO / "fixtures" / "synth.py"), "--scale", "memeye", "--out", str(out)],
                   check=True, stdout=subprocess.DEVNULL)
    return out


def test_the_lean_read_gives_the_full_readers_report_at_memeye_scale(memeye):
    data = _reports_agree(memeye, [memeye / "runs"], ScoreOptions(resamples=200))
    assert len(data["evidence"]) > 1000 and data["recency"]["rows"] and data["delivery"]["runs"]
    assert json.dumps(data["gates"], default=str)


@pytest.mark.parametrize("logged", [None, True, False], ids=["none logged", "one logs true", "one logs false"])
def test_abstention_reads_no_row_when_the_reader_saw_none_log_it(tmp_path, logged):
    """Every item answerable: the abstention section has nothing to rate unless a row logged
    `abstained`. The lean reader knows whether any did, so with none it reads no row (the rows'
    answer fields stay undecoded); a row that logs it (true or false) makes the section rate, the
    same in both readers."""
    from tests.builders.benchmarks import write_labelled_bench
    from tests.builders.runs import mcq_row, open_row, write_labelled_run

    root = write_labelled_bench(tmp_path / "b", "T", [("X1", "Y1"), ("X2", "Y2"), ("X3", "Y3")])
    runs = tmp_path / "runs"
    mcq = [mcq_row(i, c) for i, c in zip((1, 2, 3), (4, 1, 0))]
    if logged is not None:
        mcq[1]["abstained"] = logged
    write_labelled_run(runs, "T", "gpt", "fc_v", "multimodal", "mcq", mcq)
    write_labelled_run(runs, "T", "gpt", "fc_v", "multimodal", "open", [open_row(i, 0.5) for i in (1, 2, 3)])
    bench = load_benchmark(root)
    opts = ScoreOptions(resamples=50)
    ctx, _, _ = build_context(bench, [runs], options=opts, needs_raw=False, evidence=True)
    joined = ctx.memo["joined_rows"]
    assert joined.abstained_logged is (logged is not None)
    from scorer.sections import abstention

    result = abstention.build(ctx)
    parts = {id(r._part): r._part for r in joined.rows}.values()
    if logged is None:
        assert result.reason and all(p.small is None for p in parts)  # absent, no row read
    else:
        assert not result.reason and result.data
    lean = score(bench, [runs], options=opts, sections=["abstention"], lean=True).json_data()["abstention"]
    full = score(bench, [runs], options=opts, sections=["abstention"], lean=False).json_data()["abstention"]
    assert _same(full, lean) == []


def _with_odd_rankings(tmp_path):
    """A copy of the demo whose ranked runs log scores and recency ages of every kind: a score past a
    float's range (an integer of 401 digits), ages missing, logged as "nan", "inf", text or true."""
    root = tmp_path / "demo"
    shutil.copytree(DEMO, root)
    odd_ages = [None, "nan", "inf", "7", True, 10 ** 400, -(10 ** 6), "-3"]
    changed = 0
    for path in sorted((root / "runs").rglob("predictions.jsonl")):
        lines = path.read_text(encoding="utf-8").splitlines()
        out = []
        for n, line in enumerate(lines):
            row = json.loads(line)
            ranked = row.get("retrieved")
            if isinstance(ranked, list) and ranked and isinstance(ranked[0], dict) and n % 3 == 0:
                ranked[0]["score"] = 10 ** 400 if changed % 5 == 1 else ranked[0].get("score")
                if len(ranked) > 1:
                    age = odd_ages[changed % len(odd_ages)]
                    if age is None:
                        ranked[1].pop("recency_age", None)
                    else:
                        ranked[1]["recency_age"] = age
                changed += 1
            out.append(json.dumps(row))
        path.write_text("\n".join(out) + "\n", encoding="utf-8")
    assert changed > 50
    return root


@pytest.mark.parametrize("age_source", ["logged", "dialogue"])
def test_rankings_with_odd_scores_and_ages_read_alike_by_both_readers(tmp_path, age_source):
    """Scores and ages that are no plain finite number, and negative ages: the lean reader's arrays
    (the recency section reads ages from them) give the full reader's report, and neither a
    401-digit score nor an age of −10⁶ (exp(−λ·Δt) past a float's range) stops the report (each
    raised OverflowError before)."""
    root = _with_odd_rankings(tmp_path)
    data = _reports_agree(root, [root / "runs"], ScoreOptions(resamples=200, extra={"recency_age_source": age_source}))
    reasons = {r["reason"] for r in data["recency"]["not_reranked"]}
    assert {"no similarity score", "negative recency age"} <= reasons
    assert "no recency age" in reasons or age_source == "dialogue"
    assert data["recency"]["rows"]
