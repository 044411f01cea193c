"""An order-free lower bound on every CORELS rule list, solved by HiGHS (docs/maintainers/corels-measurements.md, "Wide
antecedent sets: what was tried", (e)).

    python bench/corels_relaxation.py [--table wide|compas] [--lambdas 0.01,0.005,0.001]
                                      [--time-limit 60] [--memory-gb 4] [--prefixes N]

A row is classified by the first rule of the list that covers it, else by the default. Forget
the order: for a default ``y``, a row of label ``c`` can be right only if some rule predicting
``c`` covers it, or no rule covers it and ``c == y``; and the rows of one unit (rows merged by
antecedent signature) go to the same rule or default, so at most one label of a unit is right.
Every list with default ``y`` therefore scores at least the minimum, over sets ``S_c`` of rules
predicting ``c`` (one label per antecedent), of ``lambda * sum_c |S_c| + (rows not right) / W``.

This program solves that minimum as a mixed-integer program over the units: ``s[a, c]`` = rule
``a`` predicting ``c`` is used (``s[a, 0] + s[a, 1] <= 1``); ``g[e, c]`` = the rows of label ``c``
in unit ``e`` are right (``g[e, 0] + g[e, 1] <= 1``); ``v[e] >= s[a, not y]`` for each ``a``
covering ``e``; ``g[e, not y] <= sum_{a covers e} s[a, not y]`` and ``g[e, y] + v[e] <= 1 +
sum_{a covers e} s[a, y]``. It prints the MIP's best objective, HiGHS's proved dual bound (the
valid bound when stopped) and the LP, per lambda and default label, with the load average: the
machine is shared. ``--prefixes N`` also solves it below N random prefixes of 1 to 5 rules and
prints how far above Theorem 20 it lifts each prefix's bound.
"""

from __future__ import annotations

import argparse
import os
import resource
import sys
import time
from dataclasses import dataclass
from pathlib import Path

import numpy as np

REPO = Path(__file__).resolve().parents[1]
DATA = Path(os.environ.get("GLASSWORK_DATA", REPO.parent / "shared" / "datasets"))


@dataclass(frozen=True)
class Relaxation:
    """The bound for one default label: HiGHS's best list-free objective, its proved bound, the LP."""

    default: int
    objective: float
    dual_bound: float
    lp: float
    optimal: bool
    seconds: float


