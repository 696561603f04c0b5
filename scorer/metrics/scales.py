"""Is a score on the scale it must be on? (DESIGN §5: judge scores outside [0, 1] are never
thresholded or averaged silently.)

A judge that scores 1–5 or 1–10 is common; its scores must be rescaled (`--judge-scale MIN-MAX`,
linear) before they mean anything here. `guess_scale` recognises such a set of scores so that the
message can say which flag to pass; any other score outside [0, 1] (a negative one, BLEU logged as
42 on a 0–100 scale) is an error. Pure functions over arrays; NaN is a missing value.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

# Scales a judge is commonly asked to score on, smallest first: (min, max).
KNOWN_SCALES = ((1.0, 5.0), (0.0, 5.0), (1.0, 10.0), (0.0, 10.0), (0.0, 100.0))
TOLERANCE = 1e-9


@dataclass(frozen=True)
class RangeCheck:
    """What a set of scores looks like against [0, 1]."""

    n: int  # finite values
    outside: int  # finite values outside [0, 1]
    low: float | None
    high: float | None
    scale: tuple[float, float] | None  # a known scale every value fits, when some are outside [0, 1]

    @property
    def ok(self) -> bool:
        return self.outside == 0

    def describe(self) -> str:
        return (f"{self.outside} of {self.n} value(s) outside [0, 1] (min {self.low:g}, max {self.high:g})"
                if self.n else "no values")


def in_unit_interval(v: float) -> bool:
    """A recorded score that can be one: within [0, 1] (TOLERANCE either side); False for NaN."""
    return -TOLERANCE <= v <= 1 + TOLERANCE


def _finite(values: np.ndarray | list) -> np.ndarray:
    x = np.asarray(values, dtype=float)
    return x[np.isfinite(x)]


def guess_scale(values: np.ndarray | list) -> tuple[float, float] | None:
    """The smallest known scale (1–5, 0–5, 1–10, 0–10, 0–100) all finite values fit, when they do
    not all fit [0, 1]; None otherwise. Scores on a Likert-style scale are whole or half points:
    values with finer fractions are not taken for one."""
    x = _finite(values)
    if not len(x) or ((x >= -TOLERANCE) & (x <= 1 + TOLERANCE)).all():
        return None
    if not (np.abs(x) <= max(hi for _, hi in KNOWN_SCALES) + TOLERANCE).all():
        return None  # beyond every known scale (1e308 too: x * 2 would overflow)
    if not np.allclose(x * 2, np.round(x * 2), atol=1e-9):
        return None
    for lo, hi in KNOWN_SCALES:
        if (x >= lo - TOLERANCE).all() and (x <= hi + TOLERANCE).all():
            return lo, hi
    return None


def check_range(values: np.ndarray | list, guess: bool = True) -> RangeCheck:
    """Count the finite values outside [0, 1]; with `guess`, name the known scale they fit."""
    x = _finite(values)
    outside = int(((x < -TOLERANCE) | (x > 1 + TOLERANCE)).sum())
    return RangeCheck(n=len(x), outside=outside, low=float(x.min()) if len(x) else None,
                      high=float(x.max()) if len(x) else None,
                      scale=guess_scale(x) if guess and outside else None)


def rescale(values: np.ndarray | list, scale: tuple[float, float]) -> np.ndarray:
    """Scores on [lo, hi] mapped linearly onto [0, 1] (NaN stays NaN; values outside the scale
    land outside [0, 1] and are then refused like any other)."""
    lo, hi = scale
    if not hi > lo:
        raise ValueError(f"a scale needs min < max, got {lo}-{hi}")
    return (np.asarray(values, dtype=float) - lo) / (hi - lo)


def scale_text(scale: tuple[float, float]) -> str:
    return f"{scale[0]:g}-{scale[1]:g}"
