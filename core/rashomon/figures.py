"""The figures of a Rashomon set's members, computed once when the set is recorded: each kept
member's training and test metrics (``glasswork.running.metrics``, the figures a run reports) and, when the
spec has a ``fairness:`` section, its audit (``glasswork.fairness.audit``: each metric, the worst over the
protected groups, on the training and test rows); then the range of every audited metric over the
members, and the best member within the spec's fairness constraint.

Each member is predicted once per part (``predict`` and ``predict_proba`` on the whole matrix),
and its figures computed from those predictions by the functions that score a run's model, so a
member's figures and a run's are the same numbers for the same model. A member kept as a summary
(``rashomon.keep: summary``) has no model: its figures are ``None`` (not available), never made up.
The work is bounded by ``MAX_SCORED_CELLS`` (members x rows predicted): past it the best members
are scored and ``notes`` says how many; a range over fewer members than the set counts never says
it is exact.

The range document (``RashomonSet.fairness``, ``run --json``'s ``rashomon.fairness``)::

    {"metrics": [...], "count": N, "members": K, "complete": bool, "exact": bool, "notes": [...],
     "train": {METRIC: {"min": v, "max": v, "min_rank": r, "max_rank": r, "undefined": u}, ...},
     "test": {...},
     "constraint": {"metric": m, "at_most": a, "rank": r | None, "objective": o, "value": v}}

``exact`` says the range is certified: the set is complete (every model within the threshold
counted) and every one of its ``count`` members was scored, so ``min`` and ``max`` are those of
the whole set. ``undefined`` counts members whose figure is undefined (an empty cell of a group),
left out of the range. ``constraint`` (only with ``constraints.fairness``) is the best member,
by rank, whose training figure meets the limit (``fairness.meets``); ``rank`` ``None`` when no
scored member does.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

import numpy as np

from glasswork.fairness import figures as fairness
from glasswork.fairness import audit
from glasswork.running import metrics

if TYPE_CHECKING:
    from glasswork.data import Problem
    from glasswork.rashomon import RashomonSet
    from glasswork.spec.models import SolverSpec

MAX_SCORED_CELLS = 50_000_000  # members x (training + test rows) scored as a set is recorded (~7,000 on COMPAS)
PARTS = ("train", "test")


def score_members(rset: RashomonSet, spec: SolverSpec, problem: Problem) -> list[str]:
    """Give each kept member with a model its ``metrics`` and (with a ``fairness:`` section) its
    ``fairness``, in place; returns notes on what was left unscored."""
    from glasswork.contract.model import Classifier

    rows = problem.n_samples + (0 if problem.y_test is None else int(problem.y_test.shape[0]))
    carrying = [m for m in rset.members if m.model is not None]
    limit = max(1, MAX_SCORED_CELLS // max(1, rows))
    notes = []
    if len(carrying) > limit:
        notes.append(f"figures for the best {limit:,} of the {len(carrying):,} members kept with a model")
        carrying = carrying[:limit]
    matrices = [("train_", problem.X, problem.y, problem.sample_weight)]
    if problem.X_test is not None and problem.y_test is not None:
        matrices.append(("test_", problem.X_test, problem.y_test, problem.test_sample_weight))
    audited = audit.parts(spec, problem)
    wanted = [] if spec.fairness is None else list(spec.fairness.metrics)
    for member in carrying:
        model = member.model
        assert model is not None
        scores: dict[str, float] = {}
        predicted: dict[str, tuple[np.ndarray, np.ndarray | None]] = {}
        for prefix, X, y, weights in matrices:
            pred = np.asarray(model.predict(X))
            proba = np.asarray(model.predict_proba(X), dtype=np.float64) if isinstance(model, Classifier) else None
            predicted[prefix[:-1]] = (pred, proba)
            scores.update(metrics.of_predictions(model.task, y, pred, proba, prefix, weights))
        member.metrics = scores
        if audited:
            member.fairness = {}
            for part in audited:
                pred, proba = predicted[part.name]
                doc = fairness.audit(part.y, pred, part.groups, wanted, part.weights, audit.positive_score(proba))
                member.fairness[part.name] = {m: doc[m] for m in wanted if m in doc}
    return notes


def fairness_range(rset: RashomonSet, spec: SolverSpec, notes: list[str] | None = None) -> dict[str, Any] | None:
    """The range document (module docstring) of the members ``score_members`` scored; ``None``
    without a ``fairness:`` section."""
    if spec.fairness is None:
        return None
    ranked = [(rank, m) for rank, m in enumerate(rset.members, start=1) if m.fairness is not None]
    exact = rset.complete and rset.exhaustive and len(ranked) == rset.count
    summaries = sum(1 for m in rset.members if m.model is None and m.fairness is None)
    notes = [
        *(notes or []),
        *(
            [f"{summaries:,} member(s) kept as summaries (rashomon.keep: summary) have no model, so no figures"]
            if summaries
            else []
        ),
    ]
    out: dict[str, Any] = {
        "metrics": list(spec.fairness.metrics),
        "count": rset.count,
        "members": len(ranked),
        "complete": rset.complete and rset.exhaustive,
        "exact": exact,
        "notes": notes,
    }
    for part in PARTS:
        per_metric = {}
        for metric in spec.fairness.metrics:
            said = [(rank, (m.fairness or {}).get(part, {})) for rank, m in ranked if part in (m.fairness or {})]
            if not said or not any(metric in figures for _, figures in said):
                continue  # no test rows, or calibration of models without probabilities
            defined = [(figures[metric], rank) for rank, figures in said if figures.get(metric) is not None]
            low = min(defined, default=None)  # ties: the best-ranked member
            high = max(defined, key=lambda vr: (vr[0], -vr[1]), default=None)
            per_metric[metric] = {
                "min": None if low is None else low[0],
                "max": None if high is None else high[0],
                "min_rank": None if low is None else low[1],
                "max_rank": None if high is None else high[1],
                "undefined": len(said) - len(defined),
            }
        if per_metric:
            out[part] = per_metric
    limit = getattr(spec.constraints, "fairness", None)
    if limit is not None:
        best = next(
            (
                (rank, m)
                for rank, m in ranked
                if fairness.meets((m.fairness or {}).get("train", {}).get(limit.metric), limit.at_most)
            ),
            None,
        )
        out["constraint"] = {
            "metric": limit.metric,
            "at_most": limit.at_most,
            "rank": None if best is None else best[0],
            "objective": None if best is None else best[1].objective,
            "value": None if best is None else (best[1].fairness or {})["train"].get(limit.metric),
        }
    return out


def coverage_text(doc: dict[str, Any]) -> str:
    """What a range covers, in words: ``exact over all N members`` only when it is certified, else
    how many members it covers of how many counted, and why it is not the whole set's."""
    count, members = int(doc.get("count") or 0), int(doc.get("members") or 0)
    if doc.get("exact"):
        return f"exact over all {count:,} member{'s' if count != 1 else ''} of the complete set"
    why = []
    if members < count:
        why.append("the others are not kept with a model (rashomon.max_models, keep: summary, or a bound on the work)")
    if not doc.get("complete"):
        why.append("the set is not complete")
    return f"covers {members:,} of {count:,} member{'s' if count != 1 else ''}, not exact: {'; '.join(why)}"


