"""The fairness audit of a run: ``data.audit_only`` keeps a column out of every solver's features,
``fairness:`` is checked against the spec and the data (file, line, field), and every run's
figures are those of its model's predictions, for any solver."""

from __future__ import annotations

from pathlib import Path

import numpy as np
import pytest
from glasswork.data import DataError
from glasswork.fairness import figures as fairness
from glasswork.hooks.registry import Registry
from glasswork.running.launch import Launch
from glasswork.spec.document import SpecError
from glasswork.spec.load import load_spec

BUILTIN = Registry(entry_points=False, disabled=())
HOSTILE_GROUP = "<b>[bold]x[/]'; DROP TABLE runs;--"
RACE = "race <script>"


def _write_data(folder: Path, rows: int = 160, seed: int = 0) -> Path:
    """0/1 features, a label they mostly decide, and a text column of groups (hostile values and
    name) that also predicts the label: a solver that could read it would use it."""
    rng = np.random.default_rng(seed)
    X = rng.integers(0, 2, size=(rows, 3))
    group = np.where(rng.random(rows) < 0.4, HOSTILE_GROUP, np.where(rng.random(rows) < 0.5, "b", "c"))
    label = (X[:, 0] | (group == HOSTILE_GROUP)) ^ (rng.random(rows) < 0.1)
    header = f'x1,x2,x3,"{RACE}",label\n'
    body = "\n".join(f'{a},{b},{c},"{g.replace(chr(34), chr(34) * 2)}",{y}' for (a, b, c), g, y in zip(X, group, label))
    path = folder / "d.csv"
    path.write_text(header + body + "\n", encoding="utf-8")
    return path


SOLVERS = {
    "corels": "solver: corels\nobjective: {regularization: 0.01}\n",
    "fasterrisk": "solver: fasterrisk\nconstraints: {sparsity: 2}\nsearch: {certify: false}\n",
    "moss": "solver: moss\nobjective: {gamma: 0.01}\nconstraints: {max_rules: 2}\n",
}


def _spec(folder: Path, solver: str, *, data: str = "", fairness_section: str | None = None) -> Path:
    _write_data(folder)
    section = (
        fairness_section
        if fairness_section is not None
        else f"fairness:\n  protected: {{column: '{RACE}', value: \"{HOSTILE_GROUP}\"}}\n"
    )
    text = (
        f"name: audit\ndata:\n  source: d.csv\n  target: label\n  positive: 1\n"
        f"  split: {{kind: holdout, test_size: 0.25, seed: 0}}\n{data}" + SOLVERS[solver] + section
    )
    path = folder / "s.yaml"
    path.write_text(text, encoding="utf-8")
    return path


AUDIT_ONLY = f"  audit_only: ['{RACE}']\n"


@pytest.mark.parametrize("solver", sorted(SOLVERS))
def test_an_audit_only_column_never_reaches_the_solver(tmp_path: Path, solver: str) -> None:
    """The same problem as with the column dropped (same fingerprint: same matrix, names and
    split), so the same model; the audit's figures are those of that model's predictions."""
    audited = Launch.from_file(_spec(tmp_path, solver, data=AUDIT_ONLY), registry=BUILTIN, no_store=True)
    outcome = audited.run()
    dropped_path = _spec(tmp_path, solver, data=f"  drop: ['{RACE}']\n", fairness_section="")
    dropped = Launch.from_file(dropped_path, registry=BUILTIN, no_store=True)
    plain = dropped.run()
    problem = audited.problem
    assert problem.fingerprint() == dropped.problem.fingerprint()
    assert not any(RACE in name or HOSTILE_GROUP in name for name in problem.feature_names)
    assert outcome.result.model.to_dict() == plain.result.model.to_dict()
    assert RACE not in outcome.result.model.to_text() and HOSTILE_GROUP not in outcome.result.model.to_text()

    doc = outcome.to_dict()["fairness"]
    pred = outcome.result.model.predict(problem.X)
    expected = fairness.disparities(problem.y, pred, problem.audit[RACE] == HOSTILE_GROUP)
    for name in fairness.METRICS:
        assert doc["train"][name] == pytest.approx(expected[name])
    test_pred = outcome.result.model.predict(problem.X_test)
    protected_test = problem.audit_test[RACE] == HOSTILE_GROUP
    assert doc["test"]["statistical_parity"] == pytest.approx(
        fairness.disparities(problem.y_test, test_pred, protected_test)["statistical_parity"]
    )
    assert doc["train"]["protected_rows"] == int(np.sum(problem.audit[RACE] == HOSTILE_GROUP))
    assert doc["train"]["protected_rows"] + doc["train"]["reference_rows"] == problem.n_samples
    assert doc["groups"] == [f"{RACE} = {HOSTILE_GROUP}"]
    has_scores = hasattr(outcome.result.model, "predict_proba")
    assert ("calibration" in doc["train"]) == has_scores


