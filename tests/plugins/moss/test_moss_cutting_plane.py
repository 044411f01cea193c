"""Algorithm 1 and the EPM against brute force and against each other (spec §7.1 items 7-10)."""

from __future__ import annotations

import importlib.metadata
import itertools
import json
import os
import subprocess
import sys
from pathlib import Path

import numpy as np
import pytest
from glasswork.contract.result import Status
from glasswork.plugins.moss.cutting_plane import CuttingPlane, InfeasibleEpsilon
from glasswork.plugins.moss.loss import H2Oracle, epsilon_grid
from moss_helpers import brute_force, instance, naive_sweep

GAMMA = 0.5


@pytest.mark.parametrize("seed", [0, 1, 2])
def test_cutting_plane_equals_brute_force(seed):
    M, y, counts = instance(n=30, m=12, seed=seed)
    k = 3
    cp = CuttingPlane(H2Oracle(M, y, GAMMA), counts.astype(float), k, pi_scale=50)
    grid = epsilon_grid(counts, k)
    for thr in list(grid[:6]) + [grid[len(grid) // 2], grid[-1]]:
        p = cp.solve(float(thr))
        value, support = brute_force(M, y, counts.astype(float), k, float(thr), GAMMA)
        assert p.status is Status.OPTIMAL
        assert p.h2 == pytest.approx(value, rel=1e-6)
        assert p.lower_bound <= p.h2 + 1e-9
        assert counts[list(p.support)].sum() >= thr and len(p.support) <= k
        if abs(p.h2 - value) < 1e-12:
            assert p.support == support


def test_fractional_pi_matches_brute_force():
    M, y, _counts = instance(n=25, m=10, seed=7)
    pi = np.random.default_rng(7).uniform(size=10)  # not multiples of 1/B
    k = 3
    cp = CuttingPlane(H2Oracle(M, y, GAMMA), pi, k)
    for thr in epsilon_grid(pi, k)[:5]:
        p = cp.solve(float(thr))
        assert p.h2 == pytest.approx(brute_force(M, y, pi, k, float(thr), GAMMA)[0], rel=1e-6)


def test_eps_max_top_k_and_infeasible_above():
    M, y, _ = instance(n=30, m=12, seed=3)
    counts = np.arange(1, 13)  # distinct Pi
    k = 4
    cp = CuttingPlane(H2Oracle(M, y, GAMMA), counts.astype(float), k, pi_scale=100)
    top = float(counts[-k:].sum())
    p = cp.solve(top)
    assert p.support == (8, 9, 10, 11)
    assert p.h1 == pytest.approx(top / 100)
    with pytest.raises(InfeasibleEpsilon):
        cp.solve(top + 1e-9 * 100 * 10)


def test_epm_equals_naive_sweep_with_fewer_iterations():
    M, y, counts = instance(n=40, m=16, seed=5)
    k = 4
    grid = epsilon_grid(counts, k, points=12)
    gamma = 0.02  # the regime the paper recommends: few cuts per epsilon
    cp = CuttingPlane(H2Oracle(M, y, gamma), counts.astype(float), k, pi_scale=50)
    epm = cp.sweep(grid)
    naive = naive_sweep(M, y, gamma, counts.astype(float), k, grid, pi_scale=50)
    assert [p.status for p in epm] == [Status.OPTIMAL] * len(grid)
    np.testing.assert_allclose([p.h2 for p in epm], [p.h2 for p in naive], rtol=1e-6)
    assert sum(p.iterations for p in epm) <= sum(p.iterations for p in naive)
    h2 = [p.h2 for p in epm]  # OPT(eps) is non-decreasing in eps: along the descending sweep it falls
    assert all(b <= a + 1e-9 * abs(a) for a, b in itertools.pairwise(h2))


def test_bounds_are_sane_at_every_iteration():
    M, y, counts = instance(n=40, m=16, seed=6)
    seen = []
    cp = CuttingPlane(H2Oracle(M, y, 0.1), counts.astype(float), 5, pi_scale=50, progress=seen.append)
    thr = float(epsilon_grid(counts, 5)[4])
    p = cp.solve(thr)
    lowers = [s["lower"] for s in seen]
    assert all(s["lower"] <= s["upper"] + 1e-9 for s in seen)
    assert lowers == sorted(lowers)
    assert p.h2 - p.lower_bound <= 1e-6 * p.h2


def test_stop_check_reports_the_stop_and_a_valid_bound():
    M, y, counts = instance(n=40, m=16, seed=8)
    calls = []

    def stop(cuts):
        calls.append(cuts)
        return Status.STOPPED_TIME if len(calls) > 2 else None

    cp = CuttingPlane(H2Oracle(M, y, 5.0), counts.astype(float), 5, pi_scale=50, stop=stop)
    thr = float(epsilon_grid(counts, 5)[6])
    p = cp.solve(thr)
    exact = brute_force(M, y, counts.astype(float), 5, thr, 5.0)[0]
    assert p.status in (Status.STOPPED_TIME, Status.OPTIMAL)
    assert p.lower_bound <= exact + 1e-9 <= p.h2 + 2e-9


def test_medium_instance_uses_reduced_cost_fixing_and_stays_exact():
    """m >= 64 turns on the reduced-cost fixing; the optimum must equal the plain master's."""
    M, y, counts = instance(n=60, m=80, seed=9)
    k = 4
    grid = epsilon_grid(counts, k, points=6)
    fast = CuttingPlane(H2Oracle(M, y, 0.05), counts.astype(float), k, pi_scale=50).sweep(grid)
    plain_cp = CuttingPlane(H2Oracle(M, y, 0.05), counts.astype(float), k, pi_scale=50)
    plain_cp.master._fix_by_reduced_cost = lambda *a: np.zeros(0, dtype=np.int32)  # type: ignore[method-assign]
    plain = plain_cp.sweep(grid)
    np.testing.assert_allclose([p.h2 for p in fast], [p.h2 for p in plain], rtol=1e-6)
    assert all(p.status is Status.OPTIMAL for p in fast)


def test_the_master_prints_nothing_on_standard_output(capfd):
    """``glasswork run --json`` writes its document to stdout: HiGHS must stay silent there, at
    the C level too. (In a process that already made a HiGHS model this cannot see the banner:
    the fresh-process test below can.)"""
    M, y, counts = instance(n=30, m=10, seed=1)
    capfd.readouterr()
    cp = CuttingPlane(H2Oracle(M, y, 0.5), counts.astype(float), 3, pi_scale=50, relaxation=False)
    cp.sweep(epsilon_grid(counts, 3, points=3))
    assert capfd.readouterr().out == ""


def test_run_json_on_a_cutting_plane_spec_is_valid_json_in_a_fresh_process(tmp_path):
    """highspy >= 1.16 prints a banner on fd 1 when a process makes its first model, before any
    option can silence it; only a fresh process shows it (under xdist a worker has usually made
    a model already). The first half shows the banner is really there to keep off stdout."""
    env = {k: v for k, v in os.environ.items() if not k.startswith("GLASSWORK_")}
    bare = subprocess.run(
        [sys.executable, "-c", "import highspy; highspy.Highs()"], env=env, capture_output=True, text=True, timeout=60
    )
    version = tuple(int(x) for x in importlib.metadata.version("highspy").split(".")[:2])
    assert ("HiGHS" in bare.stdout) == (version >= (1, 16)), bare.stdout  # what the guard is for
    spec = Path(__file__).resolve().parents[3] / "specs" / "moss_diabetes_k_path.yaml"
    proc = subprocess.run(
        [
            sys.executable,
            "-m",
            "glasswork",
            "run",
            str(spec),
            "--json",
            "--no-store",
            "-q",
            "--set",
            "constraints.max_rules=2",
            "--set",
            "objective.candidates.trees=30",
        ],
        cwd=tmp_path,
        env=env,
        capture_output=True,
        text=True,
        timeout=300,
    )
    assert proc.returncode == 0, proc.stderr
    document = json.loads(proc.stdout)
    assert document["stats"]["policy"] == "cutting_plane" and document["status"] == "optimal"
