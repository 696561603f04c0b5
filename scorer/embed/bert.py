"""A lean encoder for mean-pooled BERT sentence models (all-MiniLM-L6-v2): the same weights and the
same torch operations as sentence-transformers' Transformer → Pooling(mean) → Normalize, without
importing sentence-transformers or transformers (about 7 s of CPU before the first text).

Texts are tokenised once (the model's own tokenizer.json, truncated to max_seq_length), ordered by
token count so that each batch pads to about its own length, and run through the BERT layers with
torch.nn.functional (linear, layer_norm, scaled_dot_product_attention, gelu) in the order
transformers' BertModel runs them. Vectors agree with sentence-transformers' to float32 rounding
(tests/scorer/test_retrieve.py checks them against it). Any other kind of model folder goes to
sentence-transformers (`lean_config` returns None).
"""

from __future__ import annotations

import json
import threading
from pathlib import Path
from typing import Callable, Sequence

import numpy as np

from scorer.errors import UserError

_MODULES = ["sentence_transformers.models.Transformer", "sentence_transformers.models.Pooling"]
_NORMALIZE = "sentence_transformers.models.Normalize"


def _read(path: Path) -> dict | list | None:
    try:
        return json.loads(path.read_text(encoding="utf-8"))
    except (OSError, ValueError):
        return None


def lean_config(folder: Path) -> dict | None:
    """The settings of a folder the lean encoder reproduces exactly, else None: a BertModel with
    absolute positions and gelu, mean pooling only, then (optionally) Normalize, and a tokenizer.json."""
    modules = _read(folder / "modules.json")
    cfg = _read(folder / "config.json")
    pooling = _read(folder / "1_Pooling" / "config.json")
    st_cfg = _read(folder / "sentence_bert_config.json") or {}
    if not isinstance(modules, list) or not isinstance(cfg, dict) or not isinstance(pooling, dict):
        return None
    types = [m.get("type") for m in modules if isinstance(m, dict)]
    if types not in (_MODULES, _MODULES + [_NORMALIZE]) or modules[1].get("path") != "1_Pooling":
        return None
    modes = {k for k, v in pooling.items() if k.startswith("pooling_mode") and v}
    if modes != {"pooling_mode_mean_tokens"}:
        return None
    if (cfg.get("model_type") != "bert" or cfg.get("hidden_act") != "gelu"
            or cfg.get("position_embedding_type", "absolute") != "absolute" or cfg.get("is_decoder")
            or st_cfg.get("do_lower_case")):
        return None
    extra = _read(folder / "config_sentence_transformers.json") or {}
    if isinstance(extra, dict) and (extra.get("default_prompt_name") or extra.get("truncate_dim")):
        return None  # a prompt put before every text, or cut vectors: sentence-transformers' business
    if not (folder / "tokenizer.json").is_file() or not (folder / "model.safetensors").is_file():
        return None
    try:
        return {"layers": int(cfg["num_hidden_layers"]), "heads": int(cfg["num_attention_heads"]),
                "eps": float(cfg["layer_norm_eps"]), "max_len": int(st_cfg.get("max_seq_length") or 512),
                "normalize": _NORMALIZE in types, "dim": int(cfg["hidden_size"])}
    except (KeyError, TypeError, ValueError):
        return None


