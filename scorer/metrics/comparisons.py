"""Paired comparisons between methods on the same items: `--compare A:B` and the caption-proof gain.

Built on scorer.metrics.bootstrap. A paired bootstrap of n units with a given seed draws the same
index matrix whatever the data (`resample_indices(n, R, seed)`), so every comparison with the same
number of units shares its draws. `PairedPlan` collects many comparisons, draws each distinct n
once (as multiplicity counts, `resample_counts`) and evaluates all comparisons of that n with one
matrix product: resampled mean = (W @ sums) / (W @ sizes). The result equals `paired_diff_ci` on
each comparison (same draws; the sums differ only in floating-point order, tested to 1e-12), and
hundreds of per-cell CIs cost about as much as a few.

Pure functions: no I/O, no printing.
"""

from __future__ import annotations

from collections.abc import Hashable, Iterable, Mapping, Sequence
from dataclasses import dataclass, field

import numpy as np
import pandas as pd

from scorer.metrics.bootstrap import PairedCI, TwoSampleCI
from scorer.metrics.constants import DEFAULT_RESAMPLES, DEFAULT_SEED
from scorer.metrics.resample import (DEFAULT_CONFIDENCE, MAX_CELLS, chunk_rows, one_blas_thread, percentile_ci,
                                     percentile_rows, resample_counts, transpose_into)
from scorer.metrics.row_codes import RowCodes, row_codes

LOW_X = ("X1", "X2")
HIGH_X = ("X3", "X4")


def item_scores(frame: pd.DataFrame, metric: str, mode: str, keys: Sequence[str] = ("backbone", "method")) -> pd.DataFrame:
    """One score per (keys…, item_id): the mean of that item's rows (normally exactly one)."""
    sub = frame.loc[(frame["mode"] == mode) & frame[metric].notna(), [*keys, "item_id", metric]]
    return sub.groupby([*keys, "item_id"], sort=True, observed=True)[metric].mean().reset_index()


@dataclass
class _Job:
    a: np.ndarray
    b: np.ndarray
    sums: np.ndarray  # per unit Σ(a − b)
    sizes: np.ndarray  # items per unit
    n_clusters: int | None


# Multiplicity cells PairedPlan multiplies at a time: a block of the float counts (2 MB) stays in
# the CPU cache between its copy from the cached counts and its product.
PRODUCT_BLOCK_CELLS = 1 << 18


