"""The typed model of a benchmark and of a method's run (frozen dataclasses), and what a row's fields
mean. It imports nothing of scorer above it: the readers (scorer.load) build it, everything else
reads it.

- scorer.model.labels      the label sets (X/Y levels, modes, media kinds, chain roles, …)
- scorer.model.benchmark   Benchmark, Task, Session, Round, Media, Item, Rotation, ChainFact, Source
- scorer.model.run         Run, Prediction, RunProblem
- scorer.model.rows        a row's scalars and nested fields: num, row_text, rotations, retrieval
                           (Retrieved, RotationResult), delivered rounds, per-rotation choices
- scorer.model.frozen      read-only mappings (frozen_map)
"""

from scorer.model.benchmark import (
    Benchmark,
    ChainFact,
    Item,
    Media,
    Rotation,
    Round,
    Session,
    Source,
    Task,
)
from scorer.model.frozen import frozen_map
from scorer.model.labels import (
    CHAIN_CHALLENGES,
    CHAIN_MODALITIES,
    CHAIN_ROLES,
    MEDIA_KINDS,
    MODES,
    ROTATION_RULES,
    X_LABELS,
    Y_LABELS,
)
from scorer.model.rows import Retrieved, RotationResult
from scorer.model.run import Prediction, Run, RunProblem

__all__ = [
    "CHAIN_CHALLENGES", "CHAIN_MODALITIES", "CHAIN_ROLES", "MEDIA_KINDS", "MODES", "ROTATION_RULES",
    "X_LABELS", "Y_LABELS",
    "Benchmark", "ChainFact", "Item", "Media", "Rotation", "Round", "Session", "Source", "Task",
    "Prediction", "Retrieved", "RotationResult", "Run", "RunProblem",
    "frozen_map",
]
