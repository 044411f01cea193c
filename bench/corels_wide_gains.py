"""What rules that strip can buy one "yes" rule on the wide table (docs/maintainers/corels-measurements.md,
"Wide antecedent sets: what was tried", (f)).

    python bench/corels_wide_gains.py [--lambda 0.01] [--depth 6] [--beam 30]

With the default "no" (the majority), a rule predicting "no" errs exactly where the default would,
so a list beats the empty one only through its "yes" rules: ``R(L) = R(empty) + lambda K - G/W``,
``G`` the sum over its "yes" rules of (yes - no) rows on what each captures. A "yes" rule ``r``
after ``j`` rules captures ``A_r`` minus their union, so its gain is at most ``Gamma(j) =
max_r max_{|Q| = j} gain(A_r - union of Q)``, and every list with ``K`` rules has ``G <= sum_{t < K}
Gamma(t)``. If that sum stayed below ``lambda W K`` for every ``K`` the empty list would be certified
at the root. This program estimates ``Gamma(j)`` from below with a beam search over ``Q`` (width
``--beam``, for every ``r``) and prints the first ``K`` where the sum of the estimates already
exceeds ``lambda W K``: past it the bound cannot certify, whatever the exact ``Gamma``.
"""

from __future__ import annotations

import argparse
import os
import sys
import time

import numpy as np
from corels_relaxation import load


def gain_estimates(cover: np.ndarray, counts: np.ndarray, depth: int, beam: int) -> np.ndarray:
    """Lower estimates of ``Gamma(0..depth)``: the best gain a beam finds, per number of strippers."""
    sign = (counts[:, 1] - counts[:, 0]).astype(np.int64)  # +1 per "yes" row, -1 per "no" row, by unit
    as_int = cover.astype(np.int64)
    best = np.full(depth + 1, np.iinfo(np.int64).min)
    best[0] = int((as_int @ sign).max())
    for r in range(cover.shape[0]):
        frontier = [cover[r].copy()]
        for j in range(1, depth + 1):
            scored = []
            for alive in frontier:
                here = int(sign[alive].sum())
                lift = as_int[:, alive] @ -sign[alive]  # what removing each antecedent adds
                for q in np.argsort(-lift)[:beam]:
                    scored.append((here + int(lift[q]), int(q), alive))
            scored.sort(key=lambda item: -item[0])
            seen: set[bytes] = set()
            frontier = []
            for value, q, alive in scored:
                rest = alive & ~cover[q]
                if rest.tobytes() in seen:
                    continue
                seen.add(rest.tobytes())
                frontier.append(rest)
                best[j] = max(best[j], value)
                if len(frontier) >= beam:
                    break
    return best


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--lambda", dest="lam", type=float, default=0.01)
    parser.add_argument("--depth", type=int, default=6)
    parser.add_argument("--beam", type=int, default=30)
    args = parser.parse_args()
    cover, counts = load("wide", args.lam)
    rows = int(counts.sum())
    cost = args.lam * rows
    load0, start = os.getloadavg()[0], time.perf_counter()
    gamma = gain_estimates(cover, counts, args.depth, args.beam)
    print(
        f"wide table: {cover.shape[0]} antecedents, {cover.shape[1]} units, {rows} rows; lambda W = {cost:.2f} rows; "
        f"{time.perf_counter() - start:.1f} s, load {load0:.1f}-{os.getloadavg()[0]:.1f}"
    )
    total = 0
    for k, value in enumerate(gamma, start=1):
        total += int(value)
        verdict = "the bound cannot certify" if total > cost * k else "below"
        print(f"Gamma({k - 1}) >= {value}; K = {k}: sum {total} against lambda W K = {cost * k:.2f}: {verdict}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
