"""Label Studio export and import without a server (the server round trip is test_labelstudio_server):
the task forms, the rotation's options, labels once per item, media tags and URLs, the config's
controls, the import back (idempotent, acts made or edited in Label Studio) and bad input."""

from __future__ import annotations

import copy
import json
import xml.etree.ElementTree as ET
from pathlib import Path

import pytest

from scorer.cli import main as cli_main
from scorer.errors import DataError
from scorer.load.memeye import load_benchmark
from scorer.load.runs import load_runs
from scorer.store import Store, import_jsonl
from scorer.store.labelstudio import LABEL_CONFIG, export_labelstudio
from scorer.store.labelstudio_import import import_labelstudio, parse_labelstudio

ROOT = Path(__file__).resolve().parents[3]
DEMO = ROOT / "fixtures" / "demo"


@pytest.fixture(scope="module")
def demo(tmp_path_factory: pytest.TempPathFactory):
    tmp = tmp_path_factory.mktemp("ls")
    db = tmp / "demo.db"
    with Store(db) as s:
        import_jsonl(s, DEMO / "annotations.jsonl")
    bench = load_benchmark(DEMO)
    runs = load_runs([DEMO / "runs"], benchmark=bench)
    with Store(db) as s:
        export = export_labelstudio(s, bench, runs, media_url="/data/local-files/?d=demo/",
                                    users={"ann1": "ann1@lab.org", "ann2": 7})
    return db, bench, export


def _records(db: Path) -> list[dict]:
    with Store(db, create=False) as s:
        return sorted((e.record() for e in s.events()), key=lambda r: json.dumps(r, sort_keys=True))


def _write(tmp_path: Path, tasks: list[dict], name: str = "ls.json") -> Path:
    f = tmp_path / name
    f.write_text(json.dumps(tasks), encoding="utf-8")
    return f


def test_one_task_per_form_and_the_seen_rotation(demo) -> None:
    db, bench, export = demo
    tasks = export.tasks
    demo_events = [json.loads(line) for line in (DEMO / "annotations.jsonl").read_text().splitlines()]
    verdict_keys = {(e["item_id"], e["mode"], e["run"]) for e in demo_events if e["kind"] == "verdict"}
    by_form: dict[str, list[dict]] = {}
    for t in tasks:
        by_form.setdefault(t["data"]["memscope"]["form"], []).append(t)
    # verdicts: one task per (item, mode, run), showing that run's prediction alone
    assert {(t["data"]["memscope"]["item_id"], t["data"]["memscope"]["mode"], t["data"]["memscope"]["run"])
            for t in by_form["verdict"]} == verdict_keys
    runs = load_runs([DEMO / "runs"], benchmark=bench)
    for t in by_form["verdict"]:
        m = t["data"]["memscope"]
        (pred,) = [p for r in runs if r.key == m["run"] for p in r.predictions
                   if (p.item_id, p.mode) == (m["item_id"], m["mode"])]
        assert t["data"]["prediction"] == pred.pred
        assert all(r["from_name"] == "verdict" for a in t["annotations"] for r in a["result"])
    # oracle: the options are those of the rotation the annotator saw; the gold is not shown
    rotations = set()
    for t in by_form["oracle"]:
        m = t["data"]["memscope"]
        item = bench.item(m["item_id"], "mcq")
        opts = item.rotations[m["rotation"]].options
        assert t["data"]["options"] == "\n".join(f"{k}. {v}" for k, v in opts.items())
        assert t["data"]["answer"] == ""
        for rec in m["events"].values():
            assert rec["payload"]["rotation"] == m["rotation"]
        rotations.add(m["rotation"])
    assert rotations == {0, 1, 2, 3}
    # a choice under rotation r names the option text it names under r (hand-checked on one event)
    ev = next(e for e in demo_events if e["kind"] == "oracle" and e["payload"]["rotation"] == 3)
    t = next(t for t in by_form["oracle"] if t["data"]["memscope"]["item_id"] == ev["item_id"]
             and t["data"]["memscope"]["rotation"] == 3)
    letter = ev["payload"]["choice"]
    text = bench.item(ev["item_id"], "mcq").rotations[3].options[letter]
    assert f"{letter}. {text}" in t["data"]["options"].splitlines()
    # labels once per item: one item task per item id, each annotator's label once
    item_ids = [t["data"]["memscope"]["item_id"] for t in by_form["item"]]
    assert len(item_ids) == len(set(item_ids)) == len(bench.item_ids())
    n_label_results = sum(r["from_name"] == "x" for t in tasks for a in t["annotations"] for r in a["result"])
    assert n_label_results == sum(e["kind"] == "label" for e in demo_events) == 72
    # every event is in exactly one task, by its result id
    assert sum(len(t["data"]["memscope"]["events"]) for t in tasks) == len(demo_events)
    # users mapped: an e-mail becomes {"email": ...}, an id stays an id, others are left to Label Studio
    whos = {json.dumps(a.get("completed_by")) for t in tasks for a in t["annotations"]}
    assert whos == {json.dumps({"email": "ann1@lab.org"}), "7", "null"}


