"""Label Studio task-JSON export of the annotation store (the import back is labelstudio_import).

One task per form an annotator acted on, so that each annotation means one thing:
    verdict  one task per (item, mode, run): the judged prediction is that run's, and only it;
    oracle   one task per (item, mode, rotation): the options shown are those of the rotation the
             annotator saw, so a letter keeps its meaning;
    item     one task per item (mode-less): labels (once per item, not per form), notes and flags.
With a Benchmark every item also gets its item task (for labelling in Label Studio). Media of the
item (its clue rounds' and question's) go in `images` (an <Image valueList>), `video` and `audio`,
as URLs under `media_url` (e.g. Label Studio's "/data/local-files/?d=" serving) or the remote URL;
keys are always present (empty when there is no medium), so every task imports under one config.

Label Studio keeps task `data` verbatim but sets the author and time of an imported annotation
itself; so each task's `data.memscope` holds its identity and, per result id, the event that
result came from (annotator, ts, study, rotation, payload). `completed_by` is set only from a
caller's mapping of memscope annotators to Label Studio user ids.
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from collections import defaultdict
from collections.abc import Mapping, Sequence
from typing import Any
from urllib.parse import quote

from scorer.metrics.constants import OPTION_LETTERS
from scorer.model import X_LABELS, Y_LABELS, Benchmark, Item, Run
from scorer.store.db import Store
from scorer.store.payload import ACT_KINDS, FLAGS, PAYLOAD_FIELDS, VERDICTS

FORMS = ("verdict", "oracle", "item")
MEMSCOPE_KEY = "memscope"  # the task-data key holding a task's identity and its events


def _choices(values: Sequence[str]) -> str:
    return " ".join(f'<Choice value="{v}"/>' for v in values)


LABEL_CONFIG = f"""<View>
  <Header value="$title"/>
  <Text name="question" value="$question"/>
  <Text name="options" value="$options"/>
  <Text name="answer" value="$answer"/>
  <Text name="prediction" value="$prediction"/>
  <Image name="images" valueList="$images"/>
  <Video name="video" value="$video"/>
  <Audio name="audio" value="$audio"/>
  <Header value="Verdict on the prediction"/>
  <Choices name="verdict" toName="prediction" choice="single" showInLine="true">
    {_choices(VERDICTS)}
  </Choices>
  <Header value="Your answer (letters as in the options above)"/>
  <Choices name="oracle_choice" toName="question" choice="single" showInLine="true">
    {_choices(OPTION_LETTERS)}
  </Choices>
  <TextArea name="oracle_answer" toName="question" maxSubmissions="1"/>
  <Header value="Labels"/>
  <Choices name="x" toName="question" choice="multiple" showInLine="true">
    {_choices(X_LABELS)}
  </Choices>
  <Choices name="y" toName="question" choice="multiple" showInLine="true">
    {_choices(Y_LABELS)}
  </Choices>
  <Header value="Flag and note"/>
  <Choices name="flag" toName="question" choice="multiple" showInLine="true">
    {_choices(FLAGS)}
  </Choices>
  <TextArea name="flag_text" toName="question"/>
  <TextArea name="note" toName="question"/>
