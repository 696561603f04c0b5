"""Hostile inputs for every reader (issue 14, classes 1, 2, 3 and 9): each gives exit status 1 or 2,
at most two lines on stderr naming the file (and line or key where there is one), no traceback, and
no change to any existing file.

Readers: dialog files (load_benchmark), run folders (predictions.jsonl, metrics.json, config.json;
both the raw reader, used by validate/info, and the lean reader, used by score), annotation JSONL
and the LoCoMo importer.
"""

from __future__ import annotations

import hashlib
import json
import os
from pathlib import Path

import pytest

from scorer.cli import main
from tests.builders.benchmarks import MINI_TASK, mini_dialog, write_mini_bench
from tests.builders.runs import write_mini_run

DEEP = b"[" * 100_000 + b"]" * 100_000
BIG_INT = b"1" * 5000
SURROGATE = "\\ud800"  # a JSON escape of a lone surrogate


def good_rows() -> list[dict]:
    qas = mini_dialog()["human-annotated QAs"]
    return [{"idx": i + 1, "mode": "open", "question": qa["question"], "gt": qa["answer"], "pred": qa["answer"],
             "judge": 1.0} for i, qa in enumerate(qas)]


def setup(tmp: Path) -> tuple[Path, Path]:
    bench = write_mini_bench(tmp / "b")
    run = write_mini_run(tmp / "runs" / MINI_TASK / "20260101_000000_m_semantic_rag__multimodal", "open", good_rows())
    return bench, run


def snapshot(root: Path) -> dict[str, str]:
    out = {}
    for dirpath, _, files in os.walk(root):
        for f in files:
            p = Path(dirpath) / f
            if p.is_file() and not p.is_symlink():
                out[str(p)] = hashlib.sha256(p.read_bytes()).hexdigest()
    return out


def unchanged(before: dict[str, str], root: Path) -> bool:
    """Every file that existed before is still there, byte for byte (new files may appear)."""
    after = snapshot(root)
    return all(after.get(k) == v for k, v in before.items())


def cli(args: list[str], capsys) -> tuple[int, str, str]:
    code = main([str(a) for a in args])  # any exception but a UserError fails the test
    cap = capsys.readouterr()
    return code, cap.out, cap.err


def one_line(code: int, err: str, name: str, where: str | None = None, out: str | None = None) -> None:
    """One line naming the file (and place): on stderr with exit 2 — or, for `validate` (pass its
    `out`), one error finding among its findings, exit 1, the rest of the benchmark still checked."""
    if out is not None:
        found = [line for line in out.splitlines() if name in line and ": error: " in line]
        assert code == 1 and len(found) == 1 and "Traceback" not in err, (code, out, err)
        assert where is None or where in found[0], found
        return
    lines = err.strip().splitlines()
    assert code in (1, 2), (code, err)
    assert "Traceback" not in err
    assert 1 <= len(lines) <= 2, err
    assert name in lines[0], err
    if where is not None:
        assert where in lines[0], err


# ------------------------------------------------------------------ class 1: pathological JSON


def _row_line(value: bytes) -> bytes:
    # in a field every reader reads (the lean reader of `score` skips fields it does not use)
    return b'{"idx": 1, "mode": "open", "question": "q", "judge": ' + value + b"}"


@pytest.mark.parametrize("value", [DEEP, BIG_INT], ids=["deep", "bigint"])
@pytest.mark.parametrize("target", ["dialog", "predictions", "metrics", "config"])
@pytest.mark.parametrize("command", ["validate", "info", "score"])
def test_pathological_json_in_benchmark_and_runs(tmp_path: Path, capsys, value: bytes, target: str,
                                                 command: str) -> None:
    bench, run = setup(tmp_path)
    if target == "dialog":
        file, where = bench / "dialog" / f"{MINI_TASK}_Open.json", None
        file.write_bytes(b'{"multi_session_dialogues": [], "x": ' + value + b"}")
    elif target == "predictions":
        file, where = run / "predictions.jsonl", ":2"
        lines = file.read_bytes().splitlines()
        file.write_bytes(b"\n".join([lines[0], _row_line(value)] + lines[1:]) + b"\n")
    else:
        file, where = run / f"{target}.json", None
        file.write_bytes(b'{"task": "Mini_Task", "x": ' + value + b"}")
    before = snapshot(tmp_path)
    args = [command, bench, "--runs", tmp_path / "runs"]
    if command == "score":
        args += ["--out", tmp_path / "out", "--format", "json"]
    code, out, err = cli(args, capsys)
    if command == "validate":
        # a dialog or run file that cannot be read is one finding (file:line where known); the rest is
        # still checked
        one_line(code, err, file.name, None if where is None else f"{file.name}{where}", out=out)
    else:
        one_line(code, err, file.name, where)
    assert unchanged(before, tmp_path)


