"""FasterRisk's three phases over the compiled kernels (paper Algorithms 1-6).

1. ``beam_search``: SparseBeamLR with ExpandSuppBy1 and fine-tuning (box-constrained sparse
   logistic regression).
2. ``diverse_pool``: CollectSparseDiversePool, one-feature swaps within a loss gap.
3. ``round_pool``: StarRaySearch with AuxiliaryLossRounding for every pool member.

The Python here only orchestrates: every loop over rows runs in ``glasswork.cython_ext.
fasterrisk`` without the GIL. Two exact data reductions keep those loops short: identical
training rows are merged once (their weights add up), and a fine-tune or a rounding, which only
sees the support's columns, runs on the rows made distinct by those columns (for 0/1 features
and k = 5 at most 64 of them). The continuous phase may run in a centred, unit-norm
reparametrisation (the reference code's ``normalize``); the intercept is free, so this changes
floating-point paths but not the problem.

The three phases share the merged rows, the settings and the progress reporting, so they stay
one module of about 500 lines rather than three that pass that state around.
"""

from __future__ import annotations

import math
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field, replace
from typing import Any, Literal

import numpy as np
from glasswork.cython_ext import fasterrisk as kernels

Preset = Literal["paper", "reference"]


@dataclass(frozen=True)
class Settings:
    """Every knob of one run; ``Settings.preset`` fills them from the paper or the reference code.

    Where the paper and the public reference code differ (specification §2.8 and §7), the
    ``paper`` preset follows the paper and ``reference`` the code.
    """

    k: int = 5
    beam_width: int = 10  # B: parents kept per level
    child_width: int = 10  # children per parent (the code's child_size; the paper uses B)
    pool_gap: float = 0.3  # epsilon, relative to the best continuous loss
    swap_attempts: int = 50  # T: features tried per removed feature
    multipliers: int = 20  # N_m
    pool_size: int | None = None  # keep the best this many continuous pool members
    screening: Literal["loss", "gradient"] = "loss"
    screen_iters: int = 10
    screen_tol: float = 0.0  # stop 1-D screening once no candidate moves more than this
    accept: Literal["after_finetune", "before_finetune"] = "after_finetune"
    multiplier_early_stop: float | None = None
    lam2: float = 0.0
    normalize: bool = False
    gamma_plus_one: bool = False
    rounding_shortcut: bool = False
    intercept_bound: float | None = None  # |m w0| cap used only to size the multiplier grid
    dedupe: Literal["exact", "support"] = "exact"
    finetune: Literal["newton", "cd"] = "newton"
    finetune_sweeps: int = 100
    finetune_tol: float = 1e-8
    finetune_check: int = 10
    reduce_points: bool = True
    threads: int = 2  # fine-tunes of one expansion or swap batch run in parallel (GIL released)

    @classmethod
    def preset(cls, defaults: Preset = "paper", **overrides: Any) -> Settings:
        base = cls()
        if defaults == "reference":
            base = replace(
                base,
                pool_gap=0.05,
                pool_size=50,
                screening="gradient",
                screen_tol=1e-3,
                accept="before_finetune",
                multiplier_early_stop=1e-3,
                lam2=1e-8,
                normalize=True,
                gamma_plus_one=True,
                rounding_shortcut=True,
                intercept_bound=100.0,
                dedupe="support",
                finetune="cd",
            )
        elif defaults != "paper":
            raise ValueError(f"unknown defaults {defaults!r}")
        given = {k: v for k, v in overrides.items() if v is not None}
        if "beam_width" in given and "child_width" not in given:
            given["child_width"] = given["beam_width"]
        return replace(base, **given)


