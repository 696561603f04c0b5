"""The annotation store: payloads, undo, derived state, JSONL and Label Studio exchange, studies,
migrations, bad files, and — with real processes — concurrent writers and durability under SIGKILL."""

from __future__ import annotations

import itertools
import json
import os
import signal
import sqlite3
import subprocess
import sys
import time
from pathlib import Path

import pytest

from scorer.cli import main as cli_main
from scorer.errors import DataError, UserError
from scorer.store import Store, import_jsonl, write_jsonl
from scorer.store.schema import APPLICATION_ID, MIGRATIONS, SCHEMA_VERSION
from tests.builders.benchmarks import MINI_TASK
from tests.paths import REPO

RUN = "gpt-5.4-mini/semantic_rag_multimodal"
PAYLOADS = [  # (kind, payload, mode, run_key): one valid event of every kind and shape
    ("label", {"x": ["X3"], "y": ["Y2"]}, None, None),
    ("label", {"x": ["X1", "X2"], "y": ["Y1", "Y3"]}, "mcq", None),
    ("verdict", {"verdict": "accept"}, "open", RUN),
    ("verdict", {"verdict": "reject"}, "open", RUN),
    ("verdict", {"verdict": "borderline"}, "open", RUN),
    ("oracle", {"choice": "B", "rotation": 0}, "mcq", None),
    ("oracle", {"choice": "D", "rotation": 3, "seconds": 12.5}, "mcq", None),
    ("oracle", {"answer": "Green", "seconds": 4}, "open", None),
    ("note", {"text": "the gold answer reads oddly — «quoted» \u2603"}, None, None),
    ("flag", {"flag": "wrong_gold"}, None, None),
    ("flag", {"flag": "bad_media", "text": "image is black"}, "mcq", RUN),
]


def env() -> dict:
    e = dict(os.environ)
    e["PYTHONPATH"] = str(REPO) + os.pathsep + e.get("PYTHONPATH", "")
    return e


@pytest.fixture
def db(tmp_path: Path):
    with Store(tmp_path / "a.db") as store:
        yield store


# -- payloads ------------------------------------------------------------------------------------------
@pytest.mark.parametrize("kind,payload,mode,run_key", PAYLOADS)
def test_every_payload_kind_round_trips(tmp_path: Path, kind, payload, mode, run_key) -> None:
    path = tmp_path / "a.db"
    with Store(path) as s:
        ev = s.add(kind, "ann1", "T:1", payload, mode=mode, run_key=run_key, study="s1")
    with Store(path) as s:  # a fresh connection reads what the first committed
        (back,) = list(s.events())
        assert back == ev
        assert dict(back.payload) == payload
        assert back.record() == {"ts": ev.ts, "annotator": "ann1", "kind": kind, "item_id": "T:1",
                                 "mode": mode, "run": run_key, "study": "s1", "payload": payload}
        (row,) = s.current(kind, study="s1")
        assert {k: row[k] for k in payload} == payload
        assert s.current(kind, study="other") == []


@pytest.mark.parametrize("kind,payload,mode,run_key,message", [
    ("label", {"x": ["X5"], "y": ["Y1"]}, None, None, "'x' has 'X5'"),
    ("label", {"x": [], "y": ["Y1"]}, None, None, "non-empty list"),
    ("label", {"x": ["X1"]}, None, None, "missing key 'y'"),
    ("label", {"x": ["X1"], "y": ["Y1"], "z": 1}, None, None, "unknown key 'z'"),
    ("verdict", {"verdict": "yes"}, "open", RUN, "accept, reject, borderline"),
    ("verdict", {"verdict": "accept"}, "open", None, "'run' are required"),
    ("oracle", {"choice": "b", "rotation": 0}, "mcq", None, "one letter"),
    ("oracle", {"choice": "B"}, "mcq", None, "missing key 'rotation'"),
    ("oracle", {"choice": "B", "rotation": -1}, "mcq", None, "'rotation' must be an integer"),
    ("oracle", {"choice": "B", "rotation": 0}, "open", None, "mode is 'open'"),
    ("oracle", {"answer": "x", "seconds": "5"}, "open", None, "'seconds' must be a number"),
    # a place the item cannot have, a time no sitting takes (import and export had let them through)
    ("oracle", {"choice": "B", "rotation": 99999999999999999999}, "mcq", None, "from 0 to 63, got 9999999999"),
    ("oracle", {"choice": "B", "rotation": 64}, "mcq", None, "from 0 to 63, got 64"),
    ("oracle", {"answer": "x", "seconds": 1e308}, "open", None, "'seconds' must be a number from 0 to 31,622,400"),
    ("oracle", {"answer": "x", "seconds": -0.5}, "open", None, "'seconds' must be a number from 0"),
    ("oracle", {"guess": "x"}, "open", None, "expected"),
    ("note", {"text": "   "}, None, None, "non-empty string"),
    ("flag", {"flag": "boring"}, None, None, "ambiguous|leakage".replace("|", ", ")),
    ("verdict", ["accept"], "open", RUN, "must be a JSON object"),
    ("comment", {"text": "x"}, None, None, "unknown event kind"),
    ("undo", {"target": "0" * 64}, None, None, "Store.undo"),
])
def test_invalid_payloads_are_refused(db: Store, kind, payload, mode, run_key, message) -> None:
    with pytest.raises(UserError) as err:
        db.add(kind, "ann1", "T:1", payload, mode=mode, run_key=run_key)
    assert message in str(err.value)
    assert db.count() == 0


