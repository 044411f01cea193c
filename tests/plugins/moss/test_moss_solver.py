"""The moss solver end to end: the plugin contract, specs, policies, models and the frontier."""

from __future__ import annotations

import itertools

import numpy as np
import pytest
from glasswork.contract.result import Status
from glasswork.contract.solver import SolveContext
from glasswork.data import DataError, load_problem
from glasswork.hooks.registry import get_registry
from glasswork.plugins.moss import MossSolver
from glasswork.plugins.moss import plugin as moss_plugin
from glasswork.plugins.moss.mio import mosek_licence
from glasswork.running.launch import Launch
from glasswork.spec.load import validate_spec
from glasswork.testing import SolverContract
from paper_protocol import (
    cross_validate,
    dsc,
    empirical_stability,
    jaccard,
    ochiai,
    pog,
)


def document(**sections):
    doc = {
        "name": "moss-test",
        "solver": "moss",
        "data": {"source": "sklearn:diabetes", "split": {"kind": "holdout", "test_size": 0.25, "seed": 0}},
        "objective": {"gamma": 0.001, "candidates": {"trees": 60, "depth": 2, "seed": 0, "max_candidates": 80}},
        "constraints": {"max_rules": 4},
    }
    for key, value in sections.items():
        doc[key] = {**doc.get(key, {}), **value} if isinstance(value, dict) else value
    return doc


def solve(doc):
    spec = validate_spec(doc, get_registry())
    problem = load_problem(spec.data)
    return MossSolver(spec).solve(problem, SolveContext()), problem, spec


class TestMossContract(SolverContract):
    solver_class = MossSolver
    plugin = moss_plugin

    def spec_document(self):
        return document()

    def panels_spec_document(self):
        return document(constraints={"frontier": {"points": 4}})  # the panel draws the frontier

    def constrained_spec_document(self):
        return _fair_document("statistical_parity", 0.1, {"stability_rank": 3})

    def infeasible_spec_document(self):  # the most stable rule set alone, and no precision gap allowed
        return _fair_document("predictive_parity", 0.0, {"stability_rank": 1})


def _fair_document(metric, at_most, target):
    """A small binary table whose group column (audit-only) shifts a feature the label follows."""
    import os
    import tempfile
    from pathlib import Path

    import sklearn.ensemble  # noqa: F401  (the forest's import, cold on a busy machine, is not the stop's latency)

    path = Path(tempfile.gettempdir()) / f"glasswork-moss-fair-{os.getpid()}.csv"
    if not path.exists():
        rng = np.random.default_rng(5)
        group = np.where(rng.random(200) < 0.45, "p", "r")
        x1 = (rng.random(200) < np.where(group == "p", 0.75, 0.3)).astype(int)
        x2 = rng.integers(0, 2, 200)
        label = ((x1 + 0.6 * x2 + rng.normal(scale=0.5, size=200)) > 0.9).astype(int)
        rows = [f"{a},{b},{g},{y}" for a, b, g, y in zip(x1, x2, group, label)]
        path.write_text("x1,x2,grp,label\n" + "\n".join(rows) + "\n")
    return {
        "name": "moss-fair",
        "solver": "moss",
        "data": {"source": str(path), "target": "label", "positive": 1, "audit_only": ["grp"]},
        "objective": {"gamma": 0.1, "candidates": {"trees": 30, "depth": 2, "seed": 0, "max_candidates": 20}},
        "constraints": {"max_rules": 2, **target, "fairness": {"metric": metric, "at_most": at_most}},
        "fairness": {"protected": {"column": "grp", "value": "p"}, "metrics": [metric]},
    }