</View>
"""
# The Label Studio result `type` of each control above (from_name → type).
CONTROL_TYPES = {"verdict": "choices", "oracle_choice": "choices", "oracle_answer": "textarea", "x": "choices",
                 "y": "choices", "flag": "choices", "flag_text": "textarea", "note": "textarea"}
CONTROL_TARGET = {"verdict": "prediction"}  # to_name; "question" otherwise


def label_config() -> str:
    return LABEL_CONFIG


def _result(rid: str, from_name: str, values: list) -> dict:
    kind = CONTROL_TYPES[from_name]
    key = "choices" if kind == "choices" else "text"
    return {"id": rid, "from_name": from_name, "to_name": CONTROL_TARGET.get(from_name, "question"),
            "type": kind, "value": {key: values}, "origin": "manual"}


def event_results(uid: str, kind: str, payload: Mapping[str, Any]) -> list[dict]:
    """The Label Studio results one event becomes (ids derived from its uid). The import compares
    a result it reads with these to tell an act carried through unchanged from one made or edited
    in Label Studio."""
    rid = uid[:10]
    if kind == "verdict":
        return [_result(rid, "verdict", [payload["verdict"]])]
    if kind == "label":  # one act, two controls; "y"/"t" are no hex digits: no clash with another uid
        return [_result(rid, "x", list(payload["x"])), _result(uid[:9] + "y", "y", list(payload["y"]))]
    if kind == "oracle":
        if payload.get("choice") is not None:
            return [_result(rid, "oracle_choice", [payload["choice"]])]
        return [_result(rid, "oracle_answer", [payload["answer"]])]
    if kind == "note":
        return [_result(rid, "note", [payload["text"]])]
    if kind == "flag":
        out = [_result(rid, "flag", [payload["flag"]])]
        if payload.get("text"):
            out.append(_result(uid[:9] + "t", "flag_text", [payload["text"]]))
        return out
    raise ValueError(f"no Label Studio form for kind {kind!r}")


def task_key(kind: str, item_id: str, mode: str | None, run: str | None,
             payload: Mapping[str, Any]) -> tuple[str, str, str | None, str | None, int | None]:
    """(form, item_id, mode, run, rotation) of the task an event belongs to."""
    if kind == "verdict":
        return ("verdict", item_id, mode, run, None)
    if kind == "oracle":
        return ("oracle", item_id, mode, None, payload.get("rotation"))
    if kind in ("note", "flag") and run is not None:  # a remark on one prediction
        return ("verdict", item_id, mode, run, None)
    if kind in ("note", "flag") and mode is not None:
        return ("oracle", item_id, mode, None, 0 if mode == "mcq" else None)
    return ("item", item_id, None, None, None)


def _sort_key(key: tuple) -> tuple:
    form, item_id, mode, run, rot = key
    # "Task:12" sorts by task then number, not as text ("Task:12" < "Task:2").
    m = re.match(r"^(.*):(\d+)$", item_id)
    head = (m.group(1), int(m.group(2))) if m else (item_id, 0)
    return (*head, FORMS.index(form), mode or "", run or "", rot if rot is not None else -1)


class MediaLinks:
    """URLs of an item's media for Label Studio: remote references as they are, local files as
    `prefix` + their path under the benchmark root (URL-quoted); counts what had no URL."""

    def __init__(self, benchmark: Benchmark, prefix: str | None):
        self.root = benchmark.root.resolve()
        self.prefix = prefix
        self.left_out = 0

    def url(self, medium: Any) -> str | None:
        if medium.url:
            return medium.url
        if medium.path is None or self.prefix is None:
            self.left_out += 1
            return None
        try:
            rel = medium.path.resolve().relative_to(self.root).as_posix()
        except ValueError:  # outside the root (allowed by the user): its absolute path
            rel = medium.path.resolve().as_posix().lstrip("/")
        return self.prefix + quote(rel, safe="/")

    def of(self, benchmark: Benchmark, item: Item) -> dict[str, Any]:
        media = [m for r in benchmark.task_of(item).clue_chain(item) for m in r.media] + list(item.question_images)
        out: dict[str, Any] = {"images": [], "video": "", "audio": "", "media": []}
        seen: set[str] = set()
        for m in media:
            url = self.url(m)
            if url is None or url in seen:
                continue
            seen.add(url)
            out["media"].append({"kind": m.kind, "url": url})
            if m.kind == "image":
                out["images"].append(url)
            elif m.kind in ("video", "audio") and not out[m.kind]:
                out[m.kind] = url  # Label Studio's <Video>/<Audio> show one each; all are in `media`
        return out


@dataclass(frozen=True)
class Export:
    tasks: list[dict]
    media_left_out: int  # local media that got no URL (no `media_url` given)
    not_carried: int  # live events not in Label Studio: superseded decisions, adjudications


def labelstudio_tasks(store: Store, benchmark: Benchmark | None = None, runs: Sequence[Run] = (),
                      study: str | None = None, media_url: str | None = None,
                      users: Mapping[str, int | str] | None = None) -> list[dict]:
    return export_labelstudio(store, benchmark, runs, study, media_url, users).tasks


def export_labelstudio(store: Store, benchmark: Benchmark | None = None, runs: Sequence[Run] = (),
                       study: str | None = None, media_url: str | None = None,
                       users: Mapping[str, int | str] | None = None) -> Export:
    """Label Studio tasks for the live current state of the store (DESIGN §4: latest decision per
    annotator × kind × item × run, every live note and flag), plus an item task for every benchmark
    item. `users` maps memscope annotators to Label Studio user ids (`completed_by`)."""
    tasks: dict[tuple, list[dict]] = defaultdict(list)
    for kind in ACT_KINDS:
        for row in store.current(kind, study):
            payload = {k: row[k] for k in PAYLOAD_FIELDS[kind] if row.get(k) is not None}
            key = task_key(kind, row["item_id"], row["mode"], row["run_key"], payload)
            tasks[key].append({"uid": row["uid"], "record": {
                "ts": row["ts"], "annotator": row["annotator"], "kind": kind, "item_id": row["item_id"],
                "mode": row["mode"], "run": row["run_key"], "study": row["study"], "payload": payload}})
    if benchmark is not None:
        for item_id in benchmark.item_ids():
            tasks.setdefault(("item", item_id, None, None, None), [])
    preds = {(run.key, p.item_id, p.mode): p for run in runs for p in run.predictions}
    links = MediaLinks(benchmark, media_url) if benchmark is not None else None
    out = [_task(key, tasks[key], benchmark, preds, links, users or {}) for key in sorted(tasks, key=_sort_key)]
    carried = sum(len(acts) for acts in tasks.values())
    live = sum(1 for _ in store.events(study=study, live_only=True))
    return Export(out, links.left_out if links else 0, live - carried)


def _item_of(benchmark: Benchmark | None, item_id: str, mode: str | None) -> Item | None:
    if benchmark is None:
        return None
    if mode is not None:
        return benchmark.item(item_id, mode)
    return benchmark.item(item_id, "mcq") or benchmark.item(item_id, "open")


def _options(item: Item | None, rotation: int | None) -> str:
    if item is None or not item.rotations:
        return ""
    rot = item.rotations[rotation] if rotation is not None and 0 <= rotation < len(item.rotations) else None
    if rot is None:
        return ""
    return "\n".join(f"{k}. {v}" for k, v in rot.options.items())


def _task(key: tuple, acts: list[dict], benchmark: Benchmark | None, preds: Mapping[tuple, Any],
          links: MediaLinks | None, users: Mapping[str, int | str]) -> dict:
    form, item_id, mode, run, rotation = key
    item = _item_of(benchmark, item_id, mode)
    pred = preds.get((run, item_id, mode)) if run else None
    title = {"verdict": f"{item_id} ({mode}): judge this prediction",
             "oracle": f"{item_id} ({mode}): answer from the dialogue and media",
             "item": f"{item_id}: label what the question needs"}[form]
    data: dict[str, Any] = {
        "title": title,
        "question": item.question if item else (pred.question if pred else ""),
        # the gold answer is shown to judges and labellers, never to someone answering (oracle)
        "answer": "" if form == "oracle" else (item.answer if item else (pred.gt if pred else "")),
        "options": _options(item, rotation) if form == "oracle" and mode == "mcq" else "",
        "prediction": pred.pred if pred else "",
        **(links.of(benchmark, item) if links and item and benchmark
           else {"images": [], "video": "", "audio": "", "media": []}),
    }
    by_ann: dict[str, list[dict]] = defaultdict(list)
    for act in acts:
        by_ann[act["record"]["annotator"]].append(act)
    events: dict[str, dict] = {}
    annotations = []
    for annotator in sorted(by_ann):
        results, lead = [], None
        for act in by_ann[annotator]:
            rec = act["record"]
            rs = event_results(act["uid"], rec["kind"], rec["payload"])
            events[rs[0]["id"]] = rec
            results += rs
            if rec["kind"] == "oracle" and rec["payload"].get("seconds") is not None:
                lead = float(rec["payload"]["seconds"])
        ann: dict[str, Any] = {"result": results, "was_cancelled": False, "ground_truth": False}
        if lead is not None:
            ann["lead_time"] = lead
        if annotator in users:  # Label Studio takes a user id, or {"email": ...} of a member
            who = users[annotator]
            ann["completed_by"] = {"email": who} if isinstance(who, str) else who
        annotations.append(ann)
    data[MEMSCOPE_KEY] = {"form": form, "item_id": item_id, "mode": mode, "run": run, "rotation": rotation,
                          "events": events}
    return {"data": data, "annotations": annotations, "predictions": []}