def test_a_run_without_fairness_reads_as_before(tmp_path: Path) -> None:
    spec = _spec(tmp_path, "corels", data=f"  drop: ['{RACE}']\n", fairness_section="")
    loaded = load_spec(spec, BUILTIN)
    assert "audit_only" not in loaded.spec.resolved()["data"] and "fairness" not in loaded.spec.resolved()
    audited_only = _spec(tmp_path, "corels", data=AUDIT_ONLY, fairness_section="")
    outcome = Launch.from_file(audited_only, registry=BUILTIN, no_store=True).run()
    assert "fairness" not in outcome.to_dict()


def _spec_error(path: Path) -> str:
    with pytest.raises(SpecError) as caught:
        load_spec(path, BUILTIN)
    return str(caught.value)


def test_a_protected_column_must_be_audit_only(tmp_path: Path) -> None:
    message = _spec_error(_spec(tmp_path, "corels"))
    assert "s.yaml:" in message and "fairness.protected.column" in message and "audit_only" in message
    line = int(message.split("s.yaml:")[1].split(":")[0])
    assert "column:" in (tmp_path / "s.yaml").read_text().splitlines()[line - 1]


def test_an_audit_only_column_is_not_a_feature_the_target_or_the_weights(tmp_path: Path) -> None:
    both = _spec(tmp_path, "corels", data=f"  columns: [x1, '{RACE}']\n" + AUDIT_ONLY)
    message = _spec_error(both)
    assert "data.audit_only.0" in message and "data.columns" in message
    target = _spec(tmp_path, "corels", data="  audit_only: [label]\n", fairness_section="")
    assert "the target" in _spec_error(target)


def _prepare_error(path: Path) -> DataError:
    with pytest.raises(DataError) as caught:
        Launch.from_file(path, registry=BUILTIN, no_store=True).prepare()
    return caught.value


def test_an_unknown_audit_column_points_at_its_line(tmp_path: Path) -> None:
    spec = _spec(tmp_path, "corels", data="  audit_only: [ethnicity]\n", fairness_section="")
    error = _prepare_error(spec)
    assert "ethnicity" in str(error) and error.field == "data.audit_only"
    assert error.file == str(spec.resolve()) and "audit_only" in spec.read_text().splitlines()[error.line - 1]


def test_a_protected_value_no_row_holds_points_at_its_line_and_lists_the_values(tmp_path: Path) -> None:
    section = f"fairness:\n  protected:\n    - column: '{RACE}'\n      value: [b, nowhere]\n"
    spec = _spec(tmp_path, "corels", data=AUDIT_ONLY, fairness_section=section)
    error = _prepare_error(spec)
    assert "'nowhere'" in str(error) and error.field == "fairness.protected.0.value"
    assert "value:" in spec.read_text().splitlines()[error.line - 1]
    assert repr(HOSTILE_GROUP) in str(error)  # the values it holds, quoted


