"""The rows the evidence sections read, as the reader hands them over: JoinedRows (every joined row's
run, mode, item and the row's evidence fields, or its Prediction when runs are read whole), and the
lean reader's compact form of those fields — each chunk's evidence as one JSON text written in a
worker (evidence_json), decoded the first time the sections read them (EvidenceRows).
"""

from __future__ import annotations

from typing import Any

import msgspec
import numpy as np

from scorer.model import Item, Prediction


# The fields of a row the evidence, delivery, recency, abstention and gates sections read (through
# scorer.model.Prediction: retrieved, delivered, rotations, abstained, pred, choice, em, judge), and
# the ones of its `method_runtime` object they read. A row's evidence is these fields only: a
# Prediction over them reads the same values as one over the whole row.
EVIDENCE_FIELDS = ("retrieved", "delivered", "context_round_ids", "clue_rounds", "history_source", "rotations",
                   "abstained", "pred", "choice", "em", "judge")
RUNTIME_FIELDS = ("seed_round_ids", "top_candidates", "selected_round_ids", "history_source")
ROTATION_FIELDS = ("rotation_idx", "choice", "correct_position", "em", "pred")


JOINED = "joined_rows"  # the ScoreContext.memo key the scorer keeps a read's JoinedRows under


class JoinedRows:
    """Every joined row (in the frame's order, before the scorer drops repeated items) with what the
    evidence sections read: `rows[i]` is a Prediction (runs read whole) or the row's EVIDENCE_FIELDS
    as a dict (the lean reader); `run` indexes the runs read, `item` and `gate` the ItemTable (`gate`:
    the item as scorer.metrics.gates joins a row, by task and idx, -1 for none or an open row).

    The lean reader hands `rows` over as EvidenceRows (each chunk's evidence fields as one JSON
    text, from the workers that read them): they are decoded the first time `rows` is read, by the
    sections that read them, not while the runs are read."""

    __slots__ = ("run", "mode", "item", "gate", "idx", "line", "_rows", "items")

    def __init__(self, run: np.ndarray, mode: list[str], item: np.ndarray, gate: np.ndarray, idx: np.ndarray,
                 line: np.ndarray, rows: list | EvidenceRows, items: list[Item]) -> None:
        self.run, self.mode, self.item, self.gate, self.idx, self.line = run, mode, item, gate, idx, line
        self._rows, self.items = rows, items

    @property
    def rows(self) -> list:
        r = self._rows
        if r.__class__ is EvidenceRows:
            r = self._rows = r.decode()
        return r

    def prediction(self, i: int) -> Prediction:
        r = self.rows[i]
        if r.__class__ is Prediction:
            return r
        return Prediction(self.items[self.item[i]].task, self.mode[i], int(self.idx[i]), int(self.line[i]), r)


class EvidenceRows:
    """The lean reader's evidence rows as read: per chunk, a list of dicts (rows read as dicts) or
    the JSON text of that list (rows read by the fast schema, scorer.load.lean: written by
    evidence_json, decoded here into the same dicts)."""

    __slots__ = ("segments",)

    def __init__(self, segments: list) -> None:
        self.segments = segments

    def decode(self) -> list[dict]:
        out: list[dict] = []
        for seg in self.segments:
            out.extend(_EV_DECODER.decode(seg) if seg.__class__ is bytes else seg)
        return out


class _Ev(msgspec.Struct, omit_defaults=True):
    """A row's evidence fields as the lean reader's fast schema decodes them (scorer.load.lean
    _EvRow; the list fields kept as their JSON text, msgspec.Raw), written back as JSON: a field
    that is None (absent or null) is left out, as evidence_of_dict leaves out an absent one."""

    retrieved: Any = None
    delivered: Any = None
    context_round_ids: Any = None
    clue_rounds: Any = None
    history_source: Any = None
    rotations: Any = None
    abstained: Any = None
    pred: Any = None
    choice: Any = None
    em: Any = None
    judge: Any = None
    method_runtime: Any = None


if _Ev.__struct_fields__ != (*EVIDENCE_FIELDS, "method_runtime"):  # one list of the fields, kept in step
    raise AssertionError("joined_rows._Ev must declare EVIDENCE_FIELDS, then method_runtime")
_EV_ENCODER = msgspec.json.Encoder()
_EV_DECODER = msgspec.json.Decoder()  # the decoder the fast schema reads a row's Any fields with
_NULL = msgspec.Raw(b"null")


def _raw(v: Any) -> Any:
    return None if v is None or v == _NULL else v


def evidence_json(rows: list, keep: list[int]) -> bytes:
    """The JSON text of the kept rows' evidence dicts (rows decoded by the fast schema): each dict
    holds the row's EVIDENCE_FIELDS that are not None (rotations and method_runtime with every
    field their structs declare, null where absent); written in C, sent from a worker as one bytes
    object, decoded by EvidenceRows."""
    out = []
    for i in keep:
        r = rows[i]
        out.append(_Ev(_raw(r.retrieved), _raw(r.delivered), _raw(r.context_round_ids), _raw(r.clue_rounds),
                       _raw(r.history_source), r.rotations, r.abstained, r.pred, r.choice, r.em, r.judge,
                       r.method_runtime))
    return _EV_ENCODER.encode(out)


def evidence_of_dict(row: dict) -> dict:
    ev = {k: row[k] for k in EVIDENCE_FIELDS if k in row}
    rt = row.get("method_runtime")
    if rt is not None:
        ev["method_runtime"] = {k: rt[k] for k in RUNTIME_FIELDS if k in rt} if rt.__class__ is dict else rt
    return ev
