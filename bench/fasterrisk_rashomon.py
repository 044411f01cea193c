"""The exact FasterRisk Rashomon set: every integer card within (1 + epsilon) of the optimum.

    python bench/fasterrisk_rashomon.py [--data mammo compas] [--epsilon 0.01] [--time 600]

k = 5 and points in [-5, 5] (the RiskSLIM setting of ``bench/fasterrisk_certify.py``), multiplier
1 and an integer intercept (``search.policy: exact``). For each data set: the proven optimum
``R*`` (``exact.solve_exact``), then ``exact.enumerate_cards`` with threshold
``(1 + epsilon) R*``: the exact count, whether the enumeration closed, wall and CPU seconds,
support and lattice nodes, and memory (the process's peak resident set before and after the
enumeration; the kept cards are ``--keep`` rows of k + 1 doubles). It also prints how many
distinct supports the set uses and the best few cards. Data come from ``GLASSWORK_DATA``
(default ``../shared/datasets``). Wall times on a shared machine are noisy.
"""

from __future__ import annotations

import argparse
import resource
import sys
import time
from pathlib import Path

import numpy as np

sys.path.insert(0, str(Path(__file__).resolve().parent))

from fasterrisk_certify import datasets  # noqa: E402


def peak_mb() -> float:
    return resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024.0


def main() -> None:
    from glasswork.plugins.fasterrisk.engine import Constraints
    from glasswork.plugins.fasterrisk.exact import enumerate_cards, solve_exact

    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--data", nargs="+", default=["mammo", "compas"])
    parser.add_argument("--epsilon", type=float, nargs="+", default=[0.01])
    parser.add_argument("--time", type=float, default=600.0, help="seconds per enumeration")
    parser.add_argument("--keep", type=int, default=1000, help="cards kept (max_models)")
    parser.add_argument("--k", type=int, default=5)
    args = parser.parse_args()
    for name, (X, y) in datasets(args.data).items():
        cons = Constraints.box(X.shape[1], -5, 5)
        t0, c0 = time.perf_counter(), time.process_time()
        best = solve_exact(X, y, None, cons, args.k, time_limit=args.time)
        print(
            f"{name} {X.shape[0]}x{X.shape[1]} k={args.k}: optimum {best.objective:.4f} ({best.status}, "
            f"{time.perf_counter() - t0:.2f} s, {time.process_time() - c0:.2f} cpu)",
            flush=True,
        )
        for eps in args.epsilon:
            threshold = (1 + eps) * best.objective
            before = peak_mb()
            t0, c0 = time.perf_counter(), time.process_time()
            found = enumerate_cards(X, y, None, cons, args.k, threshold, max_models=args.keep, time_limit=args.time)
            wall, cpu = time.perf_counter() - t0, time.process_time() - c0
            supports = {tuple(np.flatnonzero(np.rint(c[1:]))) for c in found.coefficients}
            state = "complete"
            if not found.complete:
                state = f"stopped ({found.stopped}), rest >= {found.unenumerated_bound:.4f}"
            print(
                f"  epsilon {eps}: threshold {threshold:.4f}, count {found.count} {state}, "
                f"{wall:.2f} s ({cpu:.2f} cpu), nodes {found.support_nodes} + {found.lattice_nodes}, "
                f"peak open boxes {found.peak_open}, "
                f"peak RSS {before:.0f} -> {peak_mb():.0f} MB; best {len(found.losses)} kept use "
                f"{len(supports)} supports; losses {found.losses[0]:.4f} .. {found.losses[-1]:.4f}",
                flush=True,
            )
            for loss, c in list(zip(found.losses, found.coefficients))[:3]:
                points = {int(j): int(v) for j, v in enumerate(np.rint(c[1:])) if v}
                print(f"    {loss:.4f}  intercept {int(np.rint(c[0]))}  points {points}", flush=True)


if __name__ == "__main__":
    main()