@pytest.mark.parametrize("annotator,item_id,mode", [("", "T:1", None), ("a\x1b[2J", "T:1", None),
                                                    ("ann", "", None), ("ann", "T:1", "MCQ")])
def test_bad_identity_fields_are_refused(db: Store, annotator, item_id, mode) -> None:
    with pytest.raises(UserError):
        db.add("note", annotator, item_id, {"text": "x"}, mode=mode)


def test_no_secret_is_ever_written(tmp_path: Path) -> None:
    path = tmp_path / "a.db"
    key = "sk-proj-" + "A1b2C3d4" * 4
    with Store(path) as s:
        for payload in ({"text": "x", "api_key": key}, {"text": "x", "Authorization": "Bearer abc"},
                        {"flag": "other", "token": "t"}, {"text": f"my key is {key}"}):
            kind = "flag" if "flag" in payload else "note"
            with pytest.raises(UserError, match="secret|API key"):
                s.add(kind, "ann1", "T:1", payload)
        with pytest.raises(UserError, match="secret"):
            s.create_study("s", "labels", 1, {"openai_api_key": key}, [("T:1", None, None, None)])
        s.note("ann1", "T:1", "a harmless note")
    blob = b"".join(p.read_bytes() for p in tmp_path.iterdir())
    assert key.encode() not in blob and b"harmless" in blob


def test_events_are_append_only_in_the_database_itself(db: Store) -> None:
    db.note("ann1", "T:1", "first")
    raw = sqlite3.connect(db.path)
    for sql in ("UPDATE events SET annotator = 'x'", "DELETE FROM events"):
        with pytest.raises(sqlite3.IntegrityError, match="append-only"):
            raw.execute(sql)
    raw.close()


# -- undo and derived state ----------------------------------------------------------------------------
def test_undo_cancels_and_earlier_state_shows_again(db: Store) -> None:
    first = db.verdict("ann1", "T:1", "open", RUN, "accept")
    second = db.verdict("ann1", "T:1", "open", RUN, "reject")
    assert [r["verdict"] for r in db.verdicts()] == ["reject"]
    assert db.last_act("ann1") == second
    undo = db.undo("ann1", second.id)
    assert undo.kind == "undo" and undo.target == second.uid and undo.run_key == RUN
    assert [r["verdict"] for r in db.verdicts()] == ["accept"]
    assert db.last_act("ann1") == first
    with pytest.raises(UserError, match="already undone"):
        db.undo("ann1", second.id)
    with pytest.raises(UserError, match="itself an undo"):
        db.undo("ann1", undo.id)
    db.undo("ann1", first.uid)  # by uid too
    assert db.verdicts() == [] and db.last_act("ann1") is None
    assert db.count() == 4  # nothing deleted: two acts, two undos
    assert [e.kind for e in db.events(live_only=True)] == []


