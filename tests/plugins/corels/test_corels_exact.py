"""Exactness: the certified optimum equals exhaustive enumeration for every policy, map and ablation.

All bounds are exact, so switching any of them off, changing the queue order or the symmetry map
may change only the work done, never the optimum (specification §9.1 item 8).
"""

from __future__ import annotations

import functools
import itertools

import numpy as np
import pytest
from corels_reference import brute_force, one_mixed_unit, random_instance
from glasswork.cython_ext import bitset
from glasswork.cython_ext import corels as ccorels
from glasswork.plugins.corels.search import engine
from grids import covering_grid

LAMBDAS = (0.0, 0.005, 0.01, 0.05, 0.2)


def _pool() -> list[dict]:
    """Binary, 3-class, class-weighted, integer-weighted and length-limited instances."""
    rng = np.random.default_rng(20261122)
    pool = []
    for i in range(36):
        kind = ("binary", "binary", "multiclass", "weighted", "multiplicity", "max_len")[i % 6]
        C = 3 if kind == "multiclass" else 2
        X, y = random_instance(rng, n_classes=C, max_m=6 if kind != "max_len" else 7)
        lam = float(LAMBDAS[i % len(LAMBDAS)])
        w = rng.uniform(0.3, 3.0, size=C) if kind == "weighted" else None
        mult = rng.integers(0, 4, size=len(y)) if kind == "multiplicity" else None
        max_len = 2 if kind == "max_len" else None
        ref = brute_force(X, y, lam, C, weights=w, max_len=max_len, mult=mult)
        pool.append(dict(X=X, y=y, C=C, lam=lam, w=w, mult=mult, max_len=max_len, ref=ref))
    return pool


POOL = _pool()

# each name switches a default bound off (Theorem 18's similar_support included)
ABLATION_SETS = [()] + [(b,) for b in engine.ABLATIONS] + [tuple(engine.ABLATIONS)]


def _solve(case: dict, policy: str, smap: str, ablation: tuple, compress: bool, kernel: str = "auto", threads: int = 1):
    units = engine.make_units(
        bitset.pack_columns(case["X"]),
        case["y"],
        case["C"],
        class_weights=case["w"],
        multiplicity=case["mult"],
        compress=compress,
    )
    search = engine.make_search(
        units,
        case["lam"],
        policy=policy,
        symmetry_map=smap,
        max_prefix_length=255 if case["max_len"] is None else case["max_len"],
        ablation={b: False for b in ablation},
        kernel=kernel,
        threads=threads,
    )
    code = engine.run_to_end(search)
    return code, search


@pytest.mark.parametrize(
    "policy, smap, ablation, threads",
    covering_grid(
        [engine.POLICIES, engine.SYMMETRY_MAPS, ABLATION_SETS, (1, 2, 4)],
        ids=[str, str, lambda a: "+".join(a) or "all-bounds", lambda t: f"threads{t}"],
        edges=[("lower_bound", "prefix", (), 1), ("bfs", "none", ABLATION_SETS[-1], 4)],
    ),
)
def test_optimum_equals_enumeration(policy: str, smap: str, ablation: tuple, threads: int) -> None:
    """Also with several threads: the optimum is the same (the list may be another tie)."""
    for i, case in enumerate(POOL):
        compress = i % 2 == 0
        kernel = "bitsliced" if i % 4 < 2 else "auto"  # dense wherever it applies, else sliced
        code, search = _solve(case, policy, smap, ablation, compress, kernel, threads)
        assert search.threads == threads
        assert code == ccorels.DONE
        assert search.done and search.queue_size == 0
        assert search.objective == pytest.approx(case["ref"][0], abs=1e-9), (i, case["ref"])
        assert search.lower_bound() == pytest.approx(search.objective, abs=1e-12)
        # the returned prefix really scores what the search claims
        scored = search.evaluate(search.best_prefix)
        assert scored["objective"] == pytest.approx(search.objective, abs=1e-9)
        if case["max_len"] is not None:
            assert len(search.best_prefix) <= case["max_len"]


@pytest.mark.parametrize("compress", [True, False])
def test_compression_is_lossless(compress: bool) -> None:
    """Merging identical samples into units changes neither the optimum nor the work order."""
    for case in POOL[:12]:
        _, a = _solve(case, "lower_bound", "prefix", (), True)
        _, b = _solve(case, "lower_bound", "prefix", (), compress)
        assert a.objective == pytest.approx(b.objective, abs=1e-12)
        assert a.n_evaluated == b.n_evaluated


