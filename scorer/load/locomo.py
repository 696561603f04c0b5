"""Importer: LoCoMo (snap-research, `locomo10.json`) → a benchmark in our MemEye-style format.

One sample becomes one task (`locomo_<sample_id>`), written as `dialog/<task>_Open.json`:
`session_N` → session `D<N>` (ordered by N as a number, dated by `session_N_date_time`), each turn →
one round keyed by its `dia_id` (so evidence ids map 1:1), `qa` → open items. LoCoMo has two named
speakers rather than a user and an assistant: speaker_a's turns fill `user`, speaker_b's fill
`assistant`, the text stays verbatim and the name is kept in `speaker` (the profile records the
role → name map). `img_url` → `input_image` (remote URL; an embedded `data:` image is written to
`image/<task>/`), `blip_caption` → `image_caption`. Category 5 (adversarial) → `answerable: false`.

Real data is dirty, so evidence strings are normalised where that is unambiguous (several ids in
one string, zero padding, lower case, stray characters) and everything else is reported, never
dropped silently: unresolvable ids stay out of `clue` but are kept on the item (`evidence`,
`unresolved_evidence`) and listed in `IMPORT_REPORT.json`.
"""

from __future__ import annotations

import base64
import binascii
import json
import re
from pathlib import Path
from typing import Any

from scorer.errors import DataError
from scorer.load.jsonio import as_list, as_text, read_json, stat_or_none
from scorer.load.locomo_evidence import EvidenceResolver
from scorer.load.locomo_write import REPORT_NAME, Conversion, write  # noqa: F401  (REPORT_NAME: part of this importer's face)
from scorer.load.paths import is_remote

ABSTAIN_ANSWER = "Not mentioned in the conversation"  # what LoCoMo's own scorer accepts for category 5
ADVERSARIAL = 5
CATEGORIES = range(1, 6)  # LoCoMo's QA categories (1 multi-hop, 2 temporal, 3 open-domain, 4 single-hop, 5 adversarial)
_SESSION = re.compile(r"session_(\d+)")
_SESSION_DATE = re.compile(r"session_(\d+)_date_time")
_DATA_URI = re.compile(r"data:([\w.+-]+/[\w.+-]+)?((?:;[^,;]*)*),(.*)", re.DOTALL)
_EXT = {"image/jpeg": "jpg", "image/jpg": "jpg", "image/png": "png", "image/gif": "gif", "image/webp": "webp"}
# Turn keys we map onto our own fields; every other key is copied verbatim onto the round.
_MAPPED_TURN_KEYS = {"dia_id", "speaker", "text", "img_url", "blip_caption"}
_OUR_ROUND_KEYS = {"round", "speaker", "user", "assistant", "input_image", "image_caption", "image_id",
                   "input_video", "video_frames", "video_caption", "input_audio", "audio_transcript"}
_KNOWN_SAMPLE_KEYS = {"sample_id", "conversation", "qa", "observation", "session_summary", "event_summary"}


def safe_name(text: str, fallback: str) -> str:
    """A file-system-safe name: letters, digits, `.`, `_`, `-`; never empty, never hidden."""
    name = re.sub(r"[^A-Za-z0-9._-]+", "_", text).strip("._")[:100]
    return name or fallback



class _Collector:
    """Counts and findings for IMPORT_REPORT.json."""

    def __init__(self) -> None:
        self.counts: dict[str, int] = {k: 0 for k in (
            "conversations", "sessions", "date_only_sessions", "rounds", "images", "remote_images",
            "embedded_images", "captions_without_image", "qa_items", "unanswerable")}
        self.categories: dict[str, int] = {}
        self.evidence: dict[str, int] = {k: 0 for k in (
            "strings", "exact", "normalised_strings", "normalised_ids", "unresolved", "duplicates_removed",
            "items_without_clue")}
        self.normalised: list[dict] = []
        self.unresolved: list[dict] = []
        self.findings: list[dict] = []
        self.tasks: list[dict] = []

    def finding(self, sample: str, where: str, kind: str, message: str, raw: Any = None) -> None:
        entry = {"sample": sample, "where": where, "kind": kind, "message": message}
        if raw is not None:
            entry["raw"] = raw
        self.findings.append(entry)


def _session_keys(conv: dict, file: str, loc: str) -> tuple[dict[int, str], dict[int, str]]:
    """(N → `session_N` key holding turns, N → `session_N_date_time` key), N as an integer."""
    turns: dict[int, str] = {}
    dates: dict[int, str] = {}
    for key in conv:
        for pattern, target in ((_SESSION, turns), (_SESSION_DATE, dates)):
            m = pattern.fullmatch(key)
            if m:
                n = int(m.group(1))
                if n in target:
                    raise DataError(file, f"{loc}.{key}", f"two keys number session {n} ({target[n]}, {key})")
                target[n] = key
    return turns, dates


