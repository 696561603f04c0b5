"""Per-row evidence values at K, for every row of scorer.metrics.evidence_flat's arrays at once: what
Diagnosis, ChainStatus and ItemEvidence give for each row (tests/scorer/metrics/test_evidence_flat.py
compares them), and the clue hits of the recall curve."""

from __future__ import annotations

from dataclasses import dataclass
from typing import Sequence

import numpy as np

from scorer.metrics.delivery import ChainStatus
from scorer.metrics.evidence import Diagnosis
from scorer.metrics.evidence_flat import NAN, NO_RANK, FlatEvidence, isin_keys


@dataclass
class AtK:
    """Per-row values at K: what Diagnosis, ChainStatus and ItemEvidence give for each row.
    Float arrays hold NaN where those give None."""

    k: int
    valid: np.ndarray  # item_diagnosis is not None (ranking logged, at least one existing clue)
    temporal: np.ndarray  # Diagnosis.temporal
    values: dict[str, np.ndarray]  # Diagnosis.value(metric) for the retrieval and temporal metrics
    n_top: np.ndarray  # len(ItemEvidence.retrieved)
    n_delivered: np.ndarray  # len(set(ItemEvidence.delivered))
    n_retrieved_facts: np.ndarray  # ChainStatus.n_retrieved (valid where has_ret)
    n_delivered_facts: np.ndarray  # ChainStatus.n_delivered (valid where has_del)
    chain: dict[str, np.ndarray]  # ChainStatus.required_fact_recall / chain_retrieved / chain_delivered
    dropped: np.ndarray  # per entry: in the top K and not delivered (both lists logged)
    dropped_facts: np.ndarray  # per f_* entry: the fact's round was dropped
    n_hit: np.ndarray  # Diagnosis.n_hit
    n_stale: np.ndarray  # Diagnosis.n_stale (temporal rows)
    latest_rank: np.ndarray  # Diagnosis.latest_rank, 0 for None
    best_stale: np.ndarray  # Diagnosis.best_stale_rank, NO_RANK for None

    def diagnosis(self, fe: FlatEvidence, i: int) -> Diagnosis | None:
        """Row i's Diagnosis (scorer.metrics.evidence.item_diagnosis), from the arrays."""
        if not self.valid[i]:
            return None
        v = {m: a[i] for m, a in self.values.items()}
        base = {"k": self.k, "n_clues": int(fe.n_clues[i]), "n_hit": int(self.n_hit[i]),
                "any_clue": bool(v["any_clue_recall"]), "coverage": float(v["coverage"]),
                "full_clue": bool(v["full_clue_recall"])}
        if not self.temporal[i]:
            return Diagnosis(**base)
        best = int(self.best_stale[i])
        return Diagnosis(**base, latest_hit=bool(v["latest_clue_recall"]), latest_miss=bool(v["latest_miss"]),
                         rank_inversion=bool(v["rank_inversion"]), stale_dominance=bool(v["stale_dominance"]),
                         n_stale=int(self.n_stale[i]), latest_rank=int(self.latest_rank[i]) or None,
                         best_stale_rank=None if best == NO_RANK else best)

    def chain_status(self, fe: FlatEvidence, i: int) -> ChainStatus:
        """Row i's ChainStatus (scorer.metrics.evidence.item_evidence(...).chain), from the arrays."""
        return ChainStatus(int(fe.n_facts[i]), int(self.n_retrieved_facts[i]) if fe.has_ret[i] else None,
                           int(self.n_delivered_facts[i]) if fe.has_del[i] else None)

    def top(self, fe: FlatEvidence, i: int) -> tuple[str, ...] | None:
        """Row i's top K round ids (ItemEvidence.retrieved)."""
        return fe.round_ids(fe.e_code[(fe.e_row == i) & (fe.e_pos <= self.k)]) if fe.has_ret[i] else None

    def not_delivered(self, fe: FlatEvidence, i: int) -> tuple[str, ...] | None:
        """Row i's top-K rounds left out of the request (ItemEvidence.not_delivered)."""
        if not (fe.has_ret[i] and fe.has_del[i]):
            return None
        return fe.round_ids(fe.e_code[(fe.e_row == i) & self.dropped])

