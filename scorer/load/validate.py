"""Checks of a loaded benchmark (and its runs): schema, references, media, joins.

Each finding is one line `file:location: severity: message`. Loading stays lenient (memeye.py keeps
what it can); this module decides what is wrong, from the model and the raw dicts it keeps.
"""

from __future__ import annotations

import math
import os
import stat
import wave
from collections import Counter
from dataclasses import dataclass
from pathlib import Path
from typing import Iterable, Iterator, Sequence

from scorer.errors import DataError
from scorer.load.join import Joiner
from scorer.load.json_keys import repeated_keys, repeated_keys_by_line, repeated_text
from scorer.load.jsonio import read_regular
from scorer.load.memeye import QA_KEYS, legacy_answer_letter, relpath
from scorer.load.run_checks import check_run
from scorer.model.run import CONFIG, METRICS, PREDICTIONS
from scorer.model import (
    CHAIN_CHALLENGES,
    CHAIN_MODALITIES,
    CHAIN_ROLES,
    X_LABELS,
    Y_LABELS,
    Benchmark,
    Item,
    Media,
    Rotation,
    Run,
    Task,
)

ERROR = "error"
WARNING = "warning"
NOTE = "note"  # worth knowing, nothing wrong (a task name matched loosely)


@dataclass(frozen=True, slots=True)
class Finding:
    file: str
    location: str
    severity: str
    message: str

    def __str__(self) -> str:
        where = f"{self.file}:{self.location}" if self.location else self.file
        return f"{where}: {self.severity}: {self.message}"


def media_problem(m: Media, decode: bool) -> str | None:
    """Why a media reference cannot be shown (unresolved, missing, or with `decode` a file that does
    not decode), or None; a remote reference is not checked."""
    if m.is_remote:
        return None
    if m.problem:
        return m.problem
    if m.path is None and not m.frames:
        return f"media file not found: {m.ref}"
    if not decode:
        return None
    for p in ([m.path] if m.path is not None else []) + list(m.frames):
        reason = undecodable(m.kind if p == m.path else "image", p)
        if reason:
            return f"{p.name}: {reason}"
    return None


def undecodable(kind: str, path: Path) -> str | None:
    """Why a media file cannot be decoded, or None. Reads headers only where that is enough."""
    try:
        st = os.stat(path)
    except OSError as err:  # a symlink loop, a name too long
        return f"cannot read: {err.strerror or err}"
    if stat.S_ISDIR(st.st_mode):
        if kind == "image":
            return "a folder, not an image file"
        try:
            return None if any(path.iterdir()) else "empty frame folder"
        except OSError as err:
            return f"cannot read: {err.strerror or err}"
    if not stat.S_ISREG(st.st_mode):  # a FIFO would block the decoder, a device never end
        return "not a regular file (a FIFO, device or socket)"
    suffix = path.suffix.lower()
    try:
        if kind == "image" or suffix in (".gif", ".webp", ".png", ".jpg", ".jpeg"):
            from PIL import Image

            with Image.open(path) as im:
                im.verify()
            return None
        if kind == "audio":
            if suffix == ".wav":
                with wave.open(str(path), "rb") as w:
                    if w.getnframes() == 0:
                        return "audio has no frames"
                return None
            try:
                import soundfile  # the audio extra reads FLAC/OGG/float WAV
            except (ImportError, OSError):
                return None
            soundfile.info(str(path))
            return None
        if kind == "video":
            with open(path, "rb") as fh:  # the header only: a video may be gigabytes
                head = fh.read(16)
            if len(head) < 12:
                return "file too short to be a video"
            if not _video_signature(head):
                return "not a video: no known container signature (MP4/MOV, WebM/MKV, AVI, MPEG, FLV, Ogg, ASF)"
            return None
    except Exception as err:  # any decoder failure is a finding, never a crash
        return f"cannot decode {kind}: {type(err).__name__}: {str(err)[:120]}"
    return None


