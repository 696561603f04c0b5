"""Issue 14, class 10: a store with damaged pages but an intact header is refused, with one line,
before anything is written to it; and a failed import leaves the store as it was."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from scorer.cli import main
from scorer.errors import UserError
from scorer.store import Store, write_jsonl


def _damaged_store(tmp_path: Path) -> Path:
    path = tmp_path / "a.db"
    with Store(path) as store:
        for i in range(400):
            store.note("ann1", f"Mini_Task:{i}", f"note number {i} " + "x" * 200)
    assert not Path(f"{path}-wal").exists() or Path(f"{path}-wal").stat().st_size == 0
    data = bytearray(path.read_bytes())
    page = int.from_bytes(data[16:18], "big") or 65536
    assert len(data) > 6 * page
    # the header (page 1) stays intact; a table page in the middle of the file is overwritten
    start = 4 * page
    data[start:start + page] = b"\xa5" * page
    path.write_bytes(bytes(data))
    return path


def _events(tmp_path: Path) -> Path:
    src = tmp_path / "src.db"
    with Store(src) as store:
        store.note("ann2", "Mini_Task:1", "a new note")
        f = tmp_path / "events.jsonl"
        with open(f, "w", encoding="utf-8") as fh:
            write_jsonl(store, fh)
    return f


def test_import_into_damaged_store_is_refused(tmp_path: Path, capsys) -> None:
    events = _events(tmp_path)
    db = _damaged_store(tmp_path)
    before = db.read_bytes()
    capsys.readouterr()
    rc = main(["annotations", "import", str(events), "--db", str(db)])
    out, err = capsys.readouterr()
    lines = err.strip().splitlines()
    assert rc in (1, 2)
    assert 1 <= len(lines) <= 2 and str(db) in lines[0] and "damaged" in lines[0], lines
    assert "Traceback" not in err and "added" not in out
    assert db.read_bytes() == before


def test_store_api_refuses_damaged_store_for_writing(tmp_path: Path) -> None:
    db = _damaged_store(tmp_path)
    before = db.read_bytes()
    with pytest.raises(UserError, match="damaged"):
        Store(db)
    assert db.read_bytes() == before


def test_sound_store_opens_as_before(tmp_path: Path) -> None:
    with Store(tmp_path / "ok.db") as store:
        store.note("ann1", "Mini_Task:1", "hello")
    with Store(tmp_path / "ok.db") as store:
        assert store.count() == 1


# A failed `annotations import` leaves the database as it was: no "created DB" line and no empty
# database file when there was none, and none of the good files' events when a later file is bad.

@pytest.mark.parametrize("fmt, text", [
    ("jsonl", '{"bad": 1}\n'),
    ("labelstudio", json.dumps({"not": "a list of tasks"})),
])
def test_a_bad_file_makes_no_database(tmp_path: Path, capsys, fmt: str, text: str) -> None:
    bad = tmp_path / "bad.json"
    bad.write_text(text, encoding="utf-8")
    db = tmp_path / "new.db"
    rc = main(["annotations", "import", str(bad), "--db", str(db), "--format", fmt])
    out, err = capsys.readouterr()
    assert rc == 2 and "created DB" not in out
    (line,) = err.strip().splitlines()
    assert line.startswith(f"memscope: {bad}")
    assert list(tmp_path.glob("new.db*")) == []


def test_a_bad_later_file_adds_nothing_from_the_earlier_ones(tmp_path: Path, capsys) -> None:
    good = _events(tmp_path)
    bad = tmp_path / "bad.jsonl"
    bad.write_text(good.read_text(encoding="utf-8") + "not json\n", encoding="utf-8")
    db = tmp_path / "a.db"
    with Store(db) as store:
        store.note("ann1", "Mini_Task:2", "already here")
    rc = main(["annotations", "import", str(good), str(bad), "--db", str(db)])
    out, err = capsys.readouterr()
    assert rc == 2 and f"{bad}:2:" in err and "added" not in out
    with Store(db) as store:
        assert store.count() == 1
    assert main(["annotations", "import", str(good), "--db", str(db)]) == 0  # the good file alone: imported
    with Store(db) as store:
        assert store.count() == 2