@pytest.mark.parametrize("policy", engine.POLICIES)
def test_dense_and_bitsliced_kernels_do_identical_work(policy: str) -> None:
    for case in POOL:
        if case["C"] != 2 or case["w"] is not None:
            continue
        _, a = _solve(case, policy, "prefix", (), True, "dense")
        _, b = _solve(case, policy, "prefix", (), True, "bitsliced")
        assert a.kernel == "dense" and b.kernel == "bitsliced"
        assert a.objective == b.objective
        assert a.counters() == b.counters()


def test_ablations_raise_the_work_on_a_harder_instance() -> None:
    """Removing a pruning rule typically costs evaluations (a tendency, checked on one instance)."""
    rng = np.random.default_rng(7)
    X = (rng.random((400, 12)) < 0.35).astype(np.uint8)
    y = ((X[:, 0] | X[:, 1] & X[:, 2]) ^ (rng.random(400) < 0.2)).astype(np.int64)
    units = engine.make_units(bitset.pack_columns(X), y, 2)
    work = {}
    for ab in [()] + [(b,) for b in ("support", "lookahead", "equivalent_points")]:
        s = engine.make_search(units, 0.01, ablation={b: False for b in ab})
        assert engine.run_to_end(s) == ccorels.DONE
        work[ab] = (s.n_evaluated, s.objective)
    base_evals, base_obj = work[()]
    for ab, (evals, obj) in work.items():
        assert obj == pytest.approx(base_obj, abs=1e-12)
        assert evals >= base_evals, ab


def test_every_combination_agrees_on_one_instance() -> None:
    """Cross product of policy, map and each ablation subset of three bounds, on one instance."""
    rng = np.random.default_rng(3)
    X, y = random_instance(rng, max_m=6)
    ref = brute_force(X, y, 0.01)
    units = engine.make_units(bitset.pack_columns(X), y, 2)
    bounds = ("support", "lookahead", "equivalent_points")
    for policy, smap in itertools.product(engine.POLICIES, engine.SYMMETRY_MAPS):
        for r in range(len(bounds) + 1):
            for ab in itertools.combinations(bounds, r):
                s = engine.make_search(units, 0.01, policy=policy, symmetry_map=smap, ablation={b: False for b in ab})
                assert engine.run_to_end(s) == ccorels.DONE
                assert s.objective == pytest.approx(ref[0], abs=1e-9)


def test_captured_map_respects_a_length_cap() -> None:
    """Equal captured sets of different lengths (a, b) vs (a or b) under max_prefix_length.

    Theorem 15 pairs extensions of equal added length, so with a cap the map may only keep
    the shorter prefix; the optimum must match enumeration of capped lists.
    """
    rng = np.random.default_rng(5)
    for _ in range(80):
        X, y = random_instance(rng, max_m=5)
        if X.shape[1] >= 2:
            X = np.hstack([X, X[:, :1] | X[:, 1:2]])
        lam = float(rng.choice([0.0, 0.005, 0.02]))
        cap = int(rng.integers(1, 4))
        ref = brute_force(X, y, lam, max_len=cap)
        units = engine.make_units(bitset.pack_columns(X), y, 2)
        for policy in ("bfs", "lower_bound"):
            s = engine.make_search(units, lam, symmetry_map="captured", max_prefix_length=cap, policy=policy)
            assert engine.run_to_end(s) == ccorels.DONE
            assert s.objective == pytest.approx(ref[0], abs=1e-9)
            assert len(s.best_prefix) <= cap


def _nested_instance(
    rng: np.random.Generator, n_classes: int = 2, rows: tuple[int, int] = (40, 160), noise: float = 0.8
) -> tuple[np.ndarray, np.ndarray]:
    """Random features plus conjunctions and disjunctions of them, nested as mined sets are.

    Independent random columns almost never trigger Theorem 18 (it needs one rule to cover what
    two others capture, nearly); nested columns, as COMPAS has, do.
    """
    n = int(rng.integers(*rows))
    m = int(rng.integers(3, 5))
    X = (rng.random((n, m)) < rng.uniform(0.2, 0.6, size=m)).astype(np.uint8)
    extra = []
    for _ in range(int(rng.integers(2, 4))):
        i, j = rng.choice(m, size=2, replace=False)
        extra.append(X[:, i] & X[:, j] if rng.random() < 0.5 else X[:, i] | X[:, j])
    X = np.column_stack([X] + extra).astype(np.uint8)
    score = X[:, :m] @ rng.normal(size=m) + rng.normal(scale=noise, size=n)
    y = np.digitize(score, np.quantile(score, np.linspace(0, 1, n_classes + 1)[1:-1]))
    flip = rng.random(n) < 0.2
    y[flip] = rng.integers(0, n_classes, size=int(flip.sum()))
    return X, y.astype(np.int64)