def test_an_audit_needs_a_binary_target(tmp_path: Path) -> None:
    _write_data(tmp_path)
    spec = tmp_path / "m.yaml"
    spec.write_text(
        f"name: m\ndata:\n  source: d.csv\n  target: x2\n  task: regression\n{AUDIT_ONLY}"
        "solver: moss\nobjective: {gamma: 0.01}\n"
        f"fairness:\n  protected: {{column: '{RACE}', value: b}}\n",
        encoding="utf-8",
    )
    error = _prepare_error(spec)
    assert "binary" in str(error) and error.field == "fairness"


def test_several_groups_and_values(tmp_path: Path) -> None:
    section = (
        f"fairness:\n  protected:\n    - {{column: '{RACE}', value: [b, c]}}\n"
        f"    - {{column: '{RACE}', value: b}}\n  metrics: [statistical_parity]\n"
    )
    launch = Launch.from_file(
        _spec(tmp_path, "corels", data=AUDIT_ONLY, fairness_section=section), registry=BUILTIN, no_store=True
    )
    doc = launch.run().to_dict()["fairness"]
    groups = doc["train"]["groups"]
    assert [g["label"] for g in groups] == [f"{RACE} in [b, c]", f"{RACE} = b"]
    race = launch.problem.audit[RACE]
    assert groups[0]["protected"]["rows"] == int(np.sum((race == "b") | (race == "c")))
    assert doc["train"]["statistical_parity"] == max(g["statistical_parity"] for g in groups)
    assert set(doc["train"]) == {"statistical_parity", "protected_rows", "reference_rows", "groups"}


def test_audit_only_antecedents_of_a_corels_out_source(tmp_path: Path) -> None:
    """In a CORELS .out file the groups are antecedents: audit-only ones leave the search's
    antecedents and their rows are the audit column, in the test file too."""
    from glasswork.data.corels_format import CorelsData, write_corels
    from glasswork.data.rules import Antecedents

    rng = np.random.default_rng(2)
    for name, n in (("train", 200), ("test", 80)):
        a, g = rng.integers(0, 2, n), rng.integers(0, 2, n)
        y = (a | g) ^ (rng.random(n) < 0.05)
        matrix = np.column_stack([a, 1 - a, g]).astype(np.uint8)
        antecedents = Antecedents.from_matrix(matrix, ["a=1", "a=0", "Race=African-American"])
        write_corels(CorelsData(antecedents, y.astype(np.int64), ["y:0", "y:1"], None), tmp_path / f"{name}.out")
    spec = tmp_path / "c.yaml"
    spec.write_text(
        "name: out\ndata:\n  source: train.out\n  test: test.out\n  audit_only: [Race=African-American]\n"
        "solver: corels\nobjective: {regularization: 0.01}\n"
        "fairness: {protected: {column: Race=African-American, value: 1}}\n"
    )
    launch = Launch.from_file(spec, registry=BUILTIN, no_store=True)
    outcome = launch.run()
    problem = launch.problem
    assert problem.feature_names == ["a=1", "a=0"]
    assert "Race" not in outcome.result.model.to_text()
    doc = outcome.to_dict()["fairness"]
    assert doc["test"]["protected_rows"] == int(problem.audit_test["Race=African-American"].sum())
    expected = fairness.disparities(
        problem.y_test, outcome.result.model.predict(problem.X_test), problem.audit_test["Race=African-American"] == 1
    )
    assert doc["test"]["equalized_odds"] == pytest.approx(expected["equalized_odds"])