def test_media_are_tags_with_urls_and_every_task_has_the_keys(demo) -> None:
    _, bench, export = demo
    kinds = set()
    for t in export.tasks:
        d = t["data"]
        assert isinstance(d["images"], list) and isinstance(d["video"], str) and isinstance(d["audio"], str)
        for m in d["media"]:
            kinds.add(m["kind"])
            assert m["url"].startswith("/data/local-files/?d=demo/")
            assert (DEMO / m["url"].split("?d=demo/", 1)[1]).is_file()
        assert d["images"] == [m["url"] for m in d["media"] if m["kind"] == "image"]
    assert kinds == {"image", "video", "audio"}
    # a task with no medium at all keeps the keys, empty (the server test imports it)
    assert any(not t["data"]["media"] and t["data"]["images"] == [] for t in export.tasks)
    assert export.media_left_out == 0
    tags = {el.tag: el for el in ET.fromstring(LABEL_CONFIG).iter()}
    assert tags["Image"].get("valueList") == "$images"
    assert tags["Video"].get("value") == "$video" and tags["Audio"].get("value") == "$audio"
    with Store(demo[0]) as s:  # without --media-url the local files are counted as left out
        bare = export_labelstudio(s, bench)
    assert bare.media_left_out > 0 and all(not t["data"]["media"] for t in bare.tasks)


def test_every_result_names_a_control_of_the_config(demo) -> None:
    controls = {el.get("name"): el for el in ET.fromstring(LABEL_CONFIG).iter() if el.get("name")}
    data_keys = {el.get("value", el.get("valueList", ""))[1:] for el in ET.fromstring(LABEL_CONFIG).iter()
                 if (el.get("value") or el.get("valueList") or "").startswith("$")}
    for t in demo[2].tasks:
        assert data_keys <= set(t["data"])
        for a in t["annotations"]:
            for r in a["result"]:
                el = controls[r["from_name"]]
                assert el.get("toName") == r["to_name"] and r["type"] == el.tag.lower()
                if r["type"] == "choices":
                    assert set(r["value"]["choices"]) <= {c.get("value") for c in el}


def test_import_back_is_exact_and_idempotent(demo, tmp_path: Path) -> None:
    db, _, export = demo
    f = _write(tmp_path, export.tasks)
    with Store(tmp_path / "fresh.db") as s:
        first = import_labelstudio(s, f)
        second = import_labelstudio(s, f)
    assert (first.lines, first.added, second.added, second.skipped) == (250, 250, 0, 250)
    assert _records(tmp_path / "fresh.db") == _records(db)


