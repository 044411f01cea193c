"""The CORELS search under a fairness constraint split over subtrees (in one process and on a Dask
LocalCluster): the same certified optimum as brute force, and a proven infeasible constraint."""

from __future__ import annotations

import numpy as np
import pytest
from processes import local_cluster
from test_corels_fairness import POOL

from glasswork.cython_ext import bitset
from glasswork.plugins.corels.cluster.search import search_split_here
from glasswork.plugins.corels.search import engine
from glasswork.contract.result import Status
from glasswork.contract.solver import ClusterExecutor, SolveContext

distributed = pytest.importorskip("distributed")


def _units(case: dict) -> engine.Units:
    X = bitset.pack_columns(case["X"])
    return engine.make_units(X, case["y"], 2, class_weights=case["w"], multiplicity=case["mult"], groups=case["groups"])


def _options(case: dict, smap: str = "prefix") -> dict:
    return {"policy": "lower_bound", "symmetry_map": smap, "threads": 1, "fairness": (case["metric"], case["at_most"])}


def _expected(case: dict) -> float:
    return float("inf") if case["ref"] is None else case["ref"]


@pytest.mark.parametrize("parts", [2, 3, 5])
def test_the_split_in_one_process_equals_brute_force(parts: int) -> None:
    for case in POOL:
        objective, prefix, _ = search_split_here(_units(case), case["lam"], _options(case), parts)
        assert objective == pytest.approx(_expected(case), abs=1e-9)


def test_distributed_equals_brute_force() -> None:
    from glasswork.plugins.corels.cluster.search import run_distributed

    cases = [c for c in POOL if c["ref"] is None][:2] + [c for c in POOL if c["ref"] is not None][:6]
    with local_cluster() as cluster:
        for case in cases:
            ctx = SolveContext(None, executor=ClusterExecutor(cluster.scheduler_address))
            out = run_distributed(_units(case), case["lam"], _options(case), ctx, lambda *a: None, lambda *a: None)
            assert out.status is Status.OPTIMAL
            assert out.objective == pytest.approx(_expected(case), abs=1e-9)
            if case["ref"] is None:
                assert out.prefix == [] and out.lower_bound == float("inf")
            else:
                assert out.lower_bound == out.objective
                assert np.isfinite(out.objective)
