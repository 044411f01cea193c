"""``search.threads``: one search on several threads certifies the one-thread optimum.

The workers share the queue, the symmetry map, the incumbent and the bound, so only the order of
the work changes: the optimum objective must equal the single-threaded one (the rule list may be
another optimal one among ties), a stopped search must still bracket the optimum, and the live
progress figures must still equal a full scan of the queue after every slice.
"""

from __future__ import annotations

import os
import subprocess
import sys
import threading
import time

import numpy as np
import pytest
from corels_reference import audit_live_figures, compas  # noqa: F401  (compas: a fixture)
from glasswork.cython_ext import bitset
from glasswork.cython_ext import corels as ccorels
from glasswork.plugins.corels import CorelsSpec
from glasswork.plugins.corels.search import engine
from grids import covering_grid

# certified optima of the COMPAS fold (lower-bound policy, prefix map), as the C++ tool finds them
COMPAS_OPTIMA = {0.015: 0.37797, 0.01: 0.36797, 0.005: 0.34809, 0.0025: 0.33809}


def _units(X, y, C=2):
    return engine.make_units(bitset.pack_columns(np.asarray(X, np.uint8)), np.asarray(y, np.int64), C)


def _medium(seed: int, n: int = 400, p: int = 13):
    """An instance whose search runs for thousands of expansions, so the threads interleave."""
    rng = np.random.default_rng(seed)
    X = (rng.random((n, p)) < rng.uniform(0.15, 0.45)).astype(np.uint8)
    y = ((X[:, 0] & X[:, 1]) | X[:, 2] | (X[:, 3] & (1 - X[:, 4]))).astype(np.int64)
    y ^= (rng.random(n) < 0.25).astype(np.int64)
    return X, y


# every policy and every map in the default run; every pair of them under -m slow
POLICY_MAP = covering_grid([engine.POLICIES, engine.SYMMETRY_MAPS], edges=[("lower_bound", "prefix")], strength=1)


@pytest.mark.parametrize("policy, smap", POLICY_MAP)
def test_threads_certify_the_single_thread_optimum(policy: str, smap: str) -> None:
    for seed in range(3):
        X, y = _medium(seed)
        units = _units(X, y)
        one = engine.make_search(units, 0.003, policy=policy, symmetry_map=smap)
        assert engine.run_to_end(one) == ccorels.DONE
        for threads in (2, 4):
            s = engine.make_search(units, 0.003, policy=policy, symmetry_map=smap, threads=threads)
            assert engine.run_to_end(s) == ccorels.DONE
            assert s.objective == pytest.approx(one.objective, abs=1e-12)
            assert s.lower_bound() == pytest.approx(s.objective, abs=1e-12)
            assert s.queue_size == 0 and s.trie_size == 0
            assert s.evaluate(s.best_prefix)["objective"] == pytest.approx(s.objective, abs=1e-12)


def test_threaded_multiclass_and_bitsliced_agree() -> None:
    """Three classes (the bit-sliced kernel's per-thread accumulators) and the captured map."""
    rng = np.random.default_rng(5)
    X = (rng.random((300, 11)) < 0.3).astype(np.uint8)
    y = (X[:, 0] + 2 * (X[:, 1] & X[:, 2])).astype(np.int64) % 3
    noise = rng.random(300) < 0.2
    y[noise] = rng.integers(0, 3, size=int(noise.sum()))
    units = _units(X, y, C=3)
    for smap in engine.SYMMETRY_MAPS:
        one = engine.make_search(units, 0.004, symmetry_map=smap)
        engine.run_to_end(one)
        four = engine.make_search(units, 0.004, symmetry_map=smap, threads=4)
        assert four.kernel == "bitsliced"
        assert engine.run_to_end(four) == ccorels.DONE
        assert four.objective == pytest.approx(one.objective, abs=1e-12)


@pytest.mark.parametrize("policy, smap", POLICY_MAP)
def test_live_figures_equal_a_full_scan_after_threaded_slices(policy: str, smap: str) -> None:
    rng = np.random.default_rng(43)
    for trial in range(2):
        X, y = _medium(100 + trial, p=12)
        ablation = {"garbage_collection": False} if trial == 1 else None
        s = engine.make_search(_units(X, y), 0.002, policy=policy, symmetry_map=smap, ablation=ablation, threads=2)
        audit_live_figures(s, rng, 50, 600)