def _json_kind(v: object) -> str:
    if isinstance(v, float) and not math.isfinite(v):
        return f"{v!r} (not JSON: a bare NaN or Infinity)".replace("nan ", "NaN ").replace("inf ", "Infinity ")
    if isinstance(v, bool):
        return f"{str(v).lower()} (a boolean)"
    if isinstance(v, (int, float)):
        return f"{v!r} (a number)"
    return "a list" if isinstance(v, list) else "an object" if isinstance(v, dict) else repr(v)


def _video_signature(head: bytes) -> bool:
    """The first 16 bytes of a file start one of the usual video containers."""
    return (head[4:8] in (b"ftyp", b"moov", b"mdat", b"free", b"wide", b"skip", b"pnot")  # MP4 / MOV / 3GP
            or head.startswith((b"\x1a\x45\xdf\xa3",  # Matroska / WebM
                                b"FLV", b"OggS", b"\x00\x00\x01\xba", b"\x00\x00\x01\xb3",  # FLV, Ogg, MPEG-PS/ES
                                b"\x30\x26\xb2\x75\x8e\x66\xcf\x11"))  # ASF / WMV
            or head.startswith(b"RIFF") and head[8:12] in (b"AVI ", b"AVIX")
            or head[:1] == b"\x47")  # MPEG-TS sync byte


def _labels(item: Item) -> list[str]:
    return sorted(item.x | item.y)


def unkeyed_rotations(item: Item) -> list[tuple[int, Rotation]]:
    """The rotations of an MCQ item whose answer letter is not one of their options (no choice can
    be right there)."""
    return [(k, rot) for k, rot in enumerate(item.rotations) if rot.answer not in rot.options]


def media_references(task: Task) -> Iterator[tuple[str, Media]]:
    """Every media reference of a task as `validate` counts them: each round's media, then each
    item's question images (once per item and mode), with where it is."""
    for s in task.sessions:
        for r in s.rounds:
            for k, m in enumerate(r.media):
                yield f"round {r.round_id} {m.kind}[{k}]", m
    for it in task.items:
        for k, m in enumerate(it.question_images):
            yield f"{it.item_id} ({it.mode}) question image[{k}]", m


def check_task(task: Task, decode: bool, root: Path | None = None) -> list[Finding]:
    out: list[Finding] = []
    # some item of the task has a `point`: one without is an omission (a task converted from LoCoMo,
    # with no X/Y labels at all, is not)
    pointed = any("point" in it.raw for it in task.items)
    seen: Counter[str] = Counter()
    out += _empty_parts(task, root)
    for s in task.sessions:
        file = s.source.file
        if not s.rounds:
            out.append(Finding(file, f"session {s.session_id}", WARNING, "session has no rounds"))
        for r in s.rounds:
            seen[r.round_id] += 1
            if seen[r.round_id] == 2:
                out.append(Finding(file, f"round {r.round_id}", ERROR, "duplicate round id"))
            for k, m in enumerate(r.media):
                why = media_problem(m, decode)
                if why:
                    out.append(Finding(file, f"round {r.round_id} {m.kind}[{k}]", ERROR, why))
    session_ids = {s.session_id for s in task.sessions}
    dup_items: Counter[tuple[str, str]] = Counter()
    for it in task.items:
        dup_items[(it.item_id, it.mode)] += 1
        out += check_item(task, it, session_ids, decode, pointed)
    for (iid, mode), n in dup_items.items():
        if n > 1:
            out.append(Finding(str(task.files[0]) if task.files else task.name, iid, ERROR,
                               f"item id {iid} appears {n} times in mode {mode}"))
    return out


def _empty_parts(task: Task, root: Path | None) -> list[Finding]:
    """A dialog file with no QA items, a task with no sessions: each said once, on its file (the
    loader reads both as empty, and every count and matrix would quietly be smaller)."""
    out = []
    files = [relpath(f, root) if root is not None else str(f) for f in task.files]
    with_items = {it.source.file for it in task.items}
    for rel in files:
        if rel not in with_items:
            out.append(Finding(rel, "", WARNING, f"no QA items (no {QA_KEYS[0]!r} list, or an empty one)"))
    if not task.sessions and files:
        out.append(Finding(files[0], "", WARNING, "no sessions: the dialogue is empty "
                                                  "('multi_session_dialogues' missing or empty)"))
    return out


