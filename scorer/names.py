"""Short display names for methods (FC(T), SRAG(V), …), as the MemEye paper's tables use them.

The mapping is keyed by the run's method name (the upstream effective method name). Users extend it
with a JSON file of {"method_name": "Display"} passed to `load_display_names`.
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Mapping

from scorer.errors import DataError

DEFAULT_DISPLAY_NAMES: Mapping[str, str] = {
    "full_context__text_only": "FC(T)",
    "full_context_text_only": "FC(T)",
    "full_context__multimodal": "FC(V)",
    "full_context_multimodal": "FC(V)",
    "semantic_rag__text_only": "SRAG(T)",
    "semantic_rag_text_only": "SRAG(T)",
    "semantic_rag__multimodal": "SRAG(V)",
    "semantic_rag_multimodal": "SRAG(V)",
    "semantic_rag_budget__multimodal": "SRAG(V) budget",
    "semantic_rag_budget__text_only": "SRAG(T) budget",
    "reflexion": "Refl.",
    "generative_agents": "Gen.Ag.",
    "memoryos": "MemOS",
    "memos": "MemOS",
    "a_mem": "A-Mem",
    "simplemem__text_only": "SM(T)",
    "simplemem_text_only": "SM(T)",
    "simplemem__multimodal": "SM(V)",
    "simplemem_multimodal": "SM(V)",
    "mirix": "MIRIX",
    "mma": "MMA",
    "m2a": "M2A",
    "clue_only_context__text_only": "Oracle(T)",
    "clue_only_context__multimodal": "Oracle(V)",
    "question_only": "Q-only",
    "semantic_rag_minilm": "SRAG(MiniLM)",
}

# Matched text/visual pairs for the caption-proof gain (DESIGN §5): FC, SRAG, SimpleMem by default.
CAPTION_PROOF_PAIRS: tuple[tuple[str, str], ...] = (
    ("FC(T)", "FC(V)"),
    ("SRAG(T)", "SRAG(V)"),
    ("SM(T)", "SM(V)"),
)


def display_name(method: str, names: Mapping[str, str] = DEFAULT_DISPLAY_NAMES) -> str:
    return names.get(method, method)


def method_matches(method: str, wanted: str, names: Mapping[str, str] = DEFAULT_DISPLAY_NAMES) -> bool:
    """A user may name a method by its run name or its display name (`SRAG(V)`)."""
    return wanted in (method, display_name(method, names))


def load_display_names(path: str | Path | None) -> dict[str, str]:
    names = dict(DEFAULT_DISPLAY_NAMES)
    if path is None:
        return names
    p = Path(path)
    try:
        extra = json.loads(p.read_text(encoding="utf-8"))
    except OSError as err:
        raise DataError(p, "", f"cannot read: {err.strerror or err}") from None
    except json.JSONDecodeError as err:
        raise DataError(p, f"{err.lineno}:{err.colno}", f"invalid JSON: {err.msg}") from None
    if not isinstance(extra, dict) or not all(isinstance(v, str) for v in extra.values()):
        raise DataError(p, "", 'expected a JSON object {"method_name": "Display name"}')
    names.update(extra)
    return names