@dataclass
class Constraints:
    """Feasible set: box per feature, at most one feature per group, forced and banned features."""

    lower: np.ndarray  # (p,) integer lower bounds, <= 0
    upper: np.ndarray  # (p,) integer upper bounds, >= 0
    group_of: np.ndarray  # (p,) group id per feature, -1 for none
    include: list[int] = field(default_factory=list)
    exclude: list[int] = field(default_factory=list)

    @classmethod
    def box(cls, p: int, lo: float = -5, hi: float = 5) -> Constraints:
        return cls(np.full(p, float(lo)), np.full(p, float(hi)), np.full(p, -1, dtype=np.int64))


@dataclass
class Continuous:
    """A continuous model in the engine's (possibly normalised) coordinates."""

    w: np.ndarray  # (P,) coordinate 0 is the intercept
    support: frozenset[int]  # feature coordinates (1..P-1) by construction, zeros included
    loss: float


@dataclass
class IntegerModel:
    """A rounded card in original feature indices (0-based), before any point reduction."""

    features: np.ndarray  # feature indices, 0-based into X's columns
    points: np.ndarray  # integer points, same order
    intercept: float
    multiplier: float
    loss: float  # logistic loss of the card on the training data (weights included)
    continuous_loss: float
    multipliers_tried: int


Progress = Callable[..., None]


def _noop(**_: Any) -> None:
    return None