@dataclass
class PairedPlan:
    """Many paired comparisons evaluated on shared draws. `add` one per comparison, then `run`."""

    resamples: int = DEFAULT_RESAMPLES
    seed: int = DEFAULT_SEED
    confidence: float = DEFAULT_CONFIDENCE
    max_cells: int = MAX_CELLS
    jobs: dict[Hashable, _Job] = field(default_factory=dict)

    def add(self, key: Hashable, a: Sequence[float], b: Sequence[float], clusters: Sequence[Hashable] | None = None) -> None:
        xa, xb = np.asarray(a, dtype=float), np.asarray(b, dtype=float)
        if xa.ndim != 1 or xa.shape != xb.shape:
            raise ValueError(f"paired inputs must be 1-D and equal in length: {xa.shape} vs {xb.shape}")
        if not (np.isfinite(xa).all() and np.isfinite(xb).all()):
            raise ValueError("paired inputs contain NaN or infinite values; drop unscored items first")
        d = xa - xb
        if clusters is None:
            self.jobs[key] = _Job(xa, xb, d, np.ones(d.size), None)
            return
        labels = list(clusters)
        if len(labels) != d.size:
            raise ValueError(f"clusters has {len(labels)} labels for {d.size} items")
        index: dict = {}
        codes = np.fromiter((index.setdefault(c, len(index)) for c in labels), dtype=np.int64, count=d.size)
        sums = np.bincount(codes, weights=d, minlength=len(index))
        sizes = np.bincount(codes, minlength=len(index)).astype(float)
        self.jobs[key] = _Job(xa, xb, sums, sizes, len(index))

    def run(self) -> dict[Hashable, PairedCI]:
        if self.resamples < 1:
            raise ValueError(f"resamples must be >= 1, got {self.resamples}")
        with one_blas_thread():
            return self._run()

    def _run(self) -> dict[Hashable, PairedCI]:
        out: dict[Hashable, PairedCI] = {}
        by_units: dict[int, list[Hashable]] = {}
        for key, job in self.jobs.items():
            if job.a.size == 0:
                out[key] = PairedCI(None, None, None, 0, self.resamples, self.seed, self.confidence,
                                    undefined_reason="no items")
            else:
                by_units.setdefault(job.sums.size, []).append(key)
        # Every n in turn reuses three arrays (allocated once, at the largest size needed): the
        # float counts, each chunk's product and the (comparisons, resamples) distribution, sorted
        # where it lies. Fresh arrays per n are fresh pages to fault in: reusing them took the
        # MemEye caption-proof section from 9,700 page faults to 3,600 (measured, issue 19).
        cells = min(self.max_cells, PRODUCT_BLOCK_CELLS)
        steps = {n: min(self.resamples, chunk_rows(n, self.resamples, cells)) for n in by_units}
        buffer = np.empty(max((steps[n] * n for n in by_units), default=0))
        products = np.empty(max((steps[n] * len(keys) for n, keys in by_units.items()), default=0))
        dists = np.empty(max((len(keys) for keys in by_units.values()), default=0) * self.resamples)
        for n_units, keys in by_units.items():
            sums = np.column_stack([self.jobs[k].sums for k in keys])
            unit_items = all(self.jobs[k].n_clusters is None for k in keys)
            sizes = None if unit_items else np.column_stack([self.jobs[k].sizes for k in keys])
            dist = dists[:len(keys) * self.resamples].reshape(len(keys), self.resamples)  # row per comparison
            done = 0
            for w in resample_counts(n_units, self.resamples, self.seed, cells, dtype=float, buffer=buffer):
                with np.errstate(invalid="ignore", divide="ignore"):
                    # Items as units: every resample holds n_units items, so the mean is Σ / n.
                    part = np.matmul(w, sums, out=products[:w.shape[0] * len(keys)].reshape(w.shape[0], len(keys)))
                    part /= n_units if unit_items else (w @ sizes)
                transpose_into(part, dist, done)
                done += w.shape[0]
            finite = np.isfinite(dist)
            all_finite = bool(finite.all())
            if all_finite:
                bounds = percentile_rows(dist, self.confidence, in_place=True)  # dist is not read again
            for j, key in enumerate(keys):
                job = self.jobs[key]
                if all_finite:
                    low, high, dropped = float(bounds[0][j]), float(bounds[1][j]), 0
                else:
                    ok = dist[j, finite[j]]
                    dropped = int(dist.shape[1] - ok.size)
                    low, high = percentile_ci(ok, self.confidence) if ok.size else (None, None)
                out[key] = PairedCI(
                    estimate=_mean(job.a - job.b), ci_low=low, ci_high=high, n=int(job.a.size),
                    resamples=self.resamples, seed=self.seed, confidence=self.confidence,
                    n_clusters=job.n_clusters, dropped=dropped, mean_a=_mean(job.a), mean_b=_mean(job.b),
                )
        return out


def _mean(x: np.ndarray) -> float:
    """float(x.mean()) of a 1-D float array, the same sum and division without its overhead."""
    return float(np.add.reduce(x)) / x.size


