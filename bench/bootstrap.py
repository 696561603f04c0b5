"""Time our paired bootstrap against scipy.stats.bootstrap on the same data.

MemEye scale: 371 items, judge-scale scores for two methods, 10,000 resamples, seed 20260430,
percentile 95% CI. Prints one JSON object: median and best wall times over `--repeats` runs,
the ratio scipy/ours, and both CIs (same seed, so the same resampled indices).

    python bench/bootstrap.py [--items 371] [--resamples 10000] [--repeats 7]
"""

from __future__ import annotations

import argparse
import json
import platform
import statistics
import time

import numpy as np
import scipy
from scipy import stats

from scorer.metrics.bootstrap import DEFAULT_SEED, paired_diff_ci


def _times(fn, repeats: int) -> tuple[list[float], object]:
    out, result = [], None
    for _ in range(repeats):
        t0 = time.perf_counter()
        result = fn()
        out.append(time.perf_counter() - t0)
    return out, result


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--items", type=int, default=371)
    ap.add_argument("--resamples", type=int, default=10_000)
    ap.add_argument("--repeats", type=int, default=7)
    args = ap.parse_args()

    rng = np.random.default_rng(0)
    levels, p = [0, 0.25, 0.5, 0.75, 1.0], [0.4, 0.1, 0.1, 0.1, 0.3]
    a = rng.choice(levels, args.items, p=p)
    b = np.clip(a + rng.choice([-0.25, 0.0, 0.25], args.items), 0, 1)

    def ours():
        return paired_diff_ci(a, b, resamples=args.resamples, seed=DEFAULT_SEED)

    def theirs():
        return stats.bootstrap((a, b), lambda x, y, axis=-1: np.mean(x - y, axis=axis), paired=True,
                               vectorized=True, n_resamples=args.resamples, method="percentile",
                               rng=np.random.default_rng(DEFAULT_SEED))

    ours(), theirs()  # warm-up: imports and first-touch allocations
    t_ours, r_ours = _times(ours, args.repeats)
    t_scipy, r_scipy = _times(theirs, args.repeats)
    ci_scipy = [float(r_scipy.confidence_interval.low), float(r_scipy.confidence_interval.high)]
    print(json.dumps({
        "items": args.items, "resamples": args.resamples, "seed": DEFAULT_SEED, "repeats": args.repeats,
        "ours_s": {"median": statistics.median(t_ours), "best": min(t_ours)},
        "scipy_s": {"median": statistics.median(t_scipy), "best": min(t_scipy)},
        "ratio_scipy_over_ours": statistics.median(t_scipy) / statistics.median(t_ours),
        "estimate": r_ours.estimate,
        "ci_ours": [r_ours.ci_low, r_ours.ci_high],
        "ci_scipy": ci_scipy,
        "max_abs_ci_diff": max(abs(r_ours.ci_low - ci_scipy[0]), abs(r_ours.ci_high - ci_scipy[1])),
        "numpy": np.__version__, "scipy": scipy.__version__, "python": platform.python_version(),
    }, indent=2))


if __name__ == "__main__":
    main()
