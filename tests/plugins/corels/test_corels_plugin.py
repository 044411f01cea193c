"""The corels plugin end to end: spec, solver, RuleList, limits, progress, runner integration."""

from __future__ import annotations

import json

import numpy as np
import pytest
from corels_reference import COMPAS, SHARED, brute_force
from glasswork import Limits, Problem, SolveContext, Status
from glasswork.hooks.registry import get_registry
from glasswork.plugins.corels import CorelsSolver, CorelsSpec, RuleList
from glasswork.plugins.corels import plugin as corels_plugin
from glasswork.running.launch import Launch
from glasswork.spec.document import SpecError
from glasswork.spec.load import validate_spec
from glasswork.testing import SolverContract


def _spec(**sections) -> CorelsSpec:
    doc = {"name": "t", "data": {"source": "sklearn:breast_cancer"}, "solver": "corels", "store": {"enabled": False}}
    doc.update(sections)
    return CorelsSpec.model_validate(doc)


def _problem(X, y, names=None, classes=None, **kw) -> Problem:
    X = np.asarray(X, dtype=np.uint8)
    names = names or [f"f{j}" for j in range(X.shape[1])]
    classes = np.asarray(
        classes
        if classes is not None
        else ["no", "yes"][: int(y.max()) + 1]
        if int(y.max()) < 2
        else [f"c{k}" for k in range(int(y.max()) + 1)]
    )
    task = "binary" if len(classes) == 2 else "multiclass"
    return Problem(name="t", X=X, y=np.asarray(y, np.int64), feature_names=names, task=task, classes=classes, **kw)


def _solve(problem, limits=None, events=None, **sections):
    ctx = SolveContext(limits or Limits(), (events.append if events is not None else None))
    return CorelsSolver(_spec(**sections)).solve(problem, ctx)


def _random(seed=0, n=300, p=6):
    rng = np.random.default_rng(seed)
    X = (rng.random((n, p)) < 0.4).astype(np.uint8)
    y = ((X[:, 0] & X[:, 1]) | X[:, 2]).astype(np.int64) ^ (rng.random(n) < 0.15)
    return X, y.astype(np.int64)


def test_registered_with_tasks() -> None:
    reg = get_registry(refresh=True)
    assert reg.solvers["corels"] is CorelsSolver
    assert CorelsSolver.tasks == {"binary", "multiclass"}


def test_spec_validation_messages() -> None:
    reg = get_registry()
    base = {"name": "x", "data": {"source": "sklearn:breast_cancer"}, "solver": "corels"}
    with pytest.raises(SpecError, match="policy"):
        validate_spec({**base, "search": {"policy": "random"}}, reg)
    with pytest.raises(SpecError, match="ablation"):
        validate_spec({**base, "search": {"ablation": ["hierarchy"]}}, reg)
    with pytest.raises(SpecError, match="regularization"):
        validate_spec({**base, "objective": {"regularization": -1}}, reg)
    with pytest.raises(SpecError, match="max_prefix_length"):
        validate_spec({**base, "constraints": {"max_prefix_length": -2}}, reg)
    spec = validate_spec({**base, "search": {"symmetry_map": "captured", "ablation": ["lookahead"]}}, reg)
    assert spec.search.symmetry_map == "captured"


def test_search_switches_reach_the_search() -> None:
    """``ablation`` switches Theorem 18 off; the optimum is the same."""
    X, y = _random(5, n=400, p=8)
    X = np.column_stack([X, X[:, 0] & X[:, 3], X[:, 1] | X[:, 4], X[:, 2] & X[:, 5]])
    runs = {
        name: _solve(
            _problem(X, y),
            objective={"regularization": 0.005},
            search=search,
            constraints={"max_card": 1, "negations": False},
        )
        for name, search in {
            "default": {},
            "off": {"ablation": ["similar_support"]},
            "two-threads": {"threads": 2},
        }.items()
    }
    for res in runs.values():
        assert res.certificate.status == Status.OPTIMAL
        assert res.certificate.objective == pytest.approx(runs["off"].certificate.objective, abs=1e-12)
    assert runs["default"].stats["pruned_similar_support"] > 0
    assert runs["off"].stats["pruned_similar_support"] == 0
    assert runs["two-threads"].stats["pruned_similar_support"] > 0


def test_mined_rule_list_predicts_from_feature_columns() -> None:
    X, y = _random(1)
    problem = _problem(X, y)
    res = _solve(problem, objective={"regularization": 0.01}, constraints={"max_card": 2, "min_support": 0.01})
    assert res.certificate.status is Status.OPTIMAL
    model = res.model
    assert isinstance(model, RuleList)
    for rule in model.rules:
        assert all(0 <= j < X.shape[1] and v in (0, 1) for j, v in rule.items)
    pred = model.predict(X)
    # the certificate's objective is the model's own training objective
    lam = 0.01
    assert np.mean(pred != y) + lam * len(model.rules) == pytest.approx(res.certificate.objective)
    proba = model.predict_proba(X)
    assert proba.shape == (len(y), 2) and np.allclose(proba.sum(axis=1), 1)
    # counts per rule add up to the training set
    assert sum(r.captured for r in model.rules) + sum(model.default_counts) == len(y)


