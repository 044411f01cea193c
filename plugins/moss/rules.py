"""Candidate rules: a random forest grown on quantile-binned data, every tree path a rule.

Thresholds come from a fixed per-feature quantile grid so that rules from different trees (and
from different folds of a cross-validation) share split points and can be compared by identity.
A rule is a conjunction of per-feature bin intervals; its canonical key is the sorted tuple of
``(feature, lo, hi)`` meaning ``t[lo] < x <= t[hi]`` (``lo = -1``: no lower bound, ``hi = q``:
no upper bound), so the same conditions in any order give the same key. ``Pi`` is the fraction
of trees whose paths contain the key (spec §1.3).
"""

from __future__ import annotations

import math
from dataclasses import dataclass, field
from typing import Literal

import numpy as np
from glasswork.data.rules import negate_name

Encoding = Literal["indicator", "node_value", "sirus"]
Condition = tuple[int, int, int]  # (feature, lo, hi) on the bin grid
Key = tuple[Condition, ...]


@dataclass(frozen=True)
class Grid:
    """Per-feature thresholds; ``bin(x) = #{t < x}`` so ``x <= t[s]`` iff ``bin(x) <= s``."""

    thresholds: list[np.ndarray]
    names: list[str]
    binary: list[bool] = field(default_factory=list)  # 0/1 columns: read as they are, never as ``x <= 0``

    @classmethod
    def fit(cls, X: np.ndarray, names: list[str], quantiles: int) -> Grid:
        out, binary = [], []
        for j in range(X.shape[1]):
            col = X[:, j]
            values = np.unique(col)
            binary.append(bool(np.isin(values, (0.0, 1.0)).all()))
            if values.size <= quantiles:
                cuts = values[:-1]
            else:
                levels = np.arange(1, quantiles) / quantiles
                cuts = np.unique(np.quantile(col, levels, method="linear"))
                cuts = cuts[cuts < values[-1]]
            out.append(np.asarray([short_cut(c, values) for c in cuts], dtype=np.float64))
        return cls(out, list(names), binary)

    def transform(self, X: np.ndarray) -> np.ndarray:
        B = np.empty(X.shape, dtype=np.int32)
        for j, t in enumerate(self.thresholds):
            B[:, j] = np.searchsorted(t, X[:, j], side="left")
        return B

    def n_bins(self, j: int) -> int:
        return len(self.thresholds[j]) + 1

    def is_binary(self, j: int) -> bool:
        return bool(self.binary) and self.binary[j]


def short_cut(cut: float, values: np.ndarray) -> float:
    """The shortest decimal ``d`` with ``cut <= d`` below the next of the sorted ``values``: it
    splits those values exactly as ``cut`` does, and reads as people write it (``0.018``, not
    ``0.0179370363191228``; ``61200``, not ``61180.5``)."""
    above = values[np.searchsorted(values, cut, side="right") :]
    if above.size == 0:
        return float(cut)
    upper = float(above[0])
    for digits in range(-15, 18):  # coarsest first: 100000, 10000, ..., 1, 0.1, ...
        scale = 10.0**digits
        d = float(round(math.ceil(cut * scale) / scale, max(digits, 0)))
        if cut <= d < upper:
            return d
    return float(cut)


def threshold_text(v: float) -> str:
    """A threshold as people write it: ``50560``, ``0.25``, ``-3.5``: the shortest decimal that
    reads back as the same float, never in scientific notation for ordinary magnitudes."""
    v = float(v)
    if v.is_integer() and abs(v) < 1e16:
        return str(int(v))
    if v != 0.0 and not 1e-6 <= abs(v) < 1e16:
        return repr(v)  # tiny or huge: scientific notation is the readable form
    return np.format_float_positional(v, trim="-")