def order_free_bound(
    cover: np.ndarray, counts: np.ndarray, lam: float, default: int, time_limit: float = 60.0, lp_only: bool = False
) -> Relaxation:
    """Solve the order-free relaxation for binary labels and one default label.

    ``cover`` is ``(M, U)`` bool (antecedent covers unit), ``counts`` ``(U, 2)`` integer label
    counts per unit. The proved bound (``dual_bound``) is at most every list's objective whose
    default predicts ``default``; with ``lp_only`` only the LP is solved (``dual_bound`` = LP).
    """
    import highspy

    t0 = time.perf_counter()
    M, U = cover.shape
    W = float(counts.sum())
    y = default
    # columns: s[a, 0], s[a, 1] (2M), g[e, 0], g[e, 1] (2U), then v[e] (U): a rule predicting
    # the other label than the default covers e
    n_cols = 2 * M + 3 * U
    cost = np.concatenate([np.full(2 * M, lam), -counts.reshape(-1).astype(float) / W, np.zeros(U)])
    lower = np.zeros(n_cols)
    upper = np.ones(n_cols)
    rows_idx: list[np.ndarray] = []
    rows_val: list[np.ndarray] = []
    row_lo: list[float] = []
    row_hi: list[float] = []
    inf = highspy.kHighsInf

    def add(idx: np.ndarray, val: np.ndarray, lo: float, hi: float) -> None:
        rows_idx.append(np.asarray(idx, dtype=np.int32))
        rows_val.append(np.asarray(val, dtype=float))
        row_lo.append(lo)
        row_hi.append(hi)

    for a in range(M):  # one label per rule
        add(np.array([2 * a, 2 * a + 1]), np.ones(2), -inf, 1.0)
    other = 1 - y
    for e in range(U):
        covering = np.flatnonzero(cover[:, e])
        g = 2 * M + 2 * e
        v = 2 * M + 2 * U + e
        if counts[e].all():  # the rows of one unit go to the same rule or default (Theorem 20)
            add(np.array([g, g + 1]), np.ones(2), -inf, 1.0)
        if counts[e, other]:  # right only if a rule predicting it covers it: g - sum s[., other] <= 0
            by = 2 * covering + other
            add(np.concatenate([[g + other], by]), np.concatenate([[1.0], -np.ones(by.size)]), -inf, 0)
        if counts[e, y] and covering.size:
            # right if a rule predicting y covers it, or no rule predicting the other label does
            # (then either a y rule or the default y takes it): g - sum s[., y] + v <= 1, v >= s[a, other]
            by = 2 * covering + y
            add(np.concatenate([[g + y, v], by]), np.concatenate([[1.0, 1.0], -np.ones(by.size)]), -inf, 1.0)
            for a in covering:
                add(np.array([v, 2 * a + other]), np.array([1.0, -1.0]), 0.0, inf)
    starts = np.zeros(len(rows_idx) + 1, dtype=np.int64)
    starts[1:] = np.cumsum([r.size for r in rows_idx])
    lp = highspy.HighsLp()
    lp.num_col_ = n_cols
    lp.num_row_ = len(rows_idx)
    lp.col_cost_ = cost
    lp.col_lower_ = lower
    lp.col_upper_ = upper
    lp.row_lower_ = np.asarray(row_lo)
    lp.row_upper_ = np.asarray(row_hi)
    lp.a_matrix_.format_ = highspy.MatrixFormat.kRowwise
    lp.a_matrix_.start_ = starts
    lp.a_matrix_.index_ = np.concatenate(rows_idx) if rows_idx else np.zeros(0, dtype=np.int32)
    lp.a_matrix_.value_ = np.concatenate(rows_val) if rows_val else np.zeros(0)
    h = highspy.Highs()
    h.setOptionValue("output_flag", False)
    h.setOptionValue("threads", 1)
    h.passModel(lp)
    h.setOptionValue("time_limit", float(time_limit))
    if h.run() != highspy.HighsStatus.kOk or h.getModelStatus() != highspy.HighsModelStatus.kOptimal:
        raise RuntimeError(f"the LP relaxation did not solve: {h.modelStatusToString(h.getModelStatus())}")
    lp_value = float(h.getInfo().objective_function_value) + 1.0  # the error is 1 - right / W
    if lp_only or M == 0:  # no integer column: the LP is the problem (HiGHS keeps no MIP bound then)
        return Relaxation(y, lp_value, lp_value, lp_value, True, time.perf_counter() - t0)
    integrality = [highspy.HighsVarType.kInteger] * (2 * M) + [highspy.HighsVarType.kContinuous] * (n_cols - 2 * M)
    h.changeColsIntegrality(n_cols, np.arange(n_cols, dtype=np.int32), integrality)
    h.setOptionValue("time_limit", max(float(time_limit) - (time.perf_counter() - t0), 1.0))
    if h.run() == highspy.HighsStatus.kError:
        raise RuntimeError(f"the MIP failed: {h.modelStatusToString(h.getModelStatus())}")
    info = h.getInfo()
    optimal = h.getModelStatus() == highspy.HighsModelStatus.kOptimal
    shift = 1.0  # the objective counts -right/W; the error is 1 - right/W
    best = float(info.objective_function_value) + shift if info.primal_solution_status == 2 else float("inf")
    bound = float(info.mip_dual_bound) + shift
    return Relaxation(y, best, max(bound, lp_value), lp_value, optimal, time.perf_counter() - t0)