@pytest.mark.parametrize("value", [DEEP, BIG_INT], ids=["deep", "bigint"])
def test_pathological_json_in_annotations_and_locomo(tmp_path: Path, capsys, value: bytes) -> None:
    events = tmp_path / "events.jsonl"
    events.write_bytes(b"\n" + b'{"ts": ' + value + b"}\n")
    locomo = tmp_path / "locomo.json"
    locomo.write_bytes(b'[{"x": ' + value + b"}]")
    before = snapshot(tmp_path)
    code, _, err = cli(["annotations", "import", events, "--db", tmp_path / "a.db"], capsys)
    one_line(code, err, events.name, ":2")
    code, _, err = cli(["import", "locomo", locomo, "--out", tmp_path / "out"], capsys)
    one_line(code, err, locomo.name)
    assert unchanged(before, tmp_path)


# ------------------------------------------------------------------ class 2: pathological paths


def test_dialog_symlink_loop_and_folder_are_findings(tmp_path: Path, capsys) -> None:
    bench, _ = setup(tmp_path)
    (bench / "dialog" / "Loop.json").symlink_to(bench / "dialog" / "Loop.json")
    (bench / "dialog" / "Folder.json").mkdir()
    code, out, err = cli(["validate", bench], capsys)
    assert code == 1 and "Traceback" not in err
    assert any("Loop.json" in line and ": error: " in line for line in out.splitlines()), out
    assert any("Folder.json" in line and ": error: " in line for line in out.splitlines()), out


def test_predictions_folder_symlink_loop_and_fifo(tmp_path: Path, capsys) -> None:
    bench, run = setup(tmp_path)
    for name in ("predictions.jsonl", "metrics.json", "config.json"):
        p = run / name
        p.unlink()
        p.symlink_to(p)  # a loop
        before = snapshot(tmp_path)
        code, out, err = cli(["validate", bench, "--runs", tmp_path / "runs"], capsys)
        one_line(code, err, name, out=out)
        assert unchanged(before, tmp_path)
        p.unlink()
        if name == "predictions.jsonl":
            p.mkdir()  # a folder where the file should be
            code, out, err = cli(["validate", bench, "--runs", tmp_path / "runs"], capsys)
            one_line(code, err, name, out=out)
            p.rmdir()
            os.mkfifo(p)  # would block a reader forever
            code, out, err = cli(["validate", bench, "--runs", tmp_path / "runs"], capsys)
            one_line(code, err, name, out=out)
            p.unlink()
            p.write_text("\n".join(json.dumps(r) for r in good_rows()) + "\n")
        else:
            p.write_text("{}")


def test_runs_dev_null_is_not_clean(tmp_path: Path, capsys) -> None:
    bench, _ = setup(tmp_path)
    code, _, err = cli(["validate", bench, "--runs", "/dev/null"], capsys)
    one_line(code, err, "/dev/null")


def test_fifo_and_device_media_are_not_read(tmp_path: Path, capsys) -> None:
    bench, _ = setup(tmp_path)
    wall = bench / "image" / MINI_TASK / "wall_blue.png"
    wall.unlink()
    os.mkfifo(wall)
    tag = bench / "image" / MINI_TASK / "tag.png"
    tag.unlink()
    tag.symlink_to("/dev/zero")
    code, out, err = cli(["validate", bench], capsys)
    assert code == 1 and "Traceback" not in err
    assert "wall_blue.png" in out and "tag.png" in out


# ------------------------------------------------------------------ class 3: unencodable text


def test_lone_surrogates_in_dialog_and_rows(tmp_path: Path, capsys) -> None:
    bench, run = setup(tmp_path)
    f = bench / "dialog" / f"{MINI_TASK}_Open.json"
    text = f.read_text().replace('"What colour is the hall wall now?"', f'"What {SURROGATE} colour?"', 1)
    text = text.replace('"D1:1"', f'"D1:{SURROGATE}"')
    f.write_text(text)
    p = run / "predictions.jsonl"
    p.write_text(p.read_text().replace('"question": "What', f'"question": "{SURROGATE}What', 1))
    for command in ("validate", "info"):
        code, out, err = cli([command, bench, "--runs", tmp_path / "runs"], capsys)
        assert code in (0, 1), err
        out.encode("utf-8")
        err.encode("utf-8")
    code, _, err = cli(["score", bench, "--runs", tmp_path / "runs", "--out", tmp_path / "out",
                        "--format", "csv,json,md"], capsys)
    assert code == 0, err
    for out_file in (tmp_path / "out").rglob("*"):
        if out_file.is_file():
            out_file.read_bytes().decode("utf-8")


