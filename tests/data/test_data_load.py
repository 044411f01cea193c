"""load_problem on CSV/Parquet/scikit-learn sources: selection, target, weights, splits, binarization."""

from __future__ import annotations

import csv
from pathlib import Path

import numpy as np
import pytest
from data_fixtures import corels_dir, datasets  # noqa: F401  (pytest fixtures)
from glasswork.data import DataError, DataSpec, load_problem
from glasswork.data.corels_format import read_corels
from glasswork.data.rules import mine_antecedents

COMPAS_TARGET = "recidivate-within-two-years"


def _csv(path: Path, text: str) -> Path:
    path.write_text(text)
    return path


def test_compas_csv_binarized_and_mined_equals_reference_out(corels_dir: Path) -> None:
    p = load_problem(
        DataSpec(source="data:corels/compas_train.csv", target=COMPAS_TARGET, split={"kind": "none"}, binarize={})
    )
    assert p.X.shape == (6489, 19) and p.X.dtype == np.uint8
    mined = mine_antecedents(p.X, p.feature_names, max_card=2, min_support=0.005, negations=False, dedupe=False)
    ref = read_corels(corels_dir / "compas_train.out")
    assert mined.names == ref.antecedents.names
    assert np.array_equal(mined.bits, ref.antecedents.bits)
    assert np.array_equal(p.y, ref.y)


def test_compas_csv_gives_the_14_column_binary_file(corels_dir: Path) -> None:
    p = load_problem(
        DataSpec(
            source="data:corels/compas_train.csv",
            target=COMPAS_TARGET,
            split={"kind": "none"},
            binarize={"category_order": "sorted", "collapse_binary": True},
        )
    )
    with open(corels_dir / "compas_train-binary.csv") as fh:
        rows = list(csv.reader(fh))
    B = np.asarray(rows[1:], dtype=np.uint8)
    assert p.feature_names == rows[0][:-1]
    assert np.array_equal(p.X, B[:, :-1]) and np.array_equal(p.y, B[:, -1])


def test_separate_test_file_is_encoded_with_training_categories(corels_dir: Path) -> None:
    p = load_problem(
        DataSpec(
            source="data:corels/compas_train.csv",
            test="data:corels/compas_test.csv",
            target=COMPAS_TARGET,
            binarize={"category_order": "sorted", "collapse_binary": True},
        )
    )
    with open(corels_dir / "compas_test-binary.csv") as fh:
        rows = list(csv.reader(fh))
    B = np.asarray(rows[1:], dtype=np.uint8)
    assert np.array_equal(p.X_test, B[:, :-1]) and np.array_equal(p.y_test, B[:, -1])


def test_fico_numeric_thresholds(datasets: Path) -> None:
    path = datasets / "treefarms" / "fico" / "original.csv"
    if not path.exists():
        pytest.skip(f"{path} absent")
    p = load_problem(
        DataSpec(
            source="data:treefarms/fico/original.csv",
            target="PoorRiskPerformance",
            split={"kind": "none"},
            binarize={"thresholds": 3},
        )
    )
    assert p.X.shape[0] == 10459 and p.X.shape[1] <= 23 * 3
    assert "ExternalRiskEstimate<=" in p.feature_names[3]
    j = p.feature_names.index(p.feature_names[3])
    t = float(p.feature_names[3].split("<=")[1])
    raw = load_problem(
        DataSpec(source="data:treefarms/fico/original.csv", target="PoorRiskPerformance", split={"kind": "none"})
    )
    col = raw.X[:, raw.feature_names.index("ExternalRiskEstimate")]
    assert np.array_equal(p.X[:, j], (col <= t).astype(np.uint8))


def test_sklearn_sources() -> None:
    p = load_problem(DataSpec(source="sklearn:breast_cancer", split={"kind": "none"}))
    assert p.X.shape == (569, 30) and p.task == "binary"
    assert p.classes.tolist() == ["benign", "malignant"]
    r = load_problem(DataSpec(source="sklearn:diabetes"))
    assert r.task == "regression" and r.X_test is not None and r.X.shape[0] + r.X_test.shape[0] == 442
    m = load_problem(DataSpec(source="sklearn:iris", drop=["petal_width_(cm)"], split={"kind": "none"}))
    assert m.task == "multiclass" and m.X.shape == (150, 3)
    with pytest.raises(DataError, match="unknown scikit-learn data set"):
        load_problem(DataSpec(source="sklearn:nope"))


def test_columns_drop_weights_positive_where(tmp_path: Path) -> None:
    _csv(tmp_path / "d.csv", "a,b,c,w,y\n1,2,x,1.0,cat\n2,3,y,2.0,dog\n3,1,x,0.5,cow\n4,0,y,1.0,dog\n5,5,x,3,cat\n")
    p = load_problem(
        DataSpec(source="d.csv", target="y", positive="dog", columns=["b", "a"], weights="w", split={"kind": "none"}),
        tmp_path,
    )
    assert p.feature_names == ["b", "a"] and p.X[:, 1].tolist() == [1, 2, 3, 4, 5]
    assert p.classes.tolist() == ["not-dog", "dog"] and p.y.tolist() == [0, 1, 0, 1, 0]
    assert p.sample_weight.tolist() == [1.0, 2.0, 0.5, 1.0, 3.0]
    q = load_problem(
        DataSpec(source="d.csv", target="y", drop=["c", "w"], where="a >= 2", split={"kind": "none"}), tmp_path
    )
    assert q.feature_names == ["a", "b"] and q.X[:, 0].tolist() == [2, 3, 4, 5]
    assert q.task == "multiclass" and q.classes.tolist() == ["cat", "cow", "dog"]


