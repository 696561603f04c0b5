"""The per-item evidence values of many rows at once (issue 19): every row's logged ranking and
delivered list parsed once into flat integer-coded arrays, and the values scorer.metrics.evidence
computes one item at a time (`item_evidence`, `item_diagnosis`, `clue_positions`) computed for all
rows with numpy. Same definitions, same results (tests/scorer/metrics/test_evidence_flat.py compares
them row by row); the app keeps reading `item_evidence` for one item.

Layout: rows are numbered 0…n-1. A row's ranking, deduplicated (first occurrence of each round id
kept, list order kept), is a run of `e_*` entries (row `e_row`, 1-based position `e_pos`, tie-aware
rank `e_rank`, round code `e_code`); its delivered list, deduplicated, a run of `d_*` entries. A
round code stands for (task, round id); `Codes` holds what the metrics ask of a round.

Pure functions: no I/O, no printing.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any, Callable, Iterable, Mapping, Sequence

import numpy as np

from scorer.metrics.evidence import Y3, fact_modality, round_modalities
from scorer.metrics.logged_lists import Logged, LoggedLists, Ranking
from scorer.model import Item, Task
from scorer.model.labels import CHAIN_MODALITIES
from scorer.model.rows import upstream_ranking

NAN = float("nan")
NO_RANK = np.iinfo(np.int64).max  # no stale round in the top K


# ----------------------------------------------------------------------------------- parsing


def ranking_of(row: Mapping[str, Any]) -> Ranking | None:
    """scorer.model.rows.retrieved_of(row) as three lists, round ids, scores and recency ages as
    logged (`scores_of` / `ages_of` read them as that function does), without building a Retrieved
    per entry."""
    raw = row.get("retrieved")
    if isinstance(raw, list):
        return _explicit(raw)
    found = upstream_ranking(row.get("method_runtime"))
    return None if found is None else (found[0], found[1], [None] * len(found[0]))  # upstream logs no age


def _explicit(raw: list) -> Ranking:
    try:  # the usual log: one object per entry, each naming its `round` as text
        ids = [e["round"] for e in raw]  # a KeyError or TypeError otherwise
        "".join(ids)  # a TypeError unless every id is text
        if set(map(type, raw)) <= {dict}:  # (a list indexed by a string raises too; a str would not)
            return ids, [e.get("score") for e in raw], [e.get("recency_age") for e in raw]
    except (KeyError, TypeError):
        pass
    ids, scores, ages = [], [], []
    for entry in raw:  # scorer.model.rows._explicit_retrieved, entry by entry
        if isinstance(entry, str):
            ids.append(entry)
            scores.append(None)
            ages.append(None)
        elif isinstance(entry, dict):
            rid = entry.get("round", entry.get("round_id"))
            if isinstance(rid, str):
                ids.append(rid)
                scores.append(entry.get("score"))
                ages.append(entry.get("recency_age"))
    return ids, scores, ages


def logged_lists(row: Mapping[str, Any], delivered: Callable[[], tuple[str, ...] | None],
                 ranking: Callable[[], Ranking | None] | None = None) -> Logged | None:
    """What a row logged for the evidence arrays: (its ranking as ranking_of reads it, or None; its
    delivered list, `delivered()`, or None), or None when it has none of the fields either is read
    from (`delivered` gives the row's Prediction.delivered: called only where it can be logged;
    `ranking`, if given, gives ranking_of(row) by other means)."""
    if "retrieved" in row or "method_runtime" in row:
        return ranking_of(row) if ranking is None else ranking(), delivered()
    if "delivered" in row or "context_round_ids" in row or "history_source" in row:
        d = delivered()
        if d is not None:
            return None, d
    return None


# ----------------------------------------------------------------------------------- codes


@dataclass
class Codes:
    """Round codes: one per (task, round id) met; what the metrics ask of each round."""

    tables: dict[str, dict[str, int]] = field(default_factory=dict)  # task → round id → code
    exists: list[bool] = field(default_factory=list)
    session: list[int] = field(default_factory=list)  # code of the round's session within its task, -1
    order: list[int] = field(default_factory=list)
    task_of: list[Task] = field(default_factory=list)  # the task of the round
    sessions: dict[str, dict[str, int]] = field(default_factory=dict)  # task → session id → code

    def table(self, task: Task) -> dict[str, int]:
        tbl = self.tables.get(task.name)
        if tbl is None:
            tbl = self.tables[task.name] = {}
            sess = self.sessions.setdefault(task.name, {})
            for s in task.sessions:
                for r in s.rounds:
                    if r.round_id not in tbl:
                        r = task.round(r.round_id)  # a round id twice in a task: the one Task reads (the last)
                        self._add(tbl, task, r.round_id, True, sess.setdefault(r.session_id, len(sess)), r.order)
        return tbl

    def _add(self, tbl: dict, task: Task, rid: str, exists: bool, session: int, order: int) -> int:
        code = tbl[rid] = len(self.exists)
        self.exists.append(exists)
        self.session.append(session)
        self.order.append(order)
        self.task_of.append(task)
        return code

    def code(self, task: Task, rid: str) -> int:
        """The code of (task, round id): a new one, for a round the task does not have, the first
        time it is asked for."""
        tbl = self.table(task)
        c = tbl.get(rid)
        return c if c is not None else self._add(tbl, task, rid, False, -1, -1)

    def names(self) -> list[str]:
        """Round id of each code."""
        out = [""] * len(self.exists)
        for tbl in self.tables.values():
            for rid, c in tbl.items():
                out[c] = rid
        return out

    def session_code(self, task: Task, session_id: str) -> int:
        sess = self.sessions.setdefault(task.name, {})
        return sess.setdefault(session_id, len(sess))


@dataclass
class ItemFacts:
    """What the evidence metrics read from one (task, item)."""

    clues: frozenset[int]  # codes of the existing clue rounds
    chain_len: int  # len(task.clue_chain(item))
    latest: int  # code of the latest clue when the item is temporal-eligible, else -1
    latest_order: int
    sessions: frozenset[int]  # session codes that can hold stale rounds
    facts: tuple[int, ...]  # codes of the chain facts whose round is in the task, in chain order
    fact_modalities: tuple[str, ...]  # each counted fact's modality (given, else the round's)


def item_facts(task: Task, item: Item, codes: Codes) -> ItemFacts:
    chain = task.clue_chain(item)
    tbl = codes.table(task)
    eligible = Y3 in item.y and len(chain) >= 2  # scorer.metrics.evidence.temporal_eligible
    latest = chain[-1] if eligible else None
    session_ids = set(item.session_ids) or {c.session_id for c in chain}
    facts = [f for f in item.chain if task.has_round(f.round_id)]
    return ItemFacts(
        clues=frozenset(tbl[c.round_id] for c in chain), chain_len=len(chain),
        latest=-1 if latest is None else tbl[latest.round_id], latest_order=-1 if latest is None else latest.order,
        sessions=frozenset(codes.session_code(task, s) for s in session_ids),
        facts=tuple(tbl[f.round_id] for f in facts),
        fact_modalities=tuple(f.modality or fact_modality(task, f.round_id) for f in facts))


# ----------------------------------------------------------------------------------- the arrays


@dataclass
class FlatEvidence:
    """Every row's evidence as flat arrays (see the module's docstring)."""

    n: int
    has_ret: np.ndarray  # the row logged a ranking
    has_del: np.ndarray  # the row logged a delivered list
    answerable: np.ndarray
    chain_len: np.ndarray  # existing clue rounds (0: no valid provenance)
    n_clues: np.ndarray  # distinct existing clue rounds
    eligible: np.ndarray  # temporal-eligible (Y3, two or more clues)
    n_facts: np.ndarray  # distinct counted chain facts
    e_row: np.ndarray
    e_pos: np.ndarray
    e_rank: np.ndarray
    e_code: np.ndarray
    e_score: np.ndarray  # NaN: none logged
    e_age: np.ndarray  # recency age (scorer.metrics.logged_lists.ages_of: NaN none logged, +inf not finite)
    e_clue: np.ndarray
    e_fact: np.ndarray
    e_latest: np.ndarray
    e_stale: np.ndarray
    d_row: np.ndarray
    d_code: np.ndarray
    d_fact: np.ndarray
    f_row: np.ndarray  # counted chain facts of rows that logged both lists (with repeats, in chain order)
    f_code: np.ndarray
    f_modality: np.ndarray  # index into `modality_names`
    modality_names: list[str]
    codes: Codes
    _modalities: dict[int, tuple[bool, ...]] = field(default_factory=dict, repr=False)

    def round_modality(self, codes: np.ndarray) -> np.ndarray:
        """(len(codes), CHAIN_MODALITIES): whether each round carries that kind (round_modalities)."""
        memo = self._modalities
        names = None
        rows = []
        for c in codes.tolist():
            hit = memo.get(c)
            if hit is None:
                names = names or self.codes.names()
                kinds = round_modalities(self.codes.task_of[c], names[c])
                hit = memo[c] = tuple(m in kinds for m in CHAIN_MODALITIES)
            rows.append(hit)
        return np.asarray(rows, dtype=bool).reshape(-1, len(CHAIN_MODALITIES))

    def round_ids(self, codes: np.ndarray) -> tuple[str, ...]:
        names = self.codes.names()
        return tuple(names[c] for c in codes.tolist())


def _repeats(row: np.ndarray, code: np.ndarray, n_codes: int) -> bool:
    """Whether some row names a code twice."""
    if len(row) < 2:
        return False
    keys = np.sort(row * n_codes + code)
    return bool((keys[1:] == keys[:-1]).any())


def _first_of_each(row: np.ndarray, code: np.ndarray, n_codes: int) -> np.ndarray:
    """Indices of the first occurrence of each (row, code), in order."""
    if not len(row):
        return np.zeros(0, dtype=np.int64)
    _, first = np.unique(row * n_codes + code, return_index=True)
    return np.sort(first)


def isin_keys(a: np.ndarray, b: np.ndarray) -> np.ndarray:
    """np.isin(a, b) for integer keys, by binary search in sorted `b` (np.isin sorts `a` too)."""
    if not len(a) or not len(b):
        return np.zeros(len(a), dtype=bool)
    sb = np.sort(b)
    at = np.searchsorted(sb, a)
    return sb[np.minimum(at, len(sb) - 1)] == a


def _member(row_item: np.ndarray, code: np.ndarray, sets: Sequence[frozenset[int]], n_codes: int) -> np.ndarray:
    """Whether each entry's code is in its row's item's set."""
    keys = np.fromiter((s * n_codes + c for s, cs in enumerate(sets) for c in cs), dtype=np.int64)
    if not len(code) or not len(keys):
        return np.zeros(len(code), dtype=bool)
    return isin_keys(row_item * n_codes + code, keys)


