"""Helpers shared by the MOSS tests (imported by name; the test folders are not packages)."""

from __future__ import annotations

from typing import Any

import numpy as np


def instance(n: int = 30, m: int = 12, seed: int = 0, trees: int = 50) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """A dense M, a centred y and integer tree counts (Pi = counts / trees)."""
    rng = np.random.default_rng(seed)
    M = rng.normal(size=(n, m))
    y = rng.normal(size=n) + M[:, : max(1, m // 4)].sum(axis=1) * 0.5
    counts = rng.integers(1, trees, size=m)
    return M, y - y.mean(), counts


def brute_force(M: np.ndarray, y: np.ndarray, stab: np.ndarray, k: int, threshold: float, gamma: float):
    """The exact optimum of (9) by enumerating every subset of at most k rules."""
    import itertools

    from glasswork.plugins.moss.loss import H2Oracle

    oracle = H2Oracle(M, y, gamma)
    best = (np.inf, ())
    for size in range(1, k + 1):
        for s in itertools.combinations(range(M.shape[1]), size):
            if stab[list(s)].sum() >= threshold - 1e-9:
                best = min(best, (oracle.value(s), s))
    return best


def naive_sweep(
    M: np.ndarray,
    y: np.ndarray,
    gamma: float,
    stab: np.ndarray,
    k: int,
    thresholds: list[float] | np.ndarray,
    **kwargs: Any,
) -> list[Any]:
    """Each epsilon from scratch: a fresh master and oracle, warm start at the top-k set (the
    reference the EPM is compared with)."""
    from glasswork.plugins.moss.cutting_plane import CuttingPlane
    from glasswork.plugins.moss.loss import H2Oracle

    out = []
    for thr in sorted(thresholds, reverse=True):
        cp = CuttingPlane(H2Oracle(M, y, gamma), stab, k, **kwargs)
        out.append(cp.solve(float(thr)))
    return out
