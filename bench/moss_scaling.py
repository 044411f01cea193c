"""MOSS scaling benchmark on synthetic data shaped like the paper's Table 1 and Table 2.

Prints, per (n, m) instance with k = 15, at ``--eps`` thresholds spread over the first 60 values of
the epsilon grid (ranks 2..61: MOSS-eps-H is rank 3, MOSS-eps-M rank 40), each solved from scratch
as Table 1 times single solves:
  * the time per epsilon of the perspective branch and bound (``branch_and_bound``, the default);
  * the time per epsilon of the paper's cutting plane (``cutting_plane``: outer approximation with a
    HiGHS master, here started from the perspective relaxation), each capped at ``--cp-cap`` s;
  * the time cvxpy + SCIP takes on the same instance (big-M and perspective), under ``--cap`` s, and
    the speed-up of branch and bound over it (a lower bound, "> x", when SCIP hit its cap);
then the EPM versus naive-sweep ratio on a ``--points``-point frontier for both exact policies, and
the master-ILP time as epsilon grows with a fixed cut set (spec §7.2 item 15, k = 20).

Usage: python bench/moss_scaling.py [--quick] [--cap 120] [--cp-cap 120] [--eps 10] [--points 100]
"""

from __future__ import annotations

import argparse
import platform
import time

import numpy as np
from glasswork.contract.result import Status
from glasswork.plugins.moss.branch_and_bound import BranchAndBound
from glasswork.plugins.moss.cutting_plane import CuttingPlane, EpsilonSolver, Point
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
    pool = build_pool(
        X,
        y,
        [f"x{j}" for j in range(p)],
        trees=trees,
        depth=2,
        quantiles=10,
        seed=seed,
        max_rules_pool=m,
        encoding="sirus",
    )
    return pool, y - pool.y_mean


def fmt(seconds: float) -> str:
    return f"{seconds:.3f} s" if seconds < 60 else f"{seconds / 60:.1f} min"


def timed(solver: EpsilonSolver, threshold: float) -> tuple[float, Point]:
    t0 = time.perf_counter()
    p = solver.solve(threshold)
    return time.perf_counter() - t0, p


def table1(rows: list[tuple[int, int]], args: argparse.Namespace) -> None:
    print(f"\nTable 1 shape: time per epsilon ({args.eps} ranks in 2..61, each from scratch) vs cvxpy + SCIP")
    print(
        f"{'n':>6} {'m':>5} {'B&B mean':>9} {'B&B max':>8} {'nodes':>6} {'CP mean':>9} {'CP max':>8} {'CP iters':>8} "
        f"{'status B&B/CP':>14} {'SCIP big-M':>11} {'SCIP persp.':>11}  speed-up B&B / CP"
    )
    for n, m in rows:
        pool, yc = instance(n, m)
        counts = pool.counts.astype(float)
        grid = epsilon_grid(pool.counts, K)
        ranks = np.unique(np.linspace(1, min(len(grid) - 1, 60), args.eps).astype(int))
        picks = grid[ranks]
        bb_t, bb_nodes, bb_ok, cp_t, cp_it, cp_ok, values = [], [], True, [], [], True, []
        for thr in picks:
            dt, p = timed(BranchAndBound(H2Oracle(pool.M, yc, GAMMA), counts, K, pi_scale=pool.n_trees), float(thr))
            bb_t.append(dt)
            bb_nodes.append(p.iterations)
            bb_ok &= p.status is Status.OPTIMAL
            values.append(p.h2)
            if not args.no_cp:
                cp = CuttingPlane(
                    H2Oracle(pool.M, yc, GAMMA),
                    counts,
                    K,
                    pi_scale=pool.n_trees,
                    deadline=time.monotonic() + args.cp_cap,
                )
                dt, q = timed(cp, float(thr))
                cp_t.append(dt)
                cp_it.append(q.iterations)
                cp_ok &= q.status is Status.OPTIMAL
                if q.status is Status.OPTIMAL and abs(q.h2 - p.h2) > 1e-6 * p.h2:
                    print(f"   !! rank {int(np.flatnonzero(grid == thr)[0]) + 1}: CP {q.h2} != B&B {p.h2}")
        scip: dict[str, tuple[float, bool, bool]] = {}
        if not args.no_scip and n <= args.scip_max_n:
            for form in ("bigm", "perspective"):
                spent, finished, agree = [], True, True
                for thr, ref in list(zip(picks, values))[: args.scip_eps]:
                    r = solve_mio(
                        pool.M,
                        yc,
                        pool.pi,
                        K,
                        GAMMA,
                        thr / pool.n_trees,
                        formulation=form,
                        solver="SCIP",
                        time_limit=args.cap,
                        mip_gap=1e-6,
                    )
                    spent.append(r.seconds)
                    finished &= r.status is Status.OPTIMAL
                    agree &= abs(ref - r.objective) <= 1e-4 * ref
                scip[form] = (float(np.mean(spent)), finished, agree)
        cells, fastest = [], None
        for form in ("bigm", "perspective"):
            if form not in scip:
                cells.append("-")
                continue
            sec, done, agree = scip[form]
            cells.append((fmt(sec) + ("" if agree else " (!)")) if done else f"> {fmt(args.cap)}")
            fastest = (sec, done) if fastest is None or sec < fastest[0] else fastest
        speed = "-"
        if fastest is not None:  # SCIP's faster formulation against each exact policy, same thresholds
            sec, done = fastest
            mark = "" if done else "> "
            speed = f"{mark}{sec / float(np.mean(bb_t[: args.scip_eps])):,.0f}x"
            if cp_t:
                speed += f" / {mark}{sec / float(np.mean(cp_t[: args.scip_eps])):,.0f}x"
        cp_cells = (fmt(float(np.mean(cp_t))), fmt(max(cp_t)), f"{np.mean(cp_it):.1f}") if cp_t else ("-", "-", "-")
        status = ("opt" if bb_ok else "gap") + "/" + (("opt" if cp_ok else "gap") if cp_t else "-")
        print(
            f"{n:>6} {pool.m:>5} {fmt(float(np.mean(bb_t))):>9} {fmt(max(bb_t)):>8} {np.mean(bb_nodes):>6.0f} "
            f"{cp_cells[0]:>9} {cp_cells[1]:>8} {cp_cells[2]:>8} {status:>14} {cells[0]:>11} {cells[1]:>11}  {speed}",
            flush=True,
        )