def test_optimum_matches_enumeration_over_mined_antecedents() -> None:
    from glasswork.data.rules import mine_antecedents

    X, y = _random(2, n=120, p=3)
    lam = 0.02
    ants = mine_antecedents(X, [f"f{j}" for j in range(3)], max_card=1, min_support=lam, negations=True)
    ref = brute_force(ants.matrix(), y, lam)
    res = _solve(_problem(X, y), objective={"regularization": lam}, constraints={"max_card": 1})
    assert res.certificate.objective == pytest.approx(ref[0], abs=1e-12)


def test_empty_prefix_predicts_the_default_label() -> None:
    """pycorels gets this wrong; an empty list must predict the majority everywhere."""
    rng = np.random.default_rng(4)
    X = (rng.random((100, 3)) < 0.5).astype(np.uint8)
    y = np.array([1] * 70 + [0] * 30)
    res = _solve(_problem(X, y), objective={"regularization": 0.5})
    model = res.model
    assert model.rules == [] and model.default == 1
    assert np.all(model.predict(X) == 1)
    assert np.allclose(model.predict_proba(X), [0.3, 0.7])
    assert model.to_text() == "({yes})"
    assert res.certificate.objective == pytest.approx(0.3)


def test_text_and_dict_round_trip() -> None:
    X, y = _random(5)
    res = _solve(_problem(X, y), objective={"regularization": 0.01})
    model = res.model
    text = model.to_text()
    assert text.startswith("if ({") and text.splitlines()[-1].startswith("else ({")
    doc = json.loads(json.dumps(model.to_dict()))
    again = RuleList.from_dict(doc)
    assert np.array_equal(again.predict(X), model.predict(X))
    assert again.to_text() == text
    assert model.size == len(model.rules) + 1


def test_node_limit_reports_a_gap() -> None:
    rng = np.random.default_rng(6)
    X = (rng.random((600, 10)) < 0.35).astype(np.uint8)
    y = (rng.random(600) < 0.45).astype(np.int64)
    opts = {"objective": {"regularization": 0.004}, "constraints": {"max_card": 1}}
    full = _solve(_problem(X, y), **opts)
    res = _solve(_problem(X, y), limits=Limits(nodes=200), **opts)
    assert res.certificate.status is Status.STOPPED_NODES
    assert res.certificate.lower_bound <= full.certificate.objective + 1e-12
    assert res.certificate.objective >= full.certificate.objective - 1e-12
    assert res.stats["nodes"] >= 200


def test_memory_limit_returns_the_incumbent_with_a_valid_bound() -> None:
    """A memory stop (limit below the process's resident size) keeps LB <= R* <= R^c."""
    # big enough that the search outlasts its first slice (the limits are checked between
    # slices), even with Theorem 18 and every core: about 0.6 M evaluations
    rng = np.random.default_rng(12)
    X = (rng.random((2000, 24)) < 0.35).astype(np.uint8)
    y = (((X[:, 0] & X[:, 1]) | X[:, 2]).astype(np.int64) ^ (rng.random(2000) < 0.3)).astype(np.int64)
    opts = {"objective": {"regularization": 0.002}, "constraints": {"max_card": 1}}
    full = _solve(_problem(X, y), **opts)
    assert full.certificate.status is Status.OPTIMAL
    res = _solve(_problem(X, y), limits=Limits(memory=1), **opts)
    assert res.certificate.status is Status.STOPPED_MEMORY
    assert res.certificate.lower_bound <= full.certificate.objective + 1e-12
    assert res.certificate.objective >= full.certificate.objective - 1e-12
    assert res.certificate.lower_bound < res.certificate.objective
    assert res.model is not None


def test_cancel_flag_stops_with_cancelled_status() -> None:
    X, y = _random(7, n=400, p=10)
    ctx = SolveContext(Limits())
    from glasswork.contract.solver import StopReason

    ctx.request_stop(StopReason.CANCEL)
    res = CorelsSolver(_spec(objective={"regularization": 0.001})).solve(_problem(X, y), ctx)
    assert res.certificate.status is Status.CANCELLED
    assert res.certificate.lower_bound <= res.certificate.objective


