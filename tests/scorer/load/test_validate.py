"""Every validation finding: a copy of a clean benchmark broken in one way each gives one clear line."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

import pytest

from scorer.cli import main
from scorer.load.memeye import load_benchmark
from scorer.load.validate import validate
from tests.builders.benchmarks import MINI_TASK, write_mini_bench
from tests.builders.runs import write_mini_run


def qa(d: dict, i: int) -> dict:
    return d["human-annotated QAs"][i]


def rounds(d: dict, s: int) -> list:
    return d["multi_session_dialogues"][s]["dialogues"]


BREAKAGES = {
    "duplicate round id": (lambda d: rounds(d, 1).append(dict(rounds(d, 0)[1])), "round D1:2: error: duplicate round id"),
    "missing clue round": (lambda d: qa(d, 1).__setitem__("clue", ["D9:9"]), "QA #2: error: clue round D9:9 does not exist"),
    "missing chain round": (lambda d: qa(d, 2)["chain"].append({"round": "D7:1", "role": "narrow"}),
                            "QA #3: error: chain[1] round D7:1 does not exist"),
    "label outside range": (lambda d: qa(d, 0).__setitem__("point", [["X5"], ["Y1"]]),
                            "QA #1: error: label(s) outside X1–X4/Y1–Y3: X5"),
    "answer letter not an option": (lambda d: qa(d, 0)["options"][2].__setitem__("answer", "E"),
                                    "QA #1: error: rotation 2: answer letter 'E' is not an option (A, B, C, D)"),
    "legacy answer not an option": (lambda d: qa(d, 1)["options"].pop("B"),
                                    "QA #2: error: rotation 0: answer letter 'B' is not an option (A, C, D)"),
    "missing image": (lambda d: rounds(d, 0)[0].__setitem__("input_image", ["image/Mini_Task/nope.png"]),
                      "round D1:1 image[0]: error: media file not found: image/Mini_Task/nope.png"),
    "path outside root": (lambda d: rounds(d, 0)[0].__setitem__("input_image", ["../../../etc/passwd"]),
                          "round D1:1 image[0]: error: path leaves the benchmark root: ../../../etc/passwd"),
    "media reference a number": (lambda d: rounds(d, 0)[0].__setitem__("input_image", [5]),
                                 "round D1:1 image[0]: error: media reference must be text (a path or URL), not a number: 5"),
    "unknown session": (lambda d: qa(d, 1).__setitem__("session_id", ["D8"]), "QA #2: error: session D8 does not exist"),
    "QA item without point": (lambda d: qa(d, 1).pop("point"),
                              "QA #2: error: no point: the item is in no X/Y cell, and every matrix leaves it out"),
    "answerable not bool": (lambda d: qa(d, 0).__setitem__("answerable", "no"),
                            "QA #1: error: answerable must be true or false, not 'no'"),
}


@pytest.mark.parametrize("name", sorted(BREAKAGES))
def test_each_breakage_gives_one_error_line(tmp_path: Path, name: str, capsys) -> None:
    mutate, expected = BREAKAGES[name]
    root = write_mini_bench(tmp_path / "b", mutate=mutate)
    code = main(["validate", str(root)])
    out = capsys.readouterr().out.strip().splitlines()
    errors = [line for line in out if ": error: " in line]
    assert code == 1
    assert len(errors) == 1, out
    assert errors[0].endswith(expected), errors[0]
    assert errors[0].startswith(f"{root}/dialog/{MINI_TASK}.json:")  # a path from where it ran, as run files


def test_clean_benchmark_exits_zero(tmp_path: Path, capsys) -> None:
    root = write_mini_bench(tmp_path / "b")
    assert main(["validate", str(root)]) == 0
    assert ": error: " not in capsys.readouterr().out


def test_corrupt_png_and_wav(tmp_path: Path, capsys) -> None:
    root = write_mini_bench(tmp_path / "b")
    (root / "image" / MINI_TASK / "tag.png").write_bytes(b"\x89PNG\r\n\x1a\n" + b"garbage" * 10)
    (root / "audio" / MINI_TASK / "bell.wav").write_bytes(b"RIFF0000WAVEjunk")
    assert main(["validate", str(root)]) == 1
    errors = [line for line in capsys.readouterr().out.splitlines() if ": error: " in line]
    assert len(errors) == 2
    assert "round D1:2 image[0]: error: tag.png: cannot decode image" in errors[0]
    assert "round D2:1 audio[0]: error: bell.wav: cannot decode audio" in errors[1]


def test_symlink_leaving_root_is_refused(tmp_path: Path) -> None:
    outside = tmp_path / "secret.png"
    outside.write_bytes((tmp_path / "x").read_bytes() if (tmp_path / "x").exists() else b"")
    root = write_mini_bench(tmp_path / "b")
    (root / "image" / MINI_TASK / "link.png").symlink_to(outside)
    root = write_mini_bench(tmp_path / "b", mutate=lambda d: rounds(d, 0)[0].__setitem__(
        "input_image", [f"image/{MINI_TASK}/link.png"]))
    b = load_benchmark(root)
    img = b.tasks[0].round("D1:1").images[0]
    assert img.path is None and "leaves the benchmark root" in img.problem


def run_rows(tmp_path: Path, rows: list[dict]) -> Path:
    """Open rows as the runner writes them: with a gold answer (a row without one is its own error)."""
    rows = [{"gt": "gold", **r} for r in rows]
    return write_mini_run(tmp_path / "runs" / MINI_TASK / "20260101_000000_m_semantic_rag__multimodal", "open", rows)


@pytest.mark.parametrize("row,expected", [
    ({"idx": 42, "mode": "open", "question": "?"}, "error: row matches no item: task 'Mini_Task', mode 'open', idx 42"),
    ({"idx": 2, "mode": "open", "question": "What colour is the hall wall now?"},
     "error: question differs from item Mini_Task:2 (open): row has 'What colour is the hall wall now?', "
     "benchmark has 'What number is on the key tag?'"),
    ({"idx": 1, "mode": "open", "question": "What colour is the hall wall now?", "retrieved": ["D1:1", "D5:5"]},
     "error: retrieved/delivered round id(s) not in task Mini_Task: D5:5"),
    ({"mode": "open", "question": "x"}, "error: row has no idx (the 1-based item index)"),
    # an idx that is there but wrong was called missing ("no integer idx")
    ({"idx": -1, "mode": "open", "question": "x"}, "error: idx -1 is not a 1-based item index (1 or more)"),
    ({"idx": 0, "mode": "open", "question": "x"}, "error: idx 0 is not a 1-based item index (1 or more)"),
    ({"idx": -10**400, "mode": "open", "question": "x"},
     "error: idx -1000000000000000... is not a 1-based item index (1 or more)"),  # was an OverflowError
    ({"idx": 2.5, "mode": "open", "question": "x"}, "error: idx 2.5 is not a 1-based item index (a JSON integer, 1 or more)"),
    ({"idx": 2.0, "mode": "open", "question": "x"}, "error: idx 2.0 is not a 1-based item index (a JSON integer, 1 or more)"),
    ({"idx": "3", "mode": "open", "question": "x"}, "error: idx '3' is not a whole number (the 1-based item index)"),
    ({"idx": 10**30, "mode": "open", "question": "x"},
     "error: idx 1e+30 is not a 1-based item index (a JSON integer, 1 or more)"),
])
def test_prediction_row_findings(tmp_path: Path, row: dict, expected: str, capsys) -> None:
    root = write_mini_bench(tmp_path / "b")
    run_rows(tmp_path, [row])
    assert main(["validate", str(root), "--runs", str(tmp_path / "runs")]) == 1
    errors = [line for line in capsys.readouterr().out.splitlines() if ": error: " in line]
    assert len(errors) == 1
    assert errors[0].endswith(expected), errors[0]
    assert "predictions.jsonl:1: " in errors[0]


def test_cli_bad_input_no_traceback(tmp_path: Path) -> None:
    (tmp_path / "dialog").mkdir()
    (tmp_path / "dialog" / "T.json").write_text("[1, 2")
    proc = subprocess.run([sys.executable, "-m", "scorer", "validate", str(tmp_path)],
                          capture_output=True, text=True)
    assert proc.returncode != 0
    assert "Traceback" not in proc.stderr
    lines = proc.stderr.strip().splitlines()
    assert len(lines) == 1 and "T.json:1:" in lines[0] and "invalid JSON" in lines[0]


def test_escape_sequences_in_findings_are_shown_not_obeyed(tmp_path: Path, capsys) -> None:
    root = write_mini_bench(tmp_path / "b", mutate=lambda d: qa(d, 1).__setitem__("clue", ["D1:\x1b[31m9"]))
    assert main(["validate", str(root)]) == 1
    out = capsys.readouterr().out
    assert "\x1b" not in out and "\\x1b[31m9" in out


def test_findings_from_function(tmp_path: Path) -> None:
    root = write_mini_bench(tmp_path / "b")
    assert [f for f in validate(load_benchmark(root)) if f.severity == "error"] == []
    data = json.loads((root / "dialog" / f"{MINI_TASK}_Open.json").read_text())
    data["human-annotated QAs"].pop()
    (root / "dialog" / f"{MINI_TASK}_Open.json").write_text(json.dumps(data))
    warnings = [str(f) for f in validate(load_benchmark(root))]
    assert warnings == [f"{MINI_TASK}:{MINI_TASK}:4: warning: MCQ item has no open mirror"]


@pytest.mark.parametrize(("mutate", "expected"), [
    (lambda d: d.pop("human-annotated QAs"), "warning: no QA items (no 'human-annotated QAs' list, or an empty one)"),
    (lambda d: d.__setitem__("human-annotated QAs", []),
     "warning: no QA items (no 'human-annotated QAs' list, or an empty one)"),
    (lambda d: d["multi_session_dialogues"][1].pop("dialogues"), "session D2: warning: session has no rounds"),
    (lambda d: d.pop("multi_session_dialogues"), "warning: no sessions: the dialogue is empty"),
])
def test_an_empty_part_of_a_dialog_file_is_named(tmp_path: Path, capsys, mutate, expected: str) -> None:
    """A missing or emptied QA list, a session without rounds, a file without sessions: each is a
    line of its own (before, only follow-on clue errors or a silently smaller matrix said so)."""
    root = write_mini_bench(tmp_path / "b", mutate=mutate)
    main(["validate", str(root)])
    out = capsys.readouterr().out.strip().splitlines()
    assert any(line.startswith(f"{root}/dialog/{MINI_TASK}.json") and expected in line for line in out), out


def test_dialogues_not_a_list_is_refused(tmp_path: Path, capsys) -> None:
    """`"dialogues": {}` was read as no rounds; it is the same error as any other non-list."""
    root = write_mini_bench(tmp_path / "b", mutate=lambda d: d["multi_session_dialogues"][0].__setitem__("dialogues", {}))
    assert main(["validate", str(root)]) == 1
    out = capsys.readouterr().out.strip().splitlines()
    assert any(line.startswith(f"{root}/dialog/{MINI_TASK}.json:session D1: error: dialogues must be a list")
               for line in out), out


def test_a_benchmark_without_any_point_is_not_an_error_per_item(tmp_path: Path, capsys) -> None:
    """A converted benchmark (LoCoMo) has no X/Y labels at all: no error for each item."""
    def strip(d: dict) -> None:
        for q in d["human-annotated QAs"]:
            q.pop("point", None)
    root = write_mini_bench(tmp_path / "b", mutate=strip, mutate_open=strip)
    main(["validate", str(root)])
    assert "no point" not in capsys.readouterr().out


@pytest.mark.parametrize("exists", [True, False])
def test_whether_a_file_outside_the_root_exists_is_not_told(tmp_path: Path, capsys, exists: bool) -> None:
    """`../secret.png` names root/secret.png (missing) and, from the root, a file beside it: the
    message was "leaves the benchmark root" when that outside file existed and "not found" when it
    did not — a probe of the file system outside the benchmark. Now the same either way."""
    if exists:
        (tmp_path / "secret.png").write_bytes(b"\x89PNG")
    root = write_mini_bench(tmp_path / "b", mutate=lambda d: rounds(d, 0)[0].__setitem__("input_image", ["../secret.png"]))
    main(["validate", str(root)])
    errors = [line for line in capsys.readouterr().out.splitlines() if "image[0]" in line]
    assert len(errors) == 1
    assert errors[0].endswith("error: media file not found: ../secret.png (under the benchmark root; where the "
                              "reference leads outside it, nothing was looked at)"), errors
