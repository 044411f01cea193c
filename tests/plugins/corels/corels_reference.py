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
    """Minimum objective over every ordered prefix of distinct antecedents (columns of X): the
    first list in enumeration order within 1e-12 of it. Remembered per instance (a parametrized
    test draws the same instances for each of its parameters)."""
    key = tuple(
        None if a is None else (np.asarray(a).dtype.str, np.asarray(a).shape, np.asarray(a).tobytes())
        for a in (X, y, weights, mult)
    ) + (float(lam), int(n_classes), max_len)
    if key not in _BRUTE_FORCE:
        best: tuple[float, list[int]] = (np.inf, [])
        for objective, prefix, _ in rule_lists(X, y, lam, n_classes, weights, max_len, mult, predictions=False):
            if objective < best[0] - 1e-12:
                best = (objective, prefix)
        _BRUTE_FORCE[key] = best
    objective, prefix = _BRUTE_FORCE[key]
    return objective, list(prefix)


_BRUTE_FORCE: dict[tuple, tuple[float, list[int]]] = {}


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


def one_mixed_unit() -> tuple[np.ndarray, np.ndarray]:
    """100 rows, two antecedents: ``a`` takes one unit of 10 rows labelled 1 and 8 labelled 0, so
    it is right on 10 but gains at most 10 - 8 = 2 over a tail labelling that unit 0 (Theorem 11
    on units, docs/maintainers/corels-proofs.md); ``b`` is a clean rule of 40 rows."""
    a = np.r_[np.ones(18), np.zeros(82)].astype(np.uint8)
    b = np.r_[np.zeros(18), np.ones(40), np.zeros(42)].astype(np.uint8)
    y = np.r_[np.ones(10), np.zeros(8), np.ones(36), np.zeros(4), np.zeros(38), np.ones(4)].astype(np.int64)
    return np.column_stack([a, b]), y


@pytest.fixture(scope="session")
def compas():
    """The CORELS COMPAS training fold, read by the data layer (import this fixture to use it)."""
    if not COMPAS.with_suffix(".out").exists():
        pytest.skip(f"COMPAS CORELS files not found under {SHARED} (set GLASSWORK_DATA)")
    from glasswork.data.corels_format import read_corels

    return read_corels(COMPAS.with_suffix(".out"), COMPAS.with_suffix(".label"), COMPAS.with_suffix(".minor"))


def rule_lists(
    X: np.ndarray,
    y: np.ndarray,
    lam: float,
    n_classes: int = 2,
    weights: np.ndarray | None = None,
    max_len: int | None = None,
    mult: np.ndarray | None = None,
    predictions: bool = True,
) -> list[tuple[float, list[int], np.ndarray | None]]:
    """Every rule list over the columns of X (each ordered prefix of distinct antecedents and its
    default rule): its objective, prefix and predictions (None without ``predictions``: only the
    objectives are needed, and copying the predictions of every list was most of the time), every
    leaf labelled by its (weighted) majority, ties to the higher class, as the search labels them."""
    n, M = X.shape
    w = np.ones(n_classes) if weights is None else np.asarray(weights, float)
    m = np.ones(n) if mult is None else np.asarray(mult, float)
    sw = w[y] * m
    total = sw.sum()
    cols = X.astype(bool)
    limit = M if max_len is None else min(M, max_len)
    out: list[tuple[float, list[int], np.ndarray | None]] = []

    def leaf(mask: np.ndarray) -> tuple[float, int]:
        c = np.bincount(y[mask], weights=m[mask], minlength=n_classes) * w
        label = int(n_classes - 1 - np.argmax(c[::-1]))
        return float(c.sum() - c[label]), label

    def rec(prefix: list[int], open_: np.ndarray, e: float, pred: np.ndarray | None) -> None:
        de, dl = leaf(open_)
        full = None
        if pred is not None:
            full = pred.copy()
            full[open_] = dl
        out.append(((e + de) / total + lam * len(prefix), list(prefix), full))
        if len(prefix) == limit:
            return
        for j in range(M):
            if j in prefix:
                continue
            cap = open_ & cols[:, j]
            ce, cl = leaf(cap)
            nxt = None
            if pred is not None:
                nxt = pred.copy()
                nxt[cap] = cl
            rec(prefix + [j], open_ & ~cols[:, j], e + ce, nxt)

    rec([], np.ones(n, dtype=bool), 0.0, np.zeros(n, dtype=np.int64) if predictions else None)
    return out


def meets(
    metric: str, at_most: float, y: np.ndarray, pred: np.ndarray, groups: np.ndarray, mult: np.ndarray | None
) -> bool:
    """``glasswork.fairness.figures.within`` for every protected group (rows of ``groups``)."""
    from glasswork.fairness import figures as fairness

    return all(fairness.within(metric, at_most, *fairness.group_rates(y, pred, g, mult)) for g in groups)


def fair_brute_force(
    lists: list[tuple[float, list[int], np.ndarray]],
    y: np.ndarray,
    metric: str,
    at_most: float,
    groups: np.ndarray,
    mult: np.ndarray | None = None,
) -> float | None:
    """The least objective among ``lists`` (``rule_lists``) that meet the constraint, None when none does."""
    feasible = [obj for obj, _, pred in lists if meets(metric, at_most, y, pred, groups, mult)]
    return min(feasible) if feasible else None