def test_node_limit_and_time_slices_bracket_the_optimum() -> None:
    X, y = _medium(7, n=500, p=14)
    units = _units(X, y)
    one = engine.make_search(units, 0.002)
    assert engine.run_to_end(one) == ccorels.DONE
    for threads in (2, 4):
        for budget in (300, 3000, 30000):
            s = engine.make_search(units, 0.002, threads=threads)
            code = engine.run_to_end(s, max_evaluations=budget)
            assert s.lower_bound() <= one.objective + 1e-12 <= s.objective + 2e-12
            if code == ccorels.NODE_LIMIT:
                assert s.n_evaluated >= budget
                # workers stop at their next expansion: each overshoots by at most one
                assert s.n_evaluated < budget + threads * X.shape[1]
        # tiny slices: each returns promptly and the search still certifies
        s = engine.make_search(units, 0.002, threads=threads)
        stop = np.zeros(1, np.uint8)
        slices = 0
        while (code := s.run(0.0005, stop, -1)) == ccorels.SLICE:
            slices += 1
        assert code == ccorels.DONE and slices > 0
        assert s.objective == pytest.approx(one.objective, abs=1e-12)


def test_stop_flag_stops_every_thread_mid_slice(compas) -> None:
    """Cancel while the workers run (a long slice): they stop promptly, the incumbent and the
    bound bracket the known optimum."""
    units = engine.make_units(compas.antecedents.bits, compas.y, 2)
    s = engine.make_search(units, 0.005, threads=2)
    stop = np.zeros(1, np.uint8)
    out: dict[str, float] = {}

    def search() -> None:
        out["code"] = s.run(60.0, stop, -1)
        out["end"] = time.perf_counter()

    worker = threading.Thread(target=search)
    worker.start()
    started = time.perf_counter()
    while s.n_evaluated == 0 and time.perf_counter() - started < 30:  # the workers are busy
        time.sleep(0.01)
    time.sleep(0.2)
    stop[0] = 1
    asked = time.perf_counter()
    worker.join(30)
    assert not worker.is_alive()
    assert out["code"] == ccorels.STOPPED
    assert out["end"] - asked < 5.0  # well inside the 60 s slice (1.2 s seen with the machine loaded)
    assert s.n_evaluated > 0 and s.queue_size > 0
    lb, _, _ = s.scan_queue()
    assert s.lower_bound() == lb
    assert s.lower_bound() <= COMPAS_OPTIMA[0.005] + 1e-5
    assert s.objective >= COMPAS_OPTIMA[0.005] - 1e-5
    # and the search resumes from where it stopped
    stop[0] = 0
    assert s.run(0.01, stop, -1) in (ccorels.SLICE, ccorels.DONE)


@pytest.mark.parametrize("lam", [0.015, 0.01])
def test_compas_known_optima_with_two_threads(compas, lam: float) -> None:
    units = engine.make_units(compas.antecedents.bits, compas.y, 2)
    s = engine.make_search(units, lam, threads=2)
    assert engine.run_to_end(s, time_limit=120) == ccorels.DONE
    assert round(s.objective, 5) == COMPAS_OPTIMA[lam]
    assert s.lower_bound() == pytest.approx(s.objective, abs=1e-12)


@pytest.mark.slow
def test_compas_known_optimum_at_0005_with_two_threads(compas) -> None:
    units = engine.make_units(compas.antecedents.bits, compas.y, 2)
    s = engine.make_search(units, 0.005, threads=2)
    assert engine.run_to_end(s, time_limit=300) == ccorels.DONE
    assert round(s.objective, 5) == COMPAS_OPTIMA[0.005]
    assert len(s.best_prefix) == 4
    assert s.lower_bound() == pytest.approx(s.objective, abs=1e-12)


