"""An export written onto its own input: `--out` (or `--config-out`) naming the annotation
database, or one of its SQLite sidecar files, would replace every annotation with the export.
Each is refused with one line naming the option, a non-zero exit, and the database unchanged —
by another spelling of the same path and through a symbolic link too."""

from __future__ import annotations

import os
from pathlib import Path

import pytest

from scorer.cli import main
from scorer.store import Store


def _db(tmp_path: Path) -> Path:
    db = tmp_path / "a.db"
    with Store(db) as store:
        store.note("ann1", "Mini_Task:1", "keep this note")
        store.create_study("s1", "labels", 1, {}, [("Mini_Task:1", None, None, None)])
    return db


def _spellings(tmp_path: Path, db: Path) -> dict[str, Path]:
    link = tmp_path / "link.db"
    os.symlink(db, link)
    return {"same": db, "dotted": tmp_path / "." / "sub" / ".." / db.name, "link": link}


def _refused(capsys, rc: int, option: str) -> None:
    err = capsys.readouterr().err
    lines = err.strip().splitlines()
    assert rc in (1, 2), (rc, err)
    assert len(lines) == 1 and option in lines[0] and "database" in lines[0], lines
    assert "Traceback" not in err


@pytest.mark.parametrize("spelling", ["same", "dotted", "link"])
@pytest.mark.parametrize("fmt", ["jsonl", "labelstudio"])
def test_annotations_export_out_onto_db(tmp_path, capsys, fmt, spelling):
    db = _db(tmp_path)
    (tmp_path / "sub").mkdir()
    before = db.read_bytes()
    out = _spellings(tmp_path, db)[spelling]
    rc = main(["annotations", "export", "--db", str(db), "--format", fmt, "--out", str(out)])
    _refused(capsys, rc, "--out")
    assert db.read_bytes() == before
    with Store(db, create=False) as store:
        assert store.count() >= 1


def test_annotations_export_config_out_onto_db(tmp_path, capsys):
    db = _db(tmp_path)
    before = db.read_bytes()
    rc = main(["annotations", "export", "--db", str(db), "--format", "labelstudio",
               "--out", str(tmp_path / "tasks.json"), "--config-out", str(db)])
    _refused(capsys, rc, "--config-out")
    assert db.read_bytes() == before
    assert not (tmp_path / "tasks.json").exists()


def test_annotations_export_config_out_onto_out(tmp_path, capsys):
    db = _db(tmp_path)
    same = tmp_path / "tasks.json"
    rc = main(["annotations", "export", "--db", str(db), "--format", "labelstudio",
               "--out", str(same), "--config-out", str(same)])
    err = capsys.readouterr().err
    assert rc in (1, 2) and "--config-out" in err and "--out" in err and "Traceback" not in err
    assert not same.exists()


@pytest.mark.parametrize("sidecar", ["-wal", "-shm", "-journal"])
def test_annotations_export_out_onto_db_sidecar(tmp_path, capsys, sidecar):
    db = _db(tmp_path)
    side = Path(str(db) + sidecar)
    side.write_bytes(b"")  # as SQLite leaves it beside an open database
    rc = main(["annotations", "export", "--db", str(db), "--out", str(side)])
    _refused(capsys, rc, "--out")


@pytest.mark.parametrize("spelling", ["same", "dotted", "link"])
@pytest.mark.parametrize("suffix_fmt", [None, "csv"])
def test_study_export_out_onto_db(tmp_path, capsys, spelling, suffix_fmt):
    db = _db(tmp_path)
    (tmp_path / "sub").mkdir()
    before = db.read_bytes()
    out = _spellings(tmp_path, db)[spelling]
    argv = ["study", "export", "--db", str(db), "--name", "s1", "--out", str(out)]
    if suffix_fmt:
        argv += ["--format", suffix_fmt]
    rc = main(argv)
    _refused(capsys, rc, "--out")
    assert db.read_bytes() == before


def test_export_beside_db_still_written(tmp_path, capsys):
    db = _db(tmp_path)
    rc = main(["annotations", "export", "--db", str(db), "--out", str(tmp_path / "a.db.jsonl")])
    assert rc == 0, capsys.readouterr().err
    assert "keep this note" in (tmp_path / "a.db.jsonl").read_text()


def test_a_db_that_is_a_symlink_loop_is_one_line(tmp_path, capsys):
    """Resolving a looping --db raised RuntimeError (a traceback); it is the database error it was."""
    (tmp_path / "loop1").symlink_to(tmp_path / "loop2")
    (tmp_path / "loop2").symlink_to(tmp_path / "loop1")
    for argv in (["annotations", "export"], ["study", "export", "--name", "s1"]):
        rc = main([*argv, "--db", str(tmp_path / "loop1"), "--out", str(tmp_path / "x.jsonl")])
        err = capsys.readouterr().err
        assert rc in (1, 2) and "Traceback" not in err and len(err.strip().splitlines()) == 1, err


def test_out_onto_the_users_file_names_it_an_input(tmp_path, capsys):
    db = _db(tmp_path)
    users = tmp_path / "users.json"
    users.write_text('{"ann1": 1}')
    rc = main(["annotations", "export", "--db", str(db), "--format", "labelstudio", "--users", str(users),
               "--out", str(users)])
    err = capsys.readouterr().err.strip().splitlines()
    assert rc in (1, 2) and len(err) == 1 and "the --users file, an input" in err[0], err
    assert users.read_text() == '{"ann1": 1}'