def at_k(fe: FlatEvidence, k: int) -> AtK:
    if k < 1:
        raise ValueError(f"k must be >= 1, got {k}")
    n = fe.n

    def count(rows: np.ndarray) -> np.ndarray:
        return np.bincount(rows, minlength=n)

    top = fe.e_pos <= k
    valid = fe.has_ret & (fe.chain_len > 0)
    temporal = valid & fe.eligible
    hit = count(fe.e_row[top & fe.e_clue])
    with np.errstate(invalid="ignore", divide="ignore"):
        coverage = hit / fe.n_clues
    m = top & fe.e_latest
    present = count(fe.e_row[m]) > 0
    latest_rank = np.zeros(n, dtype=np.int64)
    latest_rank[fe.e_row[m]] = fe.e_rank[m]
    s = top & fe.e_stale
    has_stale = count(fe.e_row[s]) > 0
    best = np.full(n, NO_RANK, dtype=np.int64)
    np.minimum.at(best, fe.e_row[s], fe.e_rank[s])
    above = present & has_stale & (best < latest_rank)

    def where(ok: np.ndarray, v: np.ndarray) -> np.ndarray:
        return np.where(ok, v.astype(float), NAN)

    values = {
        "any_clue_recall": where(valid, hit > 0), "coverage": where(valid, coverage),
        "full_clue_recall": where(valid, hit == fe.n_clues),
        "latest_clue_recall": where(temporal, present),
        "stale_dominance": where(temporal, above | (~present & has_stale)),
        "rank_inversion": where(temporal, above), "latest_miss": where(temporal, ~present),
    }
    n_rf = count(fe.e_row[top & fe.e_fact])
    n_df = count(fe.d_row[fe.d_fact])
    facts = fe.n_facts > 0
    with np.errstate(invalid="ignore", divide="ignore"):
        recall = n_rf / fe.n_facts
    chain = {
        "required_fact_recall": where(fe.has_ret & facts, recall),
        "chain_retrieved": where(fe.has_ret & facts, n_rf == fe.n_facts),
        "chain_delivered": where(fe.has_del & facts, n_df == fe.n_facts),
    }
    nc = max(len(fe.codes.exists), 1)
    both = fe.has_ret & fe.has_del
    sent = fe.d_row * nc + fe.d_code
    in_request = isin_keys(fe.e_row * nc + fe.e_code, sent)
    dropped = top & both[fe.e_row] & ~in_request
    gone = fe.e_row[dropped] * nc + fe.e_code[dropped]
    dropped_facts = isin_keys(fe.f_row * nc + fe.f_code, gone)
    return AtK(k, valid, temporal, values, count(fe.e_row[top]), count(fe.d_row), n_rf, n_df, chain, dropped,
               dropped_facts, hit, count(fe.e_row[s]), latest_rank, best)

def clue_hits(fe: FlatEvidence, rows: np.ndarray, ks: Sequence[int]) -> tuple[np.ndarray, np.ndarray]:
    """(hits, n_clues) of the given rows for scorer.metrics.evidence.recall_from_hits: each row's
    distinct clue rounds at a position <= K of its deduplicated ranking, for every K in `ks`."""
    kk = np.asarray(ks, dtype=np.int64)
    out = np.zeros((len(rows), len(kk)), dtype=np.int64)
    if len(rows) and len(kk):
        where = np.full(fe.n, -1, dtype=np.int64)
        where[rows] = np.arange(len(rows), dtype=np.int64)
        m = fe.e_clue & (where[fe.e_row] >= 0)
        top = int(kk.max())
        by_pos = np.zeros((len(rows), top + 2), dtype=np.int64)
        np.add.at(by_pos, (where[fe.e_row[m]], np.minimum(fe.e_pos[m], top + 1)), 1)
        cum = np.cumsum(by_pos, axis=1)
        out = np.ascontiguousarray(cum[:, np.clip(kk, 0, top + 1)])  # C order, as recall_curve's (sums run alike)
    return out, fe.n_clues[rows]