# ------------------------------------------------------------------ class 9: silent acceptance


def _validate(tmp_path: Path, bench: Path, capsys) -> tuple[int, list[str]]:
    code, out, err = cli(["validate", bench, "--runs", tmp_path / "runs"], capsys)
    assert "Traceback" not in err
    return code, [line for line in out.splitlines() if ": error: " in line or ": warning: " in line]


def test_clean_setup_validates(tmp_path: Path, capsys) -> None:
    bench, _ = setup(tmp_path)
    code, found = _validate(tmp_path, bench, capsys)
    assert code == 0 and not [f for f in found if ": error: " in f], found


@pytest.mark.parametrize("key,raw", [("answer", "NaN"), ("question", "42"), ("question", "null"),
                                     ("answer", "Infinity")])
def test_item_values_of_the_wrong_type(tmp_path: Path, capsys, key: str, raw: str) -> None:
    bench, _ = setup(tmp_path)
    f = bench / "dialog" / f"{MINI_TASK}_Open.json"
    d = json.loads(f.read_text())
    d["human-annotated QAs"][0][key] = "@@MARK@@"
    f.write_text(json.dumps(d).replace('"@@MARK@@"', raw))
    code, found = _validate(tmp_path, bench, capsys)
    assert code == 1
    assert any(f.name in line and "QA #1" in line and key in line for line in found), found


def test_image_path_naming_a_folder(tmp_path: Path, capsys) -> None:
    bench, _ = setup(tmp_path)
    wall = bench / "image" / MINI_TASK / "wall_blue.png"
    wall.unlink()
    wall.mkdir()
    (wall / "frame.png").write_bytes(b"")  # not empty: it used to pass as a folder of frames
    for extra in ([], ["--no-decode"]):
        code, out, err = cli(["validate", bench, *extra], capsys)
        assert code == 1 and any("wall_blue.png" in line and "folder" in line for line in out.splitlines()), out


def test_duplicated_prediction_rows(tmp_path: Path, capsys) -> None:
    bench, run = setup(tmp_path)
    p = run / "predictions.jsonl"
    lines = p.read_text().splitlines()
    p.write_text("\n".join(lines + [lines[0]]) + "\n")
    code, found = _validate(tmp_path, bench, capsys)
    assert code == 1
    assert any(f"predictions.jsonl:{len(lines) + 1}" in line and "line 1" in line for line in found), found


def test_non_utf8_byte_on_line_two(tmp_path: Path, capsys) -> None:
    bench, run = setup(tmp_path)
    p = run / "predictions.jsonl"
    lines = p.read_bytes().splitlines()
    lines[1] = lines[1].replace(b"open", b"op\xffen", 1)
    p.write_bytes(b"\n".join(lines) + b"\n")
    code, out, err = cli(["validate", bench, "--runs", tmp_path / "runs"], capsys)
    one_line(code, err, "predictions.jsonl", "predictions.jsonl:2", out=out)
    events = tmp_path / "e.jsonl"
    events.write_bytes(b"\n\xff\n")
    code, _, err = cli(["annotations", "import", events, "--db", tmp_path / "a.db"], capsys)
    one_line(code, err, "e.jsonl", "e.jsonl:2")
    f = bench / "dialog" / f"{MINI_TASK}_Open.json"
    f.write_bytes(b'{\n"x": "\xff"}')
    code, out, err = cli(["validate", bench], capsys)
    assert code == 1 and any(f"{f.name}:2" in line for line in out.splitlines()), out


def test_invalid_dialog_json_is_one_finding_and_the_rest_is_checked(tmp_path: Path, capsys) -> None:
    bench, _ = setup(tmp_path)
    (bench / "dialog" / "Broken.json").write_text("[1, 2")
    code, out, err = cli(["validate", bench], capsys)
    assert code == 1 and "Traceback" not in err
    found = [line for line in out.splitlines() if "Broken.json" in line]
    assert len(found) == 1 and ": error: " in found[0] and "invalid JSON" in found[0], out
    assert "1 task(s)" in err  # the mini task was still read and checked


@pytest.mark.parametrize("command", ["validate", "info", "score"])
def test_unreadable_run_files_for_every_command(tmp_path: Path, capsys, command: str) -> None:
    bench, run = setup(tmp_path)
    p = run / "predictions.jsonl"
    p.unlink()
    os.mkfifo(p)
    args = [command, bench, "--runs", tmp_path / "runs"] + (["--out", tmp_path / "out"] if command == "score" else [])
    code, out, err = cli(args, capsys)
    one_line(code, err, "predictions.jsonl", out=out if command == "validate" else None)
    p.unlink()
    p.mkdir()
    code, out, err = cli(args, capsys)
    one_line(code, err, "predictions.jsonl", out=out if command == "validate" else None)