@pytest.mark.skipif(not hasattr(os, "fork"), reason="needs fork")
def test_a_forked_child_gets_its_own_workers() -> None:
    """The worker pool does not survive fork(): a child that goes on with a search that already
    ran threaded slices makes a new pool instead of waiting for threads that are gone."""
    X, y = _medium(3)
    s = engine.make_search(_units(X, y), 0.003, threads=2)
    stop = np.zeros(1, np.uint8)
    assert s.run(0.0002, stop, 200) in (ccorels.NODE_LIMIT, ccorels.SLICE)
    one = engine.make_search(_units(X, y), 0.003)
    engine.run_to_end(one)
    pid = os.fork()
    if pid == 0:  # the child: finish the search, report by code
        ok = False
        try:
            ok = engine.run_to_end(s) == ccorels.DONE and abs(s.objective - one.objective) < 1e-12
        finally:
            os._exit(0 if ok else 1)
    deadline = time.monotonic() + 60
    while True:
        done, status = os.waitpid(pid, os.WNOHANG)
        if done:
            break
        if time.monotonic() > deadline:
            os.kill(pid, 9)
            os.waitpid(pid, 0)
            pytest.fail("the forked child hung waiting for the parent's worker threads")
        time.sleep(0.02)
    assert os.WIFEXITED(status) and os.WEXITSTATUS(status) == 0
    assert engine.run_to_end(s) == ccorels.DONE  # and the parent's pool still works


def test_spec_threads_default_and_range() -> None:
    doc = {"name": "t", "data": {"source": "sklearn:breast_cancer"}, "solver": "corels"}
    assert CorelsSpec.model_validate(doc).search.threads is None  # all usable cores
    assert engine.default_threads() >= 1
    doc["search"] = {"threads": 3}
    assert CorelsSpec.model_validate(doc).search.threads == 3
    doc["search"] = {"threads": 0}
    with pytest.raises(ValueError, match="threads"):
        CorelsSpec.model_validate(doc)
    X, y = _medium(1)
    with pytest.raises(ValueError, match="threads"):
        engine.make_search(_units(X, y), 0.01, threads=0)


_OOM_SCRIPT = """
import resource, sys
import numpy as np
from glasswork.data.corels_format import read_corels
from glasswork.plugins.corels.search import engine
from glasswork.cython_ext import corels as cc
base, threads, headroom = sys.argv[1], int(sys.argv[2]), int(sys.argv[3])
data = read_corels(base + ".out", base + ".label", base + ".minor")
s = engine.make_search(engine.make_units(data.antecedents.bits, data.y, 2), 0.0025, threads=threads)
stop = np.zeros(1, np.uint8)
s.run(0.001, stop, -1)          # the worker threads exist before the cap
vm = int([x for x in open("/proc/self/status") if x.startswith("VmSize")][0].split()[1]) * 1024
resource.setrlimit(resource.RLIMIT_AS, (vm + headroom * 2**20, resource.RLIM_INFINITY))
while (code := s.run(0.005, stop, -1)) == cc.SLICE:
    pass
print(code, s.objective, s.lower_bound())
"""


@pytest.mark.skipif(not sys.platform.startswith("linux"), reason="RLIMIT_AS and /proc: Linux")
@pytest.mark.parametrize(("threads", "headroom_mb"), [(2, 10), (4, 30)])
def test_allocation_failure_with_threads_keeps_a_valid_bound(compas, threads: int, headroom_mb: int) -> None:
    """The node pool cannot grow (address space capped): every worker stops, the search reports
    out_of_memory, and the incumbent and bound still bracket the known optimum."""
    from corels_reference import COMPAS

    out = subprocess.run(
        [sys.executable, "-c", _OOM_SCRIPT, str(COMPAS), str(threads), str(headroom_mb)],
        capture_output=True,
        text=True,
        timeout=300,
    )
    if out.returncode != 0 and "cannot allocate memory for thread-local data" in out.stderr:
        # glibc aborts when a thread first needs dynamic thread-local storage with the address
        # space already full: seen once in CI's lowest-versions step (2 threads, 10 MB). Not the
        # search's own out-of-memory path; open question which allocation asks for it.
        pytest.xfail("glibc could not allocate a thread's TLS under the address-space cap")
    assert out.returncode == 0, out.stderr[-2000:]
    code, objective, bound = out.stdout.split()
    assert int(code) == ccorels.OUT_OF_MEMORY
    # lambda = 0.0025 needs about 1 GB to certify (0.005 only about 50 MB more than the start,
    # which 4 threads could sometimes fit in the headroom and finish)
    assert float(bound) <= COMPAS_OPTIMA[0.0025] + 1e-5
    assert float(objective) >= COMPAS_OPTIMA[0.0025] - 1e-5
    assert float(bound) < float(objective)
