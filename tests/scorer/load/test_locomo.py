"""LoCoMo importer: a hand-written LoCoMo-shaped sample with exact expected output, the CLI's errors,
and the real locomo10.json end to end (skipped when ../shared/peer-data is absent)."""

from __future__ import annotations

import base64
import io
import json
import re
import time
from pathlib import Path

import pytest
from PIL import Image

from scorer.cli import main
from scorer.load.locomo import ABSTAIN_ANSWER, REPORT_NAME, convert, import_locomo
from scorer.load.locomo_evidence import EvidenceResolver
from scorer.load.memeye import load_benchmark
from scorer.load.validate import ERROR, validate
from tests.paths import LOCOMO


def tiny_png() -> bytes:
    buf = io.BytesIO()
    Image.new("RGB", (2, 2), "red").save(buf, format="PNG")
    return buf.getvalue()


def sample() -> list[dict]:
    png64 = base64.b64encode(tiny_png()).decode()
    conv: dict = {"speaker_a": "Ann", "speaker_b": "Bob"}
    # Keys in lexical order on purpose: session_10 and session_11 must still come after session_9.
    for n in sorted(range(1, 12), key=str):
        conv[f"session_{n}_date_time"] = f"1:00 pm on {n} May, 2023"
        conv[f"session_{n}"] = [{"speaker": "Ann", "dia_id": f"D{n}:1", "text": f"turn {n}"}]
    conv["session_12_date_time"] = "1:00 pm on 12 May, 2023"  # a date with no turns, as in conv-26
    conv["session_1"] = [
        {"speaker": "Ann", "dia_id": "D1:1", "text": "I adopted a cat."},
        {"speaker": "Bob", "dia_id": "D1:2", "text": "Nice!", "img_url": ["https://example.org/cat.jpg"],
         "blip_caption": "a photo of a cat", "query": "cat"},
    ]
    conv["session_2"] = [{"speaker": "Bob", "dia_id": "D2:1", "text": "Look.", "blip_caption": "a photo of a dog",
                          "re-download": True}]
    conv["session_5"] = [{"speaker": "Ann", "dia_id": "D5:1", "text": "Mine.",
                          "img_url": [f"data:image/png;base64,{png64}"], "blip_caption": "a red square"}]
    qa = [
        {"question": "What pet did Ann adopt?", "answer": "a cat", "evidence": ["D1:1"], "category": 4},
        {"question": "Q2", "answer": "x", "evidence": ["D1:1; D11:1", "d2:1"], "category": 1},
        {"question": "Q3", "answer": 2022, "evidence": ["D10:01"], "category": 2},
        {"question": "Q4", "answer": "y", "evidence": ["D3:9", "D:4:1", "D"], "category": 3},
        {"question": "What pet did Bob adopt?", "adversarial_answer": "a cat", "evidence": ["D1:1"], "category": 5},
        {"question": "Q6", "answer": "z", "evidence": [], "category": 3},
        {"question": "Q7", "answer": "No", "adversarial_answer": "Yes", "evidence": ["D1:2", "D1:2"], "category": 5},
    ]
    return [{"sample_id": "conv 7/x", "conversation": conv, "qa": qa,
             "session_summary": {"session_1_summary": "Ann adopted a cat."}}]


def write_json(path: Path, data) -> Path:
    path.write_text(json.dumps(data), encoding="utf-8")
    return path


TASK = "locomo_conv_7_x"

