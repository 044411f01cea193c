"""Reference tools for the CORELS tests: exhaustive enumeration and random instances."""

from __future__ import annotations

import os
from pathlib import Path

import numpy as np
import pytest

REPO = Path(__file__).resolve().parents[3]
SHARED = Path(os.environ.get("GLASSWORK_DATA", REPO.parent / "shared" / "datasets"))
COMPAS = SHARED / "corels" / "compas_train"


def brute_force(
    X: np.ndarray,
    y: np.ndarray,
    lam: float,
    n_classes: int = 2,
    weights: np.ndarray | None = None,
    max_len: int | None = None,
    mult: np.ndarray | None = None,
) -> tuple[float, list[int]]:
    """Minimum objective over every ordered prefix of distinct antecedents (columns of X)."""
    n, M = X.shape
    w = np.ones(n_classes) if weights is None else np.asarray(weights, float)
    m = np.ones(n) if mult is None else np.asarray(mult, float)
    sw = w[y] * m
    total = sw.sum()
    onehot = np.zeros((n, n_classes))
    onehot[np.arange(n), y] = sw
    cols = X.astype(bool)
    limit = M if max_len is None else min(M, max_len)
    best = [np.inf, []]

    def err(mask: np.ndarray) -> float:
        c = onehot[mask].sum(axis=0)
        return float(c.sum() - c.max())

    def rec(prefix: list[int], open_: np.ndarray, e: float) -> None:
        r = (e + err(open_)) / total + lam * len(prefix)
        if r < best[0] - 1e-12:
            best[0], best[1] = r, list(prefix)
        if len(prefix) == limit:
            return
        for j in range(M):
            if j in prefix:
                continue
            cap = open_ & cols[:, j]
            rec(prefix + [j], open_ & ~cols[:, j], e + err(cap))

    rec([], np.ones(n, dtype=bool), 0.0)
    return best[0], best[1]


def audit_live_figures(search, rng: np.random.Generator, low: int, high: int) -> None:
    """Run ``search`` to the end in node-limited slices of random size (``low`` to ``high`` more
    evaluations each); after every slice the incrementally kept lower bound and histograms must
    equal a full scan of the queue, and at the end the queue is empty and the bound is closed."""
    from glasswork.cython_ext import corels as ccorels

    stop = np.zeros(1, np.uint8)
    budget = 0
    compared = 0
    while True:
        budget += int(rng.integers(low, high))
        code = search.run(10.0, stop, budget)
        lb, lengths, pairs = search.scan_queue()
        assert search.lower_bound() == lb
        assert search.queue_summary() == (lengths, pairs)
        compared += bool(lengths)
        if code != ccorels.NODE_LIMIT:
            break
    assert code == ccorels.DONE
    assert search.queue_summary() == ({}, {}) and search.lower_bound() == search.objective
    assert compared > 0


def random_instance(rng: np.random.Generator, n_classes: int = 2, max_m: int = 6) -> tuple[np.ndarray, np.ndarray]:
    n = int(rng.integers(8, 120))
    M = int(rng.integers(1, max_m + 1))
    density = rng.uniform(0.15, 0.7, size=M)
    X = (rng.random((n, M)) < density).astype(np.uint8)
    if rng.random() < 0.3 and M >= 2:  # duplicates and complements, as mined sets have
        X[:, -1] = X[:, 0] if rng.random() < 0.5 else 1 - X[:, 0]
    # labels correlated with the features, so lists of several rules win
    score = X @ rng.normal(size=M) + rng.normal(scale=0.8, size=n)
    if n_classes == 2:
        y = (score > np.median(score)).astype(np.int64)
        flip = rng.random(n) < 0.15
        y[flip] = 1 - y[flip]
    else:
        y = np.digitize(score, np.quantile(score, np.linspace(0, 1, n_classes + 1)[1:-1]))
    return X, y.astype(np.int64)


@pytest.fixture(scope="session")
def compas():
    """The CORELS COMPAS training fold, read by the data layer (import this fixture to use it)."""
    if not COMPAS.with_suffix(".out").exists():
        pytest.skip(f"COMPAS CORELS files not found under {SHARED} (set GLASSWORK_DATA)")
    from glasswork.data.corels_format import read_corels

    return read_corels(COMPAS.with_suffix(".out"), COMPAS.with_suffix(".label"), COMPAS.with_suffix(".minor"))
