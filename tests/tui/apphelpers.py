"""Shared by the app's tests (the one helpers module: `from apphelpers import …`; the fixtures are in
conftest.py): the demo's paths, the demo app, a tiny benchmark with markup / escape injection in every
text field, broken media, a way to wait until the app has settled (workers done, screen painted), the
text a running app shows, and the Study screens' helpers (a study built through the real CLI, the app
opened on it, waiting until its entry may be answered)."""

from __future__ import annotations

import json
import re
import struct
import zlib
from pathlib import Path

from PIL import Image
from textual.worker import WorkerCancelled

from scorer.cli import main as cli_main

REPO = Path(__file__).resolve().parents[2]
DEMO = REPO / "fixtures" / "demo"
RUNS = DEMO / "runs"
SIZE = (120, 40)
DEMO_MISSING = "the demo is built by fixtures/build.py"  # why a test marked needs_demo is skipped

MARKUP = "[bold red]x[/]"
LINK = "[link=https://evil.example]click[/link]"
ESC = "\x1b[31m"
OSC = "\x1b]8;;https://evil.example\x07"
ESC_SHOWN = "\\x1b[31m"  # how the screen shows ESC [ 3 1 m: literally, with ESC made visible
TASK = "Inj_Task"


async def settle(pilot, rounds: int = 20) -> None:
    """Wait for the chain of workers (image decodes, scoring) and the repaints they cause, instead of
    sleeping: a finished worker's handler may queue another, so loop until none is left."""
    app = pilot.app
    for _ in range(rounds):
        await pilot.pause()
        try:
            await app.workers.wait_for_complete()
        except WorkerCancelled:  # a superseded picture job (a held ← / →): its successor is waited for
            pass
        await pilot.pause()
        if all(w.is_finished for w in app.workers):  # pending ones count: a handler may just have queued one
            return


def demo_app(tmp_path: Path | None = None, db: Path | None = None, **kw):
    from tui.app import make_app

    exports = (tmp_path / "exports") if tmp_path is not None else None
    return make_app(DEMO, [DEMO / "runs"], db=db, annotator=kw.pop("annotator", "ann1"), exports_dir=exports, **kw)


def demo_db(tmp_path: Path) -> Path:
    """A fresh annotation store holding the demo's annotations.jsonl."""
    from scorer.store import Store, import_jsonl

    path = tmp_path / "demo.db"
    with Store(path) as store:
        import_jsonl(store, DEMO / "annotations.jsonl")
    return path


def png(path: Path, colour: str) -> Path:
    path.parent.mkdir(parents=True, exist_ok=True)
    Image.new("RGB", (32, 24), colour).save(path, "PNG")
    return path


def corrupt_png(path: Path) -> Path:
    """A PNG signature and a header chunk, then garbage: Pillow cannot read it."""
    path.parent.mkdir(parents=True, exist_ok=True)
    ihdr = struct.pack(">IIBBBBB", 32, 24, 8, 2, 0, 0, 0)
    chunk = struct.pack(">I", len(ihdr)) + b"IHDR" + ihdr + struct.pack(">I", zlib.crc32(b"IHDR" + ihdr))
    path.write_bytes(b"\x89PNG\r\n\x1a\n" + chunk + b"\x00garbage, not an image" * 4)
    return path


def inj(field: str) -> str:
    """An injection string naming its field, so a test can tell which field it sees."""
    return f"{field} {MARKUP} {LINK} {ESC}red{OSC}"