def _per_session(sample: dict, key: str, template: str, n: int) -> Any:
    block = sample.get(key)
    return block.get(template.format(n=n)) if isinstance(block, dict) else None


def _round_images(turn: dict, task: str, rid: str, out: Conversion, col: _Collector, sample: str
                  ) -> tuple[list[str], list[str]]:
    """(input_image refs, captions) for one turn; embedded `data:` images become files under image/."""
    urls = as_list(turn.get("img_url"))
    caps = as_list(turn.get("blip_caption"))
    refs: list[str] = []
    for k, url in enumerate(urls):
        url_s = url.strip() if isinstance(url, str) else ""
        m = _DATA_URI.fullmatch(url_s) if url_s.startswith("data:") else None
        if url_s and is_remote(url_s):
            refs.append(url_s)
            col.counts["remote_images"] += 1
        elif m and ";base64" in m.group(2):
            try:
                data = base64.b64decode(m.group(3), validate=True)
            except (binascii.Error, ValueError):
                col.finding(sample, f"round {rid}", "bad_image", "embedded image is not valid base64; not imported")
                continue
            ext = _EXT.get((m.group(1) or "").lower(), "bin")
            suffix = f"_{k + 1}" if len(urls) > 1 else ""
            rel = f"image/{task}/{safe_name(rid, 'image')}{suffix}.{ext}"
            out.images[rel] = data
            refs.append(rel)
            col.counts["embedded_images"] += 1
            col.finding(sample, f"round {rid}", "embedded_image",
                        f"img_url is an embedded {m.group(1) or 'data'} image ({len(data)} bytes); written to {rel}")
        else:
            shown = url_s[:80] if isinstance(url, str) else repr(url)[:80]
            col.finding(sample, f"round {rid}", "bad_image",
                        "img_url is neither an http(s) URL nor an embedded image; not imported", shown)
    if not refs:
        return [], []
    captions = [as_text(caps[i]) if i < len(caps) else "" for i in range(len(refs))]
    return refs, captions


def _convert_turn(turn: Any, n: int, pos: int, names: tuple[str, str], ctx: dict) -> dict:
    file, loc, sample, task = ctx["file"], ctx["loc"], ctx["sample"], ctx["task"]
    col: _Collector = ctx["col"]
    where = f"{loc}.session_{n}[{pos}]"
    if not isinstance(turn, dict):
        raise DataError(file, where, "a turn must be an object")
    rid = as_text(turn.get("dia_id")).strip()
    if not rid:
        rid = f"D{n}:{pos + 1}"
        col.finding(sample, where, "missing_dia_id", f"turn has no dia_id; given {rid}")
    if rid in ctx["seen"]:
        new = f"{rid}#{pos + 1}"
        col.finding(sample, where, "duplicate_dia_id", f"dia_id {rid} repeats {ctx['seen'][rid]}; this turn is {new}")
        rid = new
    ctx["seen"][rid] = where
    speaker = as_text(turn.get("speaker"))
    text = as_text(turn.get("text"))
    # speaker_a → user, speaker_b → assistant; an unknown speaker is kept (in `speaker`) on the user side.
    side = "assistant" if speaker == names[1] and speaker != names[0] else "user"
    if speaker not in names:
        col.finding(sample, f"round {rid}", "unknown_speaker",
                    f"speaker {speaker!r} is neither speaker_a nor speaker_b; put in `user`")
    rnd: dict[str, Any] = {"round": rid, "speaker": speaker,
                           "user": text if side == "user" else "", "assistant": text if side == "assistant" else ""}
    refs, caps = _round_images(turn, task, rid, ctx["out"], col, sample)
    if refs:
        rnd["input_image"] = refs
        rnd["image_caption"] = caps
        col.counts["images"] += len(refs)
    elif "blip_caption" in turn:
        # A caption with no image URL (the image was shared, its URL was not released): kept as is.
        rnd["blip_caption"] = turn["blip_caption"]
        col.counts["captions_without_image"] += 1
    for key, value in turn.items():
        if key not in _MAPPED_TURN_KEYS:
            rnd[f"locomo_{key}" if key in _OUR_ROUND_KEYS else key] = value
    return rnd


def _answer(qa: dict, adversarial: bool, item_id: str, sample: str, col: _Collector) -> str:
    ans = qa.get("answer")
    if adversarial:
        if ans is None or as_text(ans).strip() == "":
            return ABSTAIN_ANSWER
        col.finding(sample, item_id, "adversarial_with_answer",
                    f"category-5 item also has an answer ({as_text(ans)!r}); kept, item still unanswerable")
        return as_text(ans)
    if ans is None:
        col.finding(sample, item_id, "no_answer", "item has no answer")
    return as_text(ans)