def test_progress_events_carry_the_search_figures() -> None:
    X, y = _random(8, n=400, p=8)
    events: list = []
    res = _solve(_problem(X, y), events=events, objective={"regularization": 0.005})
    progress = [e for e in events if e.kind == "progress"]
    assert progress, "at least the final progress event"
    last = progress[-1]
    for key in ("queue", "trie", "map", "log10_remaining", "queue_lengths"):
        assert key in last.counters
    assert last.objective == pytest.approx(res.certificate.objective)
    assert [e for e in events if e.kind == "incumbent"]


def test_multiclass_and_class_weights_match_enumeration() -> None:
    rng = np.random.default_rng(9)
    X = (rng.random((150, 4)) < 0.45).astype(np.uint8)
    y = (X[:, 0] + X[:, 1] * (rng.random(150) < 0.8)).astype(np.int64)
    res = _solve(
        _problem(X, y),
        objective={"regularization": 0.01},
        constraints={"max_card": 1, "negations": False, "min_support": 0.0},
    )
    assert res.model.task == "multiclass" and res.model.predict_proba(X).shape == (150, 3)
    assert res.certificate.objective == pytest.approx(brute_force(X, y, 0.01, 3)[0], abs=1e-12)
    Xb, yb = _random(10, n=150, p=4)
    w = [1.0, 3.0]
    res = _solve(
        _problem(Xb, yb),
        objective={"regularization": 0.01, "class_weight": {"yes": 3.0}},
        constraints={"max_card": 1, "negations": False, "min_support": 0.0},
    )
    assert res.certificate.objective == pytest.approx(brute_force(Xb, yb, 0.01, 2, np.array(w))[0], abs=1e-12)


def test_non_binary_features_need_binarize() -> None:
    from glasswork.data import DataError

    X = np.array([[0.5, 1.0], [2.0, 0.0], [1.0, 1.0]])
    problem = Problem(
        name="t", X=X, y=np.array([0, 1, 0]), feature_names=["a", "b"], task="binary", classes=np.array(["n", "y"])
    )
    with pytest.raises(DataError, match="binarize"):
        _solve(problem)


@pytest.mark.skipif(not COMPAS.with_suffix(".out").exists(), reason=f"no COMPAS files under {SHARED}")
def test_runner_on_compas_out_files(monkeypatch) -> None:
    monkeypatch.setenv("GLASSWORK_DATA", str(SHARED))
    spec = CorelsSpec.model_validate(
        {
            "name": "compas",
            "solver": "corels",
            "store": {"enabled": False},
            "data": {"source": "data:corels/compas_train.out", "test": "data:corels/compas_test.out"},
            "objective": {"regularization": 0.015},
        }
    )
    outcome = Launch(spec, no_store=True).run()
    res = outcome.result
    assert res.certificate.status is Status.OPTIMAL
    assert round(res.certificate.objective, 5) == 0.37797
    text = res.model.to_text()
    assert "{sex:Male,juvenile-crimes:>0}" in text and "{priors:>3}" in text
    assert text.splitlines()[-1] == "else ({recidivate-within-two-years:No})"
    assert "then ({recidivate-within-two-years:Yes})" in text
    assert 0.6 < res.metrics["test_accuracy"] < 0.75
    assert 0.6 < res.metrics["train_accuracy"] < 0.7


class TestCorelsContract(SolverContract):
    """The plugin contract, hooks included, on the built-in CORELS plugin."""

    solver_class = CorelsSolver
    plugin = corels_plugin

    def spec_document(self) -> dict:
        return {
            "name": "contract",
            "solver": "corels",
            "data": {"source": "sklearn:breast_cancer", "binarize": {"thresholds": 2}},
            "objective": {"regularization": 0.03},
            "constraints": {"max_card": 1, "negations": True},
            "search": {"policy": "lower_bound", "symmetry_map": "prefix"},
        }


@pytest.mark.parametrize("policy", ["bfs", "dfs", "curiosity", "lower_bound", "objective"])
def test_max_prefix_length_holds_on_every_policy_against_enumeration(policy: str) -> None:
    """constraints.max_prefix_length through the solver (issue 23, item 4): every queue policy
    returns a list no longer than the cap, whose objective is the enumerated optimum under it."""
    from glasswork.data.rules import mine_antecedents

    for seed in range(6):
        X, y = _random(10 + seed, n=150, p=4)
        lam = (0.0, 0.002, 0.01)[seed % 3]
        cap = seed % 3  # 0: the default rule alone
        ants = mine_antecedents(X, [f"f{j}" for j in range(4)], max_card=1, min_support=lam, negations=True)
        ref = brute_force(ants.matrix(), y, lam, max_len=cap)
        res = _solve(
            _problem(X, y),
            objective={"regularization": lam},
            search={"policy": policy},
            constraints={"max_card": 1, "max_prefix_length": cap},
        )
        assert res.certificate.status is Status.OPTIMAL
        assert len(res.model.rules) <= cap
        assert res.certificate.objective == pytest.approx(ref[0], abs=1e-12)