def test_acts_made_or_edited_in_label_studio(demo, tmp_path: Path) -> None:
    tasks = copy.deepcopy(demo[2].tasks)
    v = next(t for t in tasks if t["data"]["memscope"]["form"] == "verdict")
    o = next(t for t in tasks if t["data"]["memscope"]["form"] == "oracle" and t["data"]["memscope"]["rotation"] == 2)
    i = next(t for t in tasks if t["data"]["memscope"]["form"] == "item" and not t["annotations"])
    edited = v["annotations"][0]["result"][0]
    old = edited["value"]["choices"][0]
    edited["value"]["choices"] = ["borderline" if old != "borderline" else "reject"]
    v["annotations"][0].update(completed_by=7, updated_at="2026-12-01T10:00:00.123456Z")
    o["annotations"].append({"completed_by": 9, "created_at": "2026-12-01T11:00:00Z", "lead_time": 4.5,
                             "result": [{"id": "new1", "from_name": "oracle_choice", "to_name": "question",
                                         "type": "choices", "value": {"choices": ["C"]}}]})
    i["annotations"].append({"completed_by": {"id": 9, "email": "Zoe@Lab.org"}, "updated_at": "2026-12-01T12:00:00Z",
                             "result": [{"id": "a", "from_name": "x", "type": "choices", "value": {"choices": ["X2"]}},
                                        {"id": "b", "from_name": "y", "type": "choices", "value": {"choices": ["Y1"]}},
                                        {"id": "c", "from_name": "flag", "type": "choices",
                                         "value": {"choices": ["ambiguous"]}},
                                        {"id": "d", "from_name": "flag_text", "type": "textarea",
                                         "value": {"text": ["two readings"]}}]})
    i["annotations"].append({"was_cancelled": True, "completed_by": 9, "result": []})  # skipped: no act
    f = _write(tmp_path, tasks)
    with Store(tmp_path / "fresh.db") as s:
        res = import_labelstudio(s, f, users={"ann2": 7, "zoe": "zoe@lab.org"})
    new = [r for r in _records(tmp_path / "fresh.db") if r not in _records(demo[0])]
    vm, om, im = (t["data"]["memscope"] for t in (v, o, i))
    expected = [
        {"ts": "2026-12-01T10:00:00.123456Z", "annotator": "ann2", "kind": "verdict", "item_id": vm["item_id"],
         "mode": vm["mode"], "run": vm["run"], "study": None, "payload": {"verdict": edited["value"]["choices"][0]}},
        {"ts": "2026-12-01T11:00:00Z", "annotator": "labelstudio:9", "kind": "oracle", "item_id": om["item_id"],
         "mode": "mcq", "run": None, "study": None, "payload": {"choice": "C", "rotation": 2, "seconds": 4.5}},
        {"ts": "2026-12-01T12:00:00Z", "annotator": "zoe", "kind": "label", "item_id": im["item_id"],
         "mode": None, "run": None, "study": None, "payload": {"x": ["X2"], "y": ["Y1"]}},
        {"ts": "2026-12-01T12:00:00Z", "annotator": "zoe", "kind": "flag", "item_id": im["item_id"],
         "mode": None, "run": None, "study": None, "payload": {"flag": "ambiguous", "text": "two readings"}},
    ]
    key = lambda r: json.dumps(r, sort_keys=True)  # noqa: E731
    assert sorted(new, key=key) == sorted(expected, key=key)
    assert res.added == 250 - 1 + 4  # the edited verdict's original act is not in this export


@pytest.mark.parametrize(("mutate", "where", "message"), [
    (lambda ts: {"a": 1}, "", "expected a Label Studio JSON export"),
    (lambda ts: ts[:3] + ["x"], "[task 3]", "not a Label Studio task"),
    (lambda ts: [{**ts[0], "data": {"text": "hi"}}], "[task 0]", "not a task memscope exported"),
    (lambda ts: [{**ts[0], "id": 41, "annotations": [{"completed_by": 1, "updated_at": "2026-12-01T00:00:00Z",
                                                      "result": [{"id": "z", "from_name": "colour",
                                                                  "value": {"choices": ["red"]}}]}]}],
     "[task 0, id 41]", "control 'colour' is not in memscope's labeling config"),
    (lambda ts: [{**ts[0], "annotations": [{"completed_by": 1, "updated_at": "2026-12-01T00:00:00Z",
                                            "result": [{"id": "z", "from_name": "verdict",
                                                        "value": {"choices": ["maybe"]}}]}]}],
     "[task 0]", "'verdict' must be one of"),
])
def test_bad_input_is_one_line_naming_file_and_place(demo, tmp_path: Path, mutate, where, message) -> None:
    verdict_first = sorted(demo[2].tasks, key=lambda t: t["data"]["memscope"]["form"] != "verdict")
    f = _write(tmp_path, mutate(copy.deepcopy(verdict_first)))
    with pytest.raises(DataError) as err:
        parse_labelstudio(f)
    line = str(err.value)
    assert "\n" not in line and line.startswith(f"{f}:{where}") and message in line, line


