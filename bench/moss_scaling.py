"""MOSS scaling benchmark on synthetic data shaped like the paper's Table 1 and Table 2.

Prints, per (n, m) instance with k = 15:
  * the cutting-plane time per epsilon over the first ``--eps`` values of the epsilon grid (EPM off:
    every epsilon from scratch, as Table 1 times single solves), with mean and standard deviation;
  * the time cvxpy + SCIP takes on the same instance at the same epsilons (big-M and perspective),
    under ``--cap`` seconds each; a capped run is reported as "> cap";
  * the EPM versus naive-sweep ratio on a ``--points``-point frontier.

Usage: python bench/moss_scaling.py [--quick] [--cap 120] [--eps 10] [--points 100] [--scip-eps 1]
"""

from __future__ import annotations

import argparse
import platform
import time

import numpy as np
from glasswork.plugins.moss.cutting_plane import CuttingPlane, naive_sweep
from glasswork.plugins.moss.loss import H2Oracle, epsilon_grid
from glasswork.plugins.moss.mio import solve_mio
from glasswork.plugins.moss.rules import build_pool

TABLE1 = [(150, 250), (150, 500), (150, 1000), (1500, 1200), (15000, 700)]
TABLE2 = [(1000, 500)]
K = 15
GAMMA = 1e-3


def instance(n: int, m: int, seed: int = 0):
    """Synthetic regression with interactions; candidate rules from a depth-2 forest (sirus encoding)."""
    rng = np.random.default_rng(seed)
    p = 20
    X = rng.normal(size=(n, p))
    signal = 2 * X[:, 0] + 3 * (X[:, 1] > 0.3) + X[:, 2] * X[:, 3] - 2 * (X[:, 4] < -0.5) * (X[:, 5] > 0)
    y = signal + rng.normal(scale=1.0, size=n)
    y = y / y.std()
    trees = max(1000, 2 * m)
    pool = build_pool(X, y, [f"x{j}" for j in range(p)], trees=trees, depth=2, quantiles=10, seed=seed,
                      max_rules_pool=m, encoding="sirus")
    return pool, y - pool.y_mean


def fmt(seconds: float) -> str:
    return f"{seconds:.3f} s" if seconds < 60 else f"{seconds / 60:.1f} min"


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--quick", action="store_true", help="only the n = 150 rows and a 20-point frontier")
    ap.add_argument("--cap", type=float, default=120.0, help="seconds allowed to each SCIP solve")
    ap.add_argument("--eps", type=int, default=10, help="epsilon values per instance for the cutting plane")
    ap.add_argument("--scip-eps", type=int, default=1, help="epsilon values per instance for SCIP")
    ap.add_argument("--points", type=int, default=100, help="frontier points for the EPM ratio")
    ap.add_argument("--no-scip", action="store_true")
    ap.add_argument("--rows", type=str, default="", help="comma-separated Table 1 row numbers (1-5) to run, or none")
    ap.add_argument("--scip-max-n", type=int, default=2000, help="skip SCIP above this n (cvxpy's model is n x m)")
    ap.add_argument("--no-frontier", action="store_true")
    args = ap.parse_args()
    print(f"MOSS scaling benchmark: k = {K}, gamma = {GAMMA}, sirus encoding, y standardised; "
          f"{platform.processor() or platform.machine()}, python {platform.python_version()}")
    rows = TABLE1[:3] if args.quick else TABLE1
    if args.rows == "none":
        rows = []
    elif args.rows:
        rows = [TABLE1[int(i) - 1] for i in args.rows.split(",")]
    print("\nTable 1 shape: cutting plane per epsilon (each from scratch) vs cvxpy + SCIP")
    print(f"{'n':>6} {'m':>5} {'cp mean':>10} {'cp sd':>8} {'cp max':>9} {'iters':>6} {'status':>8} "
          f"{'SCIP big-M':>12} {'SCIP persp.':>12} {'speed-up':>10}")
    for n, m in rows:
        pool, yc = instance(n, m)
        counts = pool.counts.astype(float)
        grid = epsilon_grid(pool.counts, K)
        picks = grid[np.unique(np.linspace(1, min(len(grid) - 1, 60), args.eps).astype(int))]
        times, iters, statuses = [], [], []
        for thr in picks:
            cp = CuttingPlane(H2Oracle(pool.M, yc, GAMMA), counts, K, pi_scale=pool.n_trees)
            t0 = time.perf_counter()
            p = cp.solve(float(thr))
            times.append(time.perf_counter() - t0)
            iters.append(p.iterations)
            statuses.append(str(p.status))
        ok = all(s == "optimal" for s in statuses)
        cp_mean = float(np.mean(times))
        scip = {}
        if not args.no_scip and n <= args.scip_max_n:
            for form in ("bigm", "perspective"):
                spent, finished, agree = [], True, True
                for thr in picks[: args.scip_eps]:
                    r = solve_mio(pool.M, yc, pool.pi, K, GAMMA, thr / pool.n_trees, formulation=form,
                                  solver="SCIP", time_limit=args.cap)
                    spent.append(r.seconds)
                    finished &= str(r.status) == "optimal"
                    if finished:
                        ref = CuttingPlane(H2Oracle(pool.M, yc, GAMMA), counts, K, pi_scale=pool.n_trees).solve(float(thr))
                        agree &= abs(ref.h2 - r.objective) <= 1e-4 * ref.h2
                scip[form] = (float(np.mean(spent)), finished, agree)
        cells = []
        for form in ("bigm", "perspective"):
            if form not in scip:
                cells.append("-")
                continue
            sec, done, agree = scip[form]
            cells.append(fmt(sec) + ("" if agree else " (!)") if done else f"> {fmt(args.cap)}")
        done_times = [scip[f][0] for f in scip if scip[f][1]]
        speed = f"{min(done_times) / cp_mean:,.0f}x" if done_times else "-"
        print(f"{n:>6} {pool.m:>5} {fmt(cp_mean):>10} {np.std(times):>8.3f} {fmt(max(times)):>9} "
              f"{np.mean(iters):>6.1f} {'optimal' if ok else 'gap':>8} {cells[0]:>12} {cells[1]:>12} {speed:>10}")

    if args.no_frontier:
        return
    points = 20 if args.quick else args.points
    print(f"\nTable 2 shape: {points}-point frontier, EPM vs naive sweep")
    print(f"{'n':>6} {'m':>5} {'EPM':>10} {'naive':>10} {'ratio':>7} {'iters EPM':>10} {'iters naive':>12} {'agree':>6}")
    for n, m in TABLE2:
        pool, yc = instance(n, m, seed=1)
        counts = pool.counts.astype(float)
        grid = epsilon_grid(pool.counts, K, points)
        t0 = time.perf_counter()
        epm = CuttingPlane(H2Oracle(pool.M, yc, GAMMA), counts, K, pi_scale=pool.n_trees).sweep(grid)
        t_epm = time.perf_counter() - t0
        t0 = time.perf_counter()
        naive = naive_sweep(pool.M, yc, GAMMA, counts, K, grid, pi_scale=pool.n_trees)
        t_naive = time.perf_counter() - t0
        agree = np.allclose([p.h2 for p in epm], [p.h2 for p in naive], rtol=1e-6)
        print(f"{n:>6} {pool.m:>5} {fmt(t_epm):>10} {fmt(t_naive):>10} {t_naive / t_epm:>6.1f}x "
              f"{sum(p.iterations for p in epm):>10} {sum(p.iterations for p in naive):>12} {agree!s:>6}")


if __name__ == "__main__":
    main()
