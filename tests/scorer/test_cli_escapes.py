"""Escapes from data never reach the terminal through the command line: an OSC title and a screen
clear in a benchmark folder's name, a run folder's name, a backbone / method name and a session id
come out of every command's messages (error lines, summaries, tables) made visible, like findings."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from scorer.cli import main as cli_main
from tests.builders.benchmarks import MINI_TASK, write_mini_bench
from tests.builders.runs import mcq_row, write_mini_run

OSC_TITLE = "\x1b]0;pwned\x07"
CLEAR = "\x1b[2J"
EVIL = f"x{OSC_TITLE}{CLEAR}"
RAW = ("\x1b", "\x07", "\x9b", "\x9d")


def _evil_session(d: dict) -> None:
    d["multi_session_dialogues"][0]["session_id"] = "D1" + EVIL
    d["human-annotated QAs"][0]["session_id"] = ["D1" + EVIL, "D2"]


@pytest.fixture
def hostile(tmp_path: Path) -> tuple[Path, Path]:
    bench = write_mini_bench(tmp_path / f"bench{EVIL}", mutate=_evil_session)
    runs = tmp_path / "runs"
    write_mini_run(runs / f"run{EVIL}", "mcq", [mcq_row(1, 4), mcq_row(2, 2)],
                   method="semantic_rag__multimodal", backbone=f"gpt{EVIL}")
    return bench, runs


def _clean(capsys, argv: list[str]) -> tuple[int, str]:
    rc = cli_main([str(a) for a in argv])
    out, err = capsys.readouterr()
    for stream in (out, err):
        assert not any(ch in stream for ch in RAW), (argv[0], stream)
    return rc, out + err


def test_error_lines_show_escapes(tmp_path: Path, capsys) -> None:
    rc, text = _clean(capsys, ["validate", tmp_path / f"nope{EVIL}"])
    assert rc != 0 and text.startswith("memscope: ") and "\\x1b]0;pwned\\x07" in text


def test_validate_info_and_score_messages_show_escapes(hostile, tmp_path: Path, capsys) -> None:
    bench, runs = hostile
    _clean(capsys, ["validate", bench, "--runs", runs])
    _, text = _clean(capsys, ["info", bench, "--runs", runs])
    assert "\\x1b[2J" in text  # the benchmark's name and the backbone, shown
    _clean(capsys, ["score", bench, "--runs", runs, "--out", tmp_path / "out", "--format", "md,csv,json",
                    "--resamples", "50"])


def test_import_and_judge_messages_show_escapes(hostile, tmp_path: Path, capsys) -> None:
    from tests.paths import LOCOMO

    if not LOCOMO.is_file():
        pytest.skip("the LoCoMo sample is not here")
    conv = json.loads(LOCOMO.read_text(encoding="utf-8"))[0]
    keep = {k: v for k, v in conv["conversation"].items() if k in ("speaker_a", "speaker_b", "session_1",
                                                                   "session_1_date_time")}
    small = {**conv, "sample_id": f"conv{EVIL}", "conversation": keep,
             "qa": [{"question": f"q{EVIL}?", "answer": "a", "evidence": [f"D9:{EVIL}"], "category": 1}]}
    src = tmp_path / "locomo.json"
    src.write_text(json.dumps([small]), encoding="utf-8")
    rc, text = _clean(capsys, ["import", "locomo", src, "--out", tmp_path / "imported"])
    assert rc == 0 and "pwned" in text  # the unresolved evidence is listed, its escapes shown
    _, runs = hostile
    _clean(capsys, ["judge", "--runs", runs, "--model", f"m{EVIL}", "--dry-run", "--out", tmp_path / "j"])