def test_rows_count_by_their_weight(tmp_path: Path) -> None:
    rng = np.random.default_rng(9)
    n = 150
    a, g = rng.integers(0, 2, n), rng.choice(["p", "q"], n)
    y = a ^ (rng.random(n) < 0.25)
    w = rng.integers(0, 4, n)
    (tmp_path / "w.csv").write_text("a,g,w,y\n" + "".join(f"{i},{j},{k},{m}\n" for i, j, k, m in zip(a, g, w, y)))
    spec = tmp_path / "w.yaml"
    spec.write_text(
        "name: w\ndata: {source: w.csv, target: y, weights: w, audit_only: [g], split: {kind: holdout, seed: 3}}\n"
        "solver: corels\nobjective: {regularization: 0.01}\nfairness: {protected: {column: g, value: p}}\n"
    )
    launch = Launch.from_file(spec, registry=BUILTIN, no_store=True)
    outcome = launch.run()
    doc = outcome.to_dict()["fairness"]
    problem = launch.problem
    for part, X, y_, weights, audit in (
        ("train", problem.X, problem.y, problem.sample_weight, problem.audit),
        ("test", problem.X_test, problem.y_test, problem.test_sample_weight, problem.audit_test),
    ):
        pred = outcome.result.model.predict(X)
        expected = fairness.disparities(y_, pred, audit["g"] == "p", weights)
        unweighted = fairness.disparities(y_, pred, audit["g"] == "p")
        assert doc[part]["statistical_parity"] == pytest.approx(expected["statistical_parity"])
        assert doc[part]["equalized_odds"] == pytest.approx(expected["equalized_odds"])
        assert doc[part]["groups"][0]["protected"]["weight"] == pytest.approx(float(weights[audit["g"] == "p"].sum()))
        assert expected != unweighted  # the weights matter here


def test_a_problem_built_in_code_without_its_audit_columns_is_a_data_error(tmp_path: Path) -> None:
    spec = _spec(
        tmp_path,
        "corels",
        data=AUDIT_ONLY,
        fairness_section=f"fairness: {{protected: {{column: '{RACE}', value: b}}}}\n",
    )
    loaded = Launch.from_file(spec, registry=BUILTIN, no_store=True)
    problem = loaded.prepare()
    problem.audit = {}
    again = Launch(loaded.loaded, registry=BUILTIN, no_store=True, problem=problem)
    with pytest.raises(DataError, match="not among the data's audit columns"):
        again.prepare()


def test_a_missing_group_is_named_as_an_audit_column_or_dropped(tmp_path: Path) -> None:
    lines = ["a,g,y"] + [f"{i % 2},{'' if i == 5 else 'p' if i % 3 else 'q'},{i % 2}" for i in range(40)]
    (tmp_path / "d.csv").write_text("\n".join(lines) + "\n")
    spec = tmp_path / "s.yaml"
    base = "name: m\ndata: {source: d.csv, target: y, audit_only: [g]%s}\nsolver: corels\n"
    spec.write_text(base % "")
    error = _prepare_error(spec)
    assert "missing value" in str(error) and "audit-only column" in str(error) and error.row == 6
    spec.write_text(base % ", missing: drop")
    problem = Launch.from_file(spec, registry=BUILTIN, no_store=True).prepare()
    assert problem.n_samples + (0 if problem.y_test is None else problem.y_test.size) == 39


@pytest.mark.parametrize("solver", ["corels", "fasterrisk"])
def test_an_audit_only_column_is_never_one_hot_encoded(tmp_path: Path, solver: str) -> None:
    """With binarize, a text column becomes one feature per value: an audit-only one makes none."""
    binarize = "  binarize: {thresholds: 2}\n"
    audited = Launch.from_file(_spec(tmp_path, solver, data=binarize + AUDIT_ONLY), registry=BUILTIN, no_store=True)
    problem = audited.prepare()
    dropped = _spec(tmp_path, solver, data=binarize + f"  drop: ['{RACE}']\n", fairness_section="")
    assert problem.fingerprint() == Launch.from_file(dropped, registry=BUILTIN, no_store=True).prepare().fingerprint()
    assert not any(RACE in name or "DROP TABLE" in name for name in problem.feature_names)
    featured = _spec(tmp_path, solver, data=binarize, fairness_section="")  # the same column as a feature
    assert any(
        RACE in name for name in Launch.from_file(featured, registry=BUILTIN, no_store=True).prepare().feature_names
    )
