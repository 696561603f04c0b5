"""What a method is called and what kind of method it is: display names (FC(T), SRAG(V), …, as the
MemEye paper's tables use them), modality families, and which methods are reference baselines.

Every table is keyed by the run's method name (the upstream effective method name). Users extend
them with a JSON names file (`--names FILE`), either flat — {"method_name": "Display"}, display names
only, as before — or {"display": {method: display}, "family": {method or display: family},
"reference": [method or display, …]}; `load_names` reads both.
"""

from __future__ import annotations

import json
from pathlib import Path
from dataclasses import dataclass, field
from typing import Any, Mapping

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
    "full_context_no_visual": "FC(NV)",
    "semantic_rag_minilm": "SRAG(MiniLM)",
}

# Matched text/visual pairs for the caption-proof gain (DESIGN §5): FC, SRAG, SimpleMem by default.
CAPTION_PROOF_PAIRS: tuple[tuple[str, str], ...] = (
    ("FC(T)", "FC(V)"),
    ("SRAG(T)", "SRAG(V)"),
    ("SM(T)", "SM(V)"),
)


# Families of methods (DESIGN §3): what a method's reader sees of the images. `no_visual` methods see
# no images and no captions (question_only, full_context_no_visual): their own family, never
# "multimodal". `other` is a method of unknown modality.
FAMILIES = ("text", "multimodal", "no_visual", "other")

# Upstream `method_modality` values (and the suffix of an effective method name), as an explicit
# table: no substring guessing ("no_visual" contains "visual" and is not multimodal).
MODALITY_FAMILIES: Mapping[str, str] = {
    "text_only": "text", "text": "text", "caption": "text", "captions": "text",
    "multimodal": "multimodal", "visual": "multimodal", "vision": "multimodal", "image": "multimodal",
    "images": "multimodal", "omni": "multimodal", "omni_modal": "multimodal", "omnimodal": "multimodal",
    "no_visual": "no_visual", "none": "no_visual",
}

# Families of methods whose runs do not state a modality (the paper's main table), by display name
# or method name.
DEFAULT_FAMILIES: Mapping[str, str] = {
    "Refl.": "text", "Gen.Ag.": "text", "MemOS": "text", "A-Mem": "text",
    "MIRIX": "multimodal", "MMA": "multimodal", "M2A": "multimodal",
    "question_only": "no_visual", "full_context_no_visual": "no_visual",
}

# Reference baselines (shown in the tables, never marked best/second unless --mark-all): the
# clue-only oracle and the question-only control, by method or display name; every `no_visual`
# method is one too.
DEFAULT_REFERENCES: frozenset[str] = frozenset({
    "clue_only_context__text_only", "clue_only_context__multimodal", "clue_only_context__no_visual",
    "clue_only_context", "question_only", "full_context_no_visual",
})


def family_from_modality(modality: Any) -> str | None:
    """The family a logged modality string names (`text_only` → text, `no_visual` → no_visual…),
    or None for a missing or unknown value."""
    if not isinstance(modality, str) or not modality.strip():
        return None
    return MODALITY_FAMILIES.get(modality.strip().lower().replace("-", "_"))


def family_of(method: str, modality: Any, display: str, families: Mapping[str, str] = DEFAULT_FAMILIES) -> str:
    """A method's family: the names file's word first (by method, then display name), then the
    run's logged modality, then the defaults; `other` when nothing says."""
    for key in (method, display):
        if key in families and families[key] in FAMILIES:
            return families[key]
    if modality in FAMILIES:
        return modality
    found = family_from_modality(modality)
    if found is not None:
        return found
    return DEFAULT_FAMILIES.get(display) or DEFAULT_FAMILIES.get(method) or "other"


def is_reference(method: str, display: str, family: str, references: frozenset[str] = DEFAULT_REFERENCES) -> bool:
    """A reference baseline (DESIGN §5 marks): listed by method or display name, or of the
    no_visual family."""
    return family == "no_visual" or method in references or display in references


def display_name(method: str, names: Mapping[str, str] = DEFAULT_DISPLAY_NAMES) -> str:
    return names.get(method, method)


def method_matches(method: str, wanted: str, names: Mapping[str, str] = DEFAULT_DISPLAY_NAMES) -> bool:
    """A user may name a method by its run name or its display name (`SRAG(V)`)."""
    return wanted in (method, display_name(method, names))


@dataclass(frozen=True)
class Names:
    """Display names, families and reference baselines: the defaults extended by a names file."""

    display: Mapping[str, str] = field(default_factory=lambda: dict(DEFAULT_DISPLAY_NAMES))
    families: Mapping[str, str] = field(default_factory=lambda: dict(DEFAULT_FAMILIES))
    references: frozenset[str] = DEFAULT_REFERENCES


_NAMES_SHAPE = ('expected a JSON object {"method_name": "Display name"} or {"display": {…}, '
                '"family": {method: "text|multimodal|no_visual|other"}, "reference": [method, …]}')


def load_names(path: str | Path | None) -> Names:
    """The defaults, extended by the names file at `path` (see the module docstring)."""
    if path is None:
        return Names()
    p = Path(path)
    try:
        extra = json.loads(p.read_text(encoding="utf-8"))
    except OSError as err:
        raise DataError(p, "", f"cannot read: {err.strerror or err}") from None
    except UnicodeDecodeError:
        raise DataError(p, "", "not UTF-8 text") from None
    except json.JSONDecodeError as err:
        raise DataError(p, f"{err.lineno}:{err.colno}", f"invalid JSON: {err.msg}") from None
    if not isinstance(extra, dict):
        raise DataError(p, "", _NAMES_SHAPE)
    structured = set(extra) & {"display", "family", "reference"}
    if not structured:
        display, families, references = extra, {}, []
    else:
        unknown = sorted(set(extra) - {"display", "family", "reference"})
        if unknown:
            raise DataError(p, unknown[0], "unknown key; " + _NAMES_SHAPE)
        display, families, references = extra.get("display", {}), extra.get("family", {}), extra.get("reference", [])
    if not isinstance(display, dict) or not all(isinstance(v, str) for v in display.values()):
        raise DataError(p, "display", _NAMES_SHAPE)
    if not isinstance(families, dict) or not all(isinstance(v, str) for v in families.values()):
        raise DataError(p, "family", _NAMES_SHAPE)
    bad = sorted({v for v in families.values() if v not in FAMILIES})
    if bad:
        raise DataError(p, "family", f"unknown family {bad[0]!r}; one of {', '.join(FAMILIES)}")
    if not isinstance(references, list) or not all(isinstance(v, str) for v in references):
        raise DataError(p, "reference", "expected a list of method or display names")
    return Names(display={**DEFAULT_DISPLAY_NAMES, **display}, families={**DEFAULT_FAMILIES, **families},
                 references=DEFAULT_REFERENCES | frozenset(references))


def load_display_names(path: str | Path | None) -> dict[str, str]:
    """The display names alone (defaults extended by the names file)."""
    return dict(load_names(path).display)
