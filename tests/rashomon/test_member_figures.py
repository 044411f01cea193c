"""Each kept member of a CORELS Rashomon set carries its own figures, recorded with the set: its
training and test metrics against scikit-learn on the member's own predictions (recomputed from its
rules), its fairness audit against fairlearn, and the range of every audited metric over the set
against a brute-force enumeration of every rule list within the threshold (exact only when the set
is complete and listed whole; over K of N members otherwise). Members kept as summaries have none."""

from __future__ import annotations

import itertools
from types import SimpleNamespace

import numpy as np
import pytest

from fairlearn_reference import fairlearn_reference

from glasswork import Problem
from glasswork.fairness.figures import METRICS
from glasswork.running.launch import Launch
from glasswork.plugins.corels import CorelsSpec
from glasswork.rashomon import RashomonMember, RashomonSet
from glasswork.rashomon.figures import coverage_text, fairness_range, range_lines
from glasswork.spec.models import FairnessConstraint

fairlearn_metrics = pytest.importorskip("fairlearn.metrics")
sk = pytest.importorskip("sklearn.metrics")

SIX = list(METRICS)
LAM = 0.02


def spec_for(epsilon: float, *, max_models: int = 1000, keep: str = "model") -> CorelsSpec:
    return CorelsSpec.model_validate(
        {
            "name": "figures",
            "data": {"source": "sklearn:breast_cancer", "audit_only": ["group"]},
            "solver": "corels",
            "store": {"enabled": False},
            "objective": {"regularization": LAM},
            "constraints": {"min_support": 0.0, "negations": False, "max_card": 1, "max_prefix_length": 3},
            "rashomon": {"epsilon": epsilon, "max_models": max_models, "keep": keep},
            "fairness": {"protected": {"column": "group", "value": "b"}, "metrics": SIX},
        }
    )


def table(seed: int, n: int = 90, n_test: int = 50, m: int = 4) -> Problem:
    """A small table of our own: ``m`` 0/1 features, a label that leans on the first two, and an
    audit-only ``group`` (``a``/``b``) that leans on the label, for training and test rows."""
    rng = np.random.default_rng(seed)

    def rows(k: int) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
        X = rng.integers(0, 2, (k, m)).astype(np.uint8)
        y = ((X[:, 0] + X[:, 1] + rng.normal(0, 0.8, k)) > 1.2).astype(np.int64)
        group = np.where(rng.random(k) < 0.3 + 0.3 * y, "b", "a").astype(object)
        return X, y, group

    X, y, group = rows(n)
    X_test, y_test, group_test = rows(n_test)
    return Problem(
        name="figures",
        X=X,
        y=y,
        feature_names=[f"f{j}" for j in range(m)],
        task="binary",
        classes=np.array(["no", "yes"]),
        X_test=X_test,
        y_test=y_test,
        audit={"group": group},
        audit_test={"group": group_test},
    )


def rule_predictions(model, X: np.ndarray) -> np.ndarray:
    """A rule list's predictions from its rules' own structure: the first rule that matches."""
    pred = np.full(X.shape[0], model.default)
    left = np.ones(X.shape[0], dtype=bool)
    for rule in model.rules:
        hit = left & np.all([X[:, j] == v for j, v in rule.items], axis=0)
        pred[hit] = rule.prediction
        left &= ~hit
    return pred


def fairlearn_figures(y: np.ndarray, pred: np.ndarray, protected: np.ndarray) -> dict[str, float | None]:
    """The six metrics from fairlearn's per-group rates (``None`` where a rate has no row)."""
    return fairlearn_reference(y, pred, protected, np.ones(y.size))


def close(a: float | None, b: float | None) -> bool:
    return (a is None and b is None) or (a is not None and b is not None and a == pytest.approx(b, abs=1e-12))


