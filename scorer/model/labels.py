"""The label sets a benchmark and its runs use: one definition each."""

from __future__ import annotations

X_LABELS = ("X1", "X2", "X3", "X4")
Y_LABELS = ("Y1", "Y2", "Y3")
MODES = ("mcq", "open")
# The letters an MCQ option can have (the loader keeps options under these keys; a choice outside
# them is an invalid extraction; an annotator's oracle answer is one of them).
OPTION_LETTERS = ("A", "B", "C", "D", "E", "F", "G", "H")
# How a rotation MCQ row's EM is averaged: over the item's rotations (the paper's definition: an
# unlogged rotation scores 0) or over the rotations the row logged (`--rotations logged`).
ROTATION_RULES = ("item", "logged")
MEDIA_KINDS = ("image", "video", "audio")
CHAIN_ROLES = ("narrow", "select", "answer")
CHAIN_MODALITIES = ("text", "image", "video", "audio")
CHAIN_CHALLENGES = (
    "fine_attribute",
    "background",
    "spatial",
    "video_order",
    "video_count",
    "video_state",
    "prosody",
)
