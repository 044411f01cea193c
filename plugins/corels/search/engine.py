"""Bridge from packed antecedents and labels to the compiled CORELS search.

The search never looks at samples, only at antecedent vectors, so samples with identical
antecedent signatures are merged into one *unit* (an equivalence class of the equivalent-points
bound) that carries its per-class counts. This is lossless: every rule list treats a unit as a
whole. On COMPAS (6,489 samples, 155 antecedents) it leaves 194 units, four words instead of 102.
The minority counts of the equivalent-points bound fall out of the same grouping, computed for the
antecedent set actually searched (a minority vector computed for a different set would be unsound).
"""

from __future__ import annotations

import contextlib
import os
import tempfile
import time
from collections.abc import Callable, Iterator
from dataclasses import dataclass, field
from typing import Any

import numpy as np
from glasswork.cython_ext import bitset
from glasswork.cython_ext import corels as _corels
from glasswork.memory import physical_memory
from glasswork.plugins.corels.bounds import BOUND_NAMES

POLICIES = ("bfs", "dfs", "curiosity", "lower_bound", "objective")
SYMMETRY_MAPS = ("none", "prefix", "captured")
# bounds on by default, each can be switched off (declared in bounds.BOUNDS)
ABLATIONS = BOUND_NAMES


@dataclass
class Units:
    """Samples merged by antecedent signature, in the bit-sliced layout ``Search`` takes."""

    caps: np.ndarray  # (M, W) uint64 over units
    counts: np.ndarray  # (U, C) int64 per-class counts
    minority: np.ndarray  # (U, C) int64 counts off the unit's (weighted) majority label
    unit_of_sample: np.ndarray
    weights: np.ndarray  # (C,) float64 class weights
    planes: dict[str, Any] = field(default_factory=dict)
    groups: np.ndarray | None = None  # (G, W) uint64: the units of each protected group (a constraint's)

    @property
    def n_units(self) -> int:
        return int(self.counts.shape[0])

    def problem(self) -> tuple[Any, ...]:
        """The data both kernels' constructors start with (``corels_problem.pxd``'s layout): the
        captures, the label and minority count planes, the class weights and the number of units."""
        p = self.planes
        weights = np.ascontiguousarray(self.weights, dtype=np.float64)
        return (
            self.caps,
            p["lplanes"],
            p["lclass"],
            p["lshift"],
            p["zplanes"],
            p["zclass"],
            p["zshift"],
            weights,
            self.n_units,
        )


def _planes(columns: list[tuple[int, np.ndarray]], n_units: int) -> tuple[np.ndarray, ...]:
    """Bit-slice each (class, counts) column: one packed plane per non-empty bit position."""
    rows: list[np.ndarray] = []
    cls: list[int] = []
    shift: list[int] = []
    for c, counts in columns:
        top = int(counts.max()) if counts.size else 0
        for j in range(top.bit_length()):
            plane = ((counts >> j) & 1).astype(np.uint8)
            if plane.any():
                rows.append(plane)
                cls.append(c)
                shift.append(j)
    if rows:
        packed = bitset.pack_rows(np.ascontiguousarray(np.vstack(rows)))
    else:
        packed = np.zeros((0, bitset.n_words(max(n_units, 1))), dtype=np.uint64)
    return (np.ascontiguousarray(packed), np.asarray(cls, dtype=np.int32), np.asarray(shift, dtype=np.int32))


def sample_signatures(bits: np.ndarray, n_samples: int, groups: np.ndarray | None = None) -> np.ndarray:
    """Group id of every sample by its column of antecedent bits (chunked, to bound memory), and
    by its protected groups when ``groups`` (G, n) bool is given: a unit then lies inside or
    outside each group, as a fairness constraint's relaxation needs (corels_fairness.pxd)."""
    if groups is not None and len(groups):
        bits = np.concatenate([bits, bitset.pack_rows(np.ascontiguousarray(groups, dtype=np.uint8))])
    M = bits.shape[0]
    if M == 0:
        return np.zeros(n_samples, dtype=np.int64)
    parts = []
    for start in range(0, M, 256):
        block = bitset.unpack_rows(np.ascontiguousarray(bits[start : start + 256]), n_samples)
        parts.append(np.packbits(block.T, axis=1))
    sig = np.ascontiguousarray(np.concatenate(parts, axis=1))
    void = sig.view(np.dtype((np.void, sig.shape[1]))).reshape(-1)
    _, group = np.unique(void, return_inverse=True)
    return group.reshape(-1).astype(np.int64)