def check_item(task: Task, it: Item, session_ids: set[str], decode: bool, pointed: bool = False) -> list[Finding]:
    f, loc = it.source.file, it.source.location
    out: list[Finding] = []

    def add(sev: str, msg: str) -> None:
        out.append(Finding(f, loc, sev, msg))

    raw_q, raw_a = it.raw.get("question"), it.raw.get("answer")
    if raw_q is not None and not isinstance(raw_q, str):
        add(ERROR, f"question must be text, not {_json_kind(raw_q)}")
    elif not it.question.strip():
        add(ERROR, "empty question")
    if isinstance(raw_a, float) and not math.isfinite(raw_a) or isinstance(raw_a, (dict, list)):
        add(ERROR, f"answer must be text, not {_json_kind(raw_a)}")
    if not it.answer.strip() and it.answerable:
        add(WARNING, "empty gold answer")
    bad = [lab for lab in _labels(it) if lab not in X_LABELS + Y_LABELS]
    raw_point = it.raw.get("point")
    if bad:
        add(ERROR, f"label(s) outside X1–X4/Y1–Y3: {', '.join(bad)}")
    if raw_point is None and pointed:
        add(ERROR, "no point: the item is in no X/Y cell, and every matrix leaves it out")
    elif raw_point is not None and not it.x and not it.y and not bad:
        add(ERROR, f"point {raw_point!r} holds no X or Y label")
    elif raw_point is not None and (not it.x or not it.y):
        add(WARNING, f"item has no {'X' if not it.x else 'Y'} label")
    for c in it.clue_rounds:
        if not task.has_round(c):
            add(ERROR, f"clue round {c} does not exist")
    clue_set = set(it.clue_rounds)
    for k, fact in enumerate(it.chain):
        if not task.has_round(fact.round_id):
            if fact.round_id not in clue_set:  # already reported as a clue
                add(ERROR, f"chain[{k}] round {fact.round_id or '(none)'} does not exist")
        if fact.role not in CHAIN_ROLES:
            add(WARNING, f"chain[{k}] role {fact.role!r} is not one of {', '.join(CHAIN_ROLES)}")
        if fact.modality is not None and fact.modality not in CHAIN_MODALITIES:
            add(WARNING, f"chain[{k}] modality {fact.modality!r} is not one of {', '.join(CHAIN_MODALITIES)}")
        if fact.challenge is not None and fact.challenge not in CHAIN_CHALLENGES:
            add(WARNING, f"chain[{k}] challenge {fact.challenge!r} is unknown")
    for s in it.session_ids:
        if s not in session_ids:
            add(ERROR, f"session {s} does not exist")
    if "answerable" in it.raw and not isinstance(it.raw["answerable"], bool):
        add(ERROR, f"answerable must be true or false, not {it.raw['answerable']!r}")
    if it.mode == "mcq":
        if not it.rotations:
            add(ERROR, "MCQ item has no usable options")
        if it.mcq_form == "legacy" and isinstance(it.raw.get("options"), dict):
            _, doubt = legacy_answer_letter(it.raw.get("answer"), it.raw["options"])
            if doubt:
                add(WARNING, doubt)
        for k, rot in unkeyed_rotations(it):
            add(ERROR, f"rotation {k}: answer letter {rot.answer!r} is not an option "
                       f"({', '.join(sorted(rot.options)) or 'none'})")
    for k, m in enumerate(it.question_images):
        why = media_problem(m, decode)
        if why:
            add(ERROR, f"question image[{k}]: {why}")
    return out