@dataclass
class TwoSamplePlan:
    """Many `two_sample_diff_ci` comparisons (mean(a) − mean(b), disjoint groups, each resampled
    within itself from its own stream spawned from the seed) on shared draws: comparisons with the
    same group sizes share them, as `two_sample_diff_ci` itself would draw them."""

    resamples: int = DEFAULT_RESAMPLES
    seed: int = DEFAULT_SEED
    confidence: float = DEFAULT_CONFIDENCE
    max_cells: int = MAX_CELLS
    jobs: dict[Hashable, tuple[np.ndarray, np.ndarray]] = field(default_factory=dict)

    def add(self, key: Hashable, a: Sequence[float], b: Sequence[float]) -> None:
        xa, xb = np.asarray(a, dtype=float), np.asarray(b, dtype=float)
        if xa.ndim != 1 or xb.ndim != 1:
            raise ValueError("two-sample inputs must be 1-D")
        if not (np.isfinite(xa).all() and np.isfinite(xb).all()):
            raise ValueError("two-sample inputs contain NaN or infinite values; drop unscored items first")
        self.jobs[key] = (xa, xb)

    def _means(self, n: int, stream, columns: np.ndarray) -> np.ndarray:
        rng = np.random.default_rng(stream)
        return np.concatenate([(w @ columns) / n
                               for w in resample_counts(n, self.resamples, rng, self.max_cells, dtype=float)])

    def run(self) -> dict[Hashable, TwoSampleCI]:
        out: dict[Hashable, TwoSampleCI] = {}
        groups: dict[tuple[int, int], list[Hashable]] = {}
        for key, (xa, xb) in self.jobs.items():
            if xa.size == 0 or xb.size == 0:
                out[key] = TwoSampleCI(None, None, None, int(xa.size), self.resamples, self.seed, self.confidence,
                                       undefined_reason="a group has no items", n_b=int(xb.size))
            else:
                groups.setdefault((xa.size, xb.size), []).append(key)
        for (na, nb), keys in groups.items():
            ga, gb = np.random.SeedSequence(self.seed).spawn(2)
            ma = self._means(na, ga, np.column_stack([self.jobs[k][0] for k in keys]))
            mb = self._means(nb, gb, np.column_stack([self.jobs[k][1] for k in keys]))
            bounds = percentile_rows((ma - mb).T, self.confidence)
            for j, key in enumerate(keys):
                xa, xb = self.jobs[key]
                mean_a, mean_b = float(xa.mean()), float(xb.mean())
                out[key] = TwoSampleCI(mean_a - mean_b, float(bounds[0][j]), float(bounds[1][j]), na, self.resamples,
                                       self.seed, self.confidence, n_b=nb, mean_a=mean_a, mean_b=mean_b)
        return out


def paired_many(
    a: np.ndarray,
    b: np.ndarray,
    clusters: Sequence[Hashable] | None = None,
    resamples: int = DEFAULT_RESAMPLES,
    seed: int = DEFAULT_SEED,
    confidence: float = DEFAULT_CONFIDENCE,
) -> list[PairedCI]:
    """`paired_diff_ci` for every column of (n, K) arrays, on shared draws."""
    a, b = np.asarray(a, dtype=float), np.asarray(b, dtype=float)
    if a.ndim == 1:
        a, b = a[:, None], b[:, None]
    plan = PairedPlan(resamples, seed, confidence)
    for j in range(a.shape[1]):
        plan.add(j, a[:, j], b[:, j], clusters)
    res = plan.run()
    return [res[j] for j in range(a.shape[1])]


@dataclass(frozen=True)
class Slice:
    """A set of items by label: x is "X1".."X4", "low", "high" or "all"; y is "Y1".."Y3" or "all"."""

    x: str
    y: str

    def members(self, labels: pd.DataFrame) -> np.ndarray:
        """Boolean mask over `labels` rows (columns x, y: tuples of labels)."""
        return _has(labels["x"], _xs(self.x)) & _has(labels["y"], None if self.y == "all" else (self.y,))


def _xs(x: str) -> tuple[str, ...] | None:
    return {"all": None, "low": LOW_X, "high": HIGH_X}.get(x, (x,))


def _has(col: pd.Series, wanted: tuple[str, ...] | None) -> np.ndarray:
    if wanted is None:
        return np.ones(len(col), dtype=bool)
    w = set(wanted)
    return np.fromiter((bool(w.intersection(v)) for v in col), dtype=bool, count=len(col))


