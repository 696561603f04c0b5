"""Issue 14, class 5: every command that writes refuses an output it cannot write — a file where a
folder is wanted, a read-only file or folder, the file system root — with one line, a non-zero exit
and before any work (no scoring, no paid judge request), leaving every existing file unchanged."""

from __future__ import annotations

import os
import stat
from pathlib import Path

import pytest

import scorer.scoring
from scorer.cli import main
from scorer.store import Store
from tests.builders.benchmarks import write_mini_bench
from tests.judge_server import JudgeServer
from tests.scorer.judge.test_judge import FAST, row, runs_tree


def _snapshot(root: Path) -> dict[str, tuple[bytes | None, int]]:
    out = {}
    for p in sorted(root.rglob("*")):
        out[str(p)] = (p.read_bytes() if p.is_file() else None, stat.S_IMODE(p.stat().st_mode))
    return out


def _refused(capsys, rc: int, name: str) -> str:
    err = capsys.readouterr().err
    lines = err.strip().splitlines()
    assert rc in (1, 2), rc
    assert 1 <= len(lines) <= 2 and name in lines[0], lines
    assert "Traceback" not in err
    return lines[0]


@pytest.fixture
def places(tmp_path: Path):
    """A file, a read-only file, a read-only folder (with a file in it) and a path under a file."""
    f = tmp_path / "a-file.txt"
    f.write_text("keep me\n")
    ro_file = tmp_path / "ro.jsonl"
    ro_file.write_text("read-only\n")
    ro_file.chmod(0o444)
    ro_dir = tmp_path / "ro-dir"
    ro_dir.mkdir()
    (ro_dir / "old.md").write_text("old report\n")
    ro_dir.chmod(0o555)
    yield {"file": f, "ro_file": ro_file, "ro_dir": ro_dir, "under_file": f / "sub"}
    ro_dir.chmod(0o755)
    ro_file.chmod(0o644)


@pytest.fixture(autouse=True)
def _key(monkeypatch):
    monkeypatch.setenv("OPENAI_API_KEY", "sk-test-outputs")


@pytest.mark.parametrize("where", ["file", "ro_dir", "under_file", "root"])
def test_score_out_unwritable(tmp_path, places, capsys, monkeypatch, where):
    bench = write_mini_bench(tmp_path / "bench")
    runs = runs_tree(tmp_path, [row(1, "a", judge=0.5)])

    def no_work(*a, **k):
        raise AssertionError("scoring ran before --out was checked")

    monkeypatch.setattr(scorer.scoring, "score", no_work)
    out = Path("/") if where == "root" else places[where]
    before = _snapshot(tmp_path)
    rc = main(["score", str(bench), "--runs", str(runs), "--out", str(out), "--format", "md,csv,json"])
    _refused(capsys, rc, str(out))
    assert _snapshot(tmp_path) == before


@pytest.mark.parametrize("where", ["ro_file", "ro_dir", "under_file", "root", "ro_dir_file"])
def test_annotations_export_out_unwritable(tmp_path, places, capsys, where):
    db = tmp_path / "a.db"
    with Store(db) as store:
        store.note("ann1", "Mini_Task:1", "hello")
    out = {"root": Path("/"), "ro_dir_file": places["ro_dir"] / "events.jsonl"}.get(where) or places.get(where)
    before = _snapshot(tmp_path)
    rc = main(["annotations", "export", "--db", str(db), "--out", str(out)])
    _refused(capsys, rc, str(out))
    assert _snapshot(tmp_path) == before


def test_judge_out_and_in_place_unwritable_make_no_request(tmp_path, places, capsys):
    runs = runs_tree(tmp_path, [row(1, "a [[score:0.5]]")])
    with JudgeServer() as server:
        for out in (places["file"], places["ro_dir"], places["under_file"], Path("/")):
            before = _snapshot(tmp_path)
            rc = main(["judge", "--runs", str(runs), "--model", "judge-a", "--base-url", server.url,
                       "--out", str(out), "--cache", str(tmp_path / "c.sqlite"), *FAST])
            _refused(capsys, rc, str(out))
            assert _snapshot(tmp_path) == before
        folder = next(runs.rglob("predictions.jsonl")).parent
        folder.chmod(0o555)
        try:
            before = _snapshot(tmp_path)
            rc = main(["judge", "--runs", str(runs), "--model", "judge-a", "--base-url", server.url,
                       "--in-place", "--cache", str(tmp_path / "c.sqlite"), *FAST])
            _refused(capsys, rc, str(folder))
            assert _snapshot(tmp_path) == before
        finally:
            folder.chmod(0o755)
        (folder / "predictions.jsonl").chmod(0o444)
        try:
            before = _snapshot(tmp_path)
            rc = main(["judge", "--runs", str(runs), "--model", "judge-a", "--base-url", server.url,
                       "--in-place", "--cache", str(tmp_path / "c.sqlite"), *FAST])
            _refused(capsys, rc, str(folder / "predictions.jsonl"))
            assert _snapshot(tmp_path) == before
        finally:
            (folder / "predictions.jsonl").chmod(0o644)
        assert server.requests == 0