def test_cli_both_ways(demo, tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    db = demo[0]
    out, cfg = tmp_path / "tasks.json", tmp_path / "config.xml"
    assert cli_main(["annotations", "export", "--db", str(db), "--format", "labelstudio", "--bench", str(DEMO),
                     "--out", str(out), "--config-out", str(cfg), "--media-url", "/data/local-files/?d=demo/"]) == 0
    assert cfg.read_text() == LABEL_CONFIG and "250 event(s)" in capsys.readouterr().out
    assert cli_main(["annotations", "export", "--db", str(db), "--format", "labelstudio", "--out", str(out)]) == 0
    assert "no --bench" in capsys.readouterr().err
    fresh = tmp_path / "fresh.db"
    assert cli_main(["annotations", "import", str(out), "--format", "labelstudio", "--db", str(fresh)]) == 0
    assert "250 added" in capsys.readouterr().out
    assert cli_main(["annotations", "import", str(out), "--format", "labelstudio", "--db", str(fresh)]) == 0
    assert "0 added, 250 skipped" in capsys.readouterr().out
    bad = tmp_path / "bad.json"
    bad.write_text("[{\"data\": ")
    assert cli_main(["annotations", "import", str(bad), "--format", "labelstudio", "--db", str(fresh)]) == 2
    err = capsys.readouterr().err.strip()
    assert err.startswith(f"memscope: {bad}:1:") and "\n" not in err and "Traceback" not in err
    users = tmp_path / "users.json"
    users.write_text('{"ann1": [1]}')
    assert cli_main(["annotations", "export", "--db", str(db), "--format", "labelstudio", "--out", str(out),
                     "--users", str(users)]) == 2
    assert f"{users}:ann1: expected a Label Studio user id or e-mail" in capsys.readouterr().err


def test_every_event_shape_round_trips_and_history_stays_out(tmp_path: Path) -> None:
    db = tmp_path / "a.db"
    run = "gpt-5.4-mini/semantic_rag_multimodal"
    with Store(db) as s:
        first = s.verdict("ann1", "T:1", "open", run, "reject", ts="2026-01-01T00:00:00Z", study="judge")
        s.verdict("ann1", "T:1", "open", run, "accept", ts="2026-01-02T00:00:00Z", study="judge")  # supersedes
        s.verdict("ann2", "T:1", "mcq", run, "borderline", ts="2026-01-02T00:00:00Z")
        s.label("ann1", "T:1", ["X4", "X1"], ["Y3"], ts="2026-01-03T00:00:00Z")
        s.add("oracle", "ann2", "T:1", {"choice": "D", "rotation": 2, "seconds": 3}, mode="mcq",
              ts="2026-01-04T00:00:00Z")
        s.add("oracle", "ann2", "T:1", {"answer": "the red one"}, mode="open", ts="2026-01-05T00:00:00Z")
        s.note("ann1", "T:1", "on this prediction", mode="open", run_key=run, ts="2026-01-06T00:00:00Z")
        s.note("ann1", "T:1", "second note", ts="2026-01-06T00:00:01Z")
        s.note("ann1", "T:1", "third note", ts="2026-01-06T00:00:02Z")
        s.flag("ann3", "T:1", "leakage", ts="2026-01-07T00:00:00Z")
        s.flag("ann3", "T:1", "other", "odd media", mode="mcq", ts="2026-01-07T00:00:01Z")
        gone = s.note("ann3", "T:2", "typo", ts="2026-01-08T00:00:00Z")
        s.undo("ann3", gone.id)
        export = export_labelstudio(s)
        live = [e.record() for e in s.events(live_only=True) if e.uid != first.uid]
    assert export.not_carried == 1  # the superseded verdict; the undone note is not live
    forms = sorted((t["data"]["memscope"]["form"], t["data"]["memscope"]["mode"], t["data"]["memscope"]["rotation"])
                   for t in export.tasks)
    assert forms == [("item", None, None), ("oracle", "mcq", 0), ("oracle", "mcq", 2), ("oracle", "open", None),
                     ("verdict", "mcq", None), ("verdict", "open", None)]
    with Store(tmp_path / "back.db") as s:
        assert import_labelstudio(s, _write(tmp_path, export.tasks)).added == len(live) == 10
        back = [e.record() for e in s.events()]
    key = lambda r: json.dumps(r, sort_keys=True)  # noqa: E731
    assert sorted(back, key=key) == sorted(live, key=key)


def test_labelstudio_options_refused_for_jsonl(demo, tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    assert cli_main(["annotations", "export", "--db", str(demo[0]), "--config-out", str(tmp_path / "c.xml")]) == 2
    assert "--config-out is for --format labelstudio" in capsys.readouterr().err
    assert not (tmp_path / "c.xml").exists()