class Engine:
    """One training set prepared for all three phases."""

    def __init__(
        self,
        X: np.ndarray,
        y: np.ndarray,
        sample_weight: np.ndarray | None,
        settings: Settings,
        constraints: Constraints | None = None,
        *,
        stop_flag: np.ndarray | None = None,
        check: Callable[[int], bool] | None = None,
        progress: Progress = _noop,
    ) -> None:
        """``y`` in {-1, +1} (or 0/1, mapped to -1/+1); ``check(nodes)`` returns True to stop."""
        X = np.ascontiguousarray(X, dtype=np.float64)
        y = np.asarray(y, dtype=np.float64)
        if set(np.unique(y)) <= {0.0, 1.0}:
            y = 2.0 * y - 1.0
        if not set(np.unique(y)) <= {-1.0, 1.0}:
            raise ValueError("labels must be -1/+1 or 0/1")
        n, p = X.shape
        s = np.ones(n) if sample_weight is None else np.asarray(sample_weight, dtype=np.float64)
        if s.shape != (n,) or np.any(s < 0) or not np.all(np.isfinite(s)):
            raise ValueError("sample weights must be finite, non-negative, one per row")
        self.settings = settings
        self.cons = constraints or Constraints.box(p)
        self.p = p
        self.stop_flag = stop_flag if stop_flag is not None else np.zeros(1, dtype=np.uint8)
        self._check = check or (lambda nodes: bool(self.stop_flag[0]))
        self.progress = progress
        self.nodes = 0
        self._pool: Any = None

        self.X = X  # never copied: rows are addressed through self.rows
        self.rows, self.y, self.s = merge_rows(X, y, s)
        self.n = self.rows.size
        A, mu, norm = kernels.build_design(X, self.rows, self.y, self.s, settings.normalize)
        self.mu, self.norm = mu, norm
        self.A = A
        lo = np.concatenate([[-np.inf], self.cons.lower * norm])
        hi = np.concatenate([[np.inf], self.cons.upper * norm])
        self.lo, self.hi = lo, hi
        self.design = kernels.Design(A, self.s, lo, hi, settings.lam2)
        # the codes of (y, y * x_j) identify (y, x_j): they group rows for fine-tunes and rounding
        self.codes, self.nvals, _ = self.design.codes

    # -- helpers -----------------------------------------------------------------------------

    def stopped(self) -> bool:
        return bool(self.stop_flag[0]) or self._check(self.nodes)

    def _rows(self, cols: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
        """Representative rows and summed weights of the rows distinct on ``cols`` (and y)."""
        grouped = kernels.compress_rows(self.codes, cols.astype(np.int64), self.nvals, self.s)
        if grouped is None or grouped[0].size == self.n:
            return np.arange(self.n), self.s
        return grouped

    def _allowed(self, support: frozenset[int], removed: int | None = None) -> np.ndarray:
        """Feature coordinates (1..p) that may join ``support`` (minus ``removed``)."""
        ok = np.ones(self.p + 1, dtype=bool)
        ok[0] = False
        for j in support:
            ok[j] = False
        if removed is not None:
            ok[removed] = False
        for f in self.cons.exclude:
            ok[f + 1] = False
        ok[1:] &= self.cons.upper > self.cons.lower
        groups = self.cons.group_of
        taken = {int(groups[j - 1]) for j in support if j != removed and groups[j - 1] >= 0}
        if taken:
            ok[1:] &= ~np.isin(groups, list(taken))
        return np.flatnonzero(ok)

    def finetune(self, w: np.ndarray, support: frozenset[int]) -> float:
        """FineTune on ``support`` from ``w`` (in place); returns the loss (ridge included).

        ``newton`` solves the convex fine-tune problem (eq. 8) to convergence; ``cd`` runs the
        reference code's schedule of quadratic-bound coordinate sweeps (100 at most), which on
        correlated real-valued columns stops far from the optimum.
        """
        st = self.settings
        cols = np.array([0, *sorted(support)], dtype=np.int64)
        rows, weights = self._rows(cols)
        sub = np.ascontiguousarray(self.A[np.ix_(cols, rows)])
        ws = np.ascontiguousarray(w[cols])
        weights = np.ascontiguousarray(weights)
        if st.finetune == "newton":
            loss = kernels.finetune_newton(sub, weights, ws, self.lo[cols], self.hi[cols], st.lam2)
        else:
            loss = kernels.finetune(
                sub,
                weights,
                ws,
                self.lo[cols],
                self.hi[cols],
                st.lam2,
                st.finetune_sweeps,
                st.finetune_tol,
                st.finetune_check,
                True,
            )
        w[cols] = ws
        return float(loss)

    def screen(self, cands: np.ndarray, a: np.ndarray, losses: np.ndarray | None) -> bool:
        """``Design.screen`` over ``cands``; split over the threads when the rounds are fixed
        (``screen_tol == 0``, so the lock-step exit cannot differ between the parts)."""
        st = self.settings
        parts = st.threads if st.screen_tol == 0 and cands.size >= 64 else 1
        if parts <= 1:
            return bool(self.design.screen(cands, st.screen_iters, st.screen_tol, a, losses, self.stop_flag))
        if losses is not None:
            self.design.prepare_losses()
        bounds = np.linspace(0, cands.size, parts + 1).astype(int)
        pieces = [
            (np.ascontiguousarray(cands[lo:hi]), np.zeros(hi - lo), None if losses is None else np.zeros(hi - lo))
            for lo, hi in zip(bounds, bounds[1:])
        ]
        ok = self._executor().map(
            lambda piece: self.design.screen(
                piece[0], st.screen_iters, st.screen_tol, piece[1], piece[2], self.stop_flag
            ),
            pieces,
        )
        done = all(list(ok))
        for (lo, hi), (_, pa, pl) in zip(zip(bounds, bounds[1:]), pieces):
            a[lo:hi] = pa
            if losses is not None:
                losses[lo:hi] = pl
        return done

    def _executor(self) -> Any:
        if self._pool is None:
            from concurrent.futures import ThreadPoolExecutor

            self._pool = ThreadPoolExecutor(max(self.settings.threads, 1), thread_name_prefix="fasterrisk")
        return self._pool

    def finetune_batch(self, items: list[tuple[np.ndarray, frozenset[int]]]) -> list[float]:
        """Fine-tune independent models, on ``settings.threads`` threads; results in order."""
        self.nodes += len(items)
        if self.settings.threads <= 1 or len(items) <= 1:
            return [self.finetune(w, support) for w, support in items]
        return list(self._executor().map(lambda item: self.finetune(*item), items))

    def close(self) -> None:
        if self._pool is not None:
            self._pool.shutdown()
            self._pool = None

    def initial(self) -> Continuous:
        """The intercept-only minimiser log(N+/N-), or the fitted forced features."""
        pos = float(self.s[self.y > 0].sum())
        neg = float(self.s[self.y < 0].sum())
        if pos <= 0 or neg <= 0:
            raise ValueError("both classes must have positive weight")
        w = np.zeros(self.p + 1)
        w[0] = math.log(pos / neg)
        support = frozenset(f + 1 for f in self.cons.include)
        if support:
            loss = self.finetune_batch([(w, support)])[0]
        else:
            self.design.set_point(w)
            loss = float(self.design.loss())
        return Continuous(w, support, loss)

    # -- phase 1: beam search ----------------------------------------------------------------

    def expand(self, parent: Continuous, seen: set[frozenset[int]]) -> list[Continuous]:
        """ExpandSuppBy1: the best ``child_width`` one-feature extensions not generated before."""
        st = self.settings
        cands = self._allowed(parent.support)
        if cands.size == 0:
            return []
        self.design.set_point(parent.w)
        a = np.zeros(cands.size)
        if st.screening == "gradient":
            g = self.design.gradient()[cands]
            order = np.argsort(-np.abs(g), kind="stable")[: st.child_width]
            cands, a = cands[order], a[order]
            if not self.design.screen(cands, st.screen_iters, st.screen_tol, a, None, self.stop_flag):
                return []
        else:
            losses = np.zeros(cands.size)
            if not self.screen(cands, a, losses):
                return []
            order = np.argsort(losses, kind="stable")[: st.child_width]
            cands, a = cands[order], a[order]
        todo = []
        for j, aj in zip(cands.tolist(), a.tolist()):
            support = parent.support | {j}
            if support in seen:
                continue
            seen.add(support)
            w = parent.w.copy()
            w[j] += aj
            todo.append((w, support))
        fitted = self.finetune_batch(todo)
        return [Continuous(w, support, loss) for (w, support), loss in zip(todo, fitted)]

    def beam_search(self) -> tuple[Continuous, dict[int, float]]:
        """SparseBeamLR: grow supports one feature at a time, keeping the best B per size."""
        st = self.settings
        start = self.initial()
        beam = [start]
        best_by_size = {len(start.support): start.loss}
        seen: set[frozenset[int]] = {start.support}
        while len(beam[0].support) < st.k:
            children: list[Continuous] = []
            size = len(beam[0].support) + 1
            for t, parent in enumerate(beam, 1):
                children.extend(self.expand(parent, seen))
                best_child = min((c.loss for c in children), default=None)
                self.progress(
                    phase="beam",
                    support_size=size,
                    parents_done=t,
                    parents=len(beam),
                    objective=best_child,
                    best_loss_by_size=dict(best_by_size),
                    nodes=self.nodes,
                )
                if self.stopped():
                    break
            if not children:
                break
            children.sort(key=lambda c: c.loss)
            size = len(children[0].support)
            if self.stopped() and len(beam[0].support) > len(start.support):
                # a partial level is not comparable to a full one; keep what was complete
                if children[0].loss >= beam[0].loss:
                    break
            beam = children[: st.beam_width]
            best_by_size[size] = beam[0].loss
            self.progress(
                phase="beam",
                support_size=size,
                objective=beam[0].loss,
                best_loss_by_size=dict(best_by_size),
                nodes=self.nodes,
            )
            if self.stopped():
                break
        return beam[0], best_by_size

    # -- phase 2: diverse pool ---------------------------------------------------------------

    def diverse_pool(self, best: Continuous) -> list[Continuous]:
        """CollectSparseDiversePool: swap one feature at a time, keep swaps within the gap."""
        st = self.settings
        pool = [best]
        seen = {best.support}
        limit = (1.0 + st.pool_gap) * best.loss
        forced = {f + 1 for f in self.cons.include}
        for removed in sorted(best.support - forced):
            if self.stopped():
                break
            w_minus = best.w.copy()
            w_minus[removed] = 0.0
            self.design.set_point(w_minus)
            cands = self._allowed(best.support, removed)
            if cands.size == 0 or st.swap_attempts == 0:
                continue
            g = self.design.gradient()[cands]
            cands = cands[np.argsort(-np.abs(g), kind="stable")[: st.swap_attempts]]
            a = np.zeros(cands.size)
            screened = np.zeros(cands.size)
            if not self.screen(cands, a, screened):
                break
            base = best.support - {removed}
            todo = []
            for j, aj, lj in zip(cands.tolist(), a.tolist(), screened.tolist()):
                support = base | {j}
                if support in seen:
                    continue
                if st.accept == "before_finetune" and not (lj - best.loss) / best.loss < st.pool_gap:
                    continue
                seen.add(support)
                w = w_minus.copy()
                w[j] = aj
                todo.append((w, support))
            for (w, support), loss in zip(todo, self.finetune_batch(todo)):
                if st.accept == "after_finetune" and loss > limit:
                    continue
                pool.append(Continuous(w, support, loss))
            self.progress(phase="pool", pool_size=len(pool), objective=best.loss, nodes=self.nodes)
        pool.sort(key=lambda c: c.loss)
        if st.pool_size is not None:
            pool = pool[: st.pool_size]
        return pool

    # -- phase 3: star-ray search with rounding ----------------------------------------------

    def to_original(self, model: Continuous) -> tuple[np.ndarray, float]:
        """Feature coefficients (length p) and intercept in the original feature scale."""
        w = model.w[1:] / self.norm
        return w, float(model.w[0] - self.mu @ w)

    def multiplier_grid(self, w: np.ndarray, w0: float) -> np.ndarray:
        """Star-ray multipliers: 1..m_max, or 1 down to 0.5 when a coefficient is at its bound.

        ``w`` has one coefficient per feature (length p): ``m w_j`` must stay in feature j's box.
        """
        st = self.settings
        m_max = math.inf
        for j in np.flatnonzero(w):
            bound = self.cons.upper[j] / w[j] if w[j] > 0 else self.cons.lower[j] / w[j]
            m_max = min(m_max, bound)
        if st.intercept_bound is not None and w0 != 0:
            m_max = min(m_max, st.intercept_bound / abs(w0))
        return multiplier_grid(m_max, st.multipliers)

    def round_model(self, model: Continuous) -> IntegerModel:
        """StarRaySearch over the multiplier grid for one continuous model.

        A forced feature (``constraints.include``) is rounded even where its continuous
        coefficient is 0, and never to 0 points: the card's meaning of ``include`` is the exact
        policy's (the feature is on the card), so every multiplier's card honours it.
        """
        st = self.settings
        w, w0 = self.to_original(model)
        forced_set = set(self.cons.include)
        feats = np.flatnonzero((np.abs(w) > 1e-9) | np.isin(np.arange(self.p), list(forced_set)))
        forced = np.zeros(feats.size + 1, dtype=np.uint8)
        for t, j in enumerate(feats.tolist(), 1):
            if j in forced_set:
                forced[t] = (1 if self.cons.upper[j] >= 1 else 0) | (2 if self.cons.lower[j] <= -1 else 0)
        cols = np.array([0, *(feats + 1)], dtype=np.int64)
        rows, weights = self._rows(cols)
        sub = np.empty((cols.size, rows.size))
        sub[0] = self.y[rows]
        sub[1:] = (self.X[np.ix_(self.rows[rows], feats)] * self.y[rows, None]).T
        wq = np.concatenate([[w0], w[feats]])
        weights = np.ascontiguousarray(weights)
        cont = float(kernels.logistic_loss(sub, weights, wq, 1.0))
        on_card = np.zeros(self.p)
        on_card[feats] = w[feats]  # the grid reads each feature's own bounds: a full-length vector
        grid = self.multiplier_grid(on_card, w0)
        early = -1.0 if st.multiplier_early_stop is None else st.multiplier_early_stop
        best, m, loss, tried = kernels.star_ray(
            sub,
            weights,
            wq,
            grid,
            early,
            cont,
            st.gamma_plus_one,
            st.rounding_shortcut,
            self.stop_flag,
            forced if forced_set else None,
        )
        keep = best[1:] != 0
        return IntegerModel(
            feats[keep], best[1:][keep].astype(np.int64), float(best[0]), float(m), float(loss), cont, int(tried)
        )

    def round_pool(self, pool: Sequence[Continuous]) -> list[IntegerModel]:
        """Round every member (the first one even after a stop) and de-duplicate."""
        st = self.settings
        out: list[IntegerModel] = []
        keys: set[Any] = set()
        for t, member in enumerate(pool):
            if t > 0 and self.stopped():
                break
            card = self.round_model(member)
            if st.dedupe == "support":
                key: Any = (card.intercept != 0, tuple(card.features.tolist()))
            else:
                key = (card.intercept, tuple(card.features.tolist()), tuple(card.points.tolist()))
            if key in keys:
                continue
            keys.add(key)
            out.append(card)
            self.progress(
                phase="multipliers",
                rounded=t + 1,
                pool_size=len(pool),
                objective=min(c.loss for c in out),
                nodes=self.nodes,
            )
        out.sort(key=lambda c: c.loss)
        return out

    def run(self) -> tuple[list[IntegerModel], dict[str, Any]]:
        """All three phases; returns the integer pool (best first) and search statistics."""
        try:
            best, by_size = self.beam_search()
            pool = [best] if self.stopped() else self.diverse_pool(best)
            cards = self.round_pool(pool)
        finally:
            self.close()
        stats = {
            "rows_distinct": self.n,
            "finetunes": self.nodes,
            "best_continuous_loss": best.loss,
            "best_loss_by_size": {str(k): v for k, v in sorted(by_size.items())},
            "continuous_pool": len(pool),
            "integer_pool": len(cards),
        }
        return cards, stats


def multiplier_grid(m_max: float, count: int) -> np.ndarray:
    """``linspace(1, m_max, count)``, or ``linspace(1, 0.5, count)`` when ``m_max <= 1``."""
    if not math.isfinite(m_max):
        return np.ones(1)
    if m_max <= 1.0 + 1e-9:
        return np.linspace(1.0, 0.5, count)
    return np.linspace(1.0, m_max, count)


def merge_rows(
    X: np.ndarray, y: np.ndarray, s: np.ndarray, tag: np.ndarray | None = None
) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """Identical (x, y) rows as one row whose weight is their summed weight (exact for the loss).

    Returns the index of each kept row in ``X`` (first occurrence, in order), its label and
    its merged weight. Rows of zero weight are dropped. Rows of different ``tag`` (the fairness
    constraint's group bits) are never merged.
    """
    if X.shape[0] == 0:
        raise ValueError("no training rows")
    keep = np.flatnonzero(s > 0)
    if keep.size == 0:
        raise ValueError("every sample weight is zero")
    Xk = X if keep.size == X.shape[0] else X[keep]
    if tag is not None:
        key = np.ascontiguousarray(np.column_stack([y[keep], np.asarray(tag, dtype=np.float64)[keep], Xk]))
    elif kernels.is_binary(Xk):
        key = np.packbits(np.column_stack([y[keep] > 0, Xk > 0]), axis=1)
    else:
        key = np.ascontiguousarray(np.column_stack([y[keep], Xk]))
    view = key.view(np.dtype((np.void, key.dtype.itemsize * key.shape[1]))).ravel()
    _, first, inverse = np.unique(view, return_index=True, return_inverse=True)
    if first.size == keep.size:
        return keep, y[keep], s[keep]
    order = np.argsort(first)
    remap = np.empty(first.size, dtype=np.int64)
    remap[order] = np.arange(first.size)
    weights = np.bincount(remap[inverse.ravel()], weights=s[keep], minlength=first.size)
    rows = keep[first[order]]
    return rows, y[rows], weights