class LeanBert:
    """encode_into(texts, out, batch_size): unit-normalised float32 vectors into out, row i for text i.
    Only the tokenizer is read here; torch and the weights come with the first encode."""

    def __init__(self, folder: Path, cfg: dict) -> None:
        from tokenizers import Tokenizer

        self.folder = folder
        self.layers, self.heads, self.eps = cfg["layers"], cfg["heads"], cfg["eps"]
        self.normalize = cfg["normalize"]
        self.tok = Tokenizer.from_file(str(folder / "tokenizer.json"))
        self.tok.no_padding()
        self.tok.enable_truncation(cfg["max_len"])
        self.dim = int(cfg["dim"])
        self.w: dict | None = None  # the weights, loaded (with torch) by the first encode

    def _load(self) -> None:
        import torch
        from safetensors.torch import load_file

        self.torch = torch
        weights = load_file(str(self.folder / "model.safetensors"))
        self.w = {k.removeprefix("bert."): v for k, v in weights.items()}
        if "embeddings.word_embeddings.weight" not in self.w or self.w["embeddings.word_embeddings.weight"].dtype != torch.float32:
            raise UserError(f"{self.folder / 'model.safetensors'}: not the float32 weights of a BERT model")

    def tokenize(self, texts: Sequence[str]) -> list[list[int]]:
        return [e.ids for e in self.tok.encode_batch(list(texts))]

    def _forward(self, ids, mask):
        torch, w = self.torch, self.w
        F = torch.nn.functional
        b, s = ids.shape
        x = F.embedding(ids, w["embeddings.word_embeddings.weight"])
        x = x + w["embeddings.token_type_embeddings.weight"][0]
        x = x + F.embedding(torch.arange(s).unsqueeze(0), w["embeddings.position_embeddings.weight"])
        x = self._ln(x, "embeddings.LayerNorm")
        attn = None if bool(mask.all()) else mask[:, None, None, :].expand(b, 1, s, s)
        hd = x.shape[-1] // self.heads
        for i in range(self.layers):
            p = f"encoder.layer.{i}."
            q, k, v = (self._lin(x, p + f"attention.self.{n}").view(b, s, -1, hd).transpose(1, 2)
                       for n in ("query", "key", "value"))
            a = F.scaled_dot_product_attention(q, k, v, attn_mask=attn, dropout_p=0.0, scale=hd ** -0.5)
            a = a.transpose(1, 2).reshape(b, s, -1).contiguous()
            x = self._ln(self._lin(a, p + "attention.output.dense") + x, p + "attention.output.LayerNorm")
            h = F.gelu(self._lin(x, p + "intermediate.dense"))
            x = self._ln(self._lin(h, p + "output.dense") + x, p + "output.LayerNorm")
        m = mask.unsqueeze(-1).expand(x.size()).to(x.dtype)  # Pooling(mean), as sentence-transformers
        vec = torch.sum(x * m, 1) / torch.clamp(m.sum(1), min=1e-9)
        if self.normalize:
            vec = F.normalize(vec, p=2, dim=1)
        return F.normalize(vec, p=2, dim=1)  # encode(normalize_embeddings=True)

    def _ln(self, x, p: str):
        return self.torch.nn.functional.layer_norm(x, (x.shape[-1],), self.w[p + ".weight"], self.w[p + ".bias"], self.eps)

    def _lin(self, x, p: str):
        return self.torch.nn.functional.linear(x, self.w[p + ".weight"], self.w[p + ".bias"])

    def encode_into(self, texts: Sequence[str], out: np.ndarray, batch_size: int,
                    done: Callable[[list[int]], None] | None = None) -> None:
        """Fill out[i] with text i's vector, longest texts (in tokens) first; done(rows) after each
        batch, with the rows it filled."""
        ids: list[list[int]] = []
        if self.w is None:  # tokenise (the GIL released) while torch is imported and the weights read
            worker = threading.Thread(target=lambda: ids.extend(self.tokenize(texts)))
            worker.start()
            try:
                self._load()
            finally:
                worker.join()
        else:
            ids = self.tokenize(texts)
        torch = self.torch
        order = sorted(range(len(ids)), key=lambda i: -len(ids[i]))  # stable: ties keep input order
        with torch.inference_mode():
            for start in range(0, len(order), batch_size):
                rows = order[start:start + batch_size]
                lengths = np.array([len(ids[r]) for r in rows])
                batch = np.zeros((len(rows), int(lengths.max())), dtype=np.int64)
                for j, r in enumerate(rows):
                    batch[j, :lengths[j]] = ids[r]
                mask = torch.from_numpy(np.arange(batch.shape[1]) < lengths[:, None])
                out[rows] = self._forward(torch.from_numpy(batch), mask).numpy()
                if done:
                    done(rows)
