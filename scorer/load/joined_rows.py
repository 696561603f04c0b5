"""The rows the evidence sections read, as the reader hands them over: JoinedRows (every joined row's
run, mode, item and the row's evidence fields, or its Prediction when runs are read whole), and the
lean reader's compact form of those fields, written in the worker that read them (evidence_segment):
each chunk's answer fields as one JSON text, each row's logged lists as its own, read the first time
a section asks (LazyRow) — and what every row logged for the evidence arrays, parsed in that worker
into a few flat arrays (scorer.metrics.logged_lists.LoggedLists).
"""

from __future__ import annotations

from collections.abc import Iterator, Mapping
from itertools import repeat
from typing import Any

import msgspec
import numpy as np

from scorer.metrics.logged_lists import LoggedLists, RoundNames
from scorer.model import Item, Prediction
from scorer.model.rows import delivered_of, history_source_of


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

    The lean reader hands `rows` over as EvidenceRows (from the workers that read them): each row
    is a LazyRow, its fields decoded when a section first reads them, not while the runs are read;
    and `logged` holds what each row logged for the evidence arrays, parsed by those workers (None:
    rows read whole, whose Predictions are parsed where they are read)."""

    __slots__ = ("run", "mode", "item", "gate", "idx", "line", "_rows", "items", "_evidence", "abstained_logged")

    def __init__(self, run: np.ndarray, mode: list[str], item: np.ndarray, gate: np.ndarray, idx: np.ndarray,
                 line: np.ndarray, rows: list | EvidenceRows, items: list[Item],
                 abstained_logged: bool | None = None) -> None:
        self.run, self.mode, self.item, self.gate, self.idx, self.line = run, mode, item, gate, idx, line
        self._rows, self.items = rows, items
        self._evidence = rows if rows.__class__ is EvidenceRows else None
        # whether any row logged `abstained` as true or false (None: not known without reading them)
        self.abstained_logged = abstained_logged

    @property
    def logged(self) -> LoggedLists | None:
        """What every row logged for the evidence arrays (as scorer.metrics.evidence_flat.logged_lists
        reads it, in flat arrays); None when the rows are Predictions."""
        ev = self._evidence
        return None if ev is None else ev.logged()

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
    """The lean reader's evidence rows as read: per chunk, a segment — rows read as dicts (a list of
    dicts and what each logged), or rows read by the fast schema (scorer.load.lean: written by
    evidence_segment, read here as LazyRow mappings over the same dicts) — and what every row logged
    for the evidence arrays (scorer.metrics.evidence_flat.logged_lists), worked out in the worker
    that read it."""

    __slots__ = ("segments",)

    def __init__(self, segments: list) -> None:
        self.segments = segments

    def decode(self) -> list:
        out: list = []
        for seg in self.segments:
            if seg[0] == "fast":
                part = _Part(seg[1], seg[2])
                out.extend(map(LazyRow, repeat(part, len(seg[2])), range(len(seg[2]))))
            else:
                out.extend(seg[1])
        return out

    def logged(self) -> LoggedLists:
        """What every row logged (logged_lists), the segments' arrays joined."""
        return LoggedLists.concat([seg[-1] for seg in self.segments])


class _Small(msgspec.Struct, omit_defaults=True):
    """A row's answer fields among EVIDENCE_FIELDS (decoded together, for every row of a chunk,
    the first time one is read); a field that is None (absent or null) is left out."""

    rotations: Any = None
    abstained: Any = None
    pred: Any = None
    choice: Any = None
    em: Any = None
    judge: Any = None


class _Lists(msgspec.Struct, omit_defaults=True):
    """A row's logged lists among EVIDENCE_FIELDS, with method_runtime (the fast schema keeps the
    lists as their JSON text, msgspec.Raw): one JSON text per row, decoded when that row's lists
    are first read; a field that is None is left out."""

    retrieved: Any = None
    delivered: Any = None
    context_round_ids: Any = None
    clue_rounds: Any = None
    history_source: Any = None
    method_runtime: Any = None


SMALL_FIELDS = _Small.__struct_fields__
LIST_FIELDS = _Lists.__struct_fields__
_ORDER = (*EVIDENCE_FIELDS, "method_runtime")  # a row's keys in this order, as the dict path has them
if set(SMALL_FIELDS) | set(LIST_FIELDS) != set(_ORDER) or set(SMALL_FIELDS) & set(LIST_FIELDS):
    raise AssertionError("joined_rows: _Small and _Lists must split EVIDENCE_FIELDS and method_runtime")