def test_derived_state_is_latest_per_annotator_item_mode_run(db: Store) -> None:
    # Timestamps out of insertion order: "latest" is by time, not by row id.
    db.verdict("ann1", "T:1", "open", RUN, "reject", ts="2026-01-01T10:00:05Z")
    db.verdict("ann1", "T:1", "open", RUN, "accept", ts="2026-01-01T10:00:01Z")
    db.verdict("ann2", "T:1", "open", RUN, "borderline", ts="2026-01-01T11:00:00+01:00")  # = 10:00 UTC
    db.verdict("ann2", "T:1", "open", RUN, "accept", ts="2026-01-01T09:59:59Z")
    db.verdict("ann1", "T:1", "open", "b/other", "accept", ts="2026-01-01T09:00:00Z")
    db.verdict("ann1", "T:2", "open", RUN, "accept", study="judge", ts="2026-01-01T09:00:00Z")
    got = {(r["annotator"], r["item_id"], r["run_key"]): r["verdict"] for r in db.verdicts()}
    assert got == {("ann1", "T:1", RUN): "reject", ("ann2", "T:1", RUN): "borderline",
                   ("ann1", "T:1", "b/other"): "accept", ("ann1", "T:2", RUN): "accept"}
    assert [r["item_id"] for r in db.verdicts(study="judge")] == ["T:2"]
    assert db.current("verdict", annotator="ann2")[0]["ts"] == "2026-01-01T10:00:00Z"
    db.label("ann1", "T:1", ["X1"], ["Y1"], mode="mcq")
    db.label("ann1", "T:1", ["X2"], ["Y1"], mode="open")  # another form: its own state
    assert sorted(r["x"][0] for r in db.labels()) == ["X1", "X2"]
    df = db.frame("verdict")
    assert len(df) == 4 and set(df["verdict"]) == {"reject", "borderline", "accept"}
    assert list(db.frame("oracle").columns)[-4:] == ["choice", "rotation", "answer", "seconds"]


def test_notes_and_flags_accumulate(db: Store) -> None:
    db.note("ann1", "T:1", "one")
    two = db.note("ann1", "T:1", "two")
    db.flag("ann1", "T:1", "ambiguous")
    db.flag("ann1", "T:1", "leakage", "answer in question")
    db.undo("ann1", two.id)
    assert [r["text"] for r in db.current("note")] == ["one"]
    assert [r["flag"] for r in db.current("flag")] == ["ambiguous", "leakage"]


def test_identical_acts_in_one_microsecond_are_both_kept(db: Store) -> None:
    a = db.note("ann1", "T:1", "same", ts="2026-01-01T00:00:00Z")
    b = db.note("ann1", "T:1", "same", ts="2026-01-01T00:00:00Z")
    assert a.uid != b.uid and db.count() == 2 and b.ts == "2026-01-01T00:00:00.000001Z"


# -- JSONL and Label Studio exchange -------------------------------------------------------------------
def fill(s: Store) -> None:
    for i, (kind, payload, mode, run_key) in enumerate(PAYLOADS):
        s.add(kind, f"ann{i % 3}", f"{MINI_TASK}:{1 + i % 2}", payload, mode=mode, run_key=run_key,
              study="s1" if i % 2 else None)
    s.undo("ann0", s.last_act("ann0").id)
    s.verdict("ann2", f"{MINI_TASK}:1", "open", RUN, "reject", study="s1")


def derived(s: Store) -> dict:
    strip = lambda rows: [{k: v for k, v in r.items() if k != "event_id"} for r in rows]
    return {k: strip(s.current(k)) for k in ("label", "verdict", "oracle", "note", "flag")}


def test_jsonl_import_is_idempotent_and_export_import_round_trips(tmp_path: Path) -> None:
    src, out = tmp_path / "src.db", tmp_path / "events.jsonl"
    with Store(src) as s:
        fill(s)
        with out.open("w") as fh:
            n = write_jsonl(s, fh)
        want = derived(s)
    lines = out.read_text().splitlines()
    assert n == len(lines) == len(PAYLOADS) + 2
    assert all(list(json.loads(x)) == ["ts", "annotator", "kind", "item_id", "mode", "run", "study",
                                       "payload"] for x in lines)
    with Store(tmp_path / "fresh.db") as f:
        first = import_jsonl(f, out)
        again = import_jsonl(f, out)
        assert (first.added, first.skipped) == (n, 0)
        assert (again.added, again.skipped) == (0, n)
        assert f.count() == n
        assert derived(f) == want
        with (tmp_path / "again.jsonl").open("w") as fh:
            write_jsonl(f, fh)
    assert (tmp_path / "again.jsonl").read_text() == out.read_text()
    # Merging: importing into the source database adds nothing either.
    with Store(src) as s:
        assert import_jsonl(s, out).added == 0


