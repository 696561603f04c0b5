"""Building studies (scorer/store/sampling.py) and `memscope study new|list|export`: reproducible stratified
queues, the paper's protocols on the demo, method and backbone resolution, one-line errors, and the
export of a study's answers (blind unless revealed)."""

from __future__ import annotations

import csv
import json
import random
from collections import Counter
from pathlib import Path

import pytest

from scorer.cli import main as cli_main
from scorer.errors import UserError
from scorer.load.runs import load_runs
from scorer.store import Store, oracle_rotation, parse_per_cell, plan_agreement, plan_labels, plan_oracle
from scorer.store.sampling import CELLS, resolve_methods, stratified_sample
from tests.paths import DEMO, RUNS


@pytest.fixture(scope="module")
def runs():
    return load_runs([RUNS])


def test_per_cell_parses_numbers_and_ranges() -> None:
    assert parse_per_cell("3") == (3, 3) and parse_per_cell(" 8-10 ") == (8, 10) and parse_per_cell(2) == (2, 2)
    for bad in ("0", "10-8", "x", "3-", "-3", "1.5"):
        with pytest.raises(UserError, match="--per-cell"):
            parse_per_cell(bad)


def test_stratified_sample_gives_scarce_cells_first_pick_and_never_repeats_an_item() -> None:
    # "m" is in both cells; cell A has only it, so A must get it even though B comes first by name.
    members = {"B": ["b1", "b2", "m"], "A": ["m"]}
    picks, short, strata = stratified_sample(members, (1, 1), random.Random(0))
    by_cell = {c: i for i, c in picks}
    assert by_cell["A"] == "m" and by_cell["B"] in ("b1", "b2") and short == [] and strata == {"A": 1, "B": 1}
    picks, short, _ = stratified_sample({"A": ["x"], "B": ["x"]}, (2, 2), random.Random(0))
    assert picks == [("x", "A")] and len(short) == 2  # both cells short, the item used once


@pytest.mark.needs_demo
def test_agreement_study_follows_memeye_protocol_and_is_reproducible(demo_bench, runs) -> None:
    plan = plan_agreement(demo_bench, runs, (3, 3), 7, ("FC(V)", "SRAG(V)"), "gpt-5.4-mini")
    again = plan_agreement(demo_bench, runs, (3, 3), 7, ("FC(V)", "SRAG(V)"), "gpt-5.4-mini")
    other = plan_agreement(demo_bench, runs, (3, 3), 8, ("FC(V)", "SRAG(V)"), "gpt-5.4-mini")
    assert plan.entries == again.entries and plan.entries != other.entries
    keys = {"gpt-5.4-mini/full_context__multimodal", "gpt-5.4-mini/semantic_rag__multimodal"}
    per_item = Counter(e[0] for e in plan.entries)
    assert set(per_item.values()) == {2} and {e[2] for e in plan.entries} == keys
    assert all(e[1] == "open" for e in plan.entries)
    # every item is in the cell it was drawn for, each cell has 3 (X2_Y2 has only 2 items)
    cells = Counter(e[3] for e in plan.entries[::2])
    assert cells == {c: (2 if c == "X2_Y2" else 3) for c in CELLS}
    for item_id, _, _, cell in plan.entries:
        x, y = cell.split("_")
        assert (x, y) in demo_bench.item(item_id, "open").cells
    assert plan.shortfalls == ("cell X2_Y2: 2 of 3 item(s) (only 2 eligible)",)
    assert plan.params["blind"] is True and plan.params["backbone"] == "gpt-5.4-mini"
    # run names work as well as display names
    by_run = plan_agreement(demo_bench, runs, (3, 3), 7, ("full_context__multimodal", "SRAG(V)"), "gpt-5.4-mini")
    assert by_run.entries == plan.entries


@pytest.mark.needs_demo
def test_method_and_backbone_resolution_errors_are_one_line(runs) -> None:
    with pytest.raises(UserError, match=r"several backbones \(gpt-5.4-mini, qwen3-vl-8b\).*--backbone"):
        resolve_methods(runs, ["FC(V)"], "open", None)
    with pytest.raises(UserError, match=r"no open run of method 'FC\(X\)' \(methods: FC\(T\), FC\(V\)"):
        resolve_methods(runs, ["FC(X)"], "open", "gpt-5.4-mini")
    with pytest.raises(UserError, match="no open runs on backbone 'gpt-9'"):
        resolve_methods(runs, ["FC(V)"], "open", "gpt-9")
    with pytest.raises(UserError, match="name the same run"):
        resolve_methods(runs, ["FC(V)", "full_context__multimodal"], "open", "gpt-5.4-mini")
    _, chosen = resolve_methods(runs, ["FC(V)"], "mcq", "qwen3-vl-8b")
    assert chosen == {"FC(V)": "qwen3-vl-8b/full_context__multimodal"}


