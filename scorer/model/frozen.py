"""Read-only mappings for the model's frozen dataclasses."""

from __future__ import annotations

from types import MappingProxyType
from typing import Any, Mapping

EMPTY: Mapping[str, Any] = MappingProxyType({})


def empty() -> Mapping[str, Any]:
    """The default of a dataclass mapping field: one shared empty read-only view."""
    return EMPTY


def frozen_map(d: Mapping | None) -> Mapping:
    """A read-only view of a copy of `d` (None → empty)."""
    return MappingProxyType(dict(d or {}))
