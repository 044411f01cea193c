"""The exact MIO models through cvxpy (spec §3.6): perspective MISOCP and big-M.

MOSEK is used only when a licence can be checked out: cvxpy's own solver fallback does not catch
MOSEK's licence error (it surfaces as a solver failure mid-solve), so the licence is probed here
first, and a spec that asks for MOSEK without one gets one message saying how to install a
licence, which backends exist, and what will run instead.
"""

from __future__ import annotations

import math
import time
import warnings
from dataclasses import dataclass
from typing import Literal

import numpy as np
from glasswork.contract.result import Status, relative_gap
from glasswork.data import DataError
from glasswork.hooks.extras import EXTRAS, installed, require

Backend = Literal["auto", "mosek", "scip"]
Formulation = Literal["perspective", "bigm"]

LICENCE_HELP = (
    "MOSEK needs a licence file: request one (free for academic use) at "
    "https://www.mosek.com/products/academic-licenses/ or a trial at "
    "https://www.mosek.com/products/trial/, then save it as ~/mosek/mosek.lic or point the "
    "MOSEKLM_LICENSE_FILE environment variable at it"
)


class BackendUnavailable(DataError):
    """The requested MIO backend cannot run and the spec does not allow a fallback: the user's to
    fix (a licence, another backend, search.fallback), so exit status 2 like any spec mistake."""


def require_installed(backend: Backend, fallback: bool) -> None:
    """Raise ``MissingExtra`` (checked when the spec is read, before anything runs) unless the
    packages the ``mio`` policy will need are installed; a licence is checked when it solves."""
    if backend == "mosek" and not (fallback and installed("pyscipopt")):
        require("mosek", "search.backend mosek", ["cvxpy", "mosek"])
    else:  # SCIP, unless auto finds MOSEK (whose licence is checked when it solves)
        scip = backend == "scip" or not installed("mosek")
        require("mio", "search.policy mio", ["cvxpy", "pyscipopt"] if scip else ["cvxpy"])


def mosek_licence() -> tuple[bool, str]:
    """Whether a MOSEK licence can be checked out, and why not."""
    try:
        import mosek
    except ImportError:
        return False, f"the mosek package is not installed ({EXTRAS['mosek'].install})"
    try:
        with mosek.Env() as env:
            env.checkoutlicense(mosek.feature.pton)
        return True, "licence found"
    except mosek.Error as exc:  # missing/expired licence file
        return False, f"no usable MOSEK licence ({exc.errno if hasattr(exc, 'errno') else exc})"
    except Exception as exc:  # noqa: BLE001 - any failure means "not usable"
        return False, f"MOSEK unusable: {exc}"


def available_backends() -> dict[str, str]:
    """Backend name -> 'ok' or why it cannot run."""
    out: dict[str, str] = {}
    ok, why = mosek_licence()
    out["mosek"] = "ok" if ok else why
    try:
        import pyscipopt  # noqa: F401

        out["scip"] = "ok"
    except ImportError:
        out["scip"] = f"the pyscipopt package is not installed ({EXTRAS['mio'].install})"
    return out


def choose_backend(backend: Backend, formulation: Formulation, fallback: bool) -> tuple[str, str | None]:
    """Resolve the backend; returns (cvxpy solver name, warning message or None)."""
    avail = available_backends()
    listing = ", ".join(f"{k}: {v}" for k, v in avail.items())
    if backend == "auto":
        if formulation == "perspective" and avail["mosek"] == "ok":
            return "MOSEK", None
        if avail["scip"] == "ok":
            return "SCIP", None
        if avail["mosek"] == "ok":
            return "MOSEK", None
        raise BackendUnavailable(f"no MIO backend can run ({listing}). {LICENCE_HELP}")
    want = backend
    if avail[want] == "ok":
        return want.upper(), None
    others = [k for k, v in avail.items() if v == "ok" and k != want]
    message = f"search.backend is {want!r} but {avail[want]}."
    if want == "mosek":
        message += f" {LICENCE_HELP}."
    message += f" Backends here: {listing}."
    if fallback and others:
        return others[0].upper(), message + f" Using {others[0]!r} instead (search.fallback is true)."
    if others:
        message += f" Set search.fallback: true to use {others[0]!r} instead, or search.backend: {others[0]}."
    raise BackendUnavailable(message)