def test_each_member_carries_its_own_metrics_and_audit(tmp_path) -> None:
    problem = table(3)
    outcome = Launch(spec_for(0.6), problem=problem, no_store=True).run()
    rset = outcome.result.rashomon
    assert rset is not None and rset.complete and rset.kept == rset.count >= 5
    parts = {
        "train": (problem.X, problem.y, problem.audit["group"] == "b"),
        "test": (problem.X_test, problem.y_test, problem.audit_test["group"] == "b"),
    }
    for member in rset.members:
        assert member.metrics is not None and member.fairness is not None
        for part, (X, y, protected) in parts.items():
            pred = rule_predictions(member.model, X)
            assert np.array_equal(np.asarray(member.model.predict(X)), pred)
            proba = np.asarray(member.model.predict_proba(X))
            assert member.metrics[f"{part}_accuracy"] == pytest.approx(sk.accuracy_score(y, pred), abs=1e-12)
            assert member.metrics[f"{part}_auc"] == pytest.approx(sk.roc_auc_score(y, proba[:, 1]), abs=1e-12)
            assert member.metrics[f"{part}_log_loss"] == pytest.approx(sk.log_loss(y, proba, labels=[0, 1]), abs=1e-9)
            assert member.metrics[f"{part}_brier"] == pytest.approx(sk.brier_score_loss(y, proba[:, 1]), abs=1e-12)
            expected = fairlearn_figures(y, pred, protected)
            assert set(member.fairness[part]) == set(SIX)
            for metric in SIX:
                assert close(member.fairness[part][metric], expected[metric]), (part, metric)
    # the optimum's figures are the run's own, by the same functions
    best = rset.members[0]
    assert best.metrics["test_accuracy"] == pytest.approx(outcome.result.metrics["test_accuracy"])
    document = outcome.to_dict()["rashomon"]
    assert document["models"][0]["metrics"] == pytest.approx(best.metrics)
    assert document["models"][0]["fairness"]["train"]["statistical_parity"] == pytest.approx(
        best.fairness["train"]["statistical_parity"]
    )
    assert document["fairness"]["exact"] is True


def brute_force_set(problem: Problem, threshold: float) -> tuple[list[tuple[float, tuple[int, ...]]], bool]:
    """Every rule list (at most 3 rules of one feature = 1 each, none capturing nothing new, each
    rule and the default predicting its captured rows' majority) within ``threshold``, and
    whether any of them had a tied majority (a seed where CORELS' tie break could differ)."""
    X, y = problem.X, problem.y
    n, m = X.shape
    found, tie = [], False
    for k in range(4):
        for order in itertools.permutations(range(m), k):
            left = np.ones(n, dtype=bool)
            err, ok, labels = 0, True, []
            for j in order:
                cap = left & (X[:, j] == 1)
                if not cap.any():
                    ok = False
                    break
                ones = int(y[cap].sum())
                tie |= 2 * ones == int(cap.sum())
                labels.append(int(2 * ones > cap.sum()))
                err += min(ones, int(cap.sum()) - ones)
                left &= ~cap
            if not ok:
                continue
            ones = int(y[left].sum())
            err += min(ones, int(left.sum()) - ones)
            objective = err / n + LAM * k
            if objective <= threshold + 1e-9:
                tie |= 2 * ones == int(left.sum())
                found.append((objective, order))
    return sorted(found), tie


def list_predictions(order: tuple[int, ...], problem: Problem, X: np.ndarray) -> np.ndarray:
    """A brute-force list's predictions on ``X``: its labels fitted on the training rows."""
    left_train = np.ones(problem.n_samples, dtype=bool)
    left = np.ones(X.shape[0], dtype=bool)
    pred = np.zeros(X.shape[0], dtype=np.int64)
    for j in order:
        cap = left_train & (problem.X[:, j] == 1)
        label = int(2 * problem.y[cap].sum() > cap.sum())
        hit = left & (X[:, j] == 1)
        pred[hit] = label
        left_train &= ~cap
        left &= ~hit
    pred[left] = int(2 * problem.y[left_train].sum() > left_train.sum())
    return pred


