"""Class weights in CORELS (issue 36): the spelling every solver takes (``class_weight``, with
``balanced``), the plural refused with the right one, and a rule's probability is its weighted
class share, so the class a rule predicts is the one it gives the highest probability."""

from __future__ import annotations

import json
from pathlib import Path

import numpy as np
from click.testing import CliRunner
from glasswork.cli import cli
from glasswork.export import export_run
from glasswork.hooks.registry import get_registry
from glasswork.running.launch import Launch
from glasswork.spec.load import validate_spec
from glasswork.store import RunStore
from glasswork.testing.exports import run_python
from loans_table import loans_spec


def _weighted_table(folder: Path) -> Path:
    """Feature ``f`` captures 10 'yes' and 15 'no' rows; the rest are 2 'yes', 50 'no'. With 'yes'
    weighing 3, the optimum is ``if f then yes`` though 'yes' is only 40 % of what it captures."""
    rows = ["f,y"] + ["1,yes"] * 10 + ["1,no"] * 15 + ["0,yes"] * 2 + ["0,no"] * 50
    (folder / "w.csv").write_text("\n".join(rows) + "\n")
    spec = folder / "w.yaml"
    spec.write_text(
        "name: weighted\ndata: {source: w.csv, target: y, positive: 'yes', split: {kind: none}}\n"
        "solver: corels\nobjective: {regularization: 0.01, class_weight: {'yes': 3}}\nconstraints: {negations: false}\n"
    )
    return spec


def test_a_rule_prints_and_exports_the_weighted_share_of_the_class_it_predicts(tmp_path: Path) -> None:
    spec = _weighted_table(tmp_path)
    db = tmp_path / "runs.duckdb"
    shown = CliRunner().invoke(cli, ["run", str(spec), "--db", str(db)], env={"COLUMNS": "200"})
    assert shown.exit_code == 0, shown.output
    rule = next(line for line in shown.output.splitlines() if "then" in line)
    assert "yes" in rule and "66.67%" in rule  # 3 x 10 / (3 x 10 + 15), not 10 / 25
    store = RunStore(db).open()
    details = store.details(store.resolve(["latest"])[0])
    model = details["models"][0]["model"]
    assert [r["prediction"] for r in model["rules"]] == ["yes"]
    labels, probas = run_python(export_run(details, "python"), {"f": np.array([1, 0])})
    assert labels == ["yes", "no"]
    assert probas is not None
    np.testing.assert_allclose(probas[0], [15 / 45, 30 / 45])
    np.testing.assert_allclose(probas[1], [50 / 56, 6 / 56])
    assert all(p.argmax() == model["classes"].index(label) for p, label in zip(probas, labels))
    sql = export_run(details, "sql")
    assert "0.6666666666666666e0" in sql or "0.6666666666666667e0" in sql


def test_balanced_is_taken_and_the_plural_names_the_right_spelling(tmp_path: Path) -> None:
    spec = loans_spec(tmp_path, "corels", "objective: {class_weight: balanced}\n", binarize=True)
    outcome = Launch.from_file(spec, [], db=tmp_path / "runs.duckdb").run([])
    assert outcome.result is not None and outcome.result.certificate.status.value == "optimal"
    plural = CliRunner().invoke(
        cli, ["validate", str(spec), "--no-data", "--set", "objective.class_weights={'yes': 2}"]
    )
    assert plural.exit_code == 2
    assert "unknown key 'class_weights'; did you mean 'class_weight'" in plural.output


def test_the_resolved_spec_of_an_older_run_still_loads() -> None:
    """Runs recorded before the rename resolved ``class_weights: null``: such a spec loads as it is."""
    text = json.dumps(
        {
            "name": "old",
            "data": {"source": "d.csv", "target": "y", "binarize": {}},
            "solver": "corels",
            "objective": {"regularization": 0.01, "class_weights": None},
        }
    )
    spec = validate_spec(json.loads(text), get_registry(), file="old.json")
    assert spec.objective.class_weight is None  # type: ignore[attr-defined]


def test_the_estimator_takes_balanced() -> None:
    from glasswork.plugins.corels.estimator import RuleListClassifier

    X = np.array([[1]] * 25 + [[0]] * 52)
    y = np.array(["yes"] * 10 + ["no"] * 15 + ["yes"] * 2 + ["no"] * 50)
    model = RuleListClassifier(regularization=0.01, class_weight="balanced").fit(X, y)
    assert model.predict(np.array([[1]]))[0] == "yes"
    proba = model.predict_proba(np.array([[1]]))[0]
    assert proba[list(model.classes_).index("yes")] > 0.5