@dataclass
class MioResult:
    """What the backend found and what it says about it.

    ``backend_status`` is the backend's own word (SCIP's ``getStatus()``: ``optimal``,
    ``timelimit``, ``gaplimit``, ...; cvxpy's status for other backends), so a caller can tell a
    proof from a stop at a limit without timing the solve; ``status`` is glasswork's judgement,
    which is never ``OPTIMAL`` unless the backend finished and its bound meets H2 within the gap.
    """

    support: tuple[int, ...]
    objective: float
    lower_bound: float | None
    status: Status
    seconds: float
    solver: str
    formulation: str
    backend_status: str = "unknown"

    @property
    def gap(self) -> float | None:
        """The relative gap ``(objective - lower_bound) / |objective|``; ``None`` without a bound."""
        return relative_gap(self.objective, self.lower_bound)


def solve_mio(
    M: np.ndarray,
    y: np.ndarray,
    pi: np.ndarray,
    k: int,
    gamma: float,
    epsilon: float,
    *,
    formulation: Formulation = "perspective",
    solver: str = "SCIP",
    time_limit: float | None = None,
    mip_gap: float = 1e-4,
    verbose: bool = False,
) -> MioResult:
    """Solve (7) exactly with cvxpy; the objective is re-evaluated as H2 on the chosen support."""
    import cvxpy as cp

    from .loss import H2Oracle

    n, m = M.shape
    w = cp.Variable(m)
    z = cp.Variable(m, boolean=True)
    u = cp.Variable(n)  # residual: n extra variables instead of the m x m Gram matrix
    U = math.sqrt(gamma) * float(np.linalg.norm(y))  # |w_i| <= U for any optimal w (spec §2.6)
    cons = [u == y - M @ w, pi @ z >= epsilon - 1e-9 * max(1.0, abs(epsilon)), cp.sum(z) <= k, w <= U * z, w >= -U * z]
    if formulation == "perspective":
        s = cp.Variable(m, nonneg=True)
        # w_i^2 <= s_i z_i as a rotated cone: ||(2 w_i, s_i - z_i)|| <= s_i + z_i. The big-M rows
        # above are valid here too and close a leak: a solver that checks the cone with an
        # absolute tolerance (SCIP: 1e-9) lets an unselected rule keep |w_i| ~ 1e-5, and spread
        # over hundreds of rules that ends "optimal" below H2 of the chosen rules.
        cons.append(cp.SOC(s + z, cp.vstack([2 * w, s - z]), axis=0))
        obj = 0.5 * cp.sum_squares(u) + (0.5 / gamma) * cp.sum(s)
    else:
        obj = 0.5 * cp.sum_squares(u) + (0.5 / gamma) * cp.sum_squares(w)
    prob = cp.Problem(cp.Minimize(obj), cons)
    opts: dict[str, object] = {}
    if solver == "SCIP":
        params: dict[str, object] = {"limits/gap": mip_gap, "numerics/feastol": 1e-9}
        if time_limit is not None:
            params["limits/time"] = float(time_limit)
        opts["scip_params"] = params
    elif solver == "MOSEK":
        mparams: dict[str, object] = {"MSK_DPAR_MIO_TOL_REL_GAP": mip_gap}
        if time_limit is not None:
            mparams["MSK_DPAR_OPTIMIZER_MAX_TIME"] = float(time_limit)
        opts["mosek_params"] = mparams
    t0 = time.perf_counter()
    try:
        with warnings.catch_warnings():  # "inaccurate" is judged below, against the exact H2
            warnings.simplefilter("ignore", UserWarning)
            prob.solve(solver=solver, verbose=verbose, **opts)
    except cp.error.SolverError:
        seconds = time.perf_counter() - t0
        if z.value is None:
            if time_limit is not None and seconds >= 0.9 * time_limit:
                return _no_solution(
                    M,
                    y,
                    pi,
                    k,
                    gamma,
                    seconds,
                    solver,
                    formulation,
                    _backend_status(prob, solver) or "no solution at the time limit",
                )
            raise
    seconds = time.perf_counter() - t0
    if prob.status in ("infeasible", "infeasible_inaccurate"):
        from .cutting_plane import InfeasibleEpsilon

        raise InfeasibleEpsilon(f"the MIO model is infeasible at epsilon = {epsilon:.6g}")
    if z.value is None:
        raise RuntimeError(f"{solver} returned no solution (status {prob.status})")
    support = tuple(int(i) for i in np.flatnonzero(z.value > 0.5))
    value = H2Oracle(M, y, gamma).value(support)
    said = _backend_status(prob, solver)
    finished = prob.status in ("optimal", "optimal_inaccurate") and said not in LIMIT_STATUSES
    bound = _dual_bound(prob, solver)
    if bound is not None and not math.isfinite(bound):
        bound = None
    if bound is None and finished and prob.value is not None and prob.status == "optimal":
        # the backend's own claim of optimality (MOSEK); never from "optimal_inaccurate", which
        # cvxpy also uses for a solve a limit ended when the backend's status cannot be read
        bound = float(prob.value)
    if bound is not None:
        bound = min(bound, value)
    if not finished:
        status = Status.STOPPED_TIME
    elif (gap := relative_gap(value, bound)) is not None and gap <= mip_gap:
        status = Status.OPTIMAL
    else:  # the backend stopped "optimal" but its bound does not meet H2 within the tolerance
        status = Status.HEURISTIC
    return MioResult(support, value, bound, status, seconds, solver, formulation, said or str(prob.status))