def test_import_of_a_bad_line_names_file_and_line_and_adds_nothing(tmp_path: Path, db: Store) -> None:
    good = {"ts": "2026-11-29T19:30:00Z", "annotator": "ann1", "kind": "verdict", "item_id": "H:12",
            "mode": "open", "run": RUN, "study": "judge-72", "payload": {"verdict": "accept"}}
    for bad, message in [("{not json", "invalid JSON"), ("[1, 2]", "one JSON object"),
                         (json.dumps({**good, "payload": {"verdict": "maybe"}}), "accept, reject"),
                         (json.dumps({**good, "extra": 1}), "unknown field 'extra'"),
                         (json.dumps({k: v for k, v in good.items() if k != "ts"}), "missing field 'ts'"),
                         (json.dumps({**good, "ts": "yesterday"}), "ISO 8601"),
                         (json.dumps({**good, "kind": "undo", "payload": {"target": "a" * 64}}),
                          "neither in the database")]:
        f = tmp_path / "bad.jsonl"
        f.write_text(json.dumps(good) + "\n\n" + bad + "\n", encoding="utf-8")
        with pytest.raises(UserError) as err:
            import_jsonl(db, f)
        assert str(err.value).startswith(f"{f}:3: ") and message in str(err.value)
        assert db.count() == 0
    f.write_bytes(b'{"ts": "\xff"}\n')
    with pytest.raises(DataError, match="UTF-8"):
        import_jsonl(db, f)


# -- studies -------------------------------------------------------------------------------------------
ENTRIES = [(f"T:{i}", "open", RUN if i % 2 else "b/other", f"X{1 + i % 4}_Y1") for i in range(1, 25)]


def test_study_queue_is_seeded_per_annotator_and_recorded(tmp_path: Path) -> None:
    orders = {}
    for name in ("one.db", "two.db"):
        with Store(tmp_path / name) as s:
            st = s.create_study("judge", "agreement", 42, {"per_cell": 3, "methods": ["a", "b"]}, ENTRIES)
            assert (st.n_items, st.params["per_cell"]) == (24, 3)
            orders[name] = {a: [(q.item_id, q.run_key, q.blind_id) for q in s.annotator_queue("judge", a)]
                            for a in ("ann1", "ann2")}
    assert orders["one.db"] == orders["two.db"]  # same seed, same annotator → same order
    a1, a2 = orders["one.db"]["ann1"], orders["one.db"]["ann2"]
    assert a1 != a2 and sorted(a1) == sorted(a2)  # different order, same entries, same blind ids
    assert [x[:2] for x in a1] != [(e[0], e[2]) for e in ENTRIES]  # shuffled
    with Store(tmp_path / "one.db") as s:
        with pytest.raises(UserError, match="already exists"):
            s.create_study("judge", "agreement", 42, {}, ENTRIES)
        reveal = s.reveal("judge", "ann1")
        assert [(r["item_id"], r["run_key"], r["blind_id"]) for r in reveal] == a1
        assert all(RUN not in r[2] and "other" not in r[2] for r in a1)
        queue = s.annotator_queue("judge", "ann1")
        for q in queue[:5]:
            s.verdict("ann1", q.item_id, q.mode, q.run_key, "accept", study="judge")
        s.verdict("ann1", queue[6].item_id, "open", queue[6].run_key, "accept")  # outside the study
        last = s.verdict("ann2", a2[0][0], "open", a2[0][1], "reject", study="judge")
        s.undo("ann2", last.id)
        assert s.progress("judge") == [{"annotator": "ann1", "done": 5, "total": 24},
                                       {"annotator": "ann2", "done": 0, "total": 24}]
        assert [q.done for q in s.annotator_queue("judge", "ann1")] == [True] * 5 + [False] * 19
        assert [x.name for x in s.studies()] == ["judge"]
    with Store(tmp_path / "three.db") as s:  # another seed → another order
        s.create_study("judge", "agreement", 43, {}, ENTRIES)
        assert [(q.item_id, q.run_key) for q in s.annotator_queue("judge", "ann1")] != [x[:2] for x in a1]


@pytest.mark.parametrize("kind,entries,message", [
    ("agreement", [("T:1", "open", None, None)], "needs a mode and a run"),
    ("oracle", [("T:1", None, None, None)], "needs a mode"),
    ("labels", [("T:1", None, None, None), ("T:1", None, None, None)], "listed twice"),
    ("labels", [], "no entries"),
    ("survey", [("T:1", None, None, None)], "study kind"),
])
def test_bad_studies_are_refused(db: Store, kind, entries, message) -> None:
    with pytest.raises(UserError, match=message):
        db.create_study("s", kind, 1, {}, entries)
    with pytest.raises(UserError, match="no study named 's'"):
        db.annotator_queue("s", "ann1")