def _category_number(cat: Any) -> int | None:
    """A QA item's LoCoMo category as a number (written 4 or "4"), None when it is none of CATEGORIES."""
    if cat.__class__ is str and cat.strip().isdigit():
        cat = int(cat.strip())
    return cat if cat.__class__ is int and cat in CATEGORIES else None


def _convert_qa(qa: Any, idx: int, ctx: dict, resolver: EvidenceResolver) -> dict:
    file, sample, task = ctx["file"], ctx["sample"], ctx["task"]
    col: _Collector = ctx["col"]
    if not isinstance(qa, dict):
        raise DataError(file, f"{ctx['sample_loc']}.qa[{idx - 1}]", "a QA item must be an object")
    item_id = f"{task}:{idx}"
    cat = qa.get("category")
    number = _category_number(cat)
    if number is None:
        raise DataError(file, f"{ctx['sample_loc']}.qa[{idx - 1}].category",
                        f"{'missing' if 'category' not in qa else 'got ' + json.dumps(cat, ensure_ascii=False)[:40]}: LoCoMo's category is "
                        f"{min(CATEGORIES)}–{max(CATEGORIES)} (category {ADVERSARIAL}: unanswerable)")
    adversarial = number == ADVERSARIAL
    col.categories[as_text(cat)] = col.categories.get(as_text(cat), 0) + 1
    res = resolver.resolve(qa.get("evidence"))
    for n in res.notes:
        entry = {"sample": sample, "item": item_id, "raw": n.raw, "reason": n.reason}
        if n.unresolved:
            col.unresolved.append(entry)
        else:
            col.normalised.append({**entry, "ids": list(n.ids)})
    ev = col.evidence
    ev["strings"] += res.strings
    ev["exact"] += res.exact
    ev["normalised_strings"] += res.normalised_strings
    ev["normalised_ids"] += res.normalised_ids
    ev["unresolved"] += res.unresolved_count
    ev["duplicates_removed"] += res.duplicates
    if not res.clue:
        ev["items_without_clue"] += 1
        col.finding(sample, item_id, "no_evidence", "item has no resolvable evidence round",
                    qa.get("evidence"))
    item: dict[str, Any] = {
        "id": item_id,
        "question": as_text(qa.get("question")),
        "answer": _answer(qa, adversarial, item_id, sample, col),
        "answerable": not adversarial,
        "category": cat,
    }
    if "adversarial_answer" in qa:
        item["adversarial_answer"] = as_text(qa["adversarial_answer"])
    if qa.get("answer") is not None and not isinstance(qa.get("answer"), str):
        item["answer_raw"] = qa["answer"]  # LoCoMo has a few numeric answers (e.g. 2022)
    item["session_id"] = resolver.sessions_of(res.clue)
    item["clue"] = list(res.clue)
    item["evidence"] = qa.get("evidence")
    if res.unresolved:
        item["unresolved_evidence"] = [{"raw": n.raw, "reason": n.reason} for n in res.unresolved]
    for key, value in qa.items():
        if key not in item and key not in ("evidence",):
            item[f"locomo_{key}" if key in ("id", "clue", "point", "session_id", "answerable") else key] = value
    if adversarial:
        col.counts["unanswerable"] += 1
    col.counts["qa_items"] += 1
    return item