def _nested_pool(
    seed: int = 20261124,
    size: int = 24,
    kinds: tuple[str, ...] = ("binary", "binary", "multiclass", "weighted", "max_len", "binary"),
    lambdas: tuple[float, ...] = (0.0, 0.005, 0.01, 0.02),
    rows: tuple[int, int] = (40, 160),
    noise: float = 0.8,
) -> list[dict]:
    """``size`` nested instances, each of a kind (binary, three classes, class-weighted,
    integer-weighted, length-limited) and a lambda in turn, with brute force's optimum."""
    rng = np.random.default_rng(seed)
    pool = []
    for i in range(size):
        kind = kinds[i % len(kinds)]
        C = 3 if kind == "multiclass" else 2
        X, y = _nested_instance(rng, C, rows, noise)
        lam = float(lambdas[i % len(lambdas)])
        w = rng.uniform(0.3, 3.0, size=C) if kind == "weighted" else None
        mult = rng.integers(0, 4, size=len(y)) if kind == "multiplicity" else None
        max_len = 2 if kind == "max_len" else None
        ref = brute_force(X, y, lam, C, weights=w, max_len=max_len, mult=mult)
        pool.append(dict(X=X, y=y, C=C, lam=lam, w=w, mult=mult, max_len=max_len, ref=ref))
    return pool


@functools.cache
def nested() -> list[dict]:
    """The nested pool, made once, when a test first needs it (not at collection: brute force
    takes about 2 s)."""
    return _nested_pool()


@pytest.mark.parametrize(
    "policy, smap, threads",
    covering_grid(
        [engine.POLICIES, engine.SYMMETRY_MAPS, (1, 2)],
        ids=[str, str, lambda t: f"threads{t}"],
        edges=[("lower_bound", "prefix", 1), ("bfs", "captured", 2)],
    ),
)
def test_theorem_18_on_nested_antecedents(policy: str, smap: str, threads: int) -> None:
    """Where Theorem 18 fires: its prunings happen and the optimum still equals enumeration."""
    pruned = 0
    for i, case in enumerate(nested()):
        code, search = _solve(case, policy, smap, (), i % 2 == 0, "bitsliced" if i % 4 < 2 else "auto", threads=threads)
        assert code == ccorels.DONE
        assert search.objective == pytest.approx(case["ref"][0], abs=1e-9), (i, case["ref"])
        assert search.lower_bound() == pytest.approx(search.objective, abs=1e-12)
        assert search.evaluate(search.best_prefix)["objective"] == pytest.approx(search.objective, abs=1e-9)
        pruned += search.counters()["pruned_similar_support"]
    assert pruned > 0


def test_theorem_18_prunes_and_keeps_the_optimum() -> None:
    """Theorem 18 cuts work on an instance where it applies, never the optimum."""
    rng = np.random.default_rng(7)
    X = (rng.random((400, 10)) < 0.35).astype(np.uint8)
    y = ((X[:, 0] | X[:, 1] & X[:, 2]) ^ (rng.random(400) < 0.2)).astype(np.int64)
    X = np.column_stack([X, X[:, 0] & X[:, 3], X[:, 1] | X[:, 4], X[:, 2] & X[:, 5], X[:, 0] | X[:, 6]]).astype(
        np.uint8
    )
    units = engine.make_units(bitset.pack_columns(X), y, 2)
    runs = {}
    configs = {"base": {"similar_support": False}, "sim": {}}
    for name, ablation in configs.items():
        s = engine.make_search(units, 0.005, ablation=ablation)
        assert engine.run_to_end(s) == ccorels.DONE
        runs[name] = s
    base, sim = runs["base"], runs["sim"]
    for s in runs.values():
        assert s.objective == pytest.approx(base.objective, abs=1e-12)
    assert base.counters()["pruned_similar_support"] == 0
    assert sim.counters()["pruned_similar_support"] > 0
    assert sim.counters()["inserted"] < base.counters()["inserted"]
    assert sim.n_evaluated < base.n_evaluated


