"""The perspective relaxation of problem (9): lower bounds, and the rules they rule out (spec §2.2).

Tangent cuts at binary points are weak where H2 bends a lot along one coordinate (large
``gamma * ||M_i||^2``: many rows, little shrinkage), which is what makes the plain cutting plane
slow at n = 15,000. The perspective relaxation keeps that curvature exactly, and its dual gives,
for ANY weights ``w`` (dual point ``alpha = y - Mw``) and multipliers ``tau, mu >= 0``,

    D = 1/2 y'y - 1/2 w'Gw + sum_in (lam_i - s_i) - sum_free max(0, s_i - lam_i) - tau k + mu eps

with ``c = b - Gw``, ``s_i = gamma c_i^2 / 2`` and ``lam_i = tau - mu stab_i``: a lower bound on H2
over every binary z the fixings allow (Fenchel duality for H2, Lagrange for the two rows). The
bound is valid at every iterate, so the search for the best ``(w, tau, mu)`` can stop anywhere.

Forcing one free rule in or out changes a single term of D, so each rule gets a bound of its own
at no cost; a rule whose bound exceeds the incumbent cannot be in (or out of) a better solution
and is fixed. On the paper-sized instances this fixes over 90 % of the candidates, which leaves
the cutting plane a master problem of a few dozen columns. ``alpha`` itself is a valid cut,
``nu >= 1/2 y'y - 1/2 w'Gw - sum_i s_i z_i``, and lifts the master's bound to D at once.
"""

from __future__ import annotations

import math
from dataclasses import dataclass

import numpy as np
from glasswork.cython_ext.moss import MultiplierSearch

from .loss import Gram

FREE, IN, OUT = 0, 1, -1


@dataclass
class Bound:
    """One evaluation of the dual bound and everything needed to reuse it."""

    value: float
    w: np.ndarray
    g: np.ndarray  # G w - b, so c = -g
    tau: float
    mu: float
    z: np.ndarray  # the relaxation's z for these multipliers


class PerspectiveRelaxation:
    """Dual bounds of (9) for a threshold and a set of fixings, warm-started call to call."""

    def __init__(self, gram: Gram, gamma: float, stab: np.ndarray, k: int) -> None:
        self.G, self.b, self.yy = gram.G, gram.b, gram.yy
        self.gamma = float(gamma)
        self.stab = np.asarray(stab, dtype=np.float64)
        self.k = int(k)
        self.m = self.b.size

    def feasible(self, threshold: float, state: np.ndarray) -> bool:
        """Whether the fixings leave room for a rule set that reaches the threshold."""
        forced = state == IN
        slots = self.k - int(forced.sum())
        if slots < 0:
            return False
        free = np.sort(self.stab[state == FREE])[::-1][:slots]
        return float(self.stab[forced].sum() + free.sum()) >= threshold - 1e-9 * max(1.0, abs(threshold))

    # -- the best multipliers -----------------------------------------------------------------

    def solve(
        self, threshold: float, state: np.ndarray, warm: Bound | None = None, target: float = math.inf, effort: int = 18
    ) -> Bound:
        """Maximise D over (w, tau, mu): a root search on tau inside, golden section on mu outside.

        ``sum z`` falls as tau rises and ``stab'z`` rises with mu, so tau is found as the root of
        its row's slack. Every evaluation is a valid bound; the best is kept, and the search stops
        as soon as one reaches ``target`` (a node that can be pruned needs no better bound).
        ``effort`` is the number of golden-section steps on mu (a node deep in a search, warm
        started from its parent, needs fewer than a root).
        """
        state = np.ascontiguousarray(state, dtype=np.int8)
        if not self.feasible(threshold, state):
            return Bound(math.inf, np.zeros(self.m), -self.b.copy(), 0.0, 0.0, np.zeros(self.m))
        if warm is not None:
            w, g = warm.w.copy(), warm.g.copy()
            tau0, mu0 = max(warm.tau, 1e-12), warm.mu
        else:
            w, g = np.zeros(self.m), -self.b.copy()
            s0 = np.sort(0.5 * self.gamma * self.b * self.b)[::-1]
            tau0, mu0 = float(s0[min(self.k, s0.size - 1)]) + 1e-12, 0.0
        search = MultiplierSearch(
            self.G, self.b, self.yy, self.gamma, self.stab, self.k, threshold, state, w, g, target
        )
        search.run(tau0, mu0, warm is not None, effort)  # ends by certifying the best bound from G w - b
        return Bound(search.best_value, search.best_w, search.best_g, search.best_tau, search.best_mu, search.best_z)

    # -- what the bound rules out -------------------------------------------------------------

    def fixings(self, bound: Bound, state: np.ndarray, cutoff: float) -> tuple[np.ndarray, np.ndarray]:
        """Free rules that must be out (resp. in) of any solution with H2 below ``cutoff``."""
        s = 0.5 * self.gamma * bound.g * bound.g
        lam = bound.tau - bound.mu * self.stab
        r = lam - s  # forcing a free rule in adds max(r, 0) to D, forcing it out adds max(-r, 0)
        free = state == FREE
        out = np.flatnonzero(free & (bound.value + r > cutoff))
        into = np.flatnonzero(free & (bound.value - r > cutoff))
        return out, into

    def cut(self, bound: Bound) -> tuple[float, np.ndarray]:
        """The cut ``nu >= const - coef'z`` that the dual point alpha = y - Mw gives (valid everywhere)."""
        const = 0.5 * self.yy - 0.5 * float(bound.w @ (bound.g + self.b))
        return const, 0.5 * self.gamma * bound.g * bound.g