def make_units(
    bits: np.ndarray,
    y: np.ndarray,
    n_classes: int,
    *,
    class_weights: np.ndarray | None = None,
    multiplicity: np.ndarray | None = None,
    compress: bool = True,
    groups: np.ndarray | None = None,
) -> Units:
    """Units, counts and planes for ``Search``.

    ``bits`` is ``(M, words)`` over samples, ``y`` the labels ``0..C-1``; ``multiplicity`` an
    optional non-negative integer count per sample (integer sample weights). ``compress=False``
    keeps one unit per sample (the counts are then 0/1 unless multiplicities say otherwise).
    ``groups`` (G, n) bool: the protected groups of a fairness constraint, kept apart by the
    compression and handed to the search over units (``Units.groups``).
    """
    bits = np.ascontiguousarray(bits, dtype=np.uint64)
    y = np.asarray(y, dtype=np.int64)
    n = y.shape[0]
    C = int(n_classes)
    mult = np.ones(n, dtype=np.int64) if multiplicity is None else np.asarray(multiplicity, np.int64)
    w = np.ones(C) if class_weights is None else np.asarray(class_weights, dtype=np.float64)
    if w.shape != (C,):
        raise ValueError(f"need one class weight per class ({C}), got {w.shape}")
    group = sample_signatures(bits, n, groups)
    G = int(group.max()) + 1 if n else 0
    gcounts = np.bincount(group * C + y, weights=mult, minlength=G * C).reshape(G, C).astype(np.int64)
    # majority of each equivalence class by weight; ties towards the higher class, like the rules
    weighted = gcounts * w
    majority = C - 1 - np.argmax(weighted[:, ::-1], axis=1)
    if compress:
        first = np.full(G, n, dtype=np.int64)
        np.minimum.at(first, group, np.arange(n))
        unit_of_sample = group
        counts = gcounts
        unit_major = majority
        caps = (
            bitset.pack_columns(np.ascontiguousarray(bitset.unpack_rows(bits, n)[:, first].T))
            if bits.shape[0]
            else np.zeros((0, bitset.n_words(G)), dtype=np.uint64)
        )
        n_units = G
    else:
        unit_of_sample = np.arange(n)
        counts = np.zeros((n, C), dtype=np.int64)
        counts[np.arange(n), y] = mult
        unit_major = majority[group]
        caps = bits
        n_units = n
    minority = counts.copy()
    minority[np.arange(n_units), unit_major] = 0
    total = counts.sum(axis=1)
    lcols = [(-1, total)] + [(k, counts[:, k]) for k in range(1, C)]
    uniform = bool(np.all(w == 1.0))
    zcols = [(-1, minority.sum(axis=1))]
    if not uniform:
        zcols += [(k, minority[:, k]) for k in range(1, C)]
    lp, lc, ls = _planes(lcols, n_units)
    zp, zc, zs = _planes(zcols, n_units)
    W = max(bitset.n_words(max(n_units, 1)), 1)
    if caps.shape[0] == 0:
        caps = np.zeros((0, W), dtype=np.uint64)
    units = Units(
        caps=np.ascontiguousarray(caps), counts=counts, minority=minority, unit_of_sample=unit_of_sample, weights=w
    )
    units.planes = {"lplanes": lp, "lclass": lc, "lshift": ls, "zplanes": zp, "zclass": zc, "zshift": zs}
    if groups is not None and len(groups):
        members = np.zeros((len(groups), n_units), dtype=np.uint8)
        members[:, unit_of_sample] = np.asarray(groups, dtype=np.uint8)  # a unit is in or out of each group
        units.groups = np.ascontiguousarray(bitset.pack_rows(members).reshape(len(groups), -1)[:, :W])
        if units.groups.shape[1] < W:
            units.groups = np.ascontiguousarray(np.pad(units.groups, ((0, 0), (0, W - units.groups.shape[1]))))
    return units


def default_threads() -> int:
    """All the cores this process may run on (its affinity mask; the CPU count where the system
    has no affinity call)."""
    try:
        return max(1, len(os.sched_getaffinity(0)))
    except (AttributeError, OSError):
        return max(1, os.cpu_count() or 1)


def make_search(
    units: Units,
    regularization: float,
    *,
    policy: str = "lower_bound",
    symmetry_map: str = "prefix",
    max_prefix_length: int = 255,
    ablation: dict[str, bool] | None = None,
    kernel: str = "auto",
    threads: int = 1,
    fairness: tuple[str, float] | None = None,
    tail_after: int | None = None,
    tail_bytes: int | None = None,
) -> Any:
    """A ready ``Search``; ``ablation`` maps a bound name (see ``ABLATIONS``) to False to drop it.

    ``kernel``: ``dense`` (two classes, few units: masked sums over per-unit counts),
    ``bitsliced`` (popcounts over count planes) or ``auto`` (dense when it applies).
    ``threads``: worker threads of one search (1: the single-threaded path).
    ``fairness``: ``(metric, at_most)``, a constraint over ``units.groups`` (corels_fairness.pxd).
    ``tail_after``: the children scored before the tail table is built (None: as many as its
    build costs; 0: before the search starts); ``tail_bytes``: the most it may hold (None: 64 MiB).
    """
    ab = {name: True for name in ABLATIONS}
    for name, on in (ablation or {}).items():
        if name not in ab:
            raise ValueError(f"unknown bound {name!r}; known: {', '.join(ABLATIONS)}")
        ab[name] = bool(on)
    return _corels.Search(
        *units.problem(),
        float(regularization),
        policy=policy,
        symmetry_map=symmetry_map,
        max_prefix_length=int(max_prefix_length),
        **ab,  # each bound's switch is the keyword of its name
        kernel=kernel,
        threads=int(threads),
        **fairness_options(units, fairness),
        **({} if tail_after is None else {"tail_after": int(tail_after)}),
        **({} if tail_bytes is None else {"tail_bytes": int(tail_bytes)}),
    )


