"""The plugin through the runner: the solver contract, spec validation, constraints by name."""

from __future__ import annotations

import json
import os
import tempfile
from pathlib import Path

import numpy as np
import pytest
from glasswork import DataError, Problem, SpecError, Status
from glasswork.contract.events import CollectingSink
from glasswork.hooks.registry import get_registry
from glasswork.running.launch import Launch
from glasswork.spec.load import load_spec, validate_spec
from glasswork.testing import SolverContract
from fasterrisk_data import fair_data, fair_spec
from glasswork.plugins.fasterrisk import plugin as fasterrisk_plugin
from glasswork.contract.events import CollectingSink
from glasswork.hooks.registry import get_registry
from glasswork.plugins.fasterrisk import FasterRiskSolver, ScoreCard
from glasswork.plugins.fasterrisk import plugin as fasterrisk_plugin
from glasswork.plugins.fasterrisk.solver import constraints_from_spec, row_weights
from glasswork.plugins.fasterrisk.spec import FasterRiskSpec
from glasswork.running.launch import Launch
from glasswork.spec.load import load_spec, validate_spec
from glasswork.testing import SolverContract

SPECS = Path(__file__).resolve().parents[3] / "specs"


class TestFasterRiskContract(SolverContract):
    solver_class = FasterRiskSolver
    plugin = fasterrisk_plugin

    def spec_document(self) -> dict:
        return {
            "name": "contract",
            "solver": "fasterrisk",
            "data": {"source": "sklearn:breast_cancer", "binarize": {"thresholds": 2}},
            "constraints": {"sparsity": 3},
            "search": {"certify_time": 1.0},  # the bound does not close here: keep the runs short
        }

    def constrained_spec_document(self) -> dict:
        return self._fair("statistical_parity", 0.05)

    def infeasible_spec_document(self) -> dict:
        return self._fair("predictive_parity", 0.0)  # the protected rows are all positive

    @staticmethod
    def _fair(metric: str, at_most: float) -> dict:
        """The exact policy on a small table with an audit-only group (``fasterrisk_data.fair_data``)."""
        folder = Path(tempfile.gettempdir()) / f"glasswork-fasterrisk-fair-{os.getpid()}"
        folder.mkdir(exist_ok=True)
        return fair_spec(fair_data(folder), metric, at_most)

    def rashomon_spec_document(self) -> dict:
        """The exact policy (it enumerates; the beam policy's pool is a sample), one feature per
        card so the certified search and the enumeration take a second or two."""
        document = self.spec_document()
        document["constraints"] = {"sparsity": 1, "coefficient_bounds": [-3, 3]}
        document["search"] = {**document["search"], "policy": "exact"}
        return {**document, "rashomon": {"epsilon": 0.05, "max_models": 3}}


def synthetic_problem(n=500, p=20, seed=0) -> Problem:
    rng = np.random.default_rng(seed)
    X = rng.integers(0, 2, (n, p)).astype(float)
    logit = 2 * X[:, 0] - 1.5 * X[:, 5] + X[:, 11] - 0.4
    y = (rng.random(n) < 1 / (1 + np.exp(-logit))).astype(np.int64)
    names = [f"x{j // 4}<={j % 4}" for j in range(p)]
    return Problem(
        name="synthetic",
        X=X,
        y=y,
        feature_names=names,
        task="binary",
        classes=np.array(["no", "yes"], dtype=object),
        X_test=X[:100],
        y_test=y[:100],
    )


def spec(**sections) -> FasterRiskSpec:
    return FasterRiskSpec.model_validate(
        {"name": "t", "solver": "fasterrisk", "data": {"source": "mem", "target": "y"}, **sections}
    )


def test_registered_as_a_builtin():
    assert get_registry(refresh=True).solvers["fasterrisk"] is FasterRiskSolver


def test_progress_pool_and_calibration_through_the_runner():
    sink = CollectingSink()
    outcome = Launch(spec(constraints={"sparsity": 3}), no_store=True, problem=synthetic_problem()).run([sink])
    result = outcome.result
    assert isinstance(result.model, ScoreCard)
    assert result.certificate.status is Status.HEURISTIC
    assert result.certificate.objective == pytest.approx(result.model.loss)
    counters = [e.counters for e in sink.events if e.kind == "progress"]
    assert any("support_size" in c and "best_loss_by_size" in c for c in counters)
    assert any("pool_size" in c for c in counters) and any("rounded" in c for c in counters)
    assert any(e.kind == "incumbent" for e in sink.events)
    pool = result.stats["pool"]
    assert pool[0]["card"] == result.model.to_dict()
    for key in ("auc", "accuracy", "log_loss", "brier"):
        assert pool[0]["metrics"][f"train_{key}"] == pytest.approx(result.metrics[f"train_{key}"])
        assert pool[0]["metrics"][f"test_{key}"] == pytest.approx(result.metrics[f"test_{key}"])
    assert pool[0]["reliability"]["test"] == result.stats["reliability"]["test"]
    assert all(isinstance(row["points"], str) for row in pool)
    for part in ("train", "test"):
        table = result.stats["reliability"][part]
        assert sum(row["count"] for row in table) == (500 if part == "train" else 100)
        assert 0 <= result.metrics[f"{part}_ece"] <= 1
    assert "train_brier" in result.metrics and "test_auc" in result.metrics
    json.dumps(outcome.to_dict(), allow_nan=False)


