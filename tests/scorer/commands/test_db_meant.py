"""The database you meant (issue 16 point 7): every command that only reads annotations refuses a
--db that does not exist, in one line, and leaves no file behind; commands that write say
"created DB <path>" the first time they make one, and only then."""

from __future__ import annotations

from pathlib import Path

import pytest

from tests.paths import DEMO, RUNS
from tui.cli import main

pytestmark = pytest.mark.needs_demo


def _readers(db: Path) -> list[list[str]]:
    return [
        ["score", str(DEMO), "--runs", str(RUNS), "--db", str(db), "--sections", "oracle"],
        ["study", "list", "--db", str(db)],
        ["study", "export", "--db", str(db), "--name", "x"],
        ["annotations", "export", "--db", str(db)],
        ["annotations", "export", "--db", str(db), "--format", "labelstudio"],
        ["tui", str(DEMO), "--db", str(db), "--study", "x"],
    ]


@pytest.mark.parametrize("which", range(6))
def test_a_reader_refuses_a_missing_db_and_creates_nothing(tmp_path: Path, capsys: pytest.CaptureFixture[str],
                                                           which: int) -> None:
    db = tmp_path / "typo.db"
    argv = _readers(db)[which]
    assert main(argv) == 2, argv
    err = capsys.readouterr().err.strip().splitlines()
    assert len(err) == 1 and "no such annotation database" in err[0] and str(db) in err[0], err
    assert list(tmp_path.iterdir()) == [], f"{argv} left {list(tmp_path.iterdir())}"


def test_writers_say_created_db_the_first_time_only(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    db = tmp_path / "new.db"
    assert main(["annotations", "import", str(DEMO / "annotations.jsonl"), "--db", str(db)]) == 0
    assert f"created DB {db}" in capsys.readouterr().out
    assert main(["annotations", "import", str(DEMO / "annotations.jsonl"), "--db", str(db)]) == 0
    assert "created DB" not in capsys.readouterr().out
    db2 = tmp_path / "study.db"
    assert main(["study", "new", "--kind", "labels", "--per-cell", "1", "--name", "l", "--db", str(db2), str(DEMO)]) == 0
    assert f"created DB {db2}" in capsys.readouterr().out
    assert main(["study", "new", "--kind", "oracle", "--per-cell", "1", "--name", "o", "--db", str(db2), str(DEMO)]) == 0
    assert "created DB" not in capsys.readouterr().out
    # the readers are happy with the file that exists
    assert main(["study", "list", "--db", str(db2)]) == 0


def test_readme_study_new_usage_is_what_the_code_accepts(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    """Oracle and labels studies take no --runs; an agreement study on the demo (two backbones)
    needs --backbone, and the README says so."""
    readme = (DEMO.parents[1] / "README.md").read_text(encoding="utf-8")
    usage = [line for line in readme.splitlines() if line.startswith("memscope study new")]
    oracle_labels = next(line for line in usage if "--kind oracle|labels" in line)
    assert "--runs" not in oracle_labels
    agreement = readme[readme.index("memscope study new --kind agreement"):].split("\nmemscope ", 1)[0]
    assert "--backbone" in agreement and "--runs" in agreement
    db = tmp_path / "s.db"
    assert main(["study", "new", "--kind", "oracle", "--per-cell", "1", "--name", "o", "--db", str(db), str(DEMO),
                 "--runs", str(RUNS)]) == 2
    assert "--runs is for agreement and adjudicate studies only (this is an oracle study)" in capsys.readouterr().err
    assert main(["study", "new", "--kind", "agreement", "--per-cell", "1", "--name", "a", "--db", str(db),
                 str(DEMO), "--runs", str(RUNS)]) == 2
    assert "--backbone" in capsys.readouterr().err
    assert main(["study", "new", "--kind", "agreement", "--per-cell", "1", "--name", "a", "--db", str(db),
                 str(DEMO), "--runs", str(RUNS), "--backbone", "gpt-5.4-mini"]) == 0


def test_the_app_says_created_db_when_it_makes_one(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    """`memscope tui --db NEW` writes annotations: the file is made (and said so) before the app starts."""
    import argparse

    from tui.cli import _check_db

    db = tmp_path / "new.db"
    _check_db(argparse.Namespace(db=str(db), study=None))
    assert db.is_file() and f"created DB {db}" in capsys.readouterr().err
    _check_db(argparse.Namespace(db=str(db), study=None))
    assert "created DB" not in capsys.readouterr().err


def test_score_refuses_a_study_the_database_does_not_hold(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    """`score --study` with a misspelt name is one line naming the studies there are, not a report
    whose annotation sections all say there are no verdicts."""
    db = tmp_path / "a.db"
    assert main(["annotations", "import", str(DEMO / "annotations.jsonl"), "--db", str(db)]) == 0
    capsys.readouterr()
    base = ["score", str(DEMO), "--runs", str(RUNS), "--db", str(db), "--sections", "agreement", "--resamples", "10"]
    assert main([*base, "--study", "judge-dmeo"]) == 2
    err = capsys.readouterr().err.strip().splitlines()
    assert len(err) == 1 and "--study 'judge-dmeo'" in err[0] and "'judge-demo'" in err[0], err
    assert main([*base, "--study", "judge-demo"]) == 0