EXPECTED_ITEMS = [
    {"id": f"{TASK}:1", "question": "What pet did Ann adopt?", "answer": "a cat", "answerable": True,
     "category": 4, "session_id": ["D1"], "clue": ["D1:1"], "evidence": ["D1:1"]},
    {"id": f"{TASK}:2", "question": "Q2", "answer": "x", "answerable": True, "category": 1,
     "session_id": ["D1", "D2", "D11"], "clue": ["D1:1", "D11:1", "D2:1"], "evidence": ["D1:1; D11:1", "d2:1"]},
    {"id": f"{TASK}:3", "question": "Q3", "answer": "2022", "answerable": True, "category": 2, "answer_raw": 2022,
     "session_id": ["D10"], "clue": ["D10:1"], "evidence": ["D10:01"]},
    {"id": f"{TASK}:4", "question": "Q4", "answer": "y", "answerable": True, "category": 3,
     "session_id": ["D4"], "clue": ["D4:1"], "evidence": ["D3:9", "D:4:1", "D"],
     "unresolved_evidence": [{"raw": "D3:9", "reason": "no round D3:9 (session D3 has 1 turn)"},
                             {"raw": "D", "reason": "not a dialog id"}]},
    {"id": f"{TASK}:5", "question": "What pet did Bob adopt?", "answer": ABSTAIN_ANSWER, "answerable": False,
     "category": 5, "adversarial_answer": "a cat", "session_id": ["D1"], "clue": ["D1:1"], "evidence": ["D1:1"]},
    {"id": f"{TASK}:6", "question": "Q6", "answer": "z", "answerable": True, "category": 3,
     "session_id": [], "clue": [], "evidence": []},
    {"id": f"{TASK}:7", "question": "Q7", "answer": "No", "answerable": False, "category": 5,
     "adversarial_answer": "Yes", "session_id": ["D1"], "clue": ["D1:2"], "evidence": ["D1:2", "D1:2"]},
]


def expected_sessions() -> list[dict]:
    sessions = []
    for n in range(1, 12):
        s = {"session_id": f"D{n}", "date": f"1:00 pm on {n} May, 2023"}
        rounds = [{"round": f"D{n}:1", "speaker": "Ann", "user": f"turn {n}", "assistant": ""}]
        if n == 1:
            s["summary"] = "Ann adopted a cat."
            rounds = [
                {"round": "D1:1", "speaker": "Ann", "user": "I adopted a cat.", "assistant": ""},
                {"round": "D1:2", "speaker": "Bob", "user": "", "assistant": "Nice!",
                 "input_image": ["https://example.org/cat.jpg"], "image_caption": ["a photo of a cat"],
                 "query": "cat"},
            ]
        elif n == 2:
            rounds = [{"round": "D2:1", "speaker": "Bob", "user": "", "assistant": "Look.",
                       "blip_caption": "a photo of a dog", "re-download": True}]
        elif n == 5:
            rounds = [{"round": "D5:1", "speaker": "Ann", "user": "Mine.", "assistant": "",
                       "input_image": [f"image/{TASK}/D5_1.png"], "image_caption": ["a red square"]}]
        s["dialogues"] = rounds
        sessions.append(s)
    return sessions