# -- schema versions and bad files ---------------------------------------------------------------------
def test_migrates_from_version_0_and_1(tmp_path: Path) -> None:
    empty = tmp_path / "empty.db"
    empty.write_bytes(b"")  # version 0: an empty file is a new database
    with Store(empty) as s:
        assert s.schema_version == SCHEMA_VERSION
    v1 = tmp_path / "v1.db"
    raw = sqlite3.connect(v1, isolation_level=None)
    raw.execute("BEGIN")
    MIGRATIONS[0](raw)
    raw.execute("PRAGMA user_version = 1")
    raw.execute("INSERT INTO events (uid, ts, t_us, annotator, kind, item_id, mode, run_key, study, payload) "
                "VALUES (?, '2026-01-01T00:00:00Z', 1767225600000000, 'ann1', 'verdict', 'T:1', 'open', ?, "
                "NULL, '{\"verdict\": \"accept\"}')", ("c" * 64, RUN))
    raw.execute("COMMIT")
    assert "studies" not in {r[0] for r in raw.execute("SELECT name FROM sqlite_master")}
    raw.close()
    with Store(v1) as s:
        assert s.schema_version == SCHEMA_VERSION
        assert [r["verdict"] for r in s.verdicts()] == ["accept"]
        s.create_study("s", "labels", 1, {}, [("T:1", None, None, None)])
        assert len(s.annotator_queue("s", "ann1")) == 1


def test_newer_schema_is_refused(tmp_path: Path) -> None:
    path = tmp_path / "new.db"
    Store(path).close()
    raw = sqlite3.connect(path)
    raw.execute(f"PRAGMA user_version = {SCHEMA_VERSION + 1}")
    raw.close()
    with pytest.raises(UserError, match=f"{path}: .*newer than this memscope"):
        Store(path)


def test_bad_files_are_one_line_errors_and_left_untouched(tmp_path: Path) -> None:
    noise = tmp_path / "noise.db"
    noise.write_bytes(os.urandom(4096))
    damaged = tmp_path / "damaged.db"
    damaged.write_bytes(b"SQLite format 3\x00" + os.urandom(4080))
    foreign = tmp_path / "foreign.db"
    raw = sqlite3.connect(foreign)
    raw.execute("CREATE TABLE users (id INTEGER, name TEXT)")
    raw.commit()
    raw.close()
    cases = [(noise, "not an SQLite file"), (damaged, "damaged or unreadable|another program"),
             (foreign, r"another program \(tables: users\)"), (tmp_path, "is a folder"),
             (tmp_path / "nope" / "a.db", "does not exist")]
    for path, message in cases:
        before = path.read_bytes() if path.is_file() else None
        with pytest.raises(UserError, match=message) as err:
            Store(path)
        assert str(err.value).startswith(str(path)) and "\n" not in str(err.value)
        if before is not None:
            assert path.read_bytes() == before and not Path(f"{path}-wal").exists()
    with pytest.raises(UserError, match="no such annotation database"):
        Store(tmp_path / "absent.db", create=False)


def test_cli_reports_bad_database_in_one_line(tmp_path: Path) -> None:
    events = tmp_path / "e.jsonl"
    events.write_text(json.dumps({"ts": "2026-11-29T19:30:00Z", "annotator": "ann1", "kind": "note",
                                  "item_id": "T:1", "payload": {"text": "x"}}) + "\n")
    bad = tmp_path / "badfile"
    bad.write_bytes(os.urandom(2048))
    foreign = tmp_path / "other.sqlite"
    raw = sqlite3.connect(foreign)
    raw.execute("CREATE TABLE moz_places (id INTEGER)")
    raw.commit()
    raw.close()
    for db_path in (bad, foreign):
        proc = subprocess.run([sys.executable, "-m", "scorer", "annotations", "import", str(events),
                               "--db", str(db_path)], check=False, capture_output=True, text=True, env=env(), timeout=60)
        assert proc.returncode != 0
        assert len(proc.stderr.strip().splitlines()) == 1, proc.stderr
        assert str(db_path) in proc.stderr and "Traceback" not in proc.stderr