def slice_masks(labels: pd.DataFrame, slices: Iterable[Slice]) -> dict[Slice, np.ndarray]:
    """{slice: slice.members(labels)} for every slice, each label's membership computed once
    (a slice's mask is the OR of its labels' over x, AND-ed with its y label's)."""
    cols = {"x": labels["x"].tolist(), "y": labels["y"].tolist()}
    n = len(labels)
    has: dict[tuple[str, str], np.ndarray] = {}

    def of(axis: str, wanted: tuple[str, ...] | None) -> np.ndarray:
        if wanted is None:
            return np.ones(n, dtype=bool)
        mask = np.zeros(n, dtype=bool)
        for label in wanted:
            m = has.get((axis, label))
            if m is None:
                m = has[(axis, label)] = np.fromiter((label in v for v in cols[axis]), dtype=bool, count=n)
            mask |= m
        return mask

    return {sl: of("x", _xs(sl.x)) & of("y", None if sl.y == "all" else (sl.y,)) for sl in slices}


def caption_slices(x_levels: Iterable[str], y_levels: Iterable[str]) -> list[Slice]:
    """Every (X, Y) cell, every X level, low-X, high-X and all items (DESIGN §5 caption-proof gain)."""
    xs, ys = sorted(set(x_levels)), sorted(set(y_levels))
    out = [Slice(x, y) for y in ys for x in xs]
    out += [Slice(x, "all") for x in xs]
    out += [Slice("low", "all"), Slice("high", "all"), Slice("all", "all")]
    return out


def item_labels(frame: pd.DataFrame, mode: str, codes: RowCodes | None = None) -> pd.DataFrame:
    """(item_id, x, y) once per item of `mode` (its first row, in row order), labels as tuples.
    `codes`: row_codes(frame) when the caller has them."""
    if codes is None or codes.item is None:
        lab = frame.loc[frame["mode"] == mode, ["item_id", "x", "y"]].drop_duplicates("item_id")
    else:  # the first row of each item among the mode's rows: what drop_duplicates keeps
        rows = np.flatnonzero(codes.of_mode(mode))
        first = np.sort(np.unique(codes.item[rows], return_index=True)[1])
        lab = frame[["item_id", "x", "y"]].iloc[rows[first]]
    return lab.assign(x=lab["x"].map(lambda v: v if isinstance(v, tuple) else ()),
                      y=lab["y"].map(lambda v: v if isinstance(v, tuple) else ()))


def slice_members(labels: pd.DataFrame, slices: Sequence[Slice]) -> dict[Slice, pd.Index]:
    """The item ids of every slice (from item_labels)."""
    return {sl: pd.Index(labels["item_id"].to_numpy()[sl.members(labels)]) for sl in slices}


def scores_by_method(frame: pd.DataFrame, metric: str, mode: str) -> dict[tuple[str, str], pd.Series]:
    """{(backbone, method): item scores indexed by item_id (sorted)}, computed once."""
    scores = item_scores(frame, metric, mode)
    return {k: g.set_index("item_id")[metric] for k, g in scores.groupby(["backbone", "method"], sort=True)}


@dataclass(frozen=True)
class DenseScores:
    """One metric's item scores on one mode as dense columns: `ids` the scored items (sorted, as
    item_scores sorts them), `columns` (backbone, method) → one score per id (NaN: not scored by
    that method; several rows of one item averaged as item_scores does), `labels` item_labels of
    the ids in their order. What scores_by_method gives, without a Series per method."""

    ids: np.ndarray
    columns: dict[tuple[str, str], np.ndarray]
    labels: pd.DataFrame


