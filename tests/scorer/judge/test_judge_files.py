"""Issue 14, classes 5 and 10 for `memscope judge`: a --cache FILE that is not a judge cache is
never replaced, and unwritable outputs are refused before any request is made."""

from __future__ import annotations

import sqlite3
from pathlib import Path

import pytest

from scorer.cli import main
from tests.judge_server import JudgeServer
from tests.scorer.judge.test_judge import FAST, row, runs_tree


@pytest.fixture
def server():
    with JudgeServer() as s:
        yield s


@pytest.fixture(autouse=True)
def _key(monkeypatch):
    monkeypatch.setenv("OPENAI_API_KEY", "sk-test-files")


def _one_line_naming(capsys, path: Path) -> str:
    err = capsys.readouterr().err
    lines = err.strip().splitlines()
    assert 1 <= len(lines) <= 2 and str(path) in lines[0], lines
    assert "Traceback" not in err
    return lines[0]


def _other_sqlite(path: Path) -> None:
    db = sqlite3.connect(path)
    db.execute("CREATE TABLE mine (x)")
    db.execute("INSERT INTO mine VALUES (1)")
    db.commit()
    db.close()


@pytest.mark.parametrize("content", [b"", b"x", b"my notes\n", "sqlite"])
def test_cache_that_is_not_a_cache_is_never_replaced(server, tmp_path, capsys, content):
    runs = runs_tree(tmp_path, [row(1, "a [[score:0.5]]")])
    cache = tmp_path / "notes.txt"
    if content == "sqlite":
        _other_sqlite(cache)
    else:
        cache.write_bytes(content)
    before = cache.read_bytes()
    rc = main(["judge", "--runs", str(runs), "--model", "judge-a", "--base-url", server.url,
               "--out", str(tmp_path / "out"), "--cache", str(cache), *FAST])
    assert rc in (1, 2)
    assert "judge cache" in _one_line_naming(capsys, cache)
    assert cache.read_bytes() == before and server.requests == 0
    assert not Path(f"{cache}-wal").exists()


def test_existing_cache_is_still_used(server, tmp_path):
    runs = runs_tree(tmp_path, [row(1, "a [[score:0.5]]")])
    args = ["judge", "--runs", str(runs), "--model", "judge-a", "--base-url", server.url,
            "--cache", str(tmp_path / "c.sqlite"), *FAST]
    assert main([*args, "--out", str(tmp_path / "o1")]) == 0
    assert main([*args, "--out", str(tmp_path / "o2")]) == 0
    assert server.requests == 1
