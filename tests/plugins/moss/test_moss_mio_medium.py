"""Cutting plane = SCIP's exact MIO optimum on a medium rule pool, in both formulations.

The issue asks that "the cutting plane equals SCIP's MIO optimum on medium instances (m in the
low hundreds) in both formulations (perspective and big-M)" (spec §3.6 and §7.1 item 8);
test_moss_mio.py compares only m = 12 and 20. Here the candidates are real MOSS rule columns:
``build_pool`` (depth-2 forest of 1000 trees, sirus encoding, at most 200 rules) on the synthetic
regression ``y = 2 x0 + 3 [x1 > 0.3] + x2 x3 + noise`` with 20 Gaussian features, and the
threshold is a rank of ``epsilon_grid`` near eps_max, where the stability row leaves SCIP a
problem it can prove. Enumerating the feasible rule sets gives a third, independent optimum.

Parameters tried (scratch runs, not kept; cvxpy 1.9.3 + PySCIPOpt 6.3.0, ``solve_mio`` with
``mip_gap=1e-7`` and a 45 s time limit, on this 2-core machine shared with benchmarks, so the
same instance varied by up to 1.5x between runs; "rank r" is ``epsilon_grid(counts, k)[r]``,
#feasible counts the rule sets of at most k rules meeting it; P = perspective, B = big-M;
"limit" = the 45 s time limit was hit):

    data           n    m   k  gamma  rank #feasible  P seconds         B seconds
    synthetic    150  200   3  1e-2   1        28     31.8, 44.2, 28.7  4.0
    synthetic    150  200   3  1e-2   5                52.0 (60 s run)   limit (60 s)
    synthetic    150  200   3  1e-2  15                limit, wrong set  limit (60 s)
    synthetic    150  200   3  1e-3   1        28     22.2              4.6
    synthetic    150  200   3  1e-3   2       332     limit, wrong set  32.2
    synthetic    150  200   3  1e-3   3      1084     limit, wrong set  33.6
    synthetic    150  200   3  1e-1   1        28     25.6              15.3
    synthetic    150  200   3  1e-1   2       332     33.0              limit
    synthetic    150  200   4  1e-2   1       154     27.5              14.9
    synthetic    150  200   4  1e-2   2      1968     35.5              limit
    synthetic    150  200   5  1e-2   1       817     40.8              limit
    synthetic    150  200   5  1e-2   2     18472     limit             limit
    synthetic    150  250   3  1e-3   1                38.2              4.4
    synthetic    150  200   3  1e-3   1  (seed 1)     limit, wrong set  26.3
    synthetic    100  150   3  1e-2   1        97     17.3              13.8
    synthetic    100  150   3  1e-2   2       880     30.2              29.9
    synthetic    100  150   3  1e-2   3     16860     29.7, 32.7        17.6, 21.1
    synthetic    100  200   3  1e-2   2      1080     21.8              19.6      <- chosen
    synthetic    100  200   3  1e-2   3     27132     limit             limit
    synthetic    100  200   4  1e-2   1       676     30.4              18.3
    synthetic    100  200   4  1e-2   2     48872     limit, wrong set  limit
    diabetes     442  200   3  1e-2   1                49.1              14.8
    diabetes     442  200   3  1e-2   2                limit             limit, wrong set

The cutting plane took 0.01-0.9 s on every one of them and always agreed with whichever SCIP
run finished. Every big-M run that finished was certified (bound within 1e-8 of H2). On the
chosen instance (1080 feasible rule sets, unique optimum {1, 2, 20}, runner-up 1.5% worse) the
cutting plane takes 0.07 s and SCIP 21.8, 23.5, 24.3 s (perspective) and 19.6, 18.8, 20.8 s
(big-M) over three runs; this whole file took 52 s.

What the perspective model did in SCIP before ``mio.py`` added the valid big-M rows to it: cvxpy
hands each cone ``w_i^2 <= s_i z_i`` to SCIP as a quadratic checked with the absolute
``numerics/feastol = 1e-9``, so with ``z_i = s_i = 0`` an unselected rule could keep
``|w_i| ~ 1.6e-5``; spread over ~200 rules SCIP stopped "optimal" 3e-4 to 9e-4 below H2 of its own
support (``solve_mio`` then said ``heuristic``). With ``|w_i| <= U z_i`` in the model too, SCIP
certifies this instance. ``test_scip_certifies_optimality`` keeps both formulations honest.

A SCIP time limit used to come back as cvxpy's "optimal_inaccurate" with a NaN bound; ``solve_mio``
now reads SCIP's own status (``MioResult.backend_status``) and reports ``stopped_time``. The tests
judge a solve by what SCIP says, never by the wall clock: a loaded machine only makes them slower.
SCIP must say ``optimal`` or ``gaplimit`` (it finished: the 300 s limit, a safety net, did not end
it), glasswork's status must be OPTIMAL, and the gap SCIP's bound leaves must be within
``MIP_GAP``; a 0.5 s limit must come back as SCIP's ``timelimit`` and ``stopped_time``, never as
optimal.
"""

