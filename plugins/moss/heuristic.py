"""MOSS-L: cyclic coordinate descent on the penalised problem (10) (spec §3.7, paper App. B).

``min_w 1/2 (||y - Mw||^2 + ||w||^2 / gamma) + sum_i 1{w_i != 0} (lam1 - lam2 Pi_i)``.
Coordinate j is set to its ridge value iff ``(M_j'r_j)^2 / (2 (M_j'M_j + 1/gamma)) > lam1 - lam2 Pi_j``
(r_j the partial residual), else to 0; the objective never increases. ``lam1`` is bisected until
at most k rules survive; ``lam2 = stability_weight * lam1 / mean(Pi)`` rewards stable rules. No
bound is proven, so the status is always ``heuristic``.
"""

from __future__ import annotations

from collections.abc import Callable

import numpy as np


def objective(M: np.ndarray, y: np.ndarray, w: np.ndarray, gamma: float, penalty: np.ndarray) -> float:
    r = y - M @ w
    return 0.5 * float(r @ r) + 0.5 / gamma * float(w @ w) + float(penalty[w != 0].sum())


def coordinate_descent(
    M: np.ndarray,
    y: np.ndarray,
    gamma: float,
    penalty: np.ndarray,
    w0: np.ndarray | None = None,
    *,
    max_sweeps: int = 200,
    col_sq: np.ndarray | None = None,
    trace: list[float] | None = None,
) -> np.ndarray:
    """Sweep j = 1..m until no coordinate changes its zero pattern and weights settle."""
    m = M.shape[1]
    w = np.zeros(m) if w0 is None else w0.astype(np.float64).copy()
    r = y - M @ w
    denom = (col_sq if col_sq is not None else np.einsum("ij,ij->j", M, M)) + 1.0 / gamma
    for _ in range(max_sweeps):
        changed = False
        delta = 0.0
        for j in range(m):
            Mj = M[:, j]
            wj = w[j]
            rho = float(Mj @ r) + (denom[j] - 1.0 / gamma) * wj  # M_j'r_j = M_j'r + ||M_j||^2 w_j
            new = rho / denom[j] if rho * rho / (2.0 * denom[j]) > penalty[j] else 0.0
            if new != wj:
                if (new == 0.0) != (wj == 0.0):
                    changed = True
                r -= Mj * (new - wj)
                delta = max(delta, abs(new - wj))
                w[j] = new
        if trace is not None:
            trace.append(objective(M, y, w, gamma, penalty))
        if not changed and delta <= 1e-10 * (1.0 + float(np.abs(w).max(initial=0.0))):
            break
    return w


def moss_l(
    M: np.ndarray,
    y: np.ndarray,
    pi: np.ndarray,
    k: int,
    gamma: float,
    stability_weight: float = 0.0,
    *,
    bisections: int = 40,
    should_stop: Callable[[], bool] | None = None,
) -> tuple[tuple[int, ...], int]:
    """Bisect lam1 for at most k rules; returns the support (<= k rules) and the CD solves run."""
    col_sq = np.einsum("ij,ij->j", M, M)
    denom = col_sq + 1.0 / gamma
    gain0 = (M.T @ y) ** 2 / (2.0 * denom)
    mean_pi = float(np.mean(pi)) if pi.size else 1.0
    shape = 1.0 - stability_weight * pi / max(mean_pi, 1e-300)  # penalty = lam1 * shape

    def run(lam1: float, w0: np.ndarray | None) -> np.ndarray:
        return coordinate_descent(M, y, gamma, lam1 * shape, w0, col_sq=col_sq)

    hi = max(float(gain0.max(initial=0.0)), 1e-12) * 4.0
    lo = 0.0
    best_w = run(hi, None)
    solves = 1
    w_prev = best_w
    for _ in range(bisections):
        if should_stop is not None and should_stop():
            break
        mid = 0.5 * (lo + hi) if lo > 0 else hi / 8.0
        w = run(mid, w_prev)
        solves += 1
        if np.count_nonzero(w) <= k:
            hi, best_w = mid, w
        else:
            lo = mid
        w_prev = w
        if lo > 0 and hi - lo <= 1e-6 * hi:
            break
    nz = np.flatnonzero(best_w)
    if nz.size > k:  # negative penalties can force rules in: keep the k with the largest effect
        effect = np.abs(best_w[nz]) * np.sqrt(col_sq[nz])
        nz = nz[np.argsort(-effect, kind="stable")[:k]]
    return tuple(sorted(int(i) for i in nz)), solves
