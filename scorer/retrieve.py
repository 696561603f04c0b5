"""Retrieval replay: MemEye's semantic-RAG text retriever as a reference baseline run.

Rounds are documents (user + assistant text with image captions and audio transcripts, what a text
method sees); each question is embedded and the rounds of its task ranked by cosine similarity
(ties: the earlier round first, as a stable sort gives). The run is written in the MemEye run
layout with, per item, the ranked `retrieved` pool (round, score, recency age in rounds),
`delivered` = the top-K, and no prediction: a retrieval-only run, which the evidence diagnostics
read and the answer tables skip.
"""

from __future__ import annotations

import json
import re
from dataclasses import dataclass
from datetime import datetime, timezone
from pathlib import Path
from typing import Callable

import numpy as np

from scorer.embed.cache import EmbeddingCache, text_key
from scorer.embed.model import DEFAULT_MODEL, embed_texts
from scorer.errors import UserError
from scorer.model import Benchmark, Item, Task
from scorer.model.run import CONFIG, METRICS, PREDICTIONS

METHOD = "semantic_rag_minilm"


@dataclass(frozen=True)
class RetrievalConfig:
    top_k: int = 10
    pool: int = 50  # candidates logged per item, for Recall@K curves and recency re-ranking
    model: str = DEFAULT_MODEL
    batch: int = 64
    device: str = "cpu"
    backbone: str = "retrieval-only"
    method: str = METHOD


@dataclass(frozen=True)
class Ranked:
    round_id: str
    score: float
    recency_age: int