_IS_LIST = dict.fromkeys(LIST_FIELDS, True)
_ENCODER = msgspec.json.Encoder()
_DECODER = msgspec.json.Decoder()  # the decoder the fast schema reads a row's Any fields with
_NULL = msgspec.Raw(b"null")
_NONE_LISTS = _ENCODER.encode(_Lists())  # b"{}"
_RAW_LISTS = ("delivered", "context_round_ids", "clue_rounds", "history_source")  # kept as text by the fast schema


class _Part:
    """One chunk's evidence as sent: the answer fields of every row (one JSON text) and each row's
    lists (a JSON text, or None when it logged none), decoded on first read."""

    __slots__ = ("small_json", "small", "lists_json", "lists")

    def __init__(self, small_json: bytes, lists_json: list) -> None:
        self.small_json, self.small, self.lists_json = small_json, None, lists_json
        self.lists: list = [None] * len(lists_json)

    def small_of(self, i: int) -> dict:
        rows = self.small
        if rows is None:
            rows = self.small = _DECODER.decode(self.small_json)
            self.small_json = b""
        return rows[i]

    def lists_of(self, i: int) -> dict:
        got = self.lists[i]
        if got is None:
            blob = self.lists_json[i]
            got = self.lists[i] = _DECODER.decode(blob) if blob is not None else {}
        return got



class LazyRow(Mapping):
    """A row's evidence dict (the lean reader's fast schema): the same keys and values as the dict
    the dict path builds (evidence_of_dict, null fields left out), read from the chunk's JSON texts
    when first asked for — a row's lists only if a section reads them."""

    __slots__ = ("_part", "_i")

    def __init__(self, part: _Part, i: int) -> None:
        self._part, self._i = part, i

    def _half(self, key: str) -> dict:
        return self._part.lists_of(self._i) if key in _IS_LIST else self._part.small_of(self._i)

    def __getitem__(self, key: str) -> Any:
        return self._half(key)[key]

    def get(self, key: str, default: Any = None) -> Any:
        return self._half(key).get(key, default)

    def __contains__(self, key: object) -> bool:
        return key.__class__ is str and key in self._half(key)

    def __iter__(self) -> Iterator[str]:
        small, lists = self._part.small_of(self._i), self._part.lists_of(self._i)
        return iter([k for k in _ORDER if k in small or k in lists])

    def __len__(self) -> int:
        return len(self._part.small_of(self._i)) + len(self._part.lists_of(self._i))

    def __repr__(self) -> str:
        return f"LazyRow({dict(self)!r})"

    def lists_text(self) -> bytes | None:
        """The JSON text the row's lists are read from (None: it logged none)."""
        return self._part.lists_json[self._i]


def same_lists(a: Mapping[str, Any], b: Mapping[str, Any]) -> bool:
    """Whether two rows' LIST_FIELDS are known to be equal without reading them: both LazyRows whose
    lists JSON texts are the same (False says nothing: compare the values)."""
    return a.__class__ is LazyRow and b.__class__ is LazyRow and a.lists_text() == b.lists_text()


class _Entry(msgspec.Struct):
    """An entry of a `retrieved` list as the usual log writes it: an object naming its round."""

    round: str
    score: Any = None
    recency_age: Any = None


_ENTRIES = msgspec.json.Decoder(list[_Entry])


def _ranking_of_text(ev: Mapping[str, Any], text: Any) -> Any:
    """scorer.metrics.evidence_flat.ranking_of of a row (its evidence dict `ev`) whose `retrieved`
    is this JSON text: in C when every entry is an object with a text `round` (the usual log; what
    ranking_of's first path reads), else ranking_of of the row with `retrieved` decoded."""
    from scorer.metrics.evidence_flat import ranking_of

    try:
        entries = _ENTRIES.decode(text)
    except msgspec.ValidationError:
        return ranking_of({**ev, "retrieved": _DECODER.decode(text)})
    return [e.round for e in entries], [e.score for e in entries], [e.recency_age for e in entries]


def _logged_of(ev: Mapping[str, Any], retrieved: Any = None) -> Any:
    """logged_lists of a row's evidence dict, its delivered list as Prediction.delivered reads it;
    `retrieved`: the row's `retrieved` as JSON text (ev holds it undecoded), read by
    _ranking_of_text."""
    from scorer.metrics.evidence_flat import logged_lists  # numpy-level code: in the reader workers only

    return logged_lists(ev, lambda: delivered_of(ev, history_source_of(ev)),
                        None if retrieved is None else lambda: _ranking_of_text(ev, retrieved))


