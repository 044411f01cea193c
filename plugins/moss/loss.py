"""The ridge loss H2(z) and its gradient, evaluated with one small k x k solve (spec §2).

For binary z with support kappa, ``H2 = 1/2 y' r`` with ``r = y - M_k w``,
``w = (I/gamma + M_k' M_k)^-1 M_k' y``, and ``dH2/dz_i = -(gamma/2) (M_i' r)^2`` for every i.
For fractional z the same value is the perspective relaxation (``w_i^2 / z_i`` penalty), which the
dense form ``h2_dense`` computes and the tests compare against.
"""

from __future__ import annotations

from abc import ABC, abstractmethod
from dataclasses import dataclass

import numpy as np


@dataclass(frozen=True)
class Evaluation:
    """H2 at one binary point: value, gradient, ridge weights on the support (and the residual or
    dual point when the oracle works in sample space)."""

    support: tuple[int, ...]
    value: float
    grad: np.ndarray
    weights: np.ndarray
    residual: np.ndarray | None = None


class _MemoisedOracle(ABC):
    """A loss on binary supports, memoised: the Pareto sweep revisits supports often.

    Subclasses set ``_memo`` and ``evaluations`` in ``__init__`` and implement ``_evaluate``.
    """

    _memo: dict[tuple[int, ...], Evaluation]
    evaluations: int

    @abstractmethod
    def _evaluate(self, key: tuple[int, ...]) -> Evaluation:
        """The loss, its gradient in z, weights and residual on one support (not memoised)."""

    def __call__(self, support: tuple[int, ...] | list[int] | np.ndarray) -> Evaluation:
        key = tuple(sorted(int(i) for i in support))
        hit = self._memo.get(key)
        if hit is None:
            self.evaluations += 1
            hit = self._memo[key] = self._evaluate(key)
        return hit

    def value(self, support: tuple[int, ...] | list[int] | np.ndarray) -> float:
        return self(support).value


class H2Oracle(_MemoisedOracle):
    """Evaluates H2 on binary supports.

    With at most ``GRAM_MAX`` candidates it works in Gram space (``G = M'M``, ``b = M'y``, built
    once): an evaluation then costs ``O(k^3 + m k)`` whatever the number of rows, and the
    perspective relaxation (``relaxation.py``) reads the same ``G`` and ``b``.
    """

    GRAM_MAX = 5000

    def __init__(self, M: np.ndarray, y: np.ndarray, gamma: float) -> None:
        self.M = np.asfortranarray(M, dtype=np.float64)
        self.y = np.ascontiguousarray(y, dtype=np.float64)
        self.gamma = float(gamma)
        self.gram: Gram | None = Gram.of(self.M, self.y) if self.M.shape[1] <= self.GRAM_MAX else None
        self.MTy = self.gram.b if self.gram is not None else self.M.T @ self.y
        self.h0 = 0.5 * float(self.y @ self.y)
        self._memo: dict[tuple[int, ...], Evaluation] = {}
        self.evaluations = 0

    def weights(self, support: tuple[int, ...] | list[int]) -> np.ndarray:
        kappa = list(support)
        if not kappa:
            return np.zeros(0)
        if self.gram is not None:
            G = self.gram.G[np.ix_(kappa, kappa)]
        else:
            Mk = self.M[:, kappa]
            G = Mk.T @ Mk
        G[np.diag_indices_from(G)] += 1.0 / self.gamma
        from scipy.linalg import cho_factor, cho_solve  # here, not at import: a CORELS run loads this plugin too
        from scipy.linalg.lapack import dposv

        _, w, info = dposv(G, self.MTy[kappa], lower=1)  # one LAPACK call: the wrappers cost more than the solve
        if info != 0:  # cannot happen for I/gamma + M'M with gamma > 0; fall back to a checked solve
            return cho_solve(cho_factor(G, lower=True), self.MTy[kappa])
        return w

    def _evaluate(self, key: tuple[int, ...]) -> Evaluation:
        w = self.weights(key)
        kappa = list(key)
        if self.gram is not None:  # c = M'r = b - G[:, kappa] w; H2 = 1/2 y'r = 1/2 (y'y - b_k'w)
            c = self.MTy - w @ self.gram.G[kappa, :] if key else self.MTy.copy()
            value = 0.5 * (self.gram.yy - float(self.MTy[kappa] @ w)) if key else self.h0
            return Evaluation(key, value, -0.5 * self.gamma * c * c, w)
        r = self.y - self.M[:, kappa] @ w if key else self.y.copy()
        c = self.M.T @ r
        return Evaluation(key, 0.5 * float(self.y @ r), -0.5 * self.gamma * c * c, w, r)


@dataclass(frozen=True)
class Gram:
    """The least-squares data reduced to m x m: ``G = M'M`` (C order), ``b = M'y`` and ``y'y``."""

    G: np.ndarray
    b: np.ndarray
    yy: float

    @classmethod
    def of(cls, M: np.ndarray, y: np.ndarray) -> Gram:
        return cls(np.ascontiguousarray(M.T @ M), np.ascontiguousarray(M.T @ y), float(y @ y))


def h2_dense(M: np.ndarray, y: np.ndarray, gamma: float, z: np.ndarray) -> float:
    """``1/2 y' (I + gamma sum z_i M_i M_i')^-1 y`` by a dense n x n solve (eq. 8; for tests)."""
    A = np.eye(M.shape[0]) + gamma * (M * z[None, :]) @ M.T
    return 0.5 * float(y @ np.linalg.solve(A, y))