def test_time_limit_stops_with_a_card():
    problem = synthetic_problem(n=3000, p=400, seed=1)
    outcome = Launch(spec(constraints={"sparsity": 10}, limits={"time": 0.05}), no_store=True, problem=problem).run()
    assert outcome.result.certificate.status is Status.STOPPED_TIME
    assert isinstance(outcome.result.model, ScoreCard)


def test_constraints_resolve_names_and_patterns():
    names = synthetic_problem().feature_names
    c = spec(
        constraints={
            "sparsity": 4,
            "groups": ["x0<=*", ["x1<=0", "x1<=1"]],
            "include": ["x2<=3"],
            "exclude": ["x4<=*"],
            "coefficient_bounds": {"x3<=*": [0, 3]},
        }
    ).constraints
    cons = constraints_from_spec(c, names)
    assert list(cons.group_of[:4]) == [0, 0, 0, 0] and list(cons.group_of[4:7]) == [1, 1, -1]
    assert cons.include == [11] and cons.exclude == [16, 17, 18, 19]
    assert list(cons.lower[12:16]) == [0] * 4 and list(cons.upper[12:16]) == [3] * 4
    assert cons.lower[0] == -5 and cons.upper[0] == 5
    with pytest.raises(DataError, match="no feature matches"):
        constraints_from_spec(spec(constraints={"exclude": ["nope"]}).constraints, names)
    with pytest.raises(DataError, match="pairs for 20 features"):
        constraints_from_spec(spec(constraints={"coefficient_bounds": [[-1, 1]] * 3}).constraints, names)


def test_constraints_are_respected_in_the_result():
    problem = synthetic_problem()
    constrained = spec(
        constraints={
            "sparsity": 3,
            "groups": ["x0<=*", "x1<=*", "x2<=*"],
            "exclude": ["x2<=3"],
            "coefficient_bounds": [-2, 2],
        }
    )
    result = Launch(constrained, no_store=True, problem=problem).run().result
    for row in result.stats["pool"]:
        card = row["card"]
        groups = [f.split("<=")[0] for f in card["features"]]
        assert len(groups) == len(set(groups))
        assert "x2<=3" not in card["features"]
        assert all(-2 <= p <= 2 for p in card["points"])


def test_class_weights():
    problem = synthetic_problem()
    w = row_weights(problem, spec(objective={"class_weight": "balanced"}).objective)
    counts = np.bincount(problem.y)
    assert w[problem.y == 0][0] * counts[0] == pytest.approx(w[problem.y == 1][0] * counts[1])
    w = row_weights(problem, spec(objective={"class_weight": {"yes": 3.0}}).objective)
    assert set(np.unique(w)) == {1.0, 3.0}
    with pytest.raises(DataError):
        row_weights(problem, spec(objective={"class_weight": {"maybe": 3.0}}).objective)
    problem.classes = np.array([-1, 1], dtype=object)  # numeric labels, numeric keys (YAML ints)
    w = row_weights(problem, spec(objective={"class_weight": {1: 2.0, -1: 0.5}}).objective)
    assert set(np.unique(w)) == {0.5, 2.0}


def test_training_rows_of_one_class_are_a_data_error_not_a_solver_failure():
    problem = synthetic_problem()
    problem.y = np.ones_like(problem.y)
    with pytest.raises(DataError, match="class 'no' has none"):
        FasterRiskSolver(spec()).check(problem)
    problem = synthetic_problem()
    problem.sample_weight = problem.y.astype(float)  # every 'no' row weighted away
    with pytest.raises(DataError, match="class 'no' has none"):
        FasterRiskSolver(spec()).check(problem)


@pytest.mark.parametrize(
    "sections,fragment",
    [
        ({"constraints": {"coefficient_bounds": [1, 5]}}, "lo <= 0 <= hi"),
        ({"constraints": {"sparsity": 2, "include": ["a", "b", "c"]}}, "exceed sparsity"),
        ({"search": {"policy": "dfs"}}, "search.policy"),
        ({"search": {"defaults": "code"}}, "search.defaults"),
        ({"search": {"beam_width": 0}}, "search.beam_width"),
    ],
)
def test_spec_errors(sections, fragment):
    document = {"name": "t", "solver": "fasterrisk", "data": {"source": "x.csv", "target": "y"}, **sections}
    with pytest.raises(SpecError) as err:
        validate_spec(document, get_registry())
    assert fragment in str(err.value)


@pytest.mark.parametrize("name", ["fasterrisk_adult.yaml", "fasterrisk_breast_cancer.yaml"])
def test_example_specs_validate(name):
    loaded = load_spec(SPECS / name)
    assert loaded.spec.solver == "fasterrisk"


def test_breast_cancer_example_runs():
    outcome = Launch(load_spec(SPECS / "fasterrisk_breast_cancer.yaml"), no_store=True).run()
    assert outcome.result.metrics["test_auc"] > 0.9
    assert isinstance(outcome.result.model, ScoreCard)
