"""Reading a Label Studio JSON export back into annotation events (the other way of labelstudio).

A task exported by memscope carries `data.memscope`: its form, item, mode, run and rotation, and per
result id the event that result came from. For every annotation result:
  - carried through unchanged (same id, control and value as the event gave) → that event exactly:
    its annotator, time, study, rotation and payload, so its uid is the same and a re-import adds 0;
  - made or edited in Label Studio → a new event by the annotation's Label Studio user (through the
    caller's `users` mapping when given, else "labelstudio:<email or id>"), at the annotation's
    `updated_at` (or `created_at`), in the task's form: a choice of rotation r is a choice under r.
Deleting a result in Label Studio undoes nothing here (the store keeps every act); cancelled
(skipped) annotations and predictions are not human acts and are not read.
"""

from __future__ import annotations

from collections.abc import Mapping
from pathlib import Path
from typing import Any

from scorer.errors import DataError, UserError
from scorer.load.jsonio import BadJSON, read_regular, std_loads
from scorer.store.db import Store
from scorer.store.jsonl import ImportResult
from scorer.store.labelstudio import CONTROL_TYPES, FORMS, MEMSCOPE_KEY, event_results
from scorer.store.payload import NewEvent, build_event


def _value_key(result: Mapping[str, Any]) -> tuple:
    value = result.get("value") if isinstance(result.get("value"), Mapping) else {}
    return (result.get("id"), result.get("from_name"), repr(value.get("choices")), repr(value.get("text")))


def parse_labelstudio(path: str | Path, users: Mapping[str, Any] | None = None) -> list[tuple[str, NewEvent]]:
    """Every event of a Label Studio JSON export, validated, each with its place (`file:[task i]…`);
    DataError naming the file and place at the first problem."""
    path = Path(path)
    try:
        tasks = std_loads(read_regular(path))
    except BadJSON as err:
        hint = " (one JSON value per line? that is --format jsonl)" if "Extra data" in err.message else ""
        raise DataError(path, err.location(), err.message + hint) from None
    if not isinstance(tasks, list):
        raise DataError(path, "", "expected a Label Studio JSON export (a list of tasks)")
    by_ls_user = {_user_key(v): k for k, v in (users or {}).items()}
    out: list[tuple[str, NewEvent]] = []
    for i, task in enumerate(tasks):
        where = f"[task {i}" + (f", id {task['id']}" if isinstance(task, Mapping) and "id" in task else "") + "]"
        try:
            out += _task_events(task, f"{path}:{where}", by_ls_user)
        except UserError as err:
            raise DataError(path, where, str(err)) from None
    return out


def import_labelstudio(store: Store, path: str | Path, users: Mapping[str, Any] | None = None) -> ImportResult:
    events = parse_labelstudio(path, users)
    added, skipped = store.insert_many(events)
    return ImportResult(str(path), len(events), added, skipped)


def _user_key(value: Any) -> str:
    return str(value).strip().lower()


def _task_events(task: Any, where: str, by_ls_user: Mapping[str, str]) -> list[tuple[str, NewEvent]]:
    if not isinstance(task, Mapping) or not isinstance(task.get("data"), Mapping):
        raise UserError("not a Label Studio task (an object with 'data')")
    meta = task["data"].get(MEMSCOPE_KEY)
    if not isinstance(meta, Mapping) or meta.get("form") not in FORMS or not isinstance(meta.get("events"), Mapping):
        raise UserError(f"no data.{MEMSCOPE_KEY} with a form and events: not a task memscope exported")
    annotations = task.get("annotations", [])
    if not isinstance(annotations, list):
        raise UserError("'annotations' must be a list")
    out: list[tuple[str, NewEvent]] = []
    for a, ann in enumerate(annotations):
        here = f"annotations[{a}]"
        if not isinstance(ann, Mapping) or not isinstance(ann.get("result", []), list):
            raise UserError(f"{here}: expected an annotation with a 'result' list")
        if ann.get("was_cancelled"):
            continue
        results = [r for r in ann.get("result", []) if isinstance(r, Mapping)]
        if len(results) != len(ann.get("result", [])):
            raise UserError(f"{here}: every result must be an object")
        try:
            out += [(f"{where} {here}", ev) for ev in _annotation_events(meta, ann, results, by_ls_user)]
        except UserError as err:
            raise UserError(f"{here}: {err}") from None
    return out