def test_parquet_source(tmp_path: Path) -> None:
    import duckdb

    _csv(tmp_path / "d.csv", "a,y\n1,0\n2,1\n3,0\n4,1\n")
    duckdb.execute(
        f"COPY (SELECT * FROM read_csv_auto('{tmp_path / 'd.csv'}')) TO '{tmp_path / 'd.parquet'}' (FORMAT parquet)"
    )
    p = load_problem(DataSpec(source="d.parquet", target="y", split={"kind": "none"}), tmp_path)
    assert p.X[:, 0].tolist() == [1, 2, 3, 4] and p.y.tolist() == [0, 1, 0, 1]


def test_missing_values_can_be_dropped(tmp_path: Path) -> None:
    _csv(tmp_path / "d.csv", "a,b,y\n1,2,0\n,3,1\n3,nan,0\n4,5,1\n5,6,0\n")
    p = load_problem(DataSpec(source="d.csv", target="y", missing="drop", split={"kind": "none"}), tmp_path)
    assert p.X[:, 0].tolist() == [1, 4, 5]


def test_holdout_is_seeded_and_stratified() -> None:
    spec = DataSpec(source="sklearn:breast_cancer", split={"kind": "holdout", "test_size": 0.25, "seed": 7})
    a, b = load_problem(spec), load_problem(spec)
    assert np.array_equal(a.train_index, b.train_index) and np.array_equal(a.X, b.X)
    assert len(np.intersect1d(a.train_index, a.test_index)) == 0
    assert len(a.train_index) + len(a.test_index) == 569
    assert abs(a.y.mean() - a.y_test.mean()) < 0.01
    c = load_problem(DataSpec(source="sklearn:breast_cancer", split={"kind": "holdout", "test_size": 0.25, "seed": 8}))
    assert not np.array_equal(a.test_index, c.test_index)


def test_kfold_partitions_rows_and_keeps_the_folds() -> None:
    folds = None
    seen = []
    for k in range(4):
        p = load_problem(
            DataSpec(source="sklearn:breast_cancer", split={"kind": "kfold", "folds": 4, "fold": k, "seed": 1})
        )
        if folds is None:
            folds = p.folds
        assert np.array_equal(p.folds, folds) and p.fold == k
        assert np.array_equal(p.test_index, np.flatnonzero(folds == k))
        assert np.array_equal(p.train_index, np.flatnonzero(folds != k))
        assert abs(p.y.mean() - p.y_test.mean()) < 0.03
        seen.append(p.test_index)
    assert np.array_equal(np.sort(np.concatenate(seen)), np.arange(569))


def test_kfold_spec_validation() -> None:
    with pytest.raises(ValueError, match="fold must be below folds"):
        DataSpec(source="sklearn:iris", split={"kind": "kfold", "folds": 3, "fold": 3})
    with pytest.raises(ValueError, match="either 'test'"):
        DataSpec(source="a.csv", target="y", test="b.csv", split={"kind": "holdout"})
    with pytest.raises(ValueError, match="needs 'target'"):
        DataSpec(source="a.csv")


def test_too_few_samples_to_stratify(tmp_path: Path) -> None:
    _csv(tmp_path / "d.csv", "a,y\n1,0\n2,0\n3,0\n4,1\n5,0\n6,0\n")
    with pytest.raises(DataError, match="too few to stratify"):
        load_problem(DataSpec(source="d.csv", target="y", split={"kind": "kfold", "folds": 3}), tmp_path)


def test_binarize_methods_and_names(tmp_path: Path) -> None:
    _csv(tmp_path / "d.csv", "age,n,flag,y\n" + "".join(f"{18 + i},{i % 3},{i % 2},{i % 2}\n" for i in range(40)))
    base = {"source": "d.csv", "target": "y", "split": {"kind": "none"}}
    p = load_problem(DataSpec(**base, binarize={"thresholds": 3, "negations": True}), tmp_path)
    assert p.feature_names[:6] == ["age<=27", "age<=37", "age<=47", "age>27", "age>37", "age>47"]
    assert "flag" in p.feature_names and "not-flag" in p.feature_names
    g = load_problem(DataSpec(**base, binarize={"grid": {"age": [25, 40.5]}, "method": "all"}), tmp_path)
    assert g.feature_names == ["age<=25", "age<=40.5", "n<=0", "n<=1", "flag"]
    u = load_problem(DataSpec(**base, binarize={"method": "uniform", "thresholds": 2, "categorical": ["n"]}), tmp_path)
    assert u.feature_names == ["age<=31", "age<=44", "n:0", "n:1", "n:2", "flag"]