@pytest.mark.parametrize("seed", [0, 1, 2])
def test_the_fairness_range_is_the_brute_force_sets(seed: int) -> None:
    problem = next(p for s in range(seed * 50, seed * 50 + 50) if not brute_force_set(p := table(s), 10.0)[1])
    outcome = Launch(spec_for(0.5), problem=problem, no_store=True).run()
    rset = outcome.result.rashomon
    assert rset is not None and rset.complete
    lists, tie = brute_force_set(problem, rset.threshold)
    assert not tie and rset.count == len(lists)
    doc = rset.fairness
    assert doc is not None and doc["exact"] is True and doc["members"] == doc["count"] == len(lists)
    assert coverage_text(doc) == f"exact over all {len(lists):,} members of the complete set"
    parts = {
        "train": (problem.X, problem.y, problem.audit["group"] == "b"),
        "test": (problem.X_test, problem.y_test, problem.audit_test["group"] == "b"),
    }
    for part, (X, y, protected) in parts.items():
        figures = [fairlearn_figures(y, list_predictions(order, problem, X), protected) for _, order in lists]
        for metric in SIX:
            defined = [f[metric] for f in figures if f[metric] is not None]
            said = doc[part][metric]
            assert said["undefined"] == len(figures) - len(defined)
            if defined:
                assert said["min"] == pytest.approx(min(defined), abs=1e-12)
                assert said["max"] == pytest.approx(max(defined), abs=1e-12)
                low = rset.members[said["min_rank"] - 1].fairness[part][metric]
                assert low == pytest.approx(min(defined), abs=1e-12)  # the member named holds the end
            else:
                assert said["min"] is None and said["max"] is None

    # fewer members kept than counted: the range covers those, never called exact
    capped = Launch(spec_for(0.5, max_models=2), problem=problem, no_store=True).run().result.rashomon
    assert capped is not None and capped.kept == 2 < capped.count
    doc = capped.fairness
    assert doc["exact"] is False and doc["members"] == 2 and doc["count"] == len(lists)
    assert coverage_text(doc).startswith(f"covers 2 of {len(lists):,} members, not exact")
    assert "exact over all" not in "\n".join(range_lines(doc))
    ends = [m.fairness["train"]["statistical_parity"] for m in capped.members]
    assert doc["train"]["statistical_parity"]["min"] == pytest.approx(min(ends))


def test_members_kept_as_summaries_have_no_figures() -> None:
    outcome = Launch(spec_for(0.5, keep="summary"), problem=table(3), no_store=True).run()
    rset = outcome.result.rashomon
    assert rset is not None and rset.members and all(m.model is None for m in rset.members)
    assert all(m.metrics is None and m.fairness is None for m in rset.members)
    assert all("metrics" not in d and "fairness" not in d for d in outcome.to_dict()["rashomon"]["models"])
    doc = rset.fairness
    assert doc["members"] == 0 and doc["exact"] is False and "train" not in doc
    assert coverage_text(doc).startswith(f"covers 0 of {rset.count:,}")
    assert doc["notes"] == [
        f"{rset.kept:,} member(s) kept as summaries (rashomon.keep: summary) have no model, so no figures"
    ]


def member(objective: float, train: float | None, test: float | None = None) -> RashomonMember:
    return RashomonMember(
        objective,
        (),
        "f" * 16,
        metrics={"train_accuracy": 1 - objective},
        fairness={"train": {"statistical_parity": train}, "test": {"statistical_parity": test}},
    )


def test_the_best_member_within_the_constraint_and_an_undefined_figure() -> None:
    rset = RashomonSet(
        threshold=0.5,
        optimum=0.1,
        count=4,
        complete=True,
        members=[member(0.1, 0.3, 0.2), member(0.2, None, 0.1), member(0.3, 0.05, 0.4), member(0.4, 0.01, None)],
    )
    spec = SimpleNamespace(
        fairness=SimpleNamespace(metrics=["statistical_parity"]),
        constraints=SimpleNamespace(fairness=FairnessConstraint(metric="statistical_parity", at_most=0.05)),
    )
    doc = fairness_range(rset, spec)  # type: ignore[arg-type]
    assert doc["exact"] is True
    assert doc["train"]["statistical_parity"] == {"min": 0.01, "max": 0.3, "min_rank": 4, "max_rank": 1, "undefined": 1}
    assert doc["test"]["statistical_parity"]["undefined"] == 1
    # member 2's figure is undefined: it does not meet the limit; member 3 is exactly at it
    assert doc["constraint"] == {
        "metric": "statistical_parity",
        "at_most": 0.05,
        "rank": 3,
        "objective": 0.3,
        "value": 0.05,
    }
    lines = range_lines(doc)
    assert "best member within the constraint statistical_parity <= 0.05 on the training rows: member 3" in lines[-1]
    assert "undefined for 1" in lines[1]
    spec.constraints.fairness = FairnessConstraint(metric="statistical_parity", at_most=0.001)
    assert fairness_range(rset, spec)["constraint"]["rank"] is None  # type: ignore[arg-type]
