"""CORELS sources through load_problem, and the data:/${GLASSWORK_DATA} path syntax."""

from __future__ import annotations

from pathlib import Path

import numpy as np
import pytest
from data_fixtures import corels_dir, datasets  # noqa: F401  (pytest fixtures)
from glasswork.data import DataError, DataSpec, load_problem
from glasswork.data.corels_format import read_corels


def test_corels_source_with_test_file(corels_dir: Path) -> None:
    spec = DataSpec(source="data:corels/compas_train.out", test="data:corels/compas_test.out")
    assert spec.split.kind == "none"
    p = load_problem(spec)
    ref = read_corels(corels_dir / "compas_train.out")
    assert p.X.shape == (6489, 155) and p.X.dtype == np.uint8
    assert p.feature_names == ref.antecedents.names
    assert np.array_equal(p.X, ref.antecedents.matrix())
    assert p.task == "binary" and p.classes.tolist() == ["No", "Yes"]
    assert int(p.y.sum()) == 2906
    assert p.X_test.shape == (721, 155) and p.y_test.shape == (721,)
    assert p.extras["premined"] is True
    assert np.array_equal(p.extras["minority"], ref.minority)
    assert np.array_equal(p.extras["antecedents"].bits, ref.antecedents.bits)
    assert p.extras["label_names"] == ref.label_names and p.extras["target"] == "recidivate-within-two-years"


def test_env_var_syntax_and_relative_paths(corels_dir: Path, tmp_path: Path) -> None:
    a = load_problem(DataSpec(source="${GLASSWORK_DATA}/corels/compas_test.out", split={"kind": "none"}))
    b = load_problem(DataSpec(source="compas_test.out", split={"kind": "none"}), base_dir=corels_dir)
    assert np.array_equal(a.X, b.X) and a.X.shape == (721, 155)
    assert "minority" not in a.extras  # no compas_test.minor file


def test_unset_data_folder_names_the_variable(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.delenv("GLASSWORK_DATA", raising=False)
    for source in ("data:corels/compas_train.out", "${GLASSWORK_DATA}/corels/compas_train.out"):
        with pytest.raises(DataError, match="GLASSWORK_DATA") as err:
            load_problem(DataSpec(source=source))
        assert "export GLASSWORK_DATA" in str(err.value)


def test_corels_split_recomputes_the_minority(corels_dir: Path) -> None:
    p = load_problem(
        DataSpec(source="data:corels/compas_train.out", split={"kind": "kfold", "folds": 10, "fold": 3, "seed": 67})
    )
    from glasswork.data.rules import minority_mask

    assert p.X.shape[0] + p.X_test.shape[0] == 6489
    assert np.array_equal(p.extras["minority"], minority_mask(p.X, p.y))
    assert p.folds is not None and p.fold == 3 and np.array_equal(p.test_index, np.flatnonzero(p.folds == 3))


def test_corels_positive_columns_and_drop(corels_dir: Path) -> None:
    p = load_problem(
        DataSpec(
            source="data:corels/compas_train.out",
            positive="No",
            columns=["priors:>3", "sex:Male"],
            split={"kind": "none"},
        )
    )
    assert p.feature_names == ["priors:>3", "sex:Male"]
    assert p.classes.tolist() == ["Yes", "No"] and int(p.y.sum()) == 6489 - 2906
    with pytest.raises(DataError, match="unknown antecedent"):
        load_problem(DataSpec(source="data:corels/compas_train.out", drop=["nope"]))
    with pytest.raises(DataError, match="positive label 'Maybe'"):
        load_problem(DataSpec(source="data:corels/compas_train.out", positive="Maybe"))


def _write(path: Path, text: str) -> Path:
    path.write_text(text)
    return path


def test_corels_source_errors(tmp_path: Path) -> None:
    _write(tmp_path / "p.out", "{a} 1 0 1 0\n")
    with pytest.raises(DataError, match="no label file"):
        load_problem(DataSpec(source="p.out"), tmp_path)
    _write(tmp_path / "p.label", "{y:0} 1 1 1 1\n{y:1} 0 0 0 0\n")
    with pytest.raises(DataError, match="constant"):
        load_problem(DataSpec(source="p.out"), tmp_path)
    _write(tmp_path / "p.label", "{y:0} 1 0 1\n{y:1} 0 1 0\n")
    with pytest.raises(DataError, match="3 samples here but 4"):
        load_problem(DataSpec(source="p.out"), tmp_path)
    _write(tmp_path / "p.label", "{y:0} 1 0 1 0\n{y:1} 0 1 0 1\n")
    with pytest.raises(DataError, match="'weights' does not apply"):
        load_problem(DataSpec(source="p.out", weights="w"), tmp_path)
    _write(tmp_path / "t.out", "{b} 1 0\n")
    _write(tmp_path / "t.label", "{y:0} 1 0\n{y:1} 0 1\n")
    with pytest.raises(DataError, match="antecedent 'a' of the training file is not in the test"):
        load_problem(DataSpec(source="p.out", test="t.out"), tmp_path)
    with pytest.raises(DataError, match="not found"):
        load_problem(DataSpec(source="q.out"), tmp_path)
