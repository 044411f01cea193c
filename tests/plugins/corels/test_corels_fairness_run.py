"""``glasswork run`` with ``constraints.fairness`` on CORELS: the certified constrained optimum (the
brute-force one) whose audit meets the limit, a proven infeasible constraint as a run without a
model, and a constrained Rashomon set refused at validation. Hostile group names and values."""

from __future__ import annotations

from pathlib import Path

import numpy as np
import pytest
from corels_reference import fair_brute_force, rule_lists

from glasswork.running.launch import Launch
from glasswork.plugins.corels import plugin as corels_plugin
from glasswork.plugins.corels.solver import CorelsSolver
from glasswork.hooks.registry import Registry
from glasswork.contract.result import Status
from glasswork.spec.document import SpecError
from glasswork.testing import SolverContract

BUILTIN = Registry(entry_points=False, disabled=())
GROUP = "<b>[bold]g[/]'; DROP TABLE runs;--"
COLUMN = "race <script>"


def _spec(
    folder: Path, metric: str, at_most: float, extra: str = ""
) -> tuple[Path, np.ndarray, np.ndarray, np.ndarray]:
    rng = np.random.default_rng(3)
    n = 120
    X = rng.integers(0, 2, size=(n, 4))
    protected = rng.random(n) < 0.45
    y = ((X[:, 0] & X[:, 1]) | (protected & X[:, 2])) ^ (rng.random(n) < 0.1)
    group = np.where(protected, GROUP, "other")
    header = f'a,b,c,d,"{COLUMN}",label\n'
    body = "\n".join(
        f'{r[0]},{r[1]},{r[2]},{r[3]},"{g.replace(chr(34), chr(34) * 2)}",{v}' for r, g, v in zip(X, group, y)
    )
    (folder / "d.csv").write_text(header + body + "\n", encoding="utf-8")
    text = (
        "name: fair\ndata:\n  source: d.csv\n  target: label\n  positive: 1\n"
        f"  audit_only: ['{COLUMN}']\n  split: {{kind: none}}\n"
        "solver: corels\nobjective: {regularization: 0.01}\n"
        f"constraints: {{max_card: 1, negations: false, fairness: {{metric: {metric}, at_most: {at_most}}}}}\n"
        f"fairness:\n  protected: {{column: '{COLUMN}', value: \"{GROUP}\"}}\n" + extra
    )
    path = folder / "s.yaml"
    path.write_text(text, encoding="utf-8")
    return path, X.astype(np.uint8), y.astype(np.int64), protected


@pytest.mark.parametrize(
    "metric, at_most", [("statistical_parity", 0.05), ("equal_opportunity", 0.05), ("predictive_parity", 0.3)]
)
def test_run_certifies_the_constrained_optimum_and_its_audit_meets_it(
    tmp_path: Path, metric: str, at_most: float
) -> None:
    path, X, y, protected = _spec(tmp_path, metric, at_most)
    outcome = Launch.from_file(path, registry=BUILTIN, no_store=True).run()
    result = outcome.result
    ref = fair_brute_force(rule_lists(X, y, 0.01), y, metric, at_most, protected[None, :])
    assert ref is not None
    assert result.certificate.status is Status.OPTIMAL
    assert result.certificate.objective == pytest.approx(ref, abs=1e-9)
    doc = outcome.to_dict()
    assert doc["fairness"]["train"][metric] <= at_most + 1e-12
    assert GROUP not in result.model.to_text()


def test_an_infeasible_constraint_is_proven_and_has_no_model(tmp_path: Path) -> None:
    path, X, y, protected = _spec(tmp_path, "predictive_parity", 0.0)
    assert fair_brute_force(rule_lists(X, y, 0.01), y, "predictive_parity", 0.0, protected[None, :]) is None
    outcome = Launch.from_file(path, registry=BUILTIN, no_store=True).run()
    assert outcome.result.certificate.status is Status.INFEASIBLE
    assert outcome.result.model is None
    assert "infeasible" in (outcome.no_model or "")


def test_the_fairness_frontier_is_the_brute_force_pareto_front(tmp_path: Path) -> None:
    """constraints.fairness.frontier through CORELS: each optimal point is the best list within its
    limit (brute force), each figure meets it, and the walk ends proving nothing fairer exists."""
    path, X, y, protected = _spec(tmp_path, "statistical_parity", 0.5)
    path.write_text(
        path.read_text(encoding="utf-8").replace("at_most: 0.5}", "at_most: 0.5, frontier: {points: 40}}"),
        encoding="utf-8",
    )
    outcome = Launch.from_file(path, registry=BUILTIN, no_store=True).run()
    frontier = outcome.result.stats["fairness_frontier"]
    assert frontier["complete"], frontier["end"]
    lists = rule_lists(X, y, 0.01)
    solved = [p for p in frontier["points"] if p["status"] == "optimal"]
    assert len(solved) >= 2
    for point in solved:
        ref = fair_brute_force(lists, y, "statistical_parity", point["limit"], protected[None, :])
        assert point["objective"] == pytest.approx(ref, abs=1e-9)
        assert point["unfairness"] <= point["limit"] + 1e-12
    objectives = [p["objective"] for p in solved]
    assert objectives == sorted(objectives)  # fairer points never cost less


def test_a_constrained_rashomon_set_is_refused(tmp_path: Path) -> None:
    path, *_ = _spec(tmp_path, "statistical_parity", 0.05, extra="rashomon: {epsilon: 0.01}\n")
    with pytest.raises(SpecError, match="constraints.fairness"):
        Launch.from_file(path, registry=BUILTIN, no_store=True)


def _contract_data() -> str:
    """The run tests' data, written once for the contract class (its documents name a path)."""
    import tempfile

    folder = Path(tempfile.mkdtemp(prefix="glasswork-corels-fair-"))
    _spec(folder, "statistical_parity", 0.05)
    return str(folder / "d.csv")


class TestCorelsFairnessContract(SolverContract):
    """The plugin contract's constraint checks on CORELS: a feasible and an infeasible limit."""

    solver_class = CorelsSolver
    plugin = corels_plugin
    data = _contract_data()

    def spec_document(self) -> dict:
        return {
            "name": "contract-fair",
            "solver": "corels",
            "data": {"source": self.data, "target": "label", "positive": 1, "audit_only": [COLUMN]},
            "objective": {"regularization": 0.01},
            "constraints": {"max_card": 1, "negations": False},
            "fairness": {"protected": {"column": COLUMN, "value": GROUP}},
        }

    def _with(self, metric: str, at_most: float) -> dict:
        doc = self.spec_document()
        return {**doc, "constraints": {**doc["constraints"], "fairness": {"metric": metric, "at_most": at_most}}}

    def constrained_spec_document(self) -> dict:
        return self._with("statistical_parity", 0.05)

    def infeasible_spec_document(self) -> dict:
        return self._with("predictive_parity", 0.0)