def fairness_options(units: Units, fairness: tuple[str, float] | None) -> dict[str, Any]:
    """The keywords that put a fairness constraint on a kernel (none without one)."""
    if fairness is None:
        return {}
    if units.groups is None:
        raise ValueError("a fairness constraint needs the protected groups in make_units(groups=...)")
    metric, at_most = fairness
    return {"groups": units.groups, "fairness_metric": str(metric), "fairness_at_most": float(at_most)}


def run_to_end(
    search: Any, *, time_limit: float | None = None, slice_seconds: float = 0.005, max_evaluations: int = -1
) -> int:
    """Drive ``search`` until it is done or a limit hits; returns the last ``Search.run`` code."""
    stop = np.zeros(1, dtype=np.uint8)
    deadline = None if time_limit is None else time.monotonic() + time_limit
    while True:
        code = search.run(slice_seconds, stop, max_evaluations)
        if code != _corels.SLICE:
            return int(code)
        if deadline is not None and time.monotonic() >= deadline:
            return int(_corels.STOPPED)


def log10_remaining(pairs: dict[tuple[int, int], int], M: int) -> float:
    """log10 of Theorem 7's bound on prefixes still to evaluate, from ``(length, f)`` counts.

    Each pair contributes ``count * sum_{k<=f} P(M - length, k)``; the partial sums are shared by
    every pair of one length (a cumulative log-sum-exp), so a report costs O(pairs + max f).
    """
    if not pairs:
        return float("-inf")
    by_length: dict[int, list[tuple[int, int]]] = {}
    for (L, f), count in pairs.items():
        by_length.setdefault(L, []).append((f, count))
    logs: list[np.ndarray] = []
    for L, fc in by_length.items():
        m = M - L
        fs = np.array([x for x, _ in fc])
        ln_fact = np.concatenate(([0.0], np.cumsum(np.log(np.arange(1, m + 1, dtype=float)))))
        k = np.arange(int(fs.max()) + 1)
        cum = np.logaddexp.accumulate(ln_fact[m] - ln_fact[m - k])  # ln sum_{j<=k} P(m, j)
        logs.append(cum[fs] + np.log(np.array([c for _, c in fc], dtype=float)))
    return float(np.logaddexp.reduce(np.concatenate(logs)) / np.log(10.0))


class SpillError(RuntimeError):
    """The external-memory queue could not write or read its files (a full or unwritable disk)."""


SPILL_AUTO_SHARE = 0.6  # spill: auto spills once the search holds this share of the memory


def spill_budget(setting: str | int, memory_limit: int | None, baseline: int) -> int:
    """Bytes of search memory (queue, live nodes, symmetry map) past which the queue spills to
    disk; 0 never. ``auto``: a share of ``limits.memory`` (of the machine's memory without one)
    less what the process held before the search (``baseline``), leaving room for the trie's
    pages, which a spill frees for reuse but does not return, and for a bucket coming back."""
    if setting == "off":
        return 0
    if setting != "auto":
        return max(int(setting), 1)
    total = memory_limit if memory_limit is not None else physical_memory()
    if total is None:
        return 0
    return max(int(SPILL_AUTO_SHARE * total) - baseline, 1 << 24)


@contextlib.contextmanager
def spill_directory(
    search: Any,
    budget: int,
    *,
    auto: bool,
    where: str = "",
    min_entries: int = 65536,
    warn: Callable[[str], None] | None = None,
) -> Iterator[None]:
    """Let ``search`` spill past ``budget`` bytes (0: never) to a fresh directory under $TMPDIR,
    removed on the way out whatever ends the search (its files are unlinked as they are opened).
    Without a writable directory, ``auto`` keeps the queue in memory (and says so through
    ``warn``); an explicit size is an error. ``where`` names the machine in messages."""
    if budget == 0:
        yield
        return
    try:
        space = tempfile.TemporaryDirectory(prefix="glasswork-corels-spill-")
    except OSError as exc:
        if auto:
            if warn is not None:
                warn(f"corels: the queue cannot spill to disk{where} ({exc}); it stays in memory")
            yield
            return
        raise SpillError(
            f"corels: search.spill needs a writable temporary directory{where}: {exc}; point TMPDIR at one"
        ) from exc
    with space as directory:
        search.set_spill(directory, budget, min_entries=min_entries, map_budget=budget // 2)
        try:
            yield
        finally:
            search.set_spill(directory, 0)
