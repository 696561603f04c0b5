"""The shipped demo validates clean; a copy broken in every listed way gives one line per problem."""

from __future__ import annotations

import json
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

from tests.paths import DEMO, REPO

TASK = "Home_Renovation_Journal"

pytestmark = pytest.mark.needs_demo


def memscope(*args: str) -> subprocess.CompletedProcess:
    return subprocess.run([sys.executable, "-m", "scorer", *args], capture_output=True, text=True, cwd=REPO)


def test_demo_is_clean() -> None:
    proc = memscope("validate", str(DEMO), "--runs", str(DEMO / "runs"))
    assert proc.returncode == 0, proc.stdout
    assert proc.stdout == ""
    assert "0 error(s), 0 warning(s)" in proc.stderr


def _edit_json(path: Path, fn) -> None:
    data = json.loads(path.read_text(encoding="utf-8"))
    fn(data)
    path.write_text(json.dumps(data, ensure_ascii=False, indent=1), encoding="utf-8")


def _edit_first_row(run_dir: Path, fn) -> None:
    f = run_dir / "predictions.jsonl"
    lines = f.read_text(encoding="utf-8").splitlines()
    row = json.loads(lines[0])
    fn(row)
    lines[0] = json.dumps(row, ensure_ascii=False)
    f.write_text("\n".join(lines) + "\n", encoding="utf-8")


def test_broken_copy_one_line_per_problem(tmp_path: Path) -> None:
    root = tmp_path / "demo"
    shutil.copytree(DEMO, root)
    dialog = root / "dialog" / f"{TASK}.json"
    data = json.loads(dialog.read_text(encoding="utf-8"))
    sessions = data["multi_session_dialogues"]
    qas = data["human-annotated QAs"]
    first_image_round = next(r for r in sessions[0]["dialogues"] if r.get("input_image"))
    other_image_round = next(r for s in sessions[1:] for r in s["dialogues"] if r.get("input_image"))
    sessions[-1]["dialogues"].append(dict(sessions[-1]["dialogues"][0]))  # 1 duplicate round id
    qas[1]["clue"] = qas[1]["clue"] + ["D99:1"]  # 2 clue round that does not exist
    qas[2]["point"] = [["X7"], qas[2]["point"][1]]  # 3 label outside X1–X4
    qas[3]["options"][1]["answer"] = "F"  # 4 rotation answer letter not an option
    first_image_round["input_image"] = ["../../outside.png"]  # 5 path leaving the root
    (root.parent / "outside.png").write_bytes((DEMO / "image" / TASK / Path(
        other_image_round["input_image"][0]).name).read_bytes())
    dialog.write_text(json.dumps(data, ensure_ascii=False, indent=1), encoding="utf-8")
    missing = root / other_image_round["input_image"][0]
    missing.unlink()  # 6 missing media
    corrupt = next(p for p in sorted((root / "image").rglob("*.png")) if p != missing)
    corrupt.write_bytes(corrupt.read_bytes()[:60])  # 7 undecodable media (truncated PNG)
    runs = sorted(p for p in (root / "runs" / TASK).iterdir())
    _edit_first_row(runs[0], lambda r: r.__setitem__("idx", 999))  # 8 row matching no item
    _edit_first_row(runs[1], lambda r: r.__setitem__("question", "Which city did I visit?"))  # 9 other question

    proc = memscope("validate", str(root), "--runs", str(root / "runs"))
    assert proc.returncode == 1
    assert "Traceback" not in proc.stdout + proc.stderr
    errors = [line for line in proc.stdout.splitlines() if ": error: " in line]
    expected = [
        "duplicate round id",
        "clue round D99:1 does not exist",
        "label(s) outside X1–X4/Y1–Y3: X7",
        "rotation 1: answer letter 'F' is not an option",
        "path leaves the benchmark root: ../../outside.png",
        f"media file not found: {other_image_round['input_image'][0]}",
        f"{corrupt.name}: cannot decode image",
        "row matches no item",
        "question differs from item",
    ]
    for phrase in expected:
        hits = [e for e in errors if phrase in e]
        assert len(hits) == 1, (phrase, errors)
    # a truncated PNG can be referenced from several rounds; every other problem is one line
    corrupt_refs = sum(phrase in e for e in errors for phrase in [f"{corrupt.name}: cannot decode image"])
    assert len(errors) == len(expected) - 1 + corrupt_refs, errors
    for line in errors:
        location, _, _ = line.partition(": error: ")
        assert ":" in location  # file:location