def flat_evidence(rows: Sequence[tuple[Task, Item, Mapping[str, Any] | None, Sequence[str] | None]]) -> FlatEvidence:
    """The arrays of rows given as (task, item, the row's fields or None when it logged no ranking,
    its delivered list or None)."""
    slots: dict[int, int] = {}
    items: list[tuple[Task, Item]] = []
    item_of = []
    for task, item, _, _ in rows:
        s = slots.get(id(item))
        if s is None:
            s = slots[id(item)] = len(items)
            items.append((task, item))
        item_of.append(s)
    logged = [(None if raw is None else ranking_of(raw), None if delivered is None else tuple(delivered))
              for _, _, raw, delivered in rows]
    return flat_arrays(items, item_of, LoggedLists.build(logged))


def _in_list_order(first: np.ndarray, second: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """Where the entries of two lists per row (runs of `first[i]` and `second[i]` entries) stand
    when each row lists its first list, then its second, row after row."""
    per_row = first + second
    row_start = np.cumsum(per_row) - per_row
    out = []
    for lengths, skip in ((first, 0), (second, first)):
        rows = np.repeat(np.arange(len(lengths), dtype=np.int64), lengths)
        within = np.arange(len(rows), dtype=np.int64) - np.repeat(np.cumsum(lengths) - lengths, lengths)
        out.append((row_start + skip)[rows] + within)
    return out[0], out[1]


def _factorize(keys: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """(each key's index into the distinct keys, the distinct keys in order of first appearance)."""
    import pandas as pd  # the parent process's (pandas is loaded by then); the reader workers never get here

    index, distinct = pd.factorize(keys, sort=False)
    return index.astype(np.int64, copy=False), np.asarray(distinct, dtype=np.int64)


def flat_arrays(items: Sequence[tuple[Task, Item]], item_of: Sequence[int] | np.ndarray,
                logged: LoggedLists) -> FlatEvidence:
    """The arrays of rows 0…len(item_of)-1, row i answering items[item_of[i]]; `logged`: what each
    of those rows logged (scorer.metrics.logged_lists)."""
    codes = Codes()
    facts_of = [item_facts(task, item, codes) for task, item in items]
    row_slot = np.asarray(item_of, dtype=np.int64)
    n = len(row_slot)
    if logged.n != n:
        raise ValueError(f"logged lists of {logged.n} rows for {n} rows")
    e_row = np.repeat(np.arange(n, dtype=np.int64), logged.r_len)
    d_row = np.repeat(np.arange(n, dtype=np.int64), logged.d_len)
    # Round codes, one per distinct (task, round id): the keys (task, name) of every entry in the
    # order the rows list them (each row's ranking, then its delivered list), so that a round id a
    # task lacks gets its new code where a row first names it, as coding entry by entry did.
    task_no: dict[int, int] = {}
    tasks: list[Task] = []
    for task, _ in items:
        if task_no.setdefault(id(task), len(tasks)) == len(tasks):
            tasks.append(task)
    row_task = np.asarray([task_no[id(task)] for task, _ in items], dtype=np.int64)[row_slot] \
        if n else np.zeros(0, dtype=np.int64)
    round_ids = logged.names
    width = max(len(round_ids), 1)
    at_e, at_d = _in_list_order(logged.r_len, logged.d_len)
    keys = np.empty(len(at_e) + len(at_d), dtype=np.int64)
    keys[at_e] = row_task[e_row] * width + logged.r_name
    keys[at_d] = row_task[d_row] * width + logged.d_name
    which, distinct = _factorize(keys) if len(keys) else (np.zeros(0, dtype=np.int64), np.zeros(0, dtype=np.int64))
    code_of = np.asarray([codes.code(tasks[k // width], round_ids[k % width]) for k in distinct.tolist()], dtype=np.int64)
    entry_code = code_of[which] if len(keys) else np.zeros(0, dtype=np.int64)
    e_code, d_code = entry_code[at_e], entry_code[at_d]
    has_ret, has_del = logged.has_rank.copy(), logged.has_del.copy()
    answerable = np.asarray([it.answerable for _, it in items], dtype=bool)[row_slot] if n else np.zeros(0, dtype=bool)
    nc = max(len(codes.exists), 1)
    slot = row_slot
    slot_list = row_slot.tolist()
    # the ranking, deduplicated per row
    e_score, e_age = logged.r_score, logged.r_age
    if _repeats(e_row, e_code, nc):
        keep = _first_of_each(e_row, e_code, nc)
        e_row, e_code, e_score, e_age = e_row[keep], e_code[keep], e_score[keep], e_age[keep]
    counts = np.bincount(e_row, minlength=n)
    starts = np.cumsum(counts) - counts
    idx = np.arange(len(e_row), dtype=np.int64)
    e_pos = idx - starts[e_row] + 1
    # tie-aware ranks (scorer.metrics.evidence.tie_ranks): an entry whose score equals the previous
    # entry's shares its rank (NaN, a missing score, equals nothing)
    tie = np.zeros(len(e_row), dtype=bool)
    if len(e_row) > 1:
        tie[1:] = (e_pos[1:] > 1) & (e_score[1:] == e_score[:-1])
    head = np.maximum.accumulate(np.where(tie, 0, idx)) if len(idx) else idx
    e_rank = e_pos[head] if len(idx) else idx
    # the delivered list, deduplicated per row
    if _repeats(d_row, d_code, nc):
        keep = _first_of_each(d_row, d_code, nc)
        d_row, d_code = d_row[keep], d_code[keep]
    # per-entry flags against the row's item
    e_slot = slot[e_row]
    e_clue = _member(e_slot, e_code, [f.clues for f in facts_of], nc)
    e_fact = _member(e_slot, e_code, [frozenset(f.facts) for f in facts_of], nc)
    d_fact = _member(slot[d_row], d_code, [frozenset(f.facts) for f in facts_of], nc)
    latest = np.asarray([f.latest for f in facts_of], dtype=np.int64)
    latest_order = np.asarray([f.latest_order for f in facts_of], dtype=np.int64)
    exists = np.asarray(codes.exists, dtype=bool)
    order = np.asarray(codes.order, dtype=np.int64)
    session = np.asarray(codes.session, dtype=np.int64)
    ns = max(max((len(v) for v in codes.sessions.values()), default=0), 1)
    e_latest = (latest[e_slot] == e_code) & (latest[e_slot] >= 0)
    in_sessions = _member(e_slot, np.where(session[e_code] >= 0, session[e_code], 0),
                          [f.sessions for f in facts_of], ns) & (session[e_code] >= 0)
    # Task.is_stale: a round of the task, in one of the item's sessions, before the latest clue
    e_stale = ((latest[e_slot] >= 0) & exists[e_code] & ~e_latest & in_sessions
               & (order[e_code] < latest_order[e_slot]))
    # the counted facts of rows that logged both lists (for the not-delivered counts by modality)
    both = np.nonzero(has_ret & has_del)[0]
    names: dict[str, int] = {m: i for i, m in enumerate(CHAIN_MODALITIES)}
    f_row, f_code, f_mod = [], [], []
    for r in both.tolist():
        f = facts_of[slot_list[r]]
        f_row += [r] * len(f.facts)
        f_code += f.facts
        f_mod += [names.setdefault(m, len(names)) for m in f.fact_modalities]
    per_slot = np.asarray([(f.chain_len, len(f.clues), f.latest >= 0, len(set(f.facts))) for f in facts_of],
                          dtype=np.int64).reshape(-1, 4)[slot] if n else np.zeros((0, 4), dtype=np.int64)
    return FlatEvidence(
        n=n, has_ret=has_ret, has_del=has_del, answerable=answerable, chain_len=per_slot[:, 0], n_clues=per_slot[:, 1],
        eligible=per_slot[:, 2].astype(bool), n_facts=per_slot[:, 3],
        e_row=e_row, e_pos=e_pos, e_rank=e_rank, e_code=e_code, e_score=e_score, e_age=e_age, e_clue=e_clue,
        e_fact=e_fact, e_latest=e_latest, e_stale=e_stale, d_row=d_row, d_code=d_code, d_fact=d_fact,
        f_row=np.asarray(f_row, dtype=np.int64), f_code=np.asarray(f_code, dtype=np.int64),
        f_modality=np.asarray(f_mod, dtype=np.int64), modality_names=list(names),
        codes=codes)