def load(table: str, lam: float) -> tuple[np.ndarray, np.ndarray]:
    """(cover over units, label counts per unit) of the wide table or COMPAS's training ``.out``."""
    from glasswork.cython_ext import bitset
    from glasswork.plugins.corels.search import engine

    if table == "compas":
        from glasswork.data.corels_format import read_corels

        base = str(DATA / "corels" / "compas_train")
        data = read_corels(base + ".out", base + ".label", base + ".minor")
        bits, y = data.antecedents.bits, data.y
    else:
        from corels_wide import DEFAULT_OUT, prepare
        from glasswork.data.load import load_problem
        from glasswork.plugins.corels.inputs import antecedents_for
        from glasswork.spec.load import load_spec

        loaded = load_spec(prepare(DEFAULT_OUT), overrides=[f"objective.regularization={lam}"])
        problem = load_problem(loaded.spec.data, loaded.base_dir)
        _, bits, _ = antecedents_for(problem, loaded.spec.constraints, lam)
        y = problem.y
    units = engine.make_units(bits, np.asarray(y), 2)
    cover = bitset.unpack_rows(units.caps, units.n_units).astype(bool)
    return cover, np.asarray(units.counts)


def prefix_lift(cover: np.ndarray, counts: np.ndarray, lam: float, prefix: list[int], time_limit: float) -> dict:
    """For direction (b): the relaxation on what ``prefix`` leaves uncaptured, against Theorem 20 there.

    Returns b (the prefix's errors and rules), b0 (Theorem 20 on the rest) and the relaxation of
    the rest, each a fraction of the whole data: every extension scores at least b + relaxation.
    """
    W = float(counts.sum())
    rest = np.ones(cover.shape[1], dtype=bool)
    err = 0.0
    for a in prefix:
        captured = counts[rest & cover[a]].sum(axis=0)
        err += float(captured.sum() - captured.max())
        rest &= ~cover[a]
    left = counts[rest]
    W_rest = float(left.sum())
    b = (err + lam * W * len(prefix)) / W
    b0 = float(left.min(axis=1).sum()) / W
    if W_rest == 0:
        return {"b": b, "b0": 0.0, "relaxation": 0.0}
    usable = cover[:, rest].any(axis=1)
    usable[prefix] = False
    sub = cover[usable][:, rest]
    # the same objective on the rest: lambda per rule scaled to the rest's weight, then back
    scaled = lam * W / W_rest
    value = min(order_free_bound(sub, left, scaled, d, time_limit).dual_bound for d in (0, 1)) * W_rest / W
    return {"b": b, "b0": b0, "relaxation": value}


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--table", choices=("wide", "compas"), default="wide")
    parser.add_argument("--lambdas", default="0.01")
    parser.add_argument("--time-limit", type=float, default=60.0)
    parser.add_argument("--memory-gb", type=float, default=4.0)
    parser.add_argument("--prefixes", type=int, default=0, help="also: the relaxation below N random prefixes")
    args = parser.parse_args()
    limit = int(args.memory_gb * 2**30)
    resource.setrlimit(resource.RLIMIT_AS, (limit, limit))
    for lam in [float(x) for x in args.lambdas.split(",")]:
        cover, counts = load(args.table, lam)
        for y in (0, 1):
            load0 = os.getloadavg()[0]
            r = order_free_bound(cover, counts, lam, y, args.time_limit)
            state = "optimal" if r.optimal else "stopped"
            print(
                f"{args.table} lambda {lam}: {cover.shape[0]} antecedents, {cover.shape[1]} units, default {y}: "
                f"MIP best {r.objective:.6f}, proved bound {r.dual_bound:.6f} ({state}), "
                f"LP {r.lp:.6f}, {r.seconds:.1f} s, load {load0:.1f}-{os.getloadavg()[0]:.1f}",
                flush=True,
            )
        rng = np.random.default_rng(0)
        lifts = []
        for _ in range(args.prefixes):
            prefix = [int(a) for a in rng.choice(cover.shape[0], int(rng.integers(1, 6)), replace=False)]
            r = prefix_lift(cover, counts, lam, prefix, args.time_limit)
            lifts.append((r["relaxation"] - r["b0"]) / lam)
            print(
                f"  prefix of {len(prefix)}: b {r['b']:.6f}, Theorem 20 on the rest {r['b0']:.6f}, relaxation "
                f"{r['relaxation']:.6f}: {lifts[-1]:.2f} lambda above Theorem 20",
                flush=True,
            )
        if lifts:
            mean, least = float(np.mean(lifts)), min(lifts)
            print(f"  {len(lifts)} prefixes: {mean:.2f} lambda above Theorem 20 on average, {least:.2f} least")
    return 0


if __name__ == "__main__":
    sys.exit(main())