def _figure(value: Any) -> str:
    return "undefined" if value is None else f"{value:.4f}"


def range_lines(doc: dict[str, Any] | None) -> list[str]:
    """The range document in lines of plain text (printers escape them): what it covers, one
    line per audited metric (its least and largest value on the training and test rows, and the
    member of each), and the best member within the spec's constraint."""
    if not doc:
        return []
    lines = [f"fairness over the set, {coverage_text(doc)}:"]
    for metric in doc.get("metrics") or []:
        said = []
        for part in PARTS:
            figures = (doc.get(part) or {}).get(metric)
            if figures is None:
                continue
            if figures.get("min") is None:
                said.append(f"{part} undefined for every member")
                continue
            text = (
                f"{part} {_figure(figures['min'])} (member {figures['min_rank']}) to "
                f"{_figure(figures['max'])} (member {figures['max_rank']})"
            )
            if figures.get("undefined"):
                text += f", undefined for {figures['undefined']:,}"
            said.append(text)
        if said:
            lines.append(f"  {metric}: {'; '.join(said)}")
    limit = doc.get("constraint")
    if limit:
        wanted = f"{limit['metric']} <= {limit['at_most']:g} on the training rows"
        if limit.get("rank") is None:
            lines.append(f"no member scored meets the constraint {wanted}")
        else:
            lines.append(
                f"best member within the constraint {wanted}: member {limit['rank']} "
                f"(objective {limit['objective']:.6g}, {limit['metric']} {_figure(limit['value'])})"
            )
    lines.extend(doc.get("notes") or [])
    return lines