def test_default_is_the_third_grid_value_and_optimal():
    result, problem, _ = solve(document())
    assert result.certificate.status is Status.OPTIMAL
    assert result.stats["stability_rank"] == 3
    model = result.model
    assert 1 <= model.size <= 4
    assert model.h1 >= result.stats["epsilon"] - 1e-12
    pred = model.predict(problem.X)
    assert pred.shape == (problem.n_samples,) and np.isfinite(pred).all()
    text = model.to_text()
    assert "start at" in text and (" <= " in text or " > " in text)
    assert model.to_dict()["kind"] == "rule_set"


def test_ridge_refit_predicts_the_optimised_fit():
    result, problem, _ = solve(document(objective={"refit": "ridge"}))
    s = result.stats["y_scale"]
    fitted = result.model.predict(problem.X)
    r = problem.y / s - fitted / s  # the ridge residual of H2, in standardised units
    w = result.model.weights
    h2 = 0.5 * r @ r + 0.5 / result.stats["gamma"] * w @ w
    assert h2 == pytest.approx(result.certificate.objective, rel=1e-8)


def test_min_stability_above_eps_max_is_an_error():
    with pytest.raises(DataError, match="eps_max"):
        solve(document(constraints={"max_rules": 4, "min_stability": 50.0}))


def test_frontier_rows_certificates_and_choice():
    result, _, _ = solve(document(constraints={"max_rules": 4, "frontier": {"points": 6, "choose": 2}}))
    rows = result.stats["frontier"]
    assert len(rows) == 6 and rows[1]["chosen"]
    assert all(r["status"] == "optimal" and r["lower_bound"] <= r["h2"] + 1e-9 for r in rows)
    assert all(b["h2"] <= a["h2"] + 1e-9 for a, b in itertools.pairwise(rows))
    assert result.certificate.status is Status.OPTIMAL
    assert result.model.h2 == pytest.approx(rows[1]["h2"])


def test_frontier_epm_equals_naive():
    epm, _, _ = solve(document(constraints={"max_rules": 4, "frontier": {"points": 5}}))
    naive, _, _ = solve(document(constraints={"max_rules": 4, "frontier": {"points": 5}}, search={"epm": False}))
    np.testing.assert_allclose(
        [r["h2"] for r in epm.stats["frontier"]], [r["h2"] for r in naive.stats["frontier"]], rtol=1e-6
    )


def test_heuristic_policy_is_labelled_heuristic():
    result, _, _ = solve(document(search={"policy": "heuristic"}))
    assert result.certificate.status is Status.HEURISTIC
    assert result.certificate.lower_bound is None
    assert result.model.h1 >= result.stats["epsilon"] - 1e-12


def test_mio_policy_agrees_with_the_cutting_plane():
    doc = document(constraints={"max_rules": 2}, objective={"candidates": {"trees": 30, "max_candidates": 20}})
    cp, _, _ = solve(doc)
    mio, _, _ = solve({**doc, "search": {"policy": "mio", "backend": "scip", "formulation": "bigm"}})
    assert mio.certificate.status is Status.OPTIMAL
    assert mio.stats["backend_status"] in ("optimal", "gaplimit")  # SCIP's own word, kept with the run
    assert mio.certificate.objective == pytest.approx(cp.certificate.objective, rel=1e-4)


@pytest.mark.skipif(mosek_licence()[0], reason="a MOSEK licence is present, so there is no error to show")
def test_mio_asking_for_mosek_without_licence_says_how_to_fix_it():
    with pytest.raises(Exception, match="mosek.lic"):
        solve(document(search={"policy": "mio", "backend": "mosek"}))


def test_spec_rejects_two_targets_and_heuristic_frontier():
    with pytest.raises(Exception, match="only one"):
        validate_spec(document(constraints={"min_stability": 0.1, "frontier": {"points": 3}}), get_registry())
    with pytest.raises(Exception, match="heuristic"):
        validate_spec(document(constraints={"frontier": {"points": 3}}, search={"policy": "heuristic"}), get_registry())


