"""Reader for MemEye-format benchmarks (DESIGN.md §2), with the omni-modal and evidence extensions.

Accepts a benchmark root in the Hugging Face layout (`<root>/dialog/<Task>.json` and
`<root>/dialog/<Task>_Open.json`, images under `<root>/image/<Task>/`), a folder of dialog files, or
a single dialog file. Media are only located (one stat per file), never decoded.

The reader is lenient about item-level shapes: it keeps what it can and leaves the judgement to
validate.py, which inspects the raw dicts kept on the model. Only a file that cannot be read as a
dialog at all is a DataError.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any, Iterable

from scorer.errors import DataError
from scorer.load.jsonio import as_list, as_text, read_json, stat_or_none
from scorer.load.paths import is_remote, resolve_media
from scorer.metrics.constants import OPTION_LETTERS as LETTERS
from scorer.model import (
    Benchmark,
    ChainFact,
    Item,
    Media,
    Round,
    Rotation,
    Session,
    Source,
    Task,
    frozen_map,
)
from scorer.model.rows import json_kind

OPEN_SUFFIX = "_Open"
QA_KEYS = ("human-annotated QAs", "human_annotated_QAs", "qas", "QAs")


def dialog_files(path: Path) -> tuple[Path, list[Path]]:
    """(benchmark root, dialog files) for a root, a dialog folder, or a single dialog file."""
    path = Path(path)
    if stat_or_none(path, follow=False) is None:
        raise DataError(path, "", "no such file or folder")
    stat_or_none(path)  # a symlink loop, a name too long: one line naming it
    if path.is_file():
        root = path.parent.parent if path.parent.name == "dialog" else path.parent
        return root, [path]
    folder = path / "dialog" if (path / "dialog").is_dir() else path
    # Every entry named *.json: one that is not a regular file (a folder, a symlink loop, a FIFO) is
    # an error when read, never skipped without a word.
    files = sorted(folder.glob("*.json"))
    if not files:
        raise DataError(path, "", "no dialog JSON files found (expected dialog/<Task>.json)")
    return path, files


def task_name_of(file: Path) -> tuple[str, bool]:
    stem = file.stem
    if stem.endswith(OPEN_SUFFIX):
        return stem[: -len(OPEN_SUFFIX)], True
    return stem, False


def parse_point(point: Any) -> tuple[frozenset[str], frozenset[str]]:
    """`[["X2"], ["Y1"]]` (or `["X2", "Y1"]`, or `{"x": [...], "y": [...]}`) → (X set, Y set)."""
    labels: list[str] = []
    if isinstance(point, dict):
        labels = [str(v) for k in ("x", "X", "y", "Y") for v in as_list(point.get(k))]
    else:
        for part in as_list(point):
            labels += [str(v) for v in as_list(part)]
    labels = [lab.strip().upper() for lab in labels]
    x = frozenset(lab for lab in labels if lab.startswith("X"))
    y = frozenset(lab for lab in labels if lab.startswith("Y"))
    return x, y


def legacy_answer_letter(item_answer: Any, options: dict) -> tuple[str, str | None]:
    """(answer letter, why it is in doubt) of a legacy MCQ item (one options dict). As the MemEye
    runner scores it: the item's `answer` when that is an option letter, else `options.answer`.
    In doubt when the two name different letters, or when `answer` is the text of an option other
    than the one `options.answer` names."""
    opts = {k: as_text(v) for k, v in options.items() if k in LETTERS}
    given = as_text(item_answer).strip()
    own = as_text(options.get("answer")).strip().upper()
    if given.upper() in opts:
        letter = given.upper()
        if own and own != letter:
            return letter, (f"answer {given!r} and options.answer {own!r} name different letters; "
                            f"{letter!r} is used, as the upstream runner reads `answer` first")
        return letter, None
    letter = own or given.upper()
    by_text = [k for k, v in opts.items() if given and v.strip().casefold() == given.casefold()]
    if own and by_text and own not in by_text:
        return letter, (f"answer {given!r} is the text of option {by_text[0]}, but options.answer is {own!r}; "
                        f"{own!r} is used")
    return letter, None


def parse_rotations(options: Any, item_answer: Any) -> tuple[tuple[Rotation, ...], str | None]:
    """Both MCQ forms: a list of rotations (each with its own `answer`) or one `{A..D}` dict."""
    if options is None or options == [] or options == {}:
        return (), None
    if isinstance(options, dict):
        opts = {k: as_text(v) for k, v in options.items() if k in LETTERS}
        letter, _ = legacy_answer_letter(item_answer, options)
        return (Rotation(frozen_map(opts), letter),), "legacy"
    rotations = []
    for rot in as_list(options):
        if not isinstance(rot, dict):
            continue
        opts = {k: as_text(v) for k, v in rot.items() if k in LETTERS}
        letter = as_text(rot.get("answer", "")).strip().upper()
        rotations.append(Rotation(frozen_map(opts), letter))
    return tuple(rotations), "rotation"


class _MediaResolver:
    def __init__(self, root: Path, allow_outside_root: bool) -> None:
        self.root = root
        self.allow = allow_outside_root
        self._cache: dict[tuple[Path, str], tuple[Path | None, str | None]] = {}

    def media(self, kind: str, ref: Any, dialog_file: Path, text: Any = None, media_id: Any = None,
              frames: Iterable[Any] = ()) -> Media:
        ref_s = as_text(ref)
        caption = as_text(text) or None
        mid = as_text(media_id) or None
        if ref is not None and not isinstance(ref, str):  # 5, true, {...}: not a file name read as one
            return Media(kind, ref_s, text=caption, media_id=mid,
                         problem=f"media reference must be text (a path or URL), not {json_kind(ref)}: {ref_s[:40]}")
        if is_remote(ref_s):
            return Media(kind, ref_s, url=ref_s, text=caption, media_id=mid)
        path, problem = self.resolve(ref_s, dialog_file)
        if path is not None and kind != "video" and path.is_dir():  # a video may be a folder of frames
            path, problem = None, f"media path names a folder, not a file: {ref_s}"
        frame_paths = []
        for f in frames:
            fp, fprob = self.resolve(as_text(f), dialog_file)
            if fp is not None:
                frame_paths.append(fp)
            elif problem is None and path is None:
                problem = fprob
        if path is None and frame_paths:
            problem = None  # a video given only as frames is fine
        return Media(kind, ref_s, path=path, text=caption, media_id=mid,
                     frames=tuple(frame_paths), problem=problem)

    def resolve(self, ref: str, dialog_file: Path) -> tuple[Path | None, str | None]:
        key = (dialog_file.parent, ref)
        if key not in self._cache:
            self._cache[key] = resolve_media(ref, dialog_file, self.root, self.allow)
        return self._cache[key]


def _nth(values: list, i: int) -> Any:
    return values[i] if i < len(values) else None


def round_media(turn: dict, dialog_file: Path, res: _MediaResolver) -> tuple[Media, ...]:
    out: list[Media] = []
    images = as_list(turn.get("input_image"))
    ids = as_list(turn.get("image_id"))
    caps = as_list(turn.get("image_caption"))
    for i, ref in enumerate(images):
        out.append(res.media("image", ref, dialog_file, _nth(caps, i), _nth(ids, i)))
    videos = as_list(turn.get("input_video"))
    frames = turn.get("video_frames")
    vcaps = as_list(turn.get("video_caption"))
    # video_frames: a list of frame lists (one per video) or, for one video, a flat list of paths.
    if isinstance(frames, list) and frames and all(isinstance(f, str) for f in frames):
        frame_lists = [frames]
    else:
        frame_lists = [as_list(f) for f in as_list(frames)]
    if not videos and frame_lists:
        videos = [f"frames:{i}" for i in range(len(frame_lists))]
    for i, ref in enumerate(videos):
        fl = _nth(frame_lists, i) or []
        if str(ref).startswith("frames:"):
            m = res.media("video", fl[0] if fl else "", dialog_file, _nth(vcaps, i), None, fl)
            out.append(Media("video", f"{len(fl)} frames", None, None, m.text, None, m.frames,
                             m.problem if not m.frames else None))
        else:
            out.append(res.media("video", ref, dialog_file, _nth(vcaps, i), None, fl))
    audios = as_list(turn.get("input_audio"))
    trans = as_list(turn.get("audio_transcript"))
    for i, ref in enumerate(audios):
        out.append(res.media("audio", ref, dialog_file, _nth(trans, i)))
    return tuple(out)


def read_sessions(data: dict, file: Path, rel: str, res: _MediaResolver, start_order: int = 0) -> tuple[Session, ...]:
    raw_sessions = data.get("multi_session_dialogues")
    if raw_sessions is None:
        raw_sessions = []
    if not isinstance(raw_sessions, list):
        raise DataError(file, "multi_session_dialogues", "must be a list of sessions")
    sessions: list[Session] = []
    order = start_order
    for s_i, sess in enumerate(raw_sessions):
        if not isinstance(sess, dict):
            raise DataError(file, f"multi_session_dialogues[{s_i}]", "session must be an object")
        sid = as_text(sess.get("session_id")) or f"D{s_i + 1}"
        date = as_text(sess.get("date")) or None
        turns = sess.get("dialogues")
        if turns is None:  # absent: a session without rounds (validate says so); {} or "" is an error
            turns = []
        if not isinstance(turns, list):
            raise DataError(file, f"session {sid}", "dialogues must be a list")
        rounds = []
        for t_i, turn in enumerate(turns):
            if not isinstance(turn, dict):
                raise DataError(file, f"session {sid} round {t_i + 1}", "round must be an object")
            rid = as_text(turn.get("round")) or f"{sid}:{t_i + 1}"
            rounds.append(Round(
                round_id=rid,
                session_id=sid,
                position=t_i + 1,
                order=order,
                user=as_text(turn.get("user")),
                assistant=as_text(turn.get("assistant")),
                media=round_media(turn, file, res),
                date=date,
                raw=frozen_map(turn),
            ))
            order += 1
        sessions.append(Session(sid, s_i, date, tuple(rounds), Source(rel, f"session {sid}")))
    return tuple(sessions)


def qa_list(data: dict, file: Path) -> list:
    for key in QA_KEYS:
        if key in data:
            qas = data[key]
            if not isinstance(qas, list):
                raise DataError(file, key, "must be a list of QA items")
            return qas
    return []


def read_chain(raw: Any, clues: tuple[str, ...]) -> tuple[ChainFact, ...]:
    if not raw:
        return tuple(ChainFact(c, "answer") for c in clues)
    facts = []
    for fact in as_list(raw):
        if isinstance(fact, str):
            facts.append(ChainFact(fact, "answer"))
        elif isinstance(fact, dict):
            facts.append(ChainFact(
                as_text(fact.get("round")),
                as_text(fact.get("role")) or "answer",
                as_text(fact.get("modality")) or None,
                as_text(fact.get("challenge")) or None,
            ))
    return tuple(facts)


def read_items(data: dict, file: Path, rel: str, task: str, is_open_file: bool,
               res: _MediaResolver) -> list[Item]:
    items = []
    for i, qa in enumerate(qa_list(data, file)):
        idx = i + 1
        src = Source(rel, f"QA #{idx}")
        if not isinstance(qa, dict):
            raise DataError(rel, f"QA #{idx}", "QA item must be an object")
        x, y = parse_point(qa.get("point"))
        options = qa.get("options")
        rotations, form = parse_rotations(options, qa.get("answer"))
        mode = "open" if is_open_file or not rotations and form is None else "mcq"
        clues = tuple(as_text(c).strip() for c in as_list(qa.get("clue")))
        q_images = tuple(
            res.media("image", ref, file)
            for key in ("question_image", "question_images")
            for ref in as_list(qa.get(key))
        )
        answerable = qa.get("answerable", True)
        items.append(Item(
            item_id=as_text(qa.get("id")) or f"{task}:{idx}",
            task=task,
            index=idx,
            mode=mode,
            question=as_text(qa.get("question")),
            answer=as_text(qa.get("answer")),
            x=x,
            y=y,
            session_ids=tuple(as_text(s) for s in as_list(qa.get("session_id"))),
            clue_rounds=clues,
            chain=read_chain(qa.get("chain"), clues),
            rotations=rotations if mode == "mcq" else (),
            mcq_form=form if mode == "mcq" else None,
            answerable=answerable if isinstance(answerable, bool) else True,
            cluster=as_text(qa.get("cluster")) or task,
            question_images=q_images,
            explanation=as_text(qa.get("explanation")),
            source=src,
            raw=frozen_map(qa),
        ))
    return items


def relpath(path: Path, root: Path) -> str:
    try:
        return str(path.resolve().relative_to(root.resolve()))
    except ValueError:
        return str(path)


def load_benchmark(path: str | Path, allow_outside_root: bool = False,
                   problems: list[DataError] | None = None) -> Benchmark:
    """Read a benchmark. Raises DataError (one line: file:location: message) when a file is unreadable;
    with `problems`, a dialog file that cannot be read is appended there and the others are read
    (validate reports each as a finding), unless none can be read."""
    root, files = dialog_files(Path(path))
    res = _MediaResolver(root, allow_outside_root)
    by_task: dict[str, dict[str, Any]] = {}
    failed: list[DataError] = []
    for file in files:
        try:
            _read_dialog_file(file, root, res, by_task)
        except DataError as err:
            if problems is None:
                raise
            failed.append(err)
    if failed and not by_task:
        raise failed[0]
    if problems is not None:
        problems += failed
    tasks = []
    for name in sorted(by_task):
        e = by_task[name]
        items = sorted(e["items"], key=lambda it: (it.mode != "mcq", it.index))
        tasks.append(Task(
            name=name,
            sessions=e["sessions"] or (),
            items=tuple(items),
            files=tuple(e["files"]),
            profile=frozen_map(e["profile"] if isinstance(e["profile"], dict) else {}),
        ))
    return Benchmark(root=root, name=root.name, tasks=tuple(tasks))


def _read_dialog_file(file: Path, root: Path, res: _MediaResolver, by_task: dict[str, dict[str, Any]]) -> None:
    """Add one dialog file's sessions and items to `by_task` (nothing when it raises DataError)."""
    data = read_json(file)
    rel = relpath(file, root)
    if not isinstance(data, dict):
        raise DataError(rel, "", "a dialog file must be a JSON object")
    task, is_open = task_name_of(file)
    entry = by_task.get(task) or {"sessions": None, "items": [], "files": [], "profile": {}}
    # The MCQ file and its _Open mirror carry the same dialogue: read it once, MCQ file first.
    sessions, profile = entry["sessions"], entry["profile"]
    if entry["sessions"] is None or (not is_open and not entry["sessions"]):
        sessions = read_sessions(data, file, rel, res)
        profile = data.get("character_profile") or {}
    items = read_items(data, file, rel, task, is_open, res)
    entry.update(sessions=sessions, profile=profile, items=entry["items"] + items, files=entry["files"] + [file])
    by_task[task] = entry