def test_sample_converts_exactly():
    conv = convert(sample(), "sample.json")
    assert list(conv.dialogs) == [TASK]
    dialog = conv.dialogs[TASK]
    assert dialog["character_profile"] == {
        "source": "LoCoMo", "sample_id": "conv 7/x", "speaker_a": "Ann", "speaker_b": "Bob",
        "roles": {"user": "Ann", "assistant": "Bob"},
        "conversation_extra": {"session_12_date_time": "1:00 pm on 12 May, 2023"},
    }
    assert dialog["multi_session_dialogues"] == expected_sessions()
    assert dialog["human-annotated QAs"] == EXPECTED_ITEMS
    assert conv.images == {f"image/{TASK}/D5_1.png": tiny_png()}
    r = conv.report
    assert r["counts"] == {"conversations": 1, "sessions": 11, "date_only_sessions": 1, "rounds": 12, "images": 2,
                           "remote_images": 1, "embedded_images": 1, "captions_without_image": 1,
                           "qa_items": 7, "unanswerable": 2}
    assert r["categories"] == {"1": 1, "2": 1, "3": 2, "4": 1, "5": 2}
    assert r["evidence"] == {"strings": 10, "exact": 4, "normalised_strings": 4, "normalised_ids": 5,
                             "unresolved": 2, "duplicates_removed": 1, "items_without_clue": 1}
    assert r["unresolved_evidence"] == [
        {"sample": "conv 7/x", "item": f"{TASK}:4", "raw": "D3:9", "reason": "no round D3:9 (session D3 has 1 turn)"},
        {"sample": "conv 7/x", "item": f"{TASK}:4", "raw": "D", "reason": "not a dialog id"},
    ]
    assert [(n["item"], n["raw"], n["ids"], n["reason"]) for n in r["normalised_evidence"]] == [
        (f"{TASK}:2", "D1:1; D11:1", ["D1:1", "D11:1"], "several ids in one string"),
        (f"{TASK}:2", "d2:1", ["D2:1"], "lower-case"),
        (f"{TASK}:3", "D10:01", ["D10:1"], "zero-padded"),
        (f"{TASK}:4", "D:4:1", ["D4:1"], "stray characters"),
        (f"{TASK}:7", "D1:2", ["D1:2"], "duplicate of an earlier evidence id; kept once"),
    ]
    kinds = sorted((f["kind"], f["where"]) for f in r["findings"])
    assert kinds == [("adversarial_with_answer", f"{TASK}:7"), ("date_only_sessions", "conversation"),
                     ("embedded_image", "round D5:1"), ("no_evidence", f"{TASK}:6")]


def test_written_benchmark_loads_validates_and_is_deterministic(tmp_path):
    src = write_json(tmp_path / "sample.json", sample())
    import_locomo(src, tmp_path / "a")
    import_locomo(src, tmp_path / "b")
    files_a = sorted(p.relative_to(tmp_path / "a") for p in (tmp_path / "a").rglob("*") if p.is_file())
    assert [str(p) for p in files_a] == [REPORT_NAME, f"dialog/{TASK}_Open.json", f"image/{TASK}/D5_1.png"]
    for rel in files_a:
        assert (tmp_path / "a" / rel).read_bytes() == (tmp_path / "b" / rel).read_bytes()
    raw = (tmp_path / "a" / "dialog" / f"{TASK}_Open.json").read_text(encoding="utf-8")
    assert json.loads(raw)["human-annotated QAs"] == EXPECTED_ITEMS

    bench = load_benchmark(tmp_path / "a")
    task = bench.task(TASK)
    assert [s.session_id for s in task.sessions] == [f"D{n}" for n in range(1, 12)]
    assert [r.round_id for r in task.rounds][:3] == ["D1:1", "D1:2", "D2:1"]
    assert [r.order for r in task.rounds] == list(range(12))
    assert task.sessions[9].date == "1:00 pm on 10 May, 2023"
    cat = task.round("D1:2").images[0]
    assert (cat.url, cat.text) == ("https://example.org/cat.jpg", "a photo of a cat")
    embedded = task.round("D5:1").images[0]
    assert embedded.path == tmp_path / "a" / "image" / TASK / "D5_1.png" and embedded.problem is None
    items = {i.item_id: i for i in bench.items("open")}
    assert len(items) == 7 and not list(bench.items("mcq"))
    assert items[f"{TASK}:2"].clue_rounds == ("D1:1", "D11:1", "D2:1")
    assert [r.round_id for r in task.clue_chain(items[f"{TASK}:2"])] == ["D1:1", "D2:1", "D11:1"]
    assert [i.answerable for i in items.values()] == [True, True, True, True, False, True, False]
    assert items[f"{TASK}:5"].raw["adversarial_answer"] == "a cat"
    assert not items[f"{TASK}:1"].x and not items[f"{TASK}:1"].y
    assert [f for f in validate(bench) if f.severity == ERROR] == []


