"""The accuracy-fairness frontier (``constraints.fairness.frontier``), walked by the core through
the toy solver's constrained solve, against the exact Pareto front found by brute force over the
toy's whole model class on small random data sets."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any, Literal

import numpy as np
import pytest

from glasswork.fairness import audit
from glasswork.frontier import STATS_KEY, next_limit
from glasswork.running.launch import Launch
from glasswork.contract.result import Status
from glasswork.spec.document import SpecError
from glasswork.spec.load import validate_spec

GROUP = "p <b>&</b>"


def write_data(folder: Path, seed: int, rows: int = 80) -> None:
    rng = np.random.default_rng(seed)
    features = rng.integers(0, 2, (rows, 6))
    group = np.where(rng.random(rows) < 0.45, GROUP, "r")
    # the label leans on the group and on the features, so fairness costs accuracy
    y = (features[:, 0] ^ (rng.random(rows) < 0.25)) | ((group == GROUP) & (rng.random(rows) < 0.3))
    # the other features each lean on the group a little: fairer stumps cost accuracy in steps
    for j in range(1, 6):
        features[:, j] |= (group == GROUP) & (rng.random(rows) < 0.1 * j)
    lines = ["a,b,c,d,e,f,grp,label"] + [
        ",".join(map(str, f)) + f',"{g}",{int(t)}' for f, g, t in zip(features, group, y.astype(int))
    ]
    (folder / "d.csv").write_text("\n".join(lines) + "\n", encoding="utf-8")


def document(folder: Path, metric: str, at_most: float = 1.0, frontier: str = "{}", **extra: Any) -> dict[str, Any]:
    doc: dict[str, Any] = {
        "name": "front",
        "solver": "toy",
        "data": {"source": str(folder / "d.csv"), "target": "label", "audit_only": ["grp"]},
        "objective": {"regularization": 0.01},
        "fairness": {"protected": {"column": "grp", "value": GROUP}, "metrics": [metric]},
        "constraints": {"fairness": {"metric": metric, "at_most": at_most, "frontier": json.loads(frontier)}},
    }
    doc.update(extra)
    return doc


def run(doc: dict[str, Any], registry: Any):
    spec = validate_spec(doc, registry)
    return Launch(spec, no_store=True, registry=registry).run(), spec


def brute_front(spec: Any, problem: Any, at_most: float) -> list[tuple[float, float]]:
    """The exact Pareto front (objective, figure) of the toy's class within ``at_most``: every
    model's pair, and those no other model beats on one without losing on the other."""
    import toy_plugin

    pairs = []
    for objective, model in toy_plugin.every_stump(problem, spec.objective.regularization):
        figure = audit.unfairness(spec, problem, np.asarray(model.predict(problem.X)))
        if figure is not None and figure <= at_most + 1e-12:
            pairs.append((objective, figure))
    front = []
    for objective, figure in sorted(pairs):
        if not front or figure < front[-1][1] - 1e-12:
            if front and abs(front[-1][0] - objective) <= 1e-12:
                front[-1] = (objective, figure)  # a fairer model with the same objective
            else:
                front.append((objective, figure))
    return front


@pytest.mark.parametrize("metric", ["statistical_parity", "predictive_parity", "equal_opportunity", "equalized_odds"])
@pytest.mark.parametrize("seed", range(8))
def test_the_walk_is_the_exact_front(tmp_path, toy_registry, metric, seed):
    write_data(tmp_path, seed)
    outcome, spec = run(document(tmp_path, metric), toy_registry)
    frontier = outcome.result.stats[STATS_KEY]
    expected = brute_front(spec, outcome.problem, 1.0)
    found = [
        (p["objective"], p["unfairness"]) for p in frontier["points"] if p["model"] is not None and not p["dominated"]
    ]
    assert found == pytest.approx(expected, abs=1e-12)
    assert frontier["end"] == "fairest" and frontier["complete"]
    assert all(p["status"] in ("optimal", "infeasible") for p in frontier["points"])
    # each point's limit is strictly below the last point's figure; its figure is within its limit
    for before, after in zip(frontier["points"], frontier["points"][1:]):
        assert after["limit"] == next_limit(before["unfairness"], 0.0)
    for point in frontier["points"]:
        if point["model"] is not None:
            assert point["unfairness"] <= point["limit"] + 1e-12
    # the run's model and certificate are point 1's, the best within at_most
    first = frontier["points"][0]
    assert outcome.result.certificate.objective == first["objective"]
    assert outcome.status is Status.OPTIMAL and outcome.result.model.to_dict() == first["model"]