def _annotation_events(meta: Mapping, ann: Mapping, results: list[Mapping],
                       by_ls_user: Mapping[str, str]) -> list[NewEvent]:
    have = {_value_key(r) for r in results}
    used: set[Any] = set()
    out: list[NewEvent] = []
    for rid, record in meta["events"].items():  # events carried through unchanged
        if not isinstance(record, Mapping):
            raise UserError(f"data.{MEMSCOPE_KEY}.events[{rid!r}] must be an event object")
        ev = build_event(record)
        expected = event_results(ev.uid, ev.kind, ev.payload)
        if expected[0]["id"] != rid:  # the record was changed after export: it is not the act it names
            raise UserError(f"data.{MEMSCOPE_KEY}.events[{rid!r}] does not match its result id")
        keys = {_value_key(r) for r in expected}
        if keys <= have:
            out.append(ev)
            used |= {r["id"] for r in expected}
    fresh = [r for r in results if r.get("id") not in used]
    if fresh:
        out += _new_events(meta, ann, fresh, by_ls_user)
    return out


def _annotator(ann: Mapping, by_ls_user: Mapping[str, str]) -> str:
    who = ann.get("completed_by")
    keys = []
    if isinstance(who, Mapping):
        keys = [who.get("email"), who.get("id")]
    elif who is not None:
        keys = [who]
    for k in keys:
        if k is not None and _user_key(k) in by_ls_user:
            return by_ls_user[_user_key(k)]
    first = next((k for k in keys if k not in (None, "")), None)
    if first is None:
        raise UserError("a result made in Label Studio has no 'completed_by' (who made it?)")
    return f"labelstudio:{first}"


def _values(r: Mapping, from_name: str) -> list:
    if from_name not in CONTROL_TYPES:
        raise UserError(f"result {r.get('id')!r}: control {from_name!r} is not in memscope's labeling config")
    value = r.get("value")
    key = "choices" if CONTROL_TYPES[from_name] == "choices" else "text"
    vals = value.get(key) if isinstance(value, Mapping) else None
    if isinstance(vals, str):
        vals = [vals]
    if not isinstance(vals, list) or not all(isinstance(v, str) for v in vals):
        raise UserError(f"result {r.get('id')!r} ({from_name}): expected value.{key} as a list of strings")
    return vals


def _new_events(meta: Mapping, ann: Mapping, results: list[Mapping], by_ls_user: Mapping[str, str]) -> list[NewEvent]:
    form, item_id, mode, run, rotation = (meta.get(k) for k in ("form", "item_id", "mode", "run", "rotation"))
    ts = ann.get("updated_at") or ann.get("created_at")
    if not ts:
        raise UserError("a result made in Label Studio has no 'updated_at' or 'created_at'")
    annotator = _annotator(ann, by_ls_user)
    vals: dict[str, list[str]] = {}
    for r in results:
        name = r.get("from_name")
        vals.setdefault(str(name), []).extend(_values(r, str(name)))
    base = {"ts": ts, "annotator": annotator, "item_id": item_id, "mode": mode, "run": run, "study": None}
    records: list[dict] = []
    if "verdict" in vals:
        if form != "verdict":
            raise UserError(f"a verdict on a {form} task (verdicts belong to a task of one run)")
        records += [{"kind": "verdict", "payload": {"verdict": v}} for v in vals["verdict"]]
    if "x" in vals or "y" in vals:
        records.append({"kind": "label", "payload": {"x": vals.get("x", []), "y": vals.get("y", [])}})
        base_label = True
    else:
        base_label = False
    lead = ann.get("lead_time")
    seconds = {"seconds": lead} if isinstance(lead, (int, float)) and not isinstance(lead, bool) and lead >= 0 else {}
    if "oracle_choice" in vals:
        rot = rotation if rotation is not None else 0  # the letter is of the rotation this task showed
        records += [{"kind": "oracle", "payload": {"choice": c, "rotation": rot, **seconds}}
                    for c in vals["oracle_choice"]]
    if "oracle_answer" in vals:
        records += [{"kind": "oracle", "payload": {"answer": t, **seconds}} for t in vals["oracle_answer"] if t.strip()]
    texts = [t for t in vals.get("flag_text", []) if t.strip()]
    flags = vals.get("flag", [])
    if texts and not flags:
        raise UserError("a flag text without a flag")
    text = "\n".join(texts) if texts else None
    records += [{"kind": "flag", "payload": {"flag": f, **({"text": text} if text else {})}} for f in flags]
    records += [{"kind": "note", "payload": {"text": t}} for t in vals.get("note", []) if t.strip()]
    out = []
    for rec in records:
        full = {**base, **rec}
        if full["kind"] == "label" and base_label:  # labels are of the item, whatever task shows them
            full.update(mode=None, run=None)
        out.append(build_event(full))
    return out