def evidence_segment(rows: list, keep: list[int], names: RoundNames | None = None) -> tuple:
    """The kept rows' evidence (rows decoded by the fast schema), as sent from a worker: ("fast",
    the answer fields of every row as one JSON text, each row's lists as a JSON text or None, what
    each row logged as LoggedLists, its round ids numbered by `names`). rotations and
    method_runtime keep every field their structs declare (null where absent), as the dict path's
    decode of the same row does."""
    small, lists, logged = [], [], []
    null = _NULL
    for i in keep:
        r = rows[i]
        small.append(_Small(r.rotations, r.abstained, r.pred, r.choice, r.em, r.judge))
        rt = r.method_runtime
        if r.retrieved is None and r.delivered is None and r.context_round_ids is None:
            # Most rows (the usual MemEye log: clue rounds only; full-context runs: their
            # method_runtime too) log no ranking and no delivered list of their own: what they
            # logged is known without decoding their lists (the same values as the general path
            # below, tested; 70 % of the rows at MemEye scale, at a third of its cost).
            d = r.clue_rounds
            e = r.history_source
            if rt is None and e is None:
                if d is None or d == null:
                    lists.append(None)
                else:
                    lists.append(b'{"clue_rounds":' + bytes(d) + b"}")  # what _ENCODER writes for it
                logged.append(None)  # clue rounds only: logged_lists reads none of its fields
                continue
            if rt is not None and rt.seed_round_ids is None and rt.selected_round_ids is None:
                d = None if d is None or d == null else d
                e = None if e is None or e == null else e
                lists.append(_ENCODER.encode(_Lists(None, None, None, d, e, rt)))
                # logged_lists: no ranking (no seeds); the delivered list as Prediction.delivered reads
                # it from what the row has (no delivered or selected rounds: a clue-only run's clues)
                ev = {"method_runtime": {"history_source": rt.history_source}}
                if d is not None:
                    ev["clue_rounds"] = _DECODER.decode(d)
                if e is not None:
                    ev["history_source"] = _DECODER.decode(e)
                logged.append((None, delivered_of(ev, history_source_of(ev))))
                continue
        # each list's JSON text, None where absent or null (inline: five calls a row were a tenth of this loop)
        ls = _Lists(None if (a := r.retrieved) is None or a == null else a,
                    None if (b := r.delivered) is None or b == null else b,
                    None if (c := r.context_round_ids) is None or c == null else c,
                    None if (d := r.clue_rounds) is None or d == null else d,
                    None if (e := r.history_source) is None or e == null else e, rt)
        blob = _ENCODER.encode(ls)
        if blob == _NONE_LISTS:
            lists.append(None)
            logged.append(None)
            continue
        lists.append(blob)
        if ls.retrieved is None and ls.method_runtime is None and ls.delivered is None \
                and ls.context_round_ids is None and ls.history_source is None:
            logged.append(None)  # clue rounds only: logged_lists reads none of its fields
            continue
        # The dict the blob decodes to, each field decoded on its own (`retrieved` by
        # _ranking_of_text; method_runtime is decoded already, as every field of its struct).
        ev = {k: _DECODER.decode(v) for k, v in zip(_RAW_LISTS, (ls.delivered, ls.context_round_ids, ls.clue_rounds,
                                                                 ls.history_source)) if v is not None}
        if rt is not None:
            ev["method_runtime"] = {k: getattr(rt, k) for k in RUNTIME_FIELDS}
        if ls.retrieved is not None:
            ev["retrieved"] = ls.retrieved  # read as text only
        logged.append(_logged_of(ev, ls.retrieved))
    return ("fast", _ENCODER.encode(small), lists, LoggedLists.build(logged, names))


def evidence_dicts(rows: list, keep: list[int], names: RoundNames | None = None) -> tuple:
    """The kept rows' evidence (rows read as dicts), as sent from a worker: ("dicts", each row's
    evidence dict, what each row logged as LoggedLists)."""
    evs = [evidence_of_dict(rows[i]) for i in keep]
    return ("dicts", evs, LoggedLists.build([_logged_of(ev) for ev in evs], names))


def evidence_of_dict(row: dict) -> dict:
    ev = {k: row[k] for k in EVIDENCE_FIELDS if k in row}
    rt = row.get("method_runtime")
    if rt is not None:
        ev["method_runtime"] = {k: rt[k] for k in RUNTIME_FIELDS if k in rt} if rt.__class__ is dict else rt
    return ev