def table2(points: int) -> None:
    print(f"\nTable 2 shape: {points}-point frontier, EPM (shared cuts / warm starts) vs each epsilon from scratch")
    print(f"{'n':>6} {'m':>5} {'policy':>16} {'EPM':>10} {'naive':>10} {'ratio':>7} {'agree':>6}")
    for n, m in TABLE2:
        pool, yc = instance(n, m, seed=1)
        counts = pool.counts.astype(float)
        grid = epsilon_grid(pool.counts, K, points)
        for name, make in (("branch_and_bound", BranchAndBound), ("cutting_plane", CuttingPlane)):
            t0 = time.perf_counter()
            epm = make(H2Oracle(pool.M, yc, GAMMA), counts, K, pi_scale=pool.n_trees).sweep(grid)
            t_epm = time.perf_counter() - t0
            t0 = time.perf_counter()
            naive = [
                make(H2Oracle(pool.M, yc, GAMMA), counts, K, pi_scale=pool.n_trees).solve(float(t))
                for t in sorted(grid, reverse=True)
            ]
            t_naive = time.perf_counter() - t0
            agree = np.allclose([p.h2 for p in epm], [p.h2 for p in naive], rtol=1e-6)
            print(
                f"{n:>6} {pool.m:>5} {name:>16} {fmt(t_epm):>10} {fmt(t_naive):>10} {t_naive / t_epm:>6.1f}x "
                f"{agree!s:>6}",
                flush=True,
            )


def master_time_by_epsilon(n: int = 1000, m: int = 500, k: int = 20) -> None:
    """Spec §7.2 item 15: with one fixed cut set, the master ILP gets faster as epsilon grows."""
    print(f"\nMaster ILP time vs epsilon (n = {n}, m = {m}, k = {k}, one fixed cut set, HiGHS)")
    pool, yc = instance(n, m, seed=2)
    counts = pool.counts.astype(float)
    grid = epsilon_grid(pool.counts, k)
    cp = CuttingPlane(H2Oracle(pool.M, yc, GAMMA), counts, k, pi_scale=pool.n_trees, relaxation=False)
    cp.solve(float(grid[min(40, len(grid) - 1)]))  # collect the cuts of a low-epsilon solve
    print(f"{'rank':>5} {'epsilon':>8} {'master s':>9} {'MIP nodes':>10}   ({cp.master.cuts} cuts)")
    for rank in (41, 31, 21, 11, 6, 3, 1):
        if rank > len(grid):
            continue
        thr = float(grid[rank - 1])
        cp.master.set_threshold(thr - 1e-9 * thr)
        t0 = time.perf_counter()
        cp.master.solve(None, None, None)
        dt = time.perf_counter() - t0
        nodes = int(cp.master.h.getInfo().mip_node_count)
        print(f"{rank:>5} {thr / pool.n_trees:>8.3f} {dt:>9.3f} {nodes:>10}", flush=True)


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--quick", action="store_true", help="only the n = 150 rows and a 20-point frontier")
    ap.add_argument("--cap", type=float, default=120.0, help="seconds allowed to each SCIP solve")
    ap.add_argument("--cp-cap", type=float, default=120.0, help="seconds allowed to each cutting-plane solve")
    ap.add_argument("--eps", type=int, default=10, help="epsilon values per instance")
    ap.add_argument("--scip-eps", type=int, default=1, help="epsilon values per instance for SCIP")
    ap.add_argument("--points", type=int, default=100, help="frontier points for the EPM ratio")
    ap.add_argument("--no-scip", action="store_true")
    ap.add_argument("--no-cp", action="store_true", help="skip the cutting plane in the Table 1 rows")
    ap.add_argument("--rows", type=str, default="", help="comma-separated Table 1 row numbers (1-5) to run, or none")
    ap.add_argument("--scip-max-n", type=int, default=2000, help="skip SCIP above this n (cvxpy's model is n x m)")
    ap.add_argument("--no-frontier", action="store_true")
    ap.add_argument("--no-master", action="store_true", help="skip the master-time-by-epsilon table")
    args = ap.parse_args()
    print(
        f"MOSS scaling benchmark: k = {K}, gamma = {GAMMA}, sirus encoding, y standardised; "
        f"{platform.processor() or platform.machine()}, python {platform.python_version()}"
    )
    rows = TABLE1[:3] if args.quick else TABLE1
    if args.rows == "none":
        rows = []
    elif args.rows:
        rows = [TABLE1[int(i) - 1] for i in args.rows.split(",")]
    if rows:
        table1(rows, args)
    if not args.no_frontier:
        table2(20 if args.quick else args.points)
    if not args.no_master:
        master_time_by_epsilon()


if __name__ == "__main__":
    main()