def test_evidence_resolver_edge_cases():
    res = EvidenceResolver({"D1:1": "D1", "D1:2": "D1", "D2:1": "D2"}, ["D1", "D2"])
    r = res.resolve(["D2:1,D1:2", "  D1:1 ", 7, ["D1 : 2"], "D9:1", "", "D1:1-D1:2"])
    assert r.clue == ("D2:1", "D1:2", "D1:1")
    assert [(n.raw, n.reason) for n in r.unresolved] == [
        ("7", "not a string (int)"), ("D9:1", "no session D9 in this conversation"),
        ("", "empty evidence string"), ("D1:1-D1:2", "not a dialog id")]
    assert res.sessions_of(r.clue) == ["D1", "D2"]
    assert res.resolve("D1:1").clue == ("D1:1",)  # a bare string, not a list
    assert res.resolve(None).clue == ()


def run_cli(capsys, *argv: str) -> tuple[int, str, str]:
    code = main(list(argv))
    out, err = capsys.readouterr()
    return code, out, err


@pytest.mark.parametrize("content, message", [
    (None, "no such file"),
    ("{", "invalid JSON"),
    ('{"a": 1}', "expected a list of LoCoMo samples, found a JSON object"),
    ("[]", "the file holds no samples"),
    ('[{"sample_id": "x"}]', "[0].conversation: missing, or not an object"),
    ('[{"conversation": {"session_1": "oops"}}]', "[0].conversation.session_1: must be a list of turns"),
    ('[{"conversation": {"session_1": [3]}}]', "[0].conversation.session_1[0]: a turn must be an object"),
    ('[{"conversation": {}, "qa": {}}]', "[0].qa: must be a list of QA items"),
    ('[{"conversation": {}, "qa": ["q"]}]', "[0].qa[0]: a QA item must be an object"),
    ('[{"conversation": {}}]', "[0].qa: missing: a LoCoMo sample lists its questions in `qa`"),
    ('[{"conversation": {}, "qa": [{"question": "q", "answer": "a", "category": "x"}]}]',
     "[0].qa[0].category: got \"x\": LoCoMo's category is 1–5 (category 5: unanswerable)"),
    ('[{"conversation": {}, "qa": [{"question": "q", "answer": "a", "category": 4}, {"question": "q", "answer": "a"}]}]',
     "[0].qa[1].category: missing: LoCoMo's category is 1–5"),
    ('[{"conversation": {}, "qa": [{"question": "q", "answer": "a", "category": 6}]}]', "[0].qa[0].category: got 6"),
    ('[{"conversation": {}, "qa": [{"question": "q", "answer": "a", "category": true}]}]',
     "[0].qa[0].category: got true"),
])
def test_cli_bad_input_is_one_line(tmp_path, capsys, content, message):
    src = tmp_path / "in.json"
    if content is not None:
        src.write_text(content, encoding="utf-8")
    code, _, err = run_cli(capsys, "import", "locomo", str(src), "--out", str(tmp_path / "out"))
    assert code != 0
    assert err.count("\n") == 1 and str(src) in err and message in err and "Traceback" not in err
    assert not (tmp_path / "out").exists()


def test_cli_refuses_non_empty_out_and_force_replaces_previous_import(tmp_path, capsys):
    src = write_json(tmp_path / "in.json", sample())
    out = tmp_path / "out"
    out.mkdir()
    (out / "notes.txt").write_text("mine", encoding="utf-8")
    code, _, err = run_cli(capsys, "import", "locomo", str(src), "--out", str(out))
    assert code != 0 and "not empty" in err and "--force" in err
    assert sorted(p.name for p in out.iterdir()) == ["notes.txt"]

    code, text, _ = run_cli(capsys, "import", "locomo", str(src), "--out", str(out), "--force")
    assert code == 0 and "conversations 1" in text and f"unresolved {TASK}:4: \"D3:9\"" in text
    # A second import with another sample id replaces the first import's files, and only those.
    other = sample()
    other[0]["sample_id"] = "conv-8"
    del other[0]["conversation"]["session_5"][0]["img_url"]
    write_json(src, other)
    code, _, _ = run_cli(capsys, "import", "locomo", str(src), "--out", str(out), "--force")
    assert code == 0
    files = sorted(str(p.relative_to(out)) for p in out.rglob("*"))
    assert files == [REPORT_NAME, "dialog", "dialog/locomo_conv-8_Open.json", "notes.txt"]