def test_runner_prints_frontier_records():
    spec = validate_spec(document(constraints={"max_rules": 3, "frontier": {"points": 3}}), get_registry())
    outcome = Launch(spec, no_store=True).run()
    assert "test_r2" in outcome.result.metrics
    assert isinstance(outcome.result.stats["frontier"], list)


def test_similarity_measures():
    a = set(range(15))
    b = set(range(6)) | set(range(100, 109))  # 6 of 15 shared
    c = set(range(9)) | set(range(100, 106))  # 9 of 15 shared: DSC = 0.6
    assert dsc(a, a) == 1 and dsc({1}, {2}) == 0
    assert dsc(a, c) == pytest.approx(0.6)
    assert empirical_stability([a] * 10) == 1
    assert jaccard(a, b) <= dsc(a, b)
    assert ochiai(a, c) == pytest.approx(dsc(a, c))
    assert pog(a, c) == pytest.approx(9 / 15)


@pytest.mark.slow
def test_cross_validation_reports_r2_and_stability():
    spec = validate_spec(document(), get_registry())
    problem = load_problem(spec.data)
    cv = cross_validate(spec, problem, folds=3)
    out = cv.to_dict()
    assert len(out["test_r2"]) == 3 and 0 <= out["empirical_stability"] <= 1


def test_branch_and_bound_is_the_default_and_agrees_with_the_cutting_plane():
    bb, _, spec = solve(document())
    cp, _, _ = solve(document(search={"policy": "cutting_plane"}))
    assert spec.search.policy == "branch_and_bound" and bb.stats["policy"] == "branch_and_bound"
    assert "nodes" in bb.stats and "cuts" in cp.stats
    assert bb.certificate.status is cp.certificate.status is Status.OPTIMAL
    assert bb.certificate.objective == pytest.approx(cp.certificate.objective, rel=1e-6)
    assert bb.certificate.lower_bound <= bb.certificate.objective


def test_branch_and_bound_frontier_equals_the_cutting_plane_frontier():
    doc = document(constraints={"frontier": {"points": 5}})
    bb, _, _ = solve(doc)
    cp, _, _ = solve({**doc, "search": {"policy": "cutting_plane"}})
    h2 = [[row["h2"] for row in r.stats["frontier"]] for r in (bb, cp)]
    np.testing.assert_allclose(h2[0], h2[1], rtol=1e-6)
    assert all(row["status"] == "optimal" for row in bb.stats["frontier"])


def test_classification_defaults_to_the_cutting_plane_and_refuses_branch_and_bound():
    doc = {**document(), "data": {"source": "sklearn:breast_cancer"}}
    doc["objective"] = {"gamma": 0.01, "candidates": {"trees": 30, "depth": 2, "seed": 0, "max_candidates": 40}}
    result, _, _ = solve(doc)
    assert result.stats["policy"] == "cutting_plane"
    with pytest.raises(DataError, match="cutting plane only"):
        solve({**doc, "search": {"policy": "branch_and_bound"}})


def test_a_too_small_data_set_is_a_data_error_through_the_cli(tmp_path):
    """Six rows cannot carry the asked stability rank: exit 2 with the fix, not "solver failed"."""
    from click.testing import CliRunner
    from glasswork.cli import cli

    rng = np.random.default_rng(0)
    rows = ["a,b,y"] + [f"{rng.normal():.3f},{rng.normal():.3f},{rng.normal():.3f}" for _ in range(6)]
    (tmp_path / "six.csv").write_text("\n".join(rows) + "\n")
    (tmp_path / "six.yaml").write_text(
        "name: six rows\ndata: {source: six.csv, target: y}\nsolver: moss\n"
        "objective: {candidates: {trees: 20}}\nconstraints: {max_rules: 3, stability_rank: 40}\n"
    )
    result = CliRunner().invoke(cli, ["run", str(tmp_path / "six.yaml"), "--no-store", "-q"])
    assert result.exit_code == 2, result.output
    assert "stability_rank 40 exceeds" in result.output and "choose a rank from 1 to" in result.output
