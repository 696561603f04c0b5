"""A small MOSAIC-style benchmark (open items with gold chains over image, video, audio and text
rounds, real media files) and runs over it whose scores, retrieved and delivered lists are chosen
by hand, so every MOSAIC table can be computed on paper (tests/scorer/sections/test_mosaic_sections.py
does). Conditions are declared in metrics.json unless `declare=False`.

Items (answerable 1–5, 6 an abstention control); a fact is (round, modality, challenge):
  1: D1:1 image fine_attribute, D2:1 audio prosody      2: D1:3 video video_order
  3: D2:2 image spatial, D1:1 image background           4: D2:1 audio prosody, D3:1 audio prosody,
  5: D1:2 text                                              D1:3 video video_count
Sessions D1–D3 hold required facts; D4 is filler.
"""

from __future__ import annotations

import json
from pathlib import Path

from PIL import Image

from tests.builders.benchmarks import png, wav

TASK = "Mosaic_Mini"
CHAINS = {
    1: [("D1:1", "narrow", "image", "fine_attribute"), ("D2:1", "answer", "audio", "prosody")],
    2: [("D1:3", "answer", "video", "video_order")],
    3: [("D2:2", "select", "image", "spatial"), ("D1:1", "answer", "image", "background")],
    4: [("D2:1", "narrow", "audio", "prosody"), ("D3:1", "select", "audio", "prosody"),
        ("D1:3", "answer", "video", "video_count")],
    5: [("D1:2", "answer", "text", None)],
}
# run method → (declaration, scores of items 1–5, delivered lists per item or "gold")
RETRIEVED = {1: ["D1:1", "D2:1", "D4:1"], 2: ["D4:2", "D1:3"], 3: ["D2:2", "D3:2", "D1:1"],
             4: ["D2:1", "D1:3", "D4:1"], 5: ["D1:2"]}
RUNS = {
    "gold_facts__text_only": ({"condition": "gold_symbolic"}, [1, 1, 1, 0.75, 1], "gold"),
    "clue_only_context__multimodal": ({"condition": "gold_native"}, [1, 0.5, 1, 0.25, 1], "gold"),
    "clue_only_context__text_only": ({"condition": "gold_generic_text"}, [0.5, 0.5, 1, 0, 1], "gold"),
    "semantic_rag__multimodal": ({"condition": "retrieved_full", "budget": "full", "ranking": "R"},
                                 [1, 0.5, 0.5, 0.25, 1], {i: RETRIEVED[i] for i in RETRIEVED}),
    "semantic_rag_budget__multimodal": ({"condition": "retrieved_budget", "budget": 2, "ranking": "R"},
                                        [0.5, 0.5, 0.5, 0, 1], {i: RETRIEVED[i][:2] for i in RETRIEVED}),
    "semantic_rag_budget1__multimodal": ({"budget": 1, "ranking": "R"}, [0, 0.5, 0.25, 0, 1],
                                         {i: RETRIEVED[i][:1] for i in RETRIEVED}),
    "carrier_ocr__multimodal": ({"carrier": "image:ocr_text"}, [0.5, 0.5, 0.25, 0.25, 1], "gold"),
}
BACKBONE = "reader-1"


def _gif(path: Path) -> None:
    path.parent.mkdir(parents=True, exist_ok=True)
    frames = [Image.new("RGB", (16, 12), c) for c in ("red", "green", "blue")]
    frames[0].save(path, save_all=True, append_images=frames[1:], duration=100, loop=0)


def _turn(rid: str, text: str, kind: str | None = None, n: int = 1) -> dict:
    d = {"round": rid, "user": text, "assistant": "Noted."}
    stem = rid.replace(":", "_")
    if kind == "image":
        d["input_image"] = [f"image/{TASK}/{stem}_{k}.png" for k in range(n)]
        d["image_caption"] = [f"A photo {k}." for k in range(n)]
    elif kind == "video":
        d["input_video"] = [f"video/{TASK}/{stem}.gif"]
        d["video_caption"] = ["A short clip."]
    elif kind == "audio":
        d["input_audio"] = [f"audio/{TASK}/{stem}.wav"]
        d["audio_transcript"] = ["(a voice note)"]
    return d