def _no_solution(
    M: np.ndarray,
    y: np.ndarray,
    pi: np.ndarray,
    k: int,
    gamma: float,
    seconds: float,
    solver: str,
    formulation: str,
    said: str,
) -> MioResult:
    """The backend hit its time limit without a solution: report the top-k set, which is feasible."""
    from .loss import H2Oracle, top_k

    support = tuple(int(i) for i in top_k(pi, k))
    return MioResult(
        support, H2Oracle(M, y, gamma).value(support), None, Status.STOPPED_TIME, seconds, solver, formulation, said
    )


# SCIP's statuses for a solve that a limit ended (cvxpy reports SCIP's time limit as "optimal_inaccurate")
LIMIT_STATUSES = frozenset(
    {
        "timelimit",
        "nodelimit",
        "totalnodelimit",
        "stallnodelimit",
        "memlimit",
        "userinterrupt",
        "sollimit",
        "bestsollimit",
        "restartlimit",
        "gaplimit_not_reached",
    }
)


def _backend_status(prob: object, solver: str) -> str | None:
    """SCIP's own status string (``optimal``, ``timelimit``, ...); ``None`` for other backends or
    when it cannot be read (then the bound judges the solve)."""
    extra = getattr(getattr(prob, "solver_stats", None), "extra_stats", None)
    try:
        if solver == "SCIP" and isinstance(extra, dict) and "model" in extra:
            return str(extra["model"].getStatus())
    except Exception:  # noqa: BLE001 - an unreadable status is judged by the bound instead
        return None
    return None


def _dual_bound(prob: object, solver: str) -> float | None:
    """The backend's proven bound, moved into cvxpy's objective units; ``None`` if unknown."""
    stats = getattr(prob, "solver_stats", None)
    extra = getattr(stats, "extra_stats", None)
    value = getattr(prob, "value", None)
    try:
        if solver == "SCIP" and isinstance(extra, dict) and "model" in extra:
            offset = (
                float(value) - float(extra["value"]) if value is not None and extra.get("value") is not None else 0.0
            )
            return float(extra["model"].getDualbound()) + offset
        if solver == "MOSEK" and extra is not None:
            import mosek

            task = extra if not isinstance(extra, dict) else extra.get("task")
            if task is not None:
                return float(task.getdouinf(mosek.dinfitem.mio_obj_bound))
    except Exception:  # noqa: BLE001, S110 - an unreadable bound is reported as unknown
        pass
    return None