@pytest.mark.needs_demo
def test_oracle_and_label_studies(demo_bench) -> None:
    oracle = plan_oracle(demo_bench, (1, 1), 3)
    assert len(oracle.entries) == 12 and {e[1] for e in oracle.entries} == {"mcq"}
    for item_id, _, run_key, _ in oracle.entries:
        item = demo_bench.item(item_id, "mcq")
        assert run_key is None and item.rotations and demo_bench.task_of(item).clue_chain(item)
    labels = plan_labels(demo_bench, (2, 3), 3)
    counts = Counter(e[3] for e in labels.entries)
    quotas = labels.params["strata"]
    assert all(1 <= n <= 3 for n in counts.values()) and sum(counts.values()) == len(labels.entries)
    assert {e[1] for e in labels.entries} == {None} and len({e[0] for e in labels.entries}) == len(labels.entries)
    assert quotas == dict(counts)
    assert plan_labels(demo_bench, (2, 3), 3).entries == labels.entries


def test_oracle_rotation_is_fixed_per_seed_annotator_and_item() -> None:
    got = {oracle_rotation(5, a, f"T:{i}", 4) for a in ("x", "y") for i in range(40)}
    assert got == {0, 1, 2, 3}
    assert oracle_rotation(5, "x", "T:1", 4) == oracle_rotation(5, "x", "T:1", 4)
    assert oracle_rotation(5, "x", "T:1", 1) == 0 and oracle_rotation(5, "x", "T:1", 0) == 0


def run_cli(capsys, *argv) -> tuple[int, str, str]:
    capsys.readouterr()
    rc = cli_main([str(a) for a in argv])
    out = capsys.readouterr()
    return rc, out.out, out.err


@pytest.mark.needs_demo
def test_study_commands(tmp_path: Path, capsys) -> None:
    db = tmp_path / "s.db"
    rc, out, err = run_cli(capsys, "study", "new", "--kind", "agreement", "--per-cell", "3", "--methods",
                           "FC(V),SRAG(V)", "--backbone", "gpt-5.4-mini", "--name", "judge-72", "--db", db,
                           DEMO, "--runs", RUNS)
    assert rc == 0 and "70 entries (35 items × 2 methods on gpt-5.4-mini, blind)" in out, err
    assert "short: cell X2_Y2" in out
    # one-line errors, nothing created
    for argv, message in (
        (["--kind", "agreement", "--per-cell", "3", "--name", "again", DEMO, "--runs", RUNS], "several backbones"),
        (["--kind", "agreement", "--per-cell", "3", "--name", "x", DEMO], "needs the runs"),
        (["--kind", "oracle", "--per-cell", "3", "--name", "x", "--methods", "FC(V)", DEMO], "--methods is for"),
        (["--kind", "labels", "--per-cell", "0", "--name", "x", DEMO], "--per-cell"),
        (["--kind", "labels", "--per-cell", "1", "--name", "judge-72", DEMO], "already exists"),
        (["--kind", "labels", "--per-cell", "1", "--name", "x", tmp_path / "nope"], "nope"),
    ):
        rc, out, err = run_cli(capsys, "study", "new", "--db", db, *argv)
        assert rc != 0 and message in err and err.count("\n") == 1 and "Traceback" not in err, err
    rc, out, _ = run_cli(capsys, "study", "list", "--db", db)
    assert rc == 0 and "judge-72  agreement  70 entries  seed 20260430" in out and "no annotator has started" in out
    rc, _, err = run_cli(capsys, "study", "list", "--db", tmp_path / "absent.db")
    assert rc != 0 and err.count("\n") == 1

    with Store(db) as store:
        queue = store.annotator_queue("judge-72", "ann1")
        for q in queue[:3]:
            store.verdict("ann1", q.item_id, q.mode, q.run_key, "reject", study="judge-72")
        store.flag("ann1", queue[0].item_id, "ambiguous", mode=queue[0].mode, run_key=queue[0].run_key,
                   study="judge-72")
    rc, out, _ = run_cli(capsys, "study", "list", "--db", db)
    assert "ann1: 3/70 (4%)" in out
    rc, out, err = run_cli(capsys, "study", "export", "--db", db, "--name", "judge-72")
    rows = [json.loads(line) for line in out.splitlines()]
    assert rc == 0 and [r["kind"] for r in rows] == ["verdict", "flag", "verdict", "verdict"]
    assert [r["position"] for r in rows] == [1, 1, 2, 3] and "run" not in rows[0]
    assert "full_context" not in out and "semantic_rag" not in out and "4 row(s)" in err
    out_csv = tmp_path / "a.csv"
    rc, out, _ = run_cli(capsys, "study", "export", "--db", db, "--name", "judge-72", "--out", out_csv, "--reveal")
    with open(out_csv, newline="") as fh:
        table = list(csv.DictReader(fh))
    assert rc == 0 and [r["run"] for r in table if r["kind"] == "verdict"] == [q.run_key for q in queue[:3]]
    assert [r["blind_id"] for r in table if r["kind"] == "verdict"] == [q.blind_id for q in queue[:3]]
    rc, _, err = run_cli(capsys, "study", "export", "--db", db, "--name", "nope")
    assert rc != 0 and "no study named 'nope' (studies: judge-72)" in err