def rank(question: np.ndarray, rounds: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """(indices best first, cosine scores) of unit-normalised `rounds` against `question`."""
    scores = rounds @ question
    order = np.argsort(-scores, kind="stable")
    return order, scores


def task_texts(task: Task) -> tuple[list[str], list[str], list[int]]:
    """(round ids, texts, global orders) of the rounds with any text; empty rounds are not documents."""
    ids, texts, orders = [], [], []
    for r in task.rounds:
        t = r.text.strip()
        if t:
            ids.append(r.round_id)
            texts.append(t)
            orders.append(r.order)
    return ids, texts, orders


def _questions(task: Task) -> tuple[list[str], list[str]]:
    """(item ids, question texts): one per question (an MCQ item and its open mirror share it)."""
    questions: dict[str, str] = {}
    for it in task.items:
        questions.setdefault(it.item_id, it.question)
    return list(questions), list(questions.values())


def rank_task(task: Task, ids: list[str], orders: list[int], q_ids: list[str], round_vecs: np.ndarray,
              q_vecs: np.ndarray, cfg: RetrievalConfig) -> dict[str, list[Ranked]]:
    """Ranked pools keyed by item id, from the task's round and question vectors."""
    n_rounds = len(task.rounds)  # the question comes after the last round
    out: dict[str, list[Ranked]] = {}
    for qi, item_id in enumerate(q_ids):
        if not ids:
            out[item_id] = []
            continue
        order, scores = rank(q_vecs[qi], round_vecs)
        out[item_id] = [
            Ranked(ids[j], round(float(scores[j]), 6), n_rounds - orders[j]) for j in order[: cfg.pool]
        ]
    return out


def retrieve_task(
    task: Task, cache: EmbeddingCache, cfg: RetrievalConfig, progress: Callable[[int], None] | None = None
) -> tuple[dict[str, list[Ranked]], dict[str, int]]:
    """Ranked pools keyed by item id (one per question: an MCQ item and its open mirror share it)."""
    ids, texts, orders = task_texts(task)
    q_ids, q_texts = _questions(task)
    vecs, counts = embed_texts(texts + q_texts, cache, cfg.model, cfg.batch, cfg.device, progress)
    return rank_task(task, ids, orders, q_ids, vecs[: len(texts)], vecs[len(texts):], cfg), counts


def retrieval_row(item: Item, ranked: list[Ranked], cfg: RetrievalConfig) -> dict:
    return {
        "idx": item.index,
        "point": [sorted(item.x), sorted(item.y)],
        "mode": item.mode,
        "question": item.question,
        "gt": item.answer,
        "pred": None,
        "retrieval_only": True,
        "retrieved": [{"round": r.round_id, "score": r.score, "recency_age": r.recency_age} for r in ranked],
        "delivered": [r.round_id for r in ranked[: cfg.top_k]],
        "clue_rounds": list(item.clue_rounds),
        "source_sessions": list(item.session_ids),
        "method_name": cfg.method,
        "effective_method_name": cfg.method,
        "method_modality": "text_only",
        "history_source": "semantic_rag",
        "method_runtime": {"top_k": cfg.top_k, "embedding_model": cfg.model},
    }


_UNSAFE = re.compile(r"[^A-Za-z0-9._-]+")


def safe_name(s: str) -> str:
    return _UNSAFE.sub("-", s).strip("-") or "x"


def write_task_runs(out: Path, task: Task, pools: dict[str, list[Ranked]], cfg: RetrievalConfig,
                    stamp: str, bench_root: Path) -> list[Path]:
    folders = []
    for mode in ("mcq", "open"):
        items = [it for it in task.items if it.mode == mode]
        if not items:
            continue
        folder = out / safe_name(task.name) / f"{stamp}_{safe_name(cfg.backbone)}_{safe_name(cfg.method)}_{mode}"
        folder.mkdir(parents=True, exist_ok=True)
        config = {"task": task.name, "dataset": str(bench_root), "model": cfg.backbone, "method": cfg.method,
                  "retrieval": {"embedding_model": cfg.model, "top_k": cfg.top_k, "pool": cfg.pool}}
        metrics = {"task_name": task.name, "model_name": cfg.backbone, "method_name": cfg.method,
                   "effective_method_name": cfg.method, "method_modality": "text_only", "mode": mode,
                   "num_qas_run": len(items), "retrieval_only": True, "summary": {}}
        (folder / CONFIG).write_text(json.dumps(config, indent=2) + "\n", encoding="utf-8")
        (folder / METRICS).write_text(json.dumps(metrics, indent=2) + "\n", encoding="utf-8")
        with (folder / PREDICTIONS).open("w", encoding="utf-8") as fh:
            for it in items:
                fh.write(json.dumps(retrieval_row(it, pools.get(it.item_id, []), cfg), ensure_ascii=False) + "\n")
        folders.append(folder)
    return folders


def run_retrieval(
    bench: Benchmark, out: Path, cache: EmbeddingCache, cfg: RetrievalConfig,
    stamp: str | None = None, progress: Callable[[int], None] | None = None,
) -> dict:
    if cfg.top_k < 1 or cfg.pool < cfg.top_k:
        raise UserError(f"--top-k must be ≥ 1 and ≤ the pool size ({cfg.pool})")
    stamp = stamp or datetime.now(timezone.utc).strftime("%Y%m%d_%H%M%S")
    totals = {"tasks": 0, "rounds": 0, "items": 0, "hits": 0, "computed": 0, "folders": 0}
    # Every task's texts embedded in one go (sorted by length once, encoded in large calls: see
    # embed_texts), then each task ranked and written.
    per_task = []
    everything: list[str] = []
    for task in bench.tasks:
        ids, texts, orders = task_texts(task)
        q_ids, q_texts = _questions(task)
        per_task.append((task, ids, orders, q_ids, len(everything), len(texts), len(q_texts)))
        everything += texts + q_texts
    computed: list[str] = []
    vecs, _ = embed_texts(everything, cache, cfg.model, cfg.batch, cfg.device, progress, computed)
    fresh = set(computed)  # counted as computed by the first task that has them, as hits after
    for task, ids, orders, q_ids, start, n_texts, n_q in per_task:
        mid, end = start + n_texts, start + n_texts + n_q
        pools = rank_task(task, ids, orders, q_ids, vecs[start:mid], vecs[mid:end], cfg)
        folders = write_task_runs(out, task, pools, cfg, stamp, bench.root)
        keys = {text_key(t) for t in everything[start:end]}
        new = keys & fresh
        fresh -= new
        totals["tasks"] += 1
        totals["rounds"] += len(task.rounds)
        totals["items"] += len(pools)
        totals["hits"] += len(keys) - len(new)
        totals["computed"] += len(new)
        totals["folders"] += len(folders)
    return totals


def count_texts(bench: Benchmark) -> int:
    """How many texts a run embeds (before the cache), for the progress bar's total."""
    return sum(len(task_texts(t)[0]) + len({i.item_id for i in t.items}) for t in bench.tasks)