@dataclass(frozen=True)
class Rule:
    """One conjunction of bin intervals, readable and applicable to raw features."""

    key: Key
    grid: Grid = field(repr=False, compare=False, hash=False)

    def covers_bins(self, B: np.ndarray) -> np.ndarray:
        mask = np.ones(B.shape[0], dtype=bool)
        for j, lo, hi in self.key:
            col = B[:, j]
            if lo >= 0:
                mask &= col > lo
            if hi < self.grid.n_bins(j) - 1:
                mask &= col <= hi
        return mask

    def covers(self, X: np.ndarray) -> np.ndarray:
        mask = np.ones(X.shape[0], dtype=bool)
        for j, lo, hi in self.key:
            t = self.grid.thresholds[j]
            if lo >= 0:
                mask &= X[:, j] > t[lo]
            if hi < len(t):
                mask &= X[:, j] <= t[hi]
        return mask

    def conditions(self) -> list[dict[str, object]]:
        out: list[dict[str, object]] = []
        for j, lo, hi in self.key:
            t = self.grid.thresholds[j]
            name = self.grid.names[j]
            if lo >= 0:
                out.append({"feature": name, "op": ">", "threshold": float(t[lo])})
            if hi < len(t):
                out.append({"feature": name, "op": "<=", "threshold": float(t[hi])})
        return out

    @property
    def text(self) -> str:
        parts = []
        for j, lo, hi in self.key:
            t = self.grid.thresholds[j]
            name = self.grid.names[j]
            if self.grid.is_binary(j):  # a 0/1 feature holds (x > 0) or does not (x <= 0)
                parts.append(name if lo >= 0 else negate_name(name))
            elif lo >= 0 and hi < len(t):
                parts.append(f"{threshold_text(t[lo])} < {name} <= {threshold_text(t[hi])}")
            elif lo >= 0:
                parts.append(f"{name} > {threshold_text(t[lo])}")
            else:
                parts.append(f"{name} <= {threshold_text(t[hi])}")
        return " and ".join(parts)


def canonical_key(conditions: list[tuple[int, str, int]], grid: Grid) -> Key | None:
    """Merge ``(feature, '<=' | '>', threshold index)`` conditions into a key; ``None`` if empty."""
    bounds: dict[int, list[int]] = {}
    for j, op, s in conditions:
        lo, hi = bounds.setdefault(j, [-1, grid.n_bins(j) - 1])
        if op == "<=":
            bounds[j][1] = min(hi, s)
        else:
            bounds[j][0] = max(lo, s)
    key = []
    for j in sorted(bounds):
        lo, hi = bounds[j]
        if lo >= hi:
            return None
        key.append((j, lo, hi))
    return tuple(key)


@dataclass
class RulePool:
    """The candidate rules, their selection proportions and the rule matrix ``M`` (built once).

    ``M`` is dense float64 in Fortran order: H2 needs ``M.T @ r`` (a BLAS GEMV over all columns)
    and column slices ``M[:, kappa]``, both fastest on a dense column-major array; a bit-packed
    matrix would only help the 0/1 ``indicator`` encoding and would need unpacking for both.
    ``counts[i]`` is the number of trees containing rule i, so ``Pi = counts / n_trees`` exactly.
    """

    rules: list[Rule]
    counts: np.ndarray
    n_trees: int
    grid: Grid
    encoding: Encoding
    y_mean: float
    M: np.ndarray
    inside: np.ndarray  # per-rule value inside the region
    outside: np.ndarray  # per-rule value outside the region

    @property
    def pi(self) -> np.ndarray:
        return self.counts / float(self.n_trees)

    @property
    def m(self) -> int:
        return len(self.rules)

    def columns(self, X: np.ndarray, idx: np.ndarray | list[int]) -> np.ndarray:
        """Rule outputs ``f_i(X)`` of the rules ``idx`` on new raw data."""
        out = np.empty((X.shape[0], len(idx)), dtype=np.float64)
        for c, i in enumerate(idx):
            cov = self.rules[i].covers(X)
            out[:, c] = np.where(cov, self.inside[i], self.outside[i])
        return out


def rule_values(cover: np.ndarray, yc: np.ndarray, encoding: Encoding) -> tuple[np.ndarray, np.ndarray]:
    """Per-rule (inside, outside) outputs for a boolean coverage matrix ``cover`` (n x m)."""
    n_in = cover.sum(axis=0).astype(np.float64)
    m = cover.shape[1]
    if encoding == "indicator":
        return np.ones(m), np.zeros(m)
    s_in = yc @ cover
    mu_in = s_in / np.maximum(n_in, 1.0)
    if encoding == "node_value":
        return mu_in, np.zeros(m)
    s_out = yc.sum() - s_in
    mu_out = s_out / np.maximum(yc.size - n_in, 1.0)
    return mu_in, mu_out


