"""A tiny MemEye-layout benchmark written into a temp folder, for reader and validation tests.

Real files: PNG images drawn with Pillow, a WAV clip from the wave module. Tests break copies of it
in one way each and check the one line validate prints.
"""

from __future__ import annotations

import json
import wave
from pathlib import Path

from PIL import Image, ImageDraw

TASK = "Mini_Task"


def png(path: Path, colour: str, text: str = "") -> None:
    path.parent.mkdir(parents=True, exist_ok=True)
    im = Image.new("RGB", (64, 48), colour)
    if text:
        ImageDraw.Draw(im).text((4, 4), text, fill="white")
    im.save(path, format="PNG")


def wav(path: Path, frames: int = 800) -> None:
    path.parent.mkdir(parents=True, exist_ok=True)
    with wave.open(str(path), "wb") as w:
        w.setnchannels(1)
        w.setsampwidth(2)
        w.setframerate(8000)
        w.writeframes(b"\x00\x10" * frames)


def rotations(options: list[str], correct: int) -> list[dict]:
    """Four rotations with the correct answer cycling through A–D, as MemEye builds them."""
    out = []
    others = [o for i, o in enumerate(options) if i != correct]
    for r in range(4):
        opts = list(others)
        opts.insert(r, options[correct])
        out.append({"A": opts[0], "B": opts[1], "C": opts[2], "D": opts[3], "answer": "ABCD"[r]})
    return out


def dialog() -> dict:
    return {
        "character_profile": {"name": "Ada"},
        "multi_session_dialogues": [
            {"session_id": "D1", "date": "2024-03-10", "dialogues": [
                {"round": "D1:1", "user": "I painted the hall wall blue today.", "assistant": "Nice blue!",
                 "input_image": [f"image/{TASK}/wall_blue.png"], "image_id": ["wall_blue"],
                 "image_caption": ["A hallway wall painted blue."]},
                {"round": "D1:2", "user": "My keys have tag 417.", "assistant": "Noted.",
                 "input_image": [f"image/{TASK}/tag.png"], "image_id": ["tag"], "image_caption": ["A key tag."]},
            ]},
            {"session_id": "D2", "date": "2024-03-17", "dialogues": [
                {"round": "D2:1", "user": "Listen to the doorbell.", "assistant": "Three chimes.",
                 "input_audio": [f"audio/{TASK}/bell.wav"], "audio_transcript": ["(three chimes)"]},
                {"round": "D2:2", "user": "I repainted the hall green.", "assistant": "Green it is.",
                 "input_image": [f"image/{TASK}/wall_green.png"], "image_caption": ["A green hallway wall."]},
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


def open_mirror(d: dict) -> dict:
    o = json.loads(json.dumps(d))
    for qa in o["human-annotated QAs"]:
        qa.pop("options", None)
    return o


def write_bench(root: Path, mutate=None, mutate_open=None) -> Path:
    """Write the mini benchmark under `root`; `mutate(dialog_dict)` breaks the MCQ file first."""
    png(root / "image" / TASK / "wall_blue.png", "blue", "blue")
    png(root / "image" / TASK / "wall_green.png", "green", "green")
    png(root / "image" / TASK / "tag.png", "black", "417")
    wav(root / "audio" / TASK / "bell.wav")
    d = dialog()
    o = open_mirror(d)
    if mutate:
        mutate(d)
    if mutate_open:
        mutate_open(o)
    (root / "dialog").mkdir(parents=True, exist_ok=True)
    (root / "dialog" / f"{TASK}.json").write_text(json.dumps(d, indent=1), encoding="utf-8")
    (root / "dialog" / f"{TASK}_Open.json").write_text(json.dumps(o, indent=1), encoding="utf-8")
    return root


def write_run(folder: Path, mode: str, rows: list[dict], method: str = "semantic_rag__multimodal",
              backbone: str = "gpt-5.4-mini", modality: str = "multimodal") -> Path:
    folder.mkdir(parents=True, exist_ok=True)
    (folder / "config.json").write_text(json.dumps({"task": TASK, "model": backbone, "method": method}))
    (folder / "metrics.json").write_text(json.dumps({
        "task_name": TASK, "model_name": backbone, "method_name": method.split("__")[0],
        "method_modality": modality, "mode": mode, "num_qas_run": len(rows)}))
    with (folder / "predictions.jsonl").open("w") as fh:
        for r in rows:
            fh.write(json.dumps(r) + "\n")
    return folder