def convert_sample(sample: Any, index: int, file: str, used: set[str], out: Conversion, col: _Collector) -> None:
    loc = f"[{index}]"
    if not isinstance(sample, dict):
        raise DataError(file, loc, "a LoCoMo sample must be an object")
    conv = sample.get("conversation")
    if not isinstance(conv, dict):
        raise DataError(file, f"{loc}.conversation", "missing, or not an object")
    sample_id = as_text(sample.get("sample_id")).strip() or f"sample-{index + 1}"
    if not as_text(sample.get("sample_id")).strip():
        col.finding(sample_id, loc, "missing_sample_id", f"sample has no sample_id; called {sample_id}")
    task = "locomo_" + safe_name(sample_id, str(index + 1))
    if task in used:
        base, k = task, 2
        while f"{base}_{k}" in used:
            k += 1
        task = f"{base}_{k}"
        col.finding(sample_id, loc, "renamed_task", f"task name taken by another sample; called {task}")
    used.add(task)
    names = (as_text(conv.get("speaker_a")), as_text(conv.get("speaker_b")))
    if names[0] == names[1]:
        col.finding(sample_id, loc, "same_speakers", f"speaker_a and speaker_b are both {names[0]!r}")
    turns_keys, date_keys = _session_keys(conv, file, f"{loc}.conversation")
    ctx = {"file": file, "loc": f"{loc}.conversation", "sample": sample_id, "task": task, "col": col,
           "out": out, "seen": {}, "sample_loc": loc}
    sessions = []
    n_rounds, n_images_before = col.counts["rounds"], col.counts["images"]
    for n in sorted(turns_keys):
        turns = conv[turns_keys[n]]
        if not isinstance(turns, list):
            raise DataError(file, f"{loc}.conversation.session_{n}", "must be a list of turns")
        date = conv.get(date_keys[n]) if n in date_keys else None
        if date is None:
            col.finding(sample_id, f"session_{n}", "no_date", "session has no session_N_date_time")
        session: dict[str, Any] = {"session_id": f"D{n}", "date": as_text(date) if date is not None else None}
        for key, block, template in (("summary", "session_summary", "session_{n}_summary"),
                                     ("observation", "observation", "session_{n}_observation"),
                                     ("events", "event_summary", "events_session_{n}")):
            value = _per_session(sample, block, template, n)
            if value is not None:
                session[key] = value
        session["dialogues"] = [_convert_turn(t, n, pos, names, ctx) for pos, t in enumerate(turns)]
        col.counts["rounds"] += len(turns)
        sessions.append(session)
    date_only = sorted(set(date_keys) - set(turns_keys))
    if date_only:
        col.counts["date_only_sessions"] += len(date_only)
        col.finding(sample_id, "conversation", "date_only_sessions",
                    f"{len(date_only)} session_N_date_time key(s) with no session_N turns: "
                    f"{', '.join(str(n) for n in date_only)} (no session made)")
    if "qa" not in sample:
        raise DataError(file, f"{loc}.qa", "missing: a LoCoMo sample lists its questions in `qa`")
    qas = sample["qa"]
    if not isinstance(qas, list):
        raise DataError(file, f"{loc}.qa", "must be a list of QA items")
    if not qas:
        col.finding(sample_id, "qa", "no_qa_items", "the sample has no QA items (its task has no items)")
    resolver = EvidenceResolver({r["round"]: s["session_id"] for s in sessions for r in s["dialogues"]},
                                [s["session_id"] for s in sessions])
    unanswerable_before = col.counts["unanswerable"]
    items = [_convert_qa(qa, i + 1, ctx, resolver) for i, qa in enumerate(qas)]
    profile: dict[str, Any] = {"source": "LoCoMo", "sample_id": sample_id, "speaker_a": names[0],
                               "speaker_b": names[1], "roles": {"user": names[0], "assistant": names[1]}}
    extra_conv = {k: v for k, v in conv.items()
                  if k not in ("speaker_a", "speaker_b") and not _SESSION.fullmatch(k)
                  and not (_SESSION_DATE.fullmatch(k) and int(_SESSION_DATE.fullmatch(k).group(1)) in turns_keys)}
    if extra_conv:
        profile["conversation_extra"] = extra_conv  # e.g. dates of sessions that have no turns
    for key in sample:
        if key not in _KNOWN_SAMPLE_KEYS:
            profile[key] = sample[key]
    out.dialogs[task] = {"character_profile": profile, "multi_session_dialogues": sessions,
                         "human-annotated QAs": items}
    col.counts["conversations"] += 1
    col.counts["sessions"] += len(sessions)
    col.tasks.append({"task": task, "sample": sample_id, "sessions": len(sessions),
                      "rounds": col.counts["rounds"] - n_rounds,
                      "images": col.counts["images"] - n_images_before, "items": len(items),
                      "unanswerable": col.counts["unanswerable"] - unanswerable_before})


def convert(data: Any, file: str) -> Conversion:
    """Convert parsed LoCoMo JSON (a list of samples, or one sample) in memory."""
    if isinstance(data, dict) and "conversation" in data:
        data = [data]
    if not isinstance(data, list):
        kind = {dict: "object", str: "string", int: "number", float: "number", bool: "boolean"}.get(type(data), "null")
        raise DataError(file, "", f"expected a list of LoCoMo samples, found a JSON {kind}")
    if not data:
        raise DataError(file, "", "the file holds no samples")
    out, col, used = Conversion(), _Collector(), set()
    for i, sample in enumerate(data):
        convert_sample(sample, i, file, used, out, col)
    out.report = {
        "counts": col.counts,
        "categories": dict(sorted(col.categories.items())),
        "evidence": col.evidence,
        "tasks": col.tasks,
        "unresolved_evidence": col.unresolved,
        "normalised_evidence": col.normalised,
        "findings": col.findings,
    }
    return out


def import_locomo(file: str | Path, out: str | Path, force: bool = False) -> dict:
    """Read a LoCoMo JSON file and write it as a benchmark under `out`. Returns the import report."""
    file = Path(file)
    stat_or_none(file)  # a name too long, a symlink loop: one line naming it
    if not file.is_file():
        raise DataError(file, "", "no such file" if not file.exists() else "not a file")
    conv = convert(read_json(file), str(file))
    return write(conv, Path(out), force, source=file)
