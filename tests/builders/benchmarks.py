"""Benchmarks in the MemEye layout (dialog/<Task>.json, its mirrored <Task>_Open.json, media files)
written into a temp folder, as a user's files would look. Real files: PNG images drawn with Pillow,
a WAV clip from the wave module.

- `write_mini_bench`: the mini benchmark (task `MINI_TASK`: two sessions, images and an audio clip,
  rotation and legacy MCQ items, a chain, an unanswerable item), for reader, validation and store
  tests; they break copies of it in one way each. Its runs: `runs.write_mini_run`.
- `write_labelled_bench`: one task whose items carry the (X, Y) labels asked for, for the scoring
  tests; rows that answer it: `runs.mcq_row` / `runs.open_row`, written by `runs.write_labelled_run`.
- `write_injection_bench`: a tiny benchmark (task `INJECTION_TASK`) with markup and escapes in every
  text field and broken media, plus an MCQ and an open run, for the app's safety tests.
"""

from __future__ import annotations

import json
import struct
import wave
import zlib
from pathlib import Path

from PIL import Image, ImageDraw

MINI_TASK = "Mini_Task"
INJECTION_TASK = "Inj_Task"
LETTERS = "ABCD"


# ---------------------------------------------------------------- media files


def png(path: Path, colour: str, text: str = "", size: tuple[int, int] = (32, 24)) -> Path:
    """A PNG of one colour (with `text` written on it, if any)."""
    path.parent.mkdir(parents=True, exist_ok=True)
    im = Image.new("RGB", size, colour)
    if text:
        ImageDraw.Draw(im).text((4, 4), text, fill="white")
    im.save(path, format="PNG")
    return path


def corrupt_png(path: Path) -> Path:
    """A PNG signature and a header chunk, then garbage: Pillow cannot read it."""
    path.parent.mkdir(parents=True, exist_ok=True)
    ihdr = struct.pack(">IIBBBBB", 32, 24, 8, 2, 0, 0, 0)
    chunk = struct.pack(">I", len(ihdr)) + b"IHDR" + ihdr + struct.pack(">I", zlib.crc32(b"IHDR" + ihdr))
    path.write_bytes(b"\x89PNG\r\n\x1a\n" + chunk + b"\x00garbage, not an image" * 4)
    return path


def wav(path: Path, frames: int = 800) -> None:
    path.parent.mkdir(parents=True, exist_ok=True)
    with wave.open(str(path), "wb") as w:
        w.setnchannels(1)
        w.setsampwidth(2)
        w.setframerate(8000)
        w.writeframes(b"\x00\x10" * frames)


# ---------------------------------------------------------------- dialog files


def open_mirror(d: dict) -> dict:
    """The _Open file of an MCQ dialog: the same dialog, its QAs without options."""
    o = json.loads(json.dumps(d))
    for qa in o["human-annotated QAs"]:
        qa.pop("options", None)
    return o


def write_dialogs(root: Path, task: str, mcq: dict, open_: dict, indent: int | None = None) -> None:
    (root / "dialog").mkdir(parents=True, exist_ok=True)
    (root / "dialog" / f"{task}.json").write_text(json.dumps(mcq, indent=indent), encoding="utf-8")
    (root / "dialog" / f"{task}_Open.json").write_text(json.dumps(open_, indent=indent), encoding="utf-8")


# ---------------------------------------------------------------- the mini benchmark


def rotations(options: list[str], correct: int) -> list[dict]:
    """Four rotations with the correct answer cycling through A–D, as MemEye builds them."""
    out = []
    others = [o for i, o in enumerate(options) if i != correct]
    for r in range(4):
        opts = list(others)
        opts.insert(r, options[correct])
        out.append({"A": opts[0], "B": opts[1], "C": opts[2], "D": opts[3], "answer": "ABCD"[r]})
    return out


def mini_dialog() -> dict:
    return {
        "character_profile": {"name": "Ada"},
        "multi_session_dialogues": [
            {"session_id": "D1", "date": "2024-03-10", "dialogues": [
                {"round": "D1:1", "user": "I painted the hall wall blue today.", "assistant": "Nice blue!",
                 "input_image": [f"image/{MINI_TASK}/wall_blue.png"], "image_id": ["wall_blue"],
                 "image_caption": ["A hallway wall painted blue."]},
                {"round": "D1:2", "user": "My keys have tag 417.", "assistant": "Noted.",
                 "input_image": [f"image/{MINI_TASK}/tag.png"], "image_id": ["tag"], "image_caption": ["A key tag."]},
            ]},
            {"session_id": "D2", "date": "2024-03-17", "dialogues": [
                {"round": "D2:1", "user": "Listen to the doorbell.", "assistant": "Three chimes.",
                 "input_audio": [f"audio/{MINI_TASK}/bell.wav"], "audio_transcript": ["(three chimes)"]},
                {"round": "D2:2", "user": "I repainted the hall green.", "assistant": "Green it is.",
                 "input_image": [f"image/{MINI_TASK}/wall_green.png"], "image_caption": ["A green hallway wall."]},
            ]},
        ],
        "human-annotated QAs": [
            {"point": [["X1"], ["Y3"]], "question": "What colour is the hall wall now?", "answer": "Green",
             "session_id": ["D1", "D2"], "clue": ["D1:1", "D2:2"], "explanation": "Repainted.",
             "options": rotations(["Green", "Blue", "Red", "White"], 0)},
            {"point": [["X4"], ["Y1"]], "question": "What number is on the key tag?", "answer": "417",
             "session_id": ["D1"], "clue": ["D1:2"],
             "options": {"A": "471", "B": "417", "C": "147", "D": "741", "answer": "B"}},
            {"point": [["X2", "X3"], ["Y2"]], "question": "How many chimes did the bell ring?", "answer": "Three",
             "session_id": ["D2"], "clue": ["D2:1"], "answerable": True,
             "chain": [{"round": "D2:1", "role": "answer", "modality": "audio", "challenge": "prosody"}],
             "options": rotations(["Three", "Two", "Four", "One"], 0)},
            {"point": [["X1"], ["Y1"]], "question": "What is Ada's cat called?", "answer": "Not mentioned",
             "session_id": [], "clue": [], "answerable": False,
             "options": rotations(["Not mentioned", "Tom", "Kit", "Mog"], 0)},
        ],
    }