from __future__ import annotations

import math

import numpy as np
import pytest
from glasswork.contract.result import Status
from glasswork.plugins.moss.cutting_plane import CuttingPlane
from glasswork.plugins.moss.loss import H2Oracle, epsilon_grid
from glasswork.plugins.moss.mio import solve_mio
from glasswork.plugins.moss.rules import build_pool

pytest.importorskip("cvxpy")  # solve_mio imports cvxpy (and SCIP) only when it runs
pytest.importorskip("pyscipopt")

pytestmark = pytest.mark.slow

N, FEATURES, MAX_RULES, TREES, SEED = 100, 20, 200, 1000, 0
K, GAMMA, RANK = 3, 0.01, 2
MIP_GAP = 1e-7  # so SCIP's optimum is a real check of the 1e-6 agreement below
# a safety net only: SCIP proves this instance in about 20 s per formulation on an idle machine,
# but with the two cores shared it took over 90 s and the limit, not SCIP, ended the solve; the
# net stays under pytest-timeout's 600 s per test
TIME_LIMIT = 300.0
REL = 1e-6
FINISHED = ("optimal", "gaplimit")  # SCIP's statuses for a solve it ended itself, with its proof


@pytest.fixture(scope="module")
def medium():
    """The rule pool, the threshold, the cutting-plane point and the enumerated optimum."""
    rng = np.random.default_rng(SEED)
    X = rng.normal(size=(N, FEATURES))
    y = 2 * X[:, 0] + 3 * (X[:, 1] > 0.3) + X[:, 2] * X[:, 3] + rng.normal(size=N)
    y = y / y.std()
    pool = build_pool(
        X,
        y,
        [f"x{j}" for j in range(FEATURES)],
        trees=TREES,
        depth=2,
        seed=SEED,
        max_rules_pool=MAX_RULES,
        encoding="sirus",
    )
    yc = y - pool.y_mean
    threshold = float(epsilon_grid(pool.counts, K)[RANK])
    point = CuttingPlane(H2Oracle(pool.M, yc, GAMMA), pool.counts.astype(float), K, pi_scale=pool.n_trees).solve(
        threshold
    )
    ranked = _enumerate(pool.M, yc, pool.counts, K, threshold, GAMMA)
    return pool, yc, threshold, point, ranked


@pytest.fixture(scope="module")
def scip(medium):
    """SCIP's result per formulation, solved once for the module."""
    pool, yc, threshold, _, _ = medium
    cache = {}

    def solve(formulation):
        if formulation not in cache:
            cache[formulation] = solve_mio(
                pool.M,
                yc,
                pool.pi,
                K,
                GAMMA,
                threshold / pool.n_trees,
                formulation=formulation,
                solver="SCIP",
                time_limit=TIME_LIMIT,
                mip_gap=MIP_GAP,
            )
        return cache[formulation]

    return solve