SESSIONS = [
    ("D1", [("D1:1", "image", 1), ("D1:2", None, 0), ("D1:3", "video", 1)]),
    ("D2", [("D2:1", "audio", 1), ("D2:2", "image", 2), ("D2:3", "image", 1)]),
    ("D3", [("D3:1", "audio", 1), ("D3:2", None, 0)]),
    ("D4", [("D4:1", "image", 1), ("D4:2", "audio", 1)]),
]


def write_bench(root: Path) -> Path:
    sessions = []
    for s_i, (sid, turns) in enumerate(SESSIONS):
        dialogues = []
        for rid, kind, n in turns:
            d = _turn(rid, f"Round {rid}.", kind, n)
            for p in d.get("input_image", []):
                png(root / p, "blue")
            for p in d.get("input_video", []):
                _gif(root / p)
            for p in d.get("input_audio", []):
                wav(root / p)
            dialogues.append(d)
        sessions.append({"session_id": sid, "date": f"2024-03-{10 + s_i}", "dialogues": dialogues})
    qas = []
    for idx in range(1, 7):
        qa = {"point": [["X1"], ["Y2"]], "question": f"Question {idx}?", "answer": f"answer {idx}",
              "cluster": "p1" if idx <= 3 else "p2"}
        if idx in CHAINS:
            qa["clue"] = [r for r, *_ in CHAINS[idx]]
            qa["session_id"] = sorted({r.split(":")[0] for r in qa["clue"]})
            qa["chain"] = [{"round": r, "role": role, "modality": m, **({"challenge": c} if c else {})}
                           for r, role, m, c in CHAINS[idx]]
        else:
            qa.update({"clue": [], "session_id": [], "answerable": False, "answer": "Not mentioned"})
        qas.append(qa)
    (root / "dialog").mkdir(parents=True, exist_ok=True)
    (root / "dialog" / f"{TASK}.json").write_text(json.dumps(
        {"character_profile": {"name": "Mo"}, "multi_session_dialogues": sessions, "human-annotated QAs": qas}))
    return root


def write_runs(runs: Path, declare: bool = True, only: tuple[str, ...] | None = None) -> Path:
    for k, (method, (decl, scores, delivered)) in enumerate(RUNS.items()):
        if only is not None and method not in only:
            continue
        folder = runs / TASK / f"20260101_00{k:02d}00_{BACKBONE}_{method}"
        folder.mkdir(parents=True, exist_ok=True)
        config = {"task": {"name": TASK}, "dataset": {"dialog_json": f"dialog/{TASK}.json"},
                  "model": {"name": BACKBONE}, "method": {"name": method}}
        metrics = {"task_name": TASK, "model_name": BACKBONE, "method_name": method, "mode": "open",
                   "dialog_json": f"dialog/{TASK}.json", "method_modality": "multimodal", **(decl if declare else {})}
        (folder / "config.json").write_text(json.dumps(config))
        (folder / "metrics.json").write_text(json.dumps(metrics))
        rows = []
        for idx in range(1, 7):
            row = {"idx": idx, "mode": "open", "question": f"Question {idx}?", "gt": f"answer {idx}",
                   "pred": "something", "judge": scores[idx - 1] if idx <= 5 else 1.0,
                   "method_name": method, "effective_method_name": method}
            if idx <= 5:
                if delivered == "gold":
                    row["delivered"] = [r for r, *_ in CHAINS[idx]]
                else:
                    row["retrieved"] = RETRIEVED[idx]
                    row["delivered"] = delivered[idx]
            rows.append(row)
        (folder / "predictions.jsonl").write_text("".join(json.dumps(r) + "\n" for r in rows))
    return runs


def conditions_file(path: Path) -> Path:
    path.write_text(json.dumps({f"{BACKBONE}/{m}": decl for m, (decl, _, _) in RUNS.items()}))
    return path