def check_mirrors(bench: Benchmark) -> list[Finding]:
    """MCQ items and their open mirrors share an id; a question present in one mode only is worth a look."""
    out = []
    for task in bench.tasks:
        modes = {m: {i.item_id for i in task.items if i.mode == m} for m in ("mcq", "open")}
        if modes["mcq"] and modes["open"]:
            for iid in sorted(modes["mcq"] - modes["open"]):
                out.append(Finding(task.name, iid, WARNING, "MCQ item has no open mirror"))
            for iid in sorted(modes["open"] - modes["mcq"]):
                out.append(Finding(task.name, iid, WARNING, "open item has no MCQ mirror"))
    return out


def check_runs(bench: Benchmark, runs: Sequence[Run]) -> list[Finding]:
    out = []
    joiner = Joiner(bench)
    for run in runs:
        out += [Finding(prob.location, "", prob.severity, prob.message) for prob in check_run(run, bench, joiner)]
    for run in runs:
        out += duplicate_rows(run, joiner)
    for prob in joiner.problems(runs):
        # Scoring goes on past a question mismatch (a warning there); validation calls it an error,
        # since a row joined to the wrong question makes every number built on it wrong.
        severity = ERROR if prob.kind == "question_mismatch" else prob.severity
        out.append(Finding(str(prob.run.folder / PREDICTIONS), str(prob.prediction.line),
                           severity, prob.message))
    keys = Counter((r.backbone, r.method, r.mode, r.task) for r in runs)
    for (b, m, mode, t), n in keys.items():
        if n > 1:
            out.append(Finding(t, f"{b}/{m}", WARNING, f"{n} run folders for the same task and mode ({mode}); rows of all are used"))
    return out


def duplicate_rows(run: Run, joiner: Joiner) -> list[Finding]:
    """Rows of one run folder that answer an item an earlier row answered: an error (a run scores each
    item once; which row would count is a guess)."""
    first: dict[tuple[str, str], int] = {}
    out = []
    for p in run.predictions:
        item = joiner.item(run, p)
        if item is None:
            continue
        line = first.setdefault((item.item_id, item.mode), p.line)
        if line != p.line:
            out.append(Finding(str(run.folder / PREDICTIONS), str(p.line), ERROR,
                               f"row repeats item {item.item_id} ({item.mode}) answered on line {line}"))
    return out


RUN_JSON_FILES = (CONFIG, METRICS)  # a run folder's JSON files besides its predictions


def repeated_key_findings(bench: Benchmark, runs: Sequence[Run]) -> list[Finding]:
    """A key twice in one object of a dialog file, a run's config or metrics, or a prediction row:
    an error each (the loaders keep the last value without a word: a QA list repeated empty drops
    every item of its file, a second `judge` key is the score). The files are read again, as text;
    one that cannot be read was named by its loader already."""
    out = []

    def text(path: Path) -> bytes | None:
        try:
            return read_regular(path)
        except DataError:
            return None

    for task in bench.tasks:
        for f in task.files:
            data = text(Path(f))
            if data is not None:
                rel = relpath(f, bench.root)
                out += [Finding(rel, where, ERROR, repeated_text(where, key)) for where, key in repeated_keys(data)]
    for run in runs:
        for name in RUN_JSON_FILES:
            data = text(run.folder / name)
            if data is not None:
                out += [Finding(str(run.folder / name), where, ERROR, repeated_text(where, key))
                        for where, key in repeated_keys(data)]
        data = text(run.folder / PREDICTIONS)
        if data is not None:
            out += [Finding(str(run.folder / PREDICTIONS), str(line), ERROR,
                            repeated_text(where, key, "the row"))
                    for line, where, key in repeated_keys_by_line(data)]
    return out


def validate(bench: Benchmark, runs: Iterable[Run] = (), decode_media: bool = True) -> list[Finding]:
    findings: list[Finding] = []
    runs = list(runs)
    for task in bench.tasks:
        findings += check_task(task, decode_media, bench.root)
    findings += check_mirrors(bench)
    findings += check_runs(bench, runs)
    findings += repeated_key_findings(bench, runs)
    return findings