def write_mini_bench(root: Path, mutate=None, mutate_open=None) -> Path:
    """Write the mini benchmark under `root`; `mutate(dialog_dict)` breaks the MCQ file first
    (`mutate_open` the _Open file)."""
    png(root / "image" / MINI_TASK / "wall_blue.png", "blue", "blue", size=(64, 48))
    png(root / "image" / MINI_TASK / "wall_green.png", "green", "green", size=(64, 48))
    png(root / "image" / MINI_TASK / "tag.png", "black", "417", size=(64, 48))
    wav(root / "audio" / MINI_TASK / "bell.wav")
    d = mini_dialog()
    o = open_mirror(d)
    if mutate:
        mutate(d)
    if mutate_open:
        mutate_open(o)
    write_dialogs(root, MINI_TASK, d, o, indent=1)
    return root


# ---------------------------------------------------------------- a benchmark of labelled items


def write_labelled_bench(root: Path, task: str, labels: list[tuple[str, str]]) -> Path:
    """One task whose items i = 1.. have the given (X, Y) labels; MCQ items have four rotations with
    the answer at A, B, C, D in turn."""
    dialog = {
        "character_profile": {"name": "Test"},
        "multi_session_dialogues": [{"session_id": "D1", "date": "2024-01-01", "dialogues": [
            {"round": "D1:1", "user": "The key tag reads 417.", "assistant": "Noted."}]}],
    }
    qas = []
    for i, (x, y) in enumerate(labels, start=1):
        options = []
        for r in range(4):
            opts = [f"wrong {i}.{k}" for k in range(3)]
            opts.insert(r, f"answer {i}")
            options.append({**dict(zip(LETTERS, opts)), "answer": LETTERS[r]})
        qas.append({"point": [[x], [y]], "question": f"Question {i}?", "answer": f"answer {i}",
                    "session_id": ["D1"], "clue": ["D1:1"], "options": options})
    mcq = {**dialog, "human-annotated QAs": qas}
    write_dialogs(root, task, mcq, open_mirror(mcq))
    return root


# ---------------------------------------------------------------- markup and escapes in every field

MARKUP = "[bold red]x[/]"
LINK = "[link=https://evil.example]click[/link]"
ESC = "\x1b[31m"
OSC = "\x1b]8;;https://evil.example\x07"
ESC_SHOWN = "\\x1b[31m"  # how the screen shows ESC [ 3 1 m: literally, with ESC made visible


def inj(field: str) -> str:
    """An injection string naming its field, so a test can tell which field it sees."""
    return f"{field} {MARKUP} {LINK} {ESC}red{OSC}"


def write_injection_bench(root: Path) -> Path:
    """One task: two sessions, a Y3 item whose every text field carries markup and escapes, a media
    file named like markup, a missing image and a corrupt PNG; plus an MCQ and an open run."""
    img_dir = root / "image" / INJECTION_TASK
    odd = png(img_dir / "[bold]pic.png", "orange")  # a file name that reads as markup
    png(img_dir / "fine.png", "green")
    corrupt_png(img_dir / "corrupt.png")
    dialog = {
        "character_profile": {"name": "Ada"},
        "multi_session_dialogues": [
            {"session_id": "D1", "date": "2024-01-01", "dialogues": [
                {"round": "D1:1", "user": inj("user"), "assistant": inj("assistant"),
                 "input_image": [f"image/{INJECTION_TASK}/{odd.name}"], "image_caption": [inj("caption")]},
                {"round": "D1:2", "user": "A plain round.", "assistant": "Plain.",
                 "input_image": [f"image/{INJECTION_TASK}/missing.png", f"image/{INJECTION_TASK}/corrupt.png"],
                 "image_caption": ["a picture that is not there", "a broken picture"]},
            ]},
            {"session_id": "D2", "date": "2024-02-01", "dialogues": [
                {"round": "D2:1", "user": "The state changed.", "assistant": "Noted.",
                 "input_image": [f"image/{INJECTION_TASK}/fine.png"], "image_caption": ["A green square."]},
            ]},
        ],
        "human-annotated QAs": [
            {"point": [["X1"], ["Y3"]], "question": inj("question"), "answer": inj("answer"),
             "explanation": inj("explanation"), "session_id": ["D1", "D2"], "clue": ["D1:1", "D2:1"],
             "options": [{"A": inj("optionA"), "B": "b", "C": "c", "D": "d", "answer": "A"}]},
        ],
    }
    write_dialogs(root, INJECTION_TASK, dialog, open_mirror(dialog))
    for mode in ("mcq", "open"):
        folder = root / "runs" / INJECTION_TASK / f"20260101_000000_bb_semantic_rag__multimodal_{mode}"
        folder.mkdir(parents=True)
        (folder / "config.json").write_text(json.dumps({"task": INJECTION_TASK, "model": "bb"}))
        (folder / "metrics.json").write_text(json.dumps({
            "task_name": INJECTION_TASK, "model_name": inj("backbone"), "method_name": "semantic_rag",
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