def test_cli_import_and_export(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    with Store(tmp_path / "src.db") as s:
        fill(s)
    out = tmp_path / "out.jsonl"
    assert cli_main(["annotations", "export", "--db", str(tmp_path / "src.db"), "--out", str(out)]) == 0
    assert "wrote 13 event(s)" in capsys.readouterr().out
    dst = tmp_path / "dst.db"
    assert cli_main(["annotations", "import", str(out), "--db", str(dst)]) == 0
    assert "13 added, 0 skipped" in capsys.readouterr().out
    assert cli_main(["annotations", "import", str(out), "--db", str(dst)]) == 0
    assert "0 added, 13 skipped" in capsys.readouterr().out
    assert cli_main(["annotations", "export", "--db", str(dst), "--study", "s1"]) == 0
    captured = capsys.readouterr()
    assert all(json.loads(x)["study"] == "s1" for x in captured.out.splitlines())
    assert "event(s)" in captured.err
    ls = tmp_path / "ls.json"
    assert cli_main(["annotations", "export", "--db", str(dst), "--format", "labelstudio", "--out", str(ls)]) == 0
    assert "task(s)" in capsys.readouterr().out and isinstance(json.loads(ls.read_text()), list)
    assert cli_main(["annotations", "export", "--db", str(tmp_path / "none.db")]) == 2
    assert "no such annotation database" in capsys.readouterr().err
    assert not (tmp_path / "none.db").exists()


# -- real processes: concurrency and durability --------------------------------------------------------
WRITER = """
import sys, time
from pathlib import Path
from scorer.store import Store
db, who, n, gate = sys.argv[1], sys.argv[2], int(sys.argv[3]), Path(sys.argv[4])
(gate.parent / f"ready-{who}").touch()
while not gate.exists():
    time.sleep(0.001)
with Store(db) as s:
    for i in range(n):
        s.verdict(who, f"T:{i}", "open", "b/m", "accept", study="conc")
        time.sleep(0.002)  # an annotator's pace, so the four really take turns on any scheduler
print("done", who)
"""


def test_four_processes_write_to_one_file_at_once(tmp_path: Path) -> None:
    db_path, gate = tmp_path / "shared.db", tmp_path / "go"
    procs = [subprocess.Popen([sys.executable, "-c", WRITER, str(db_path), f"ann{k}", "500", str(gate)],
                              stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True, env=env())
             for k in range(4)]
    deadline = time.monotonic() + 60
    while len(list(tmp_path.glob("ready-*"))) < 4 and time.monotonic() < deadline:
        time.sleep(0.01)
    gate.touch()  # all four open the still-absent file at the same moment
    outs = [p.communicate(timeout=120) for p in procs]
    for p, (out, err) in zip(procs, outs):
        assert p.returncode == 0 and "locked" not in err, err
    with Store(db_path) as s:
        assert s.count() == 2000
        per = {a: len(s.current("verdict", study="conc", annotator=a)) for a in s.annotators()}
        assert per == {f"ann{k}": 500 for k in range(4)}
        order = [e.annotator for e in s.events()]
    # The writers really overlapped: the log switches between them many times.
    assert sum(a != b for a, b in itertools.pairwise(order)) >= 8  # one after another would be 3


DURABLE = """
import sys
from scorer.store import Store
with Store(sys.argv[1]) as s:
    for i in range(100000):
        ev = s.verdict("ann1", f"T:{i}", "open", "b/m", "accept")
        print(ev.id, ev.uid, flush=True)  # only after the write returned: "shown as saved"
"""


def test_every_write_reported_saved_survives_sigkill(tmp_path: Path) -> None:
    db_path = tmp_path / "kill.db"
    proc = subprocess.Popen([sys.executable, "-c", DURABLE, str(db_path)], stdout=subprocess.PIPE,
                            stderr=subprocess.PIPE, text=True, env=env())
    seen = []
    for line in proc.stdout:
        seen.append(line.split())
        if len(seen) == 300:
            proc.send_signal(signal.SIGKILL)
            break
    seen += [line.split() for line in proc.stdout if line.endswith("\n")]  # printed before the kill
    proc.wait(timeout=30)
    assert proc.returncode == -signal.SIGKILL
    with Store(db_path) as s:
        for id_, uid in seen:
            assert s.event(int(id_)).uid == uid
        assert s.count() >= len(seen) >= 300


def test_write_latency_is_measured(db: Store) -> None:
    for i in range(20):
        db.note("ann1", f"T:{i}", "x")
    assert len(db.write_seconds) == 20 and all(t > 0 for t in db.write_seconds)
    raw = sqlite3.connect(db.path)
    assert raw.execute("PRAGMA journal_mode").fetchone()[0] == "wal"
    assert raw.execute("PRAGMA application_id").fetchone()[0] == APPLICATION_ID
    raw.close()
    assert db._conn.execute("PRAGMA synchronous").fetchone()[0] == 2  # FULL
    assert db._conn.execute("PRAGMA busy_timeout").fetchone()[0] == 30000
