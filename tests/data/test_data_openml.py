"""The ``openml:ID`` source, offline: a synthetic data set is written into a scikit-learn OpenML
cache, then read by the real ``fetch_openml`` through ``load_problem``; the network is cut."""

from __future__ import annotations

import gzip
import hashlib
import json
import types
from pathlib import Path
from urllib.error import HTTPError, URLError

import numpy as np
import pytest
from glasswork.data import DataError, DataSpec, load_problem
from glasswork.spec.document import SpecError
from glasswork.spec.load import load_spec
from pydantic import ValidationError
from sklearn.datasets import _openml
from spec_files import write

DATA_ID = 9001
ARFF = """\
% a tiny regression set: one nominal and one numeric feature, a row id, a numeric target
@RELATION tiny
@ATTRIBUTE id NUMERIC
@ATTRIBUTE colour {red,green,blue}
@ATTRIBUTE size NUMERIC
@ATTRIBUTE price NUMERIC
@DATA
1,red,1.5,10.0
2,green,2.0,12.5
3,blue,0.5,7.0
4,red,3.0,15.0
5,blue,2.5,11.0
6,green,1.0,9.5
"""
COLOURS = ["red", "green", "blue", "red", "blue", "green"]
SIZES = [1.5, 2.0, 0.5, 3.0, 2.5, 1.0]
PRICES = [10.0, 12.5, 7.0, 15.0, 11.0, 9.5]


def _feature(index: int, name: str, kind: str, **flags: str) -> dict[str, object]:
    feature: dict[str, object] = {
        "index": str(index),
        "name": name,
        "data_type": kind,
        "is_target": "false",
        "is_ignore": "false",
        "is_row_identifier": "false",
        "number_of_missing_values": "0",
    }
    if kind == "nominal":
        feature["nominal_value"] = ["red", "green", "blue"]
    return {**feature, **flags}


def _put(cache: Path, openml_path: str, payload: bytes) -> None:
    """Store one response where scikit-learn looks for it: DATA_HOME/openml.org/PATH.gz."""
    path = cache / "openml.org" / (openml_path + ".gz")
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_bytes(gzip.compress(payload))


@pytest.fixture
def offline(monkeypatch: pytest.MonkeyPatch, tmp_path: Path) -> Path:
    """An empty cache in $GLASSWORK_OPENML_CACHE and no network: every download fails at once."""

    def no_network(request: object, *args: object, **kwargs: object) -> None:
        raise URLError("network is unreachable (cut by the test)")

    monkeypatch.setattr(_openml, "urlopen", no_network)
    monkeypatch.setattr(_openml, "time", types.SimpleNamespace(sleep=lambda seconds: None))
    monkeypatch.setenv("GLASSWORK_OPENML_CACHE", str(tmp_path / "home"))
    return tmp_path / "home" / "openml"  # fetch_openml keeps its cache in DATA_HOME/openml


@pytest.fixture
def cached(offline: Path) -> Path:
    """The tiny data set as OpenML's API would have served it, already in the cache."""
    api = "api/v1/json/data"
    # The file URL carries no file name, so its cache path is the same for scikit-learn versions
    # that build it from the file id and those that take the description's URL.
    description = {
        "id": str(DATA_ID),
        "name": "tiny",
        "version": "1",
        "description": "A tiny test set.",
        "format": "ARFF",
        "status": "active",
        "file_id": str(DATA_ID),
        "url": f"https://api.openml.org/data/v1/download/{DATA_ID}",
        "default_target_attribute": "price",
        "md5_checksum": hashlib.md5(ARFF.encode()).hexdigest(),
    }
    features = [
        _feature(0, "id", "numeric", is_row_identifier="true"),
        _feature(1, "colour", "nominal"),
        _feature(2, "size", "numeric"),
        _feature(3, "price", "numeric", is_target="true"),
    ]
    qualities = [{"name": "NumberOfInstances", "value": "6.0"}, {"name": "NumberOfFeatures", "value": "4.0"}]
    _put(offline, f"{api}/{DATA_ID}", json.dumps({"data_set_description": description}).encode())
    _put(offline, f"{api}/features/{DATA_ID}", json.dumps({"data_features": {"feature": features}}).encode())
    _put(offline, f"{api}/qualities/{DATA_ID}", json.dumps({"data_qualities": {"quality": qualities}}).encode())
    _put(offline, f"data/v1/download/{DATA_ID}", ARFF.encode())
    return offline