def _enumerate(M, y, counts, k, threshold, gamma):
    """H2 of every rule set of at most k rules meeting the threshold, best first.

    An independent evaluation: ``H2 = 1/2 (y'y - b_k' (G_kk + I/gamma)^-1 b_k)`` with a plain
    dense solve, not the oracle the cutting plane uses.
    """
    G, b, yy = M.T @ M, M.T @ y, float(y @ y)
    stab = [int(c) for c in counts]
    order = sorted(range(len(stab)), key=lambda i: -stab[i])
    top = [stab[i] for i in order]
    out = []

    def walk(start, chosen, total):
        if chosen and total >= threshold:
            kappa = sorted(chosen)
            A = G[np.ix_(kappa, kappa)] + np.eye(len(kappa)) / gamma
            out.append((0.5 * (yy - float(b[kappa] @ np.linalg.solve(A, b[kappa]))), tuple(kappa)))
        if len(chosen) == k:
            return
        for j in range(start, len(order)):
            if total + sum(top[j : j + k - len(chosen)]) < threshold:
                break  # the stabilities are sorted: no later rule can reach the threshold either
            walk(j + 1, chosen + [order[j]], total + top[j])

    walk(0, [], 0)
    return sorted(out)


def test_medium_instance_and_cutting_plane(medium):
    pool, _, threshold, point, ranked = medium
    assert 150 <= pool.m <= 250
    assert len(ranked) > 100  # the threshold leaves a real choice, not just the top-k set
    assert point.status is Status.OPTIMAL
    assert point.lower_bound <= point.h2 * (1 + 1e-12)
    assert point.h2 - point.lower_bound <= REL * point.h2
    assert pool.counts[list(point.support)].sum() >= threshold and len(point.support) <= K
    best, support = ranked[0]
    assert point.h2 == pytest.approx(best, rel=REL)
    assert ranked[1][0] > best * (1 + 10 * REL)  # the optimum is unique, so supports must agree
    assert point.support == support


@pytest.mark.parametrize("formulation", ["perspective", "bigm"])
def test_scip_matches_cutting_plane(medium, scip, formulation):
    _, _, _, point, ranked = medium
    r = scip(formulation)
    assert r.backend_status in FINISHED, f"SCIP said {r.backend_status!r}: a limit, not SCIP, ended the solve"
    assert r.lower_bound is not None and math.isfinite(r.lower_bound)
    assert r.objective == pytest.approx(point.h2, rel=REL)  # H2 re-evaluated on SCIP's support
    assert r.support == point.support == ranked[0][1]  # unique optimum (checked above)
    assert r.lower_bound <= point.h2 * (1 + 1e-9)  # SCIP's bound is valid for the cutting plane's value
    assert point.lower_bound <= r.objective * (1 + 1e-9)  # and the cutting plane's for SCIP's


@pytest.mark.parametrize("formulation", ["perspective", "bigm"])
def test_scip_certifies_optimality(scip, formulation):
    r = scip(formulation)
    assert r.backend_status in FINISHED, f"SCIP said {r.backend_status!r}"
    assert r.status is Status.OPTIMAL
    assert r.objective - r.lower_bound <= MIP_GAP * r.objective
    assert r.gap is not None and r.gap <= MIP_GAP


def test_a_scip_time_limit_is_reported_as_one(medium):
    pool, yc, threshold, point, _ = medium
    r = solve_mio(
        pool.M,
        yc,
        pool.pi,
        K,
        GAMMA,
        threshold / pool.n_trees,
        formulation="perspective",
        solver="SCIP",
        time_limit=0.5,
        mip_gap=MIP_GAP,
    )
    assert r.backend_status in ("timelimit", "no solution at the time limit"), r.backend_status
    assert r.status is Status.STOPPED_TIME and r.status is not Status.OPTIMAL
    assert r.lower_bound is None or (math.isfinite(r.lower_bound) and r.lower_bound <= point.h2 * (1 + REL))
    if r.lower_bound is not None:  # the gap it reports is the one its bound leaves, and it is open
        assert r.gap == pytest.approx((r.objective - r.lower_bound) / r.objective)
        assert r.gap > MIP_GAP
    assert r.objective >= point.h2 * (1 - REL)  # whatever it stopped with is a feasible rule set