@functools.cache
def mixed() -> list[dict]:
    """Nested antecedents over many rows: every unit (rows alike on every antecedent) is large and
    holds both labels, where Omega on units (docs/maintainers/corels-proofs.md) is below the whole
    weight; three classes keep the whole weight. Made when a test first needs it."""
    kinds = ("binary", "weighted", "multiplicity", "multiclass")
    return _nested_pool(20261129, 32, kinds, (0.005, 0.01, 0.02, 0.04, 0.002), (150, 400), 1.2)


@pytest.mark.parametrize(
    "policy, smap, threads",
    covering_grid(
        [engine.POLICIES, engine.SYMMETRY_MAPS, (1, 2)],
        ids=[str, str, lambda t: f"threads{t}"],
        edges=[("lower_bound", "prefix", 1), ("curiosity", "captured", 2)],
    ),
)
def test_units_with_both_labels_keep_the_optimum(policy: str, smap: str, threads: int) -> None:
    """Theorem 11 and 18 with Omega on units prune where every unit holds both labels, and the
    optimum still equals enumeration."""
    pruned = 0
    for i, case in enumerate(mixed()):
        code, search = _solve(case, policy, smap, (), i % 2 == 0, "bitsliced" if i % 4 < 2 else "auto", threads=threads)
        assert code == ccorels.DONE
        assert search.objective == pytest.approx(case["ref"][0], abs=1e-9), (i, case["ref"])
        assert search.lower_bound() == pytest.approx(search.objective, abs=1e-12)
        counters = search.counters()
        pruned += counters["pruned_accurate_support"] + counters["pruned_similar_support"]
    assert pruned > 0


def test_a_rule_right_only_on_minorities_beyond_lambda_is_pruned() -> None:
    """Theorem 11 on units: ``a`` takes one unit of 10 rows labelled 1 and 8 labelled 0 (100
    rows, lambda 0.05, so lambda N = 5). The paper's Theorem 11 keeps it (10 right >= 5); on units
    it gains at most 10 - 8 = 2 over a tail labelling the unit 0, so no optimal list holds it."""
    X, y = one_mixed_unit()
    units = engine.make_units(bitset.pack_columns(X), y, 2)
    search = engine.make_search(units, 0.05, threads=1)
    assert engine.run_to_end(search) == ccorels.DONE
    assert search.objective == pytest.approx(brute_force(X, y, 0.05)[0], abs=1e-12)
    assert search.counters()["pruned_accurate_support"] >= 1  # ``a`` at the root at least
    without = engine.make_search(units, 0.05, threads=1, ablation={"accurate_support": False})
    assert engine.run_to_end(without) == ccorels.DONE
    assert without.counters()["pruned_accurate_support"] == 0 and without.objective == search.objective


def test_tail_identity_behind_the_wide_antecedent_analysis() -> None:
    """docs/maintainers/corels-measurements.md, "Wide antecedent sets": for a prefix D leaving U uncaptured and a
    tail T, R(D + T) = b(D) + lam |T| + n_noty(U) - sum of the tail's gains (y the list's default label),
    and with a non-empty tail R(D + T) >= b(D) + lam + b0(U) (Lemma 2 with Theorem 20)."""
    rng = np.random.default_rng(27)
    checked = 0
    for _ in range(60):
        X, y = random_instance(rng, max_m=7)
        lam = float(rng.choice([0.0, 0.01, 0.05]))
        n, M = X.shape
        search = engine.make_search(engine.make_units(bitset.pack_columns(X), y, 2), lam)
        order = [int(a) for a in rng.permutation(M)]
        k = int(rng.integers(0, M))
        prefix, tail = order[:k], order[k : k + int(rng.integers(1, M - k + 1))]
        full = search.evaluate(prefix + tail)
        head = search.evaluate(prefix)
        open_ = np.ones(n, bool)
        for a in prefix:
            open_ &= ~X[:, a].astype(bool)
        d = full["default"]
        gains = 0.0
        rest = open_.copy()
        for a, label in zip(tail, full["rule_labels"][k:], strict=True):
            part = rest & X[:, a].astype(bool)
            rest &= ~part
            if label != d:
                gains += np.sum(y[part] != d) - np.sum(y[part] == d)
        identity = head["b"] + lam * len(tail) + (np.sum(y[open_] != d) - gains) / n
        assert full["objective"] == pytest.approx(identity, abs=1e-12)
        assert full["objective"] >= head["b"] + lam + head["b0"] - 1e-12
        checked += 1
    assert checked == 60