def test_a_walk_ending_infeasible_lists_the_proof(tmp_path, toy_registry):
    write_data(tmp_path, 1)
    outcome, _ = run(document(tmp_path, "predictive_parity"), toy_registry)
    points = outcome.result.stats[STATS_KEY]["points"]
    assert points[-1]["status"] == "infeasible" and points[-1]["model"] is None and points[-1]["objective"] is None


def test_the_cap_and_min_step(tmp_path, toy_registry):
    write_data(tmp_path, 0)
    whole, _ = run(document(tmp_path, "statistical_parity"), toy_registry)
    assert len(whole.result.stats[STATS_KEY]["points"]) >= 3  # the premise: a front of several points
    outcome, _ = run(document(tmp_path, "statistical_parity", frontier='{"points": 1}'), toy_registry)
    frontier = outcome.result.stats[STATS_KEY]
    assert len(frontier["points"]) == 1 and frontier["end"] == "cap" and not frontier["complete"]
    assert outcome.status is Status.OPTIMAL  # the run's own point is proven; the front is not complete
    coarse, _ = run(document(tmp_path, "statistical_parity", frontier='{"min_step": 0.1}'), toy_registry)
    points = [p for p in coarse.result.stats[STATS_KEY]["points"] if p["model"] is not None]
    for before, after in zip(points, points[1:]):
        assert after["unfairness"] <= before["unfairness"] - 0.1 + 1e-12
    from glasswork.frontier import end_words

    assert "no model is 0.1 fairer than the last one" in end_words(coarse.result.stats[STATS_KEY])


def test_a_walk_cut_short_by_a_limit_says_so(tmp_path, toy_registry):
    write_data(tmp_path, 3)
    doc = document(tmp_path, "statistical_parity", limits={"nodes": 1})
    outcome, _ = run(doc, toy_registry)
    frontier = outcome.result.stats[STATS_KEY]
    assert frontier["end"] == "stopped_nodes" and not frontier["complete"] and len(frontier["points"]) == 1
    assert outcome.status is Status.STOPPED_NODES and outcome.result.model is not None


def test_an_infeasible_first_point_is_an_infeasible_run(tmp_path, toy_registry):
    write_data(tmp_path, 1)
    outcome, _ = run(document(tmp_path, "predictive_parity", at_most=0.0), toy_registry)
    assert outcome.status is Status.INFEASIBLE and outcome.result.model is None
    assert [p["status"] for p in outcome.result.stats[STATS_KEY]["points"]] == ["infeasible"]


def test_a_point_that_breaks_its_limit_is_the_plugins_fault(tmp_path, toy_registry):
    from glasswork.running.runner import SolverFailure

    write_data(tmp_path, 0)
    doc = document(tmp_path, "statistical_parity", at_most=0.0, search={"behaviour": "unfair"})
    with pytest.raises(SolverFailure, match="statistical_parity is .* held to at most 0"):
        run(doc, toy_registry)


def test_a_solver_that_does_not_offer_the_frontier_is_refused(tmp_path):
    from pydantic import Field

    from glasswork.testing.contract import _RegistryOf
    import toy_plugin

    class PlainSpec(toy_plugin.ToySpec):
        solver: Literal["plain-toy"]  # type: ignore[assignment]
        constraints: toy_plugin.ToyConstraints = Field(default_factory=toy_plugin.ToyConstraints)

    class PlainToy(toy_plugin.ToySolver):
        name = "plain-toy"
        spec_model = PlainSpec
        supports_fairness_frontier = False

    registry = _RegistryOf(PlainToy)  # the contract suite's registry of one solver class
    write_data(tmp_path, 0)
    doc = {**document(tmp_path, "statistical_parity"), "solver": "plain-toy"}
    with pytest.raises(SpecError) as caught:
        validate_spec(doc, registry)
    assert "constraints.fairness.frontier" in str(caught.value) and "does not walk" in str(caught.value)