def test_cli_summary_does_not_pass_terminal_escapes(tmp_path, capsys):
    data = sample()
    data[0]["qa"][0]["evidence"] = ["\x1b[2JD1:1x"]
    src = write_json(tmp_path / "in.json", data)
    code, text, _ = run_cli(capsys, "import", "locomo", str(src), "--out", str(tmp_path / "o"))
    assert code == 0 and "\x1b" not in text and "\\u001b[2JD1:1x" in text


def _count_file(data: list) -> dict:
    """Counts straight from the LoCoMo JSON, independent of the importer."""
    sessions = turns = images = qa = adversarial = 0
    for s in data:
        for key, value in s["conversation"].items():
            if re.fullmatch(r"session_\d+", key):
                sessions += 1
                turns += len(value)
                images += sum(len(t.get("img_url", [])) for t in value)
        qa += len(s["qa"])
        adversarial += sum(1 for q in s["qa"] if q["category"] == 5)
    return {"conversations": len(data), "sessions": sessions, "turns": turns, "images": images, "qa": qa,
            "adversarial": adversarial}


@pytest.mark.skipif(not LOCOMO.is_file(), reason="../shared/peer-data/locomo10.json is absent")
def test_real_locomo_end_to_end(tmp_path, capsys):
    data = json.loads(LOCOMO.read_text(encoding="utf-8"))
    want = _count_file(data)
    assert want == {"conversations": 10, "sessions": 272, "turns": 5882, "images": 910, "qa": 1986,
                    "adversarial": 446}
    t0 = time.perf_counter()
    code, text, err = run_cli(capsys, "import", "locomo", str(LOCOMO), "--out", str(tmp_path / "locomo"))
    assert code == 0, err
    assert time.perf_counter() - t0 < 5
    code, text, err = run_cli(capsys, "info", str(tmp_path / "locomo"), "--json")
    assert code == 0, err
    info = json.loads(text)
    assert (info["tasks"], info["sessions"], info["rounds"]) == (want["conversations"], want["sessions"], want["turns"])
    assert info["items"] == {"mcq": 0, "open": want["qa"]}
    assert info["unanswerable"] == want["adversarial"]
    assert info["media"]["image"] == want["images"]

    bench = load_benchmark(tmp_path / "locomo")
    by_task = {t.name: t for t in bench.tasks}
    for s in data:
        task = by_task[f"locomo_{s['sample_id']}"]
        ids = [t["dia_id"] for k, v in s["conversation"].items() if re.fullmatch(r"session_\d+", k) for t in v]
        assert sorted(r.round_id for r in task.rounds) == sorted(ids)  # every turn is one round, 1:1
        assert len(task.items) == len(s["qa"])
        for q, item in zip(s["qa"], task.items):
            assert item.question == q["question"] and item.answerable == (q["category"] != 5)
            assert all(task.has_round(c) for c in item.clue_rounds)
    report = json.loads((tmp_path / "locomo" / REPORT_NAME).read_text(encoding="utf-8"))
    assert report["evidence"]["normalised_strings"] == 6 and report["evidence"]["unresolved"] == 3
    assert {(u["item"], u["raw"]) for u in report["unresolved_evidence"]} == {
        ("locomo_conv-42:59", "D10:19"), ("locomo_conv-42:89", "D"), ("locomo_conv-47:39", "D4:36")}
    assert [f for f in validate(bench, decode_media=True) if f.severity == ERROR] == []