def _distinct_columns(cover: np.ndarray, keep: np.ndarray, *, complements: bool) -> np.ndarray:
    """Keep the first rule of every group with the same coverage on the training rows.

    Rules come sorted by Pi, so the most frequent form survives. With the ``sirus`` encoding a
    rule and its complement give the same column of M (inside and outside means swap), so
    complements are merged too: choosing both would double-count one split's stability.
    """
    seen: set[bytes] = set()
    out = []
    for i in keep:
        col = cover[:, i]
        sig = np.packbits(col).tobytes()
        if sig in seen:
            continue
        if complements and np.packbits(~col).tobytes() in seen:
            continue
        seen.add(sig)
        out.append(i)
    return np.asarray(out, dtype=np.int64)


def build_pool(
    X: np.ndarray,
    y: np.ndarray,
    names: list[str],
    *,
    trees: int = 1000,
    depth: int = 2,
    max_features: float | str | None = 1.0 / 3.0,
    quantiles: int = 10,
    seed: int = 0,
    rules_from: Literal["all_nodes", "leaves"] = "all_nodes",
    max_rules_pool: int | None = 1000,
    encoding: Encoding = "sirus",
    n_jobs: int | None = None,
    merge_equivalent: bool = True,
    grid_X: np.ndarray | None = None,
) -> RulePool:
    """Grow the forest on binned ``X``, harvest, merge and filter the rules, build ``M``."""
    from sklearn.ensemble import RandomForestRegressor

    grid = Grid.fit(X if grid_X is None else grid_X, names, quantiles)  # grid_X: share thresholds across folds
    B = grid.transform(X)
    forest = RandomForestRegressor(
        n_estimators=trees, max_depth=depth, max_features=max_features, bootstrap=True, random_state=seed, n_jobs=n_jobs
    ).fit(B, y)
    counts: dict[Key, int] = {}
    for est in forest.estimators_:
        seen: set[Key] = set()
        t = est.tree_
        stack: list[tuple[int, list[tuple[int, str, int]]]] = [(0, [])]
        while stack:
            node, path = stack.pop()
            left, right = int(t.children_left[node]), int(t.children_right[node])
            is_leaf = left == -1
            if node != 0 and (rules_from == "all_nodes" or is_leaf):
                key = canonical_key(path, grid)
                if key is not None:
                    seen.add(key)
            if not is_leaf:
                j = int(t.feature[node])
                s = int(np.floor(t.threshold[node]))
                stack.append((left, path + [(j, "<=", s)]))
                stack.append((right, path + [(j, ">", s)]))
        for key in seen:
            counts[key] = counts.get(key, 0) + 1
    keys = sorted(counts, key=lambda k: (-counts[k], k))
    rules = [Rule(k, grid) for k in keys]
    cover = np.column_stack([r.covers_bins(B) for r in rules]) if rules else np.zeros((X.shape[0], 0), bool)
    support = cover.sum(axis=0)
    keep = np.flatnonzero((support > 0) & (support < X.shape[0]))
    if merge_equivalent:
        keep = _distinct_columns(cover, keep, complements=encoding == "sirus")
    if max_rules_pool is not None and keep.size > max_rules_pool:
        keep = keep[:max_rules_pool]  # keys are sorted by count, then key: deterministic ties
    rules = [rules[i] for i in keep]
    cover = cover[:, keep]
    cnt = np.asarray([counts[r.key] for r in rules], dtype=np.int64)
    y_mean = float(np.mean(y))
    yc = y - y_mean
    inside, outside = rule_values(cover, yc, encoding)
    M = np.asfortranarray(np.where(cover, inside[None, :], outside[None, :]).astype(np.float64))
    return RulePool(rules, cnt, trees, grid, encoding, y_mean, M, inside, outside)