def test_names_too_long(tmp_path: Path, capsys) -> None:
    bench, _ = setup(tmp_path)
    long = tmp_path / ("n" * 300)
    for args in (["validate", long], ["info", long], ["validate", bench, "--runs", long],
                 ["score", bench, "--runs", long, "--out", tmp_path / "out"],
                 ["annotations", "import", long, "--db", tmp_path / "a.db"],
                 ["import", "locomo", long, "--out", tmp_path / "o"]):
        code, _, err = cli(args, capsys)
        one_line(code, err, "nnnn")
    for f in (bench / "dialog").glob("*.json"):
        f.write_text(f.read_text().replace(f"image/{MINI_TASK}/tag.png", "x" * 300 + ".png"))
    code, out, err = cli(["validate", bench], capsys)
    assert code == 1 and "Traceback" not in err and "xxxx" in out


def test_lone_surrogates_in_annotation_events(tmp_path: Path, capsys) -> None:
    good = {"ts": "2026-11-20T09:01:27Z", "annotator": "ann@@", "kind": "label", "item_id": "T:@@1",
            "mode": None, "run": None, "study": None, "payload": {"x": ["X1"], "y": ["Y1"]}}
    events = tmp_path / "events.jsonl"
    events.write_text(json.dumps(good).replace("@@", SURROGATE) + "\n")
    code, out, err = cli(["annotations", "import", events, "--db", tmp_path / "a.db"], capsys)
    assert code == 0, err
    code, out, err = cli(["annotations", "export", "--db", tmp_path / "a.db"], capsys)
    assert code == 0 and "\ufffd" in out, err


def test_undecodable_file_names(tmp_path: Path, capsys) -> None:
    """A name that is not UTF-8 (Python reads it with lone surrogates) is printed and written safely."""
    bench, run = setup(tmp_path)
    odd = Path(os.fsdecode(bytes(run) + b"\xff"))
    run.rename(odd)
    (bench / "dialog" / f"{MINI_TASK}_Open.json").rename(Path(os.fsdecode(bytes(bench / "dialog") + b"/Odd\xff.json")))
    for command in ("validate", "info"):
        code, out, err = cli([command, bench, "--runs", tmp_path / "runs"], capsys)
        assert code in (0, 1) and "Traceback" not in err, err
    code, _, err = cli(["score", bench, "--runs", tmp_path / "runs", "--out", tmp_path / "out",
                        "--format", "csv,json,md"], capsys)
    assert code == 0, err


def test_video_header_check_reads_the_header_only(tmp_path: Path) -> None:
    """A 2 GiB sparse video costs a header read (about 30 MB resident here; 2.1 GB before)."""
    import subprocess
    import sys

    def with_video(d: dict) -> None:
        d["multi_session_dialogues"][0]["dialogues"][0]["input_video"] = ["video/big.mp4"]

    bench = write_mini_bench(tmp_path / "b", mutate=with_video)
    (bench / "video").mkdir()
    with open(bench / "video" / "big.mp4", "wb") as fh:
        fh.write(b"\x00\x00\x00\x18ftypmp42" + b"\x00" * 4)
        fh.truncate(2 * 1024 ** 3)
    # VmHWM, not getrusage's ru_maxrss: on Linux the latter keeps the pre-exec peak of the forked copy
    # of this (large) test process, so it would measure pytest, not memscope.
    code = ("import sys; from scorer.cli import main; rc = main(sys.argv[1:]); "
            "print(next(ln.split()[1] for ln in open('/proc/self/status') if ln.startswith('VmHWM:'))); "
            "sys.exit(rc)")
    proc = subprocess.run([sys.executable, "-c", code, "validate", str(bench)], capture_output=True, text=True,
                          timeout=60)
    assert proc.returncode == 0, proc.stderr
    assert int(proc.stdout.split()[-1]) < 500 * 1024  # kB: the process's own peak


def test_video_of_no_data_is_not_a_video(tmp_path: Path, capsys) -> None:
    def with_video(d: dict) -> None:
        d["multi_session_dialogues"][0]["dialogues"][0]["input_video"] = ["video/zeros.mp4"]

    bench = write_mini_bench(tmp_path / "b", mutate=with_video)
    (bench / "video").mkdir()
    with open(bench / "video" / "zeros.mp4", "wb") as fh:
        fh.truncate(1024 ** 3)  # sparse: costs nothing
    code, out, err = cli(["validate", bench], capsys)
    assert code == 1 and any("zeros.mp4" in line and "not a video" in line for line in out.splitlines()), out