def write_injection_bench(root: Path) -> Path:
    """One task: two sessions, a Y3 item whose every text field carries markup and escapes, a media
    file named like markup, a missing image and a corrupt PNG; plus an MCQ and an open run."""
    img_dir = root / "image" / TASK
    odd = png(img_dir / "[bold]pic.png", "orange")  # a file name that reads as markup
    png(img_dir / "fine.png", "green")
    corrupt_png(img_dir / "corrupt.png")
    dialog = {
        "character_profile": {"name": "Ada"},
        "multi_session_dialogues": [
            {"session_id": "D1", "date": "2024-01-01", "dialogues": [
                {"round": "D1:1", "user": inj("user"), "assistant": inj("assistant"),
                 "input_image": [f"image/{TASK}/{odd.name}"], "image_caption": [inj("caption")]},
                {"round": "D1:2", "user": "A plain round.", "assistant": "Plain.",
                 "input_image": [f"image/{TASK}/missing.png", f"image/{TASK}/corrupt.png"],
                 "image_caption": ["a picture that is not there", "a broken picture"]},
            ]},
            {"session_id": "D2", "date": "2024-02-01", "dialogues": [
                {"round": "D2:1", "user": "The state changed.", "assistant": "Noted.",
                 "input_image": [f"image/{TASK}/fine.png"], "image_caption": ["A green square."]},
            ]},
        ],
        "human-annotated QAs": [
            {"point": [["X1"], ["Y3"]], "question": inj("question"), "answer": inj("answer"),
             "explanation": inj("explanation"), "session_id": ["D1", "D2"], "clue": ["D1:1", "D2:1"],
             "options": [{"A": inj("optionA"), "B": "b", "C": "c", "D": "d", "answer": "A"}]},
        ],
    }
    open_dialog = json.loads(json.dumps(dialog))
    for qa in open_dialog["human-annotated QAs"]:
        qa.pop("options")
    (root / "dialog").mkdir(parents=True, exist_ok=True)
    (root / "dialog" / f"{TASK}.json").write_text(json.dumps(dialog), encoding="utf-8")
    (root / "dialog" / f"{TASK}_Open.json").write_text(json.dumps(open_dialog), encoding="utf-8")
    for mode in ("mcq", "open"):
        folder = root / "runs" / TASK / f"20260101_000000_bb_semantic_rag__multimodal_{mode}"
        folder.mkdir(parents=True)
        (folder / "config.json").write_text(json.dumps({"task": TASK, "model": "bb"}))
        (folder / "metrics.json").write_text(json.dumps({
            "task_name": TASK, "model_name": inj("backbone"), "method_name": "semantic_rag",
            "method_modality": "multimodal", "mode": mode}))
        row = {"idx": 1, "mode": mode, "question": inj("question"), "gt": inj("answer"),
               "pred": inj("prediction"), "retrieved": [{"round": "D1:1", "score": 0.9},
                                                        {"round": "D2:1", "score": 0.5}],
               "delivered": ["D2:1"]}
        if mode == "mcq":
            row |= {"em": 0.0, "choice": "B", "rotations": [{"rotation_idx": 0, "correct_position": "A",
                                                             "choice": "B", "em": 0.0, "pred": inj("rotation")}]}
        else:
            row |= {"judge": 0.0, "judge_reasoning": inj("reasoning")}
        (folder / "predictions.jsonl").write_text(json.dumps(row) + "\n", encoding="utf-8")
    return root


async def pictures_done(pilot, widgets, tries: int = 150) -> None:
    """Wait until every picture widget shows its picture or its error: a decoded picture arrives by
    message after its worker has ended, so waiting for workers alone can look too early."""
    for _ in range(tries):
        if all(w.picture is not None or w.error is not None for w in widgets):
            return
        await pilot.pause(0.02)


# ---------------------------------------------------------------- what the screen shows


def screen_lines(app) -> list[str]:
    """Every row of the current screen (modal screens included) as plain text: what the user would
    read off the terminal."""
    strips = app.screen._compositor.render_strips()
    return ["".join(seg.text for seg in strip) for strip in strips]


def screen_text(app) -> str:
    return "\n".join(screen_lines(app))


def text_of(screen, selector: str) -> str:
    """The plain text a Static holds (whether or not it is scrolled into view)."""
    w = screen.query_one(selector)
    return str(w.content)


# ---------------------------------------------------------------- the Study screens
# A study built through the real CLI, the real app opened on it, waiting until the current entry is
# painted and may be answered.

# What a blind agreement screen must never show before the annotator commits: the method (run or
# display name), the backbone, or a judge score.
LEAK = re.compile(r"full_context|semantic_rag|clue_only|FC\([TV]\)|SRAG\(|Oracle\(|gpt-5\.4|qwen3|judge \d")


def new_study(db: Path, kind: str, name: str, per_cell: str, *extra: str, runs: bool = False) -> None:
    argv = ["study", "new", "--kind", kind, "--per-cell", per_cell, "--name", name, "--db", str(db),
            *extra, str(DEMO)]
    if runs:
        argv += ["--runs", str(RUNS)]
    assert cli_main(argv) == 0


def study_app(db: Path, study: str, annotator: str, runs: bool = True):
    from tui.app import make_app

    return make_app(DEMO, [RUNS] if runs else [], db=db, annotator=annotator, study=study)


async def wait_ready(pilot, limit: int = 400):
    """Until the app shows a Study screen whose current entry is painted; returns that screen."""
    from tui.bases.study import StudyScreen

    for _ in range(limit):
        await pilot.pause()
        screen = pilot.app.screen
        if isinstance(screen, StudyScreen) and screen.ready:
            return screen
    raise AssertionError(f"the study screen never became ready (screen: {pilot.app.screen!r})")


def saved_line(screen) -> str:
    return text_of(screen, "#study-saved")


def kappa(a: list, b: list) -> float:
    """Cohen's κ by hand: (p_o − p_e) / (1 − p_e) over the categories either side used."""
    n = len(a)
    cats = sorted(set(a) | set(b))
    p_o = sum(x == y for x, y in zip(a, b)) / n
    p_e = sum((a.count(c) / n) * (b.count(c) / n) for c in cats)
    return (p_o - p_e) / (1 - p_e)