def dense_scores(frame: pd.DataFrame, metric: str, mode: str, labels: pd.DataFrame | None = None,
                 codes: RowCodes | None = None) -> DenseScores:
    """`labels`: item_labels(frame, mode), `codes`: row_codes(frame), when the caller has them."""
    codes = row_codes(frame) if codes is None else codes
    keep = codes.of_mode(mode) & frame[metric].notna().to_numpy(bool)
    if codes.item is None or codes.pair is None:
        return _dense_scores_pandas(frame, metric, mode, keep, labels)
    # the kept rows' items and pairs, renumbered among those present (as factorizing them would)
    present_items, item = np.unique(codes.item[keep], return_inverse=True)
    present_pairs, pair_codes = np.unique(codes.pair[keep], return_inverse=True)
    item, pair_codes = item.reshape(-1), pair_codes.reshape(-1)
    ids = codes.items[present_items]
    pairs = [codes.pairs[i] for i in present_pairs.tolist()]
    key = pair_codes.astype(np.int64) * max(len(ids), 1) + item
    values = frame[metric].to_numpy(float)[keep]
    if np.unique(key).size < key.size:  # an item with several rows: their mean, as item_scores takes it
        scores = item_scores(frame, metric, mode)
        item = pd.Index(ids).get_indexer(scores["item_id"])
        index = {p: i for i, p in enumerate(pairs)}
        pair_codes = np.fromiter((index[p] for p in zip(scores["backbone"].tolist(), scores["method"].tolist())),
                                 dtype=np.int64, count=len(scores))
        values = scores[metric].to_numpy(float)
    return _dense(frame, mode, ids, pairs, pair_codes, item, values, labels, codes)


def _dense_scores_pandas(frame, metric, mode, keep, labels) -> DenseScores:
    sub = frame.loc[keep, ["backbone", "method", "item_id", metric]]
    item, ids = pd.factorize(sub["item_id"], sort=True)
    pair_codes, pairs = pd.MultiIndex.from_arrays([sub["backbone"], sub["method"]]).factorize(sort=True)
    key = pair_codes.astype(np.int64) * max(len(ids), 1) + item
    values = sub[metric].to_numpy(float)
    if np.unique(key).size < key.size:
        scores = item_scores(frame, metric, mode)
        item = pd.Index(ids).get_indexer(scores["item_id"])
        pair_codes = pairs.get_indexer(pd.MultiIndex.from_frame(scores[["backbone", "method"]]))
        values = scores[metric].to_numpy(float)
    return _dense(frame, mode, np.asarray(ids, dtype=object), [tuple(p) for p in pairs], pair_codes, item, values,
                  labels, None)


def _dense(frame, mode, ids, pairs, pair_codes, item, values, labels, codes) -> DenseScores:
    dense = np.full((len(pairs), len(ids)), np.nan)
    dense[pair_codes, item] = values
    labels = item_labels(frame, mode, codes) if labels is None else labels
    labels = labels.iloc[pd.Index(labels["item_id"]).get_indexer(ids)]
    return DenseScores(ids, {p: dense[i] for i, p in enumerate(pairs)}, labels)


def add_dense_slices(
    plan: PairedPlan,
    key: tuple,
    a: np.ndarray,
    b: np.ndarray,
    members: Mapping[Slice, np.ndarray],
    clusters: np.ndarray | None = None,
) -> list[tuple]:
    """add_slices on dense columns (DenseScores): one comparison per slice over the items both
    `a` and `b` scored (not NaN), in id order; `members` a boolean mask over the ids per slice,
    `clusters` one label per id. Adds what add_slices adds on the same scores."""
    both = ~np.isnan(a) & ~np.isnan(b)
    keys = []
    for sl, mask in members.items():
        sel = both & mask
        k = (*key, sl.x, sl.y)
        plan.add(k, a[sel], b[sel], None if clusters is None else clusters[sel].tolist())
        keys.append(k)
    return keys


def add_slices(
    plan: PairedPlan,
    key: tuple,
    a: pd.Series,
    b: pd.Series,
    members: Mapping[Slice, pd.Index],
    clusters: Mapping[str, Hashable] | None = None,
) -> list[tuple]:
    """Add one comparison per slice (of `members`) over the items both `a` and `b` (Series by
    item_id) scored; returns the plan keys (key + (x, y)) in slice order."""
    common = a.index.intersection(b.index).sort_values()
    va, vb = a.reindex(common).to_numpy(float), b.reindex(common).to_numpy(float)
    keys = []
    for sl, ids in members.items():
        mask = common.isin(ids)
        cl = None if clusters is None else [clusters.get(i, i) for i in common[mask]]
        k = (*key, sl.x, sl.y)
        plan.add(k, va[mask], vb[mask], cl)
        keys.append(k)
    return keys