def _load(**fields: object):
    fields.setdefault("source", f"openml:{DATA_ID}")
    fields.setdefault("split", {"kind": "none"})
    return load_problem(DataSpec(**fields), ".")


def test_default_target_and_one_hot_nominal_feature(cached: Path) -> None:
    problem = _load(binarize={"thresholds": 1})
    assert problem.task == "regression"
    np.testing.assert_array_equal(problem.y, PRICES)
    onehot = ["colour:red", "colour:green", "colour:blue"]  # OpenML names, as CSV text columns get
    assert problem.feature_names[:3] == onehot and "id" not in str(problem.feature_names)
    expected = np.asarray([[c == v for v in ("red", "green", "blue")] for c in COLOURS], float)
    np.testing.assert_array_equal(problem.X[:, :3], expected)
    assert problem.feature_names[3].startswith("size<=")


def test_numeric_feature_and_chosen_target(cached: Path) -> None:
    problem = _load(drop=["colour"])
    assert problem.feature_names == ["size"]
    np.testing.assert_array_equal(problem.X[:, 0], SIZES)
    other = _load(target="size", columns=["price"])
    assert other.feature_names == ["price"]
    np.testing.assert_array_equal(other.y, SIZES)


def test_nominal_feature_without_binarize_is_refused_as_text(cached: Path) -> None:
    with pytest.raises(DataError, match="'red' is not a number") as err:
        _load()
    assert err.value.column == "colour" and "binarize" in err.value.hint


def test_not_cached_and_offline_is_a_clear_error(offline: Path) -> None:
    with pytest.raises(DataError) as err:
        _load(source="openml:9002")
    text = str(err.value)
    assert text.startswith("openml:9002: cannot download OpenML data set 9002 and it is not cached")
    assert "network is unreachable" in text
    assert "connect to the network once" in err.value.hint
    assert "GLASSWORK_OPENML_CACHE" in err.value.hint and str(offline) in err.value.hint
    assert err.value.__cause__ is None and err.value.__suppress_context__  # no chained traceback


def test_unknown_id_is_a_clear_error(offline: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    def precondition_failed(request: object, *args: object, **kwargs: object) -> None:
        raise HTTPError(_openml._DATA_INFO.format(9003), 412, "Precondition Failed", None, None)

    monkeypatch.setattr(_openml, "urlopen", precondition_failed)
    with pytest.raises(DataError, match="OpenML has no data set with id 9003") as err:
        _load(source="openml:9003")
    assert "openml.org" in err.value.hint


@pytest.mark.parametrize("source", ["openml:abc", "openml:", "openml:0", "openml:12x"])
def test_malformed_id_is_rejected_by_the_spec(source: str) -> None:
    with pytest.raises(ValidationError) as err:
        DataSpec(source=source)
    [issue] = err.value.errors()
    assert issue["loc"] == ("source",) and "openml:ID" in issue["msg"]


def test_malformed_id_names_its_field_path(tmp_path: Path, toy_registry: object) -> None:
    text = "name: t\nsolver: toy\ndata:\n  source: openml:abc\n"
    with pytest.raises(SpecError) as err:
        load_spec(write(tmp_path / "s.yaml", text), toy_registry)
    [issue] = [str(i) for i in err.value.issues]
    where = f"{tmp_path / 's.yaml'}:4:11: data.source: "
    assert issue.startswith(where + "an OpenML source is openml:ID")
    assert "(got 'openml:abc')" in issue


def test_openml_source_needs_no_target_but_refuses_test_and_where() -> None:
    assert DataSpec(source="openml:1027").target is None
    with pytest.raises(ValidationError, match="sklearn and OpenML data sets use 'split'"):
        DataSpec(source="openml:1027", test="t.csv")
    with pytest.raises(DataError, match="'where' filters only CSV"):
        load_problem(DataSpec(source="openml:1027", where="x > 1"), ".")