def h2_grad_dense(M: np.ndarray, y: np.ndarray, gamma: float, z: np.ndarray) -> np.ndarray:
    """Gradient of eq. 8 at a fractional z: ``-(gamma/2) (M' alpha)^2``, ``alpha = A(z)^-1 y``."""
    A = np.eye(M.shape[0]) + gamma * (M * z[None, :]) @ M.T
    alpha = np.linalg.solve(A, y)
    c = M.T @ alpha
    return -0.5 * gamma * c * c


def epsilon_grid(pi: np.ndarray, k: int, points: int | None = None, tol: float = 1e-12) -> np.ndarray:
    """The descending window sums of the sorted Pi (spec §4.1), deduplicated, first ``points``."""
    p = np.sort(np.asarray(pi, dtype=np.float64))[::-1]
    k = min(k, p.size)
    if k == 0:
        return np.zeros(1)
    c = np.concatenate([[0.0], np.cumsum(p)])
    sums = c[k:] - c[:-k]
    out: list[float] = []
    for s in sums:
        if not out or out[-1] - s > tol:
            out.append(float(s))
        if points is not None and len(out) >= points:
            break
    return np.asarray(out)


def top_k(pi: np.ndarray, k: int) -> np.ndarray:
    """Indices of the k largest Pi (stable: ties by index); optimal for Problem (3)."""
    order = np.argsort(-np.asarray(pi), kind="stable")
    return np.sort(order[:k])


class LogisticOracle(_MemoisedOracle):
    """The classification variant (spec §1.7): ridge-regularised logistic loss as a function of z.

    ``H(z) = min_w sum_i log(1 + exp(-y_i (b0 + M_k w)_i)) + ||w||^2 / (2 gamma)`` with labels
    ``y in {-1, +1}`` and a fixed offset ``b0`` (the log-odds of the base rate, so an unbalanced
    target needs no penalised intercept). By Fenchel duality ``H(z) = max_a b0 sum(a) -
    sum l*(y_i, a_i) - (gamma/2) sum_j z_j (M_j'a)^2``, a maximum of functions affine in z: convex,
    with gradient ``-(gamma/2) (M'a*)^2`` (Danskin), ``a*_i = -y_i / (1 + exp(y_i u_i))`` at the
    primal optimum. The same interface as ``H2Oracle``, so Algorithm 1 runs unchanged.
    """

    def __init__(self, M: np.ndarray, y: np.ndarray, gamma: float, offset: float = 0.0) -> None:
        self.M = np.asfortranarray(M, dtype=np.float64)
        self.y = np.asarray(y, dtype=np.float64)
        if not np.all(np.isin(self.y, (-1.0, 1.0))):
            raise ValueError("LogisticOracle needs labels in {-1, +1}")
        self.gamma = float(gamma)
        self.offset = float(offset)
        self.h0 = float(np.logaddexp(0.0, -self.y * self.offset).sum())
        self._memo: dict[tuple[int, ...], Evaluation] = {}
        self.evaluations = 0

    def fit(self, support: tuple[int, ...] | list[int]) -> np.ndarray:
        """Newton's method with backtracking on the k-dimensional ridge-logistic problem."""
        kappa = list(support)
        Mk = self.M[:, kappa]
        w = np.zeros(len(kappa))
        f = self._f(Mk, w)
        for _ in range(100):
            u = self.offset + Mk @ w
            a = -self.y * _sigmoid(-self.y * u)  # dl/du
            g = Mk.T @ a + w / self.gamma
            s = _sigmoid(u)
            H = (Mk * (s * (1 - s))[:, None]).T @ Mk
            H[np.diag_indices_from(H)] += 1.0 / self.gamma
            step = np.linalg.solve(H, g)
            dec = float(g @ step)
            if dec <= 1e-14 * max(1.0, abs(f)):
                break
            t = 1.0
            while True:
                cand = w - t * step
                fc = self._f(Mk, cand)
                if fc <= f - 0.25 * t * dec or t < 1e-10:
                    break
                t *= 0.5
            w, f = cand, fc
        return w

    def _f(self, Mk: np.ndarray, w: np.ndarray) -> float:
        u = self.offset + Mk @ w
        return float(np.logaddexp(0.0, -self.y * u).sum()) + 0.5 / self.gamma * float(w @ w)

    def _evaluate(self, key: tuple[int, ...]) -> Evaluation:
        w = self.fit(key) if key else np.zeros(0)
        Mk = self.M[:, list(key)]
        u = self.offset + Mk @ w
        a = -self.y * _sigmoid(-self.y * u)
        c = self.M.T @ a
        return Evaluation(key, self._f(Mk, w), -0.5 * self.gamma * c * c, w, a)


Oracle = H2Oracle | LogisticOracle  # the loss of a rule set: squared (regression) or logistic (binary)


def logistic_relaxed(M: np.ndarray, y: np.ndarray, gamma: float, z: np.ndarray, offset: float = 0.0) -> float:
    """The perspective relaxation ``min_w sum l + sum w_j^2 / (2 gamma z_j)`` at fractional z (tests)."""
    from scipy.optimize import minimize

    def fun(w: np.ndarray) -> tuple[float, np.ndarray]:
        u = offset + M @ w
        a = -y * _sigmoid(-y * u)
        return (
            float(np.logaddexp(0.0, -y * u).sum()) + 0.5 / gamma * float(np.sum(w * w / z)),
            M.T @ a + w / (gamma * z),
        )

    res = minimize(
        fun, np.zeros(M.shape[1]), jac=True, method="L-BFGS-B", options={"gtol": 1e-12, "ftol": 1e-15, "maxiter": 10000}
    )
    return float(res.fun)


def _sigmoid(v: np.ndarray) -> np.ndarray:
    return 0.5 * (1.0 + np.tanh(0.5 * v))
