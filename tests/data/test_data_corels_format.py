"""The CORELS .out/.label/.minor files: exact round trips, leading zeros, and every format error."""

from __future__ import annotations

import filecmp
from pathlib import Path

import numpy as np
import pytest
from data_fixtures import corels_dir, datasets  # noqa: F401  (pytest fixtures)
from glasswork.data import DataError
from glasswork.data.corels_format import read_corels, write_corels


@pytest.mark.parametrize("stem", ["compas_train", "compas_test"])
def test_read_then_write_reproduces_the_files(corels_dir: Path, tmp_path: Path, stem: str) -> None:
    data = read_corels(corels_dir / f"{stem}.out")
    written = write_corels(data, tmp_path / f"{stem}.out")
    assert written[0] == tmp_path / f"{stem}.out"
    for path in written:
        assert filecmp.cmp(path, corels_dir / path.name, shallow=False), path.name
    assert len(written) == (3 if stem == "compas_train" else 2)


def test_reference_files_content(corels_dir: Path) -> None:
    data = read_corels(corels_dir / "compas_train.out")
    assert len(data.antecedents) == 155 and data.n_samples == 6489
    assert data.label_names == ["recidivate-within-two-years:No", "recidivate-within-two-years:Yes"]
    assert data.y is not None and int(data.y.sum()) == 2906
    # the .minor vector starts with two zeros: the reference parser loses them, we must not
    assert data.minority is not None and data.minority.shape == (6489,)
    assert data.minority[:3].tolist() == [False, False, True]
    assert data.minor_name == "group_minority"


def _write(path: Path, text: str) -> Path:
    path.write_text(text)
    return path


def test_leading_zeros_and_loose_whitespace_are_kept(tmp_path: Path) -> None:
    out = _write(tmp_path / "p.out", "{a} 0 0 0 1\r\n{b,c}   0  1 0 0\n\n")
    _write(tmp_path / "p.label", "{y:0} 1 0 1 0\n{y:1} 0 1 0 1\n")
    _write(tmp_path / "p.minor", "{group_minority} 0 0 0 1\n")
    data = read_corels(out)
    assert data.antecedents.n_samples == 4
    assert data.antecedents.matrix().T.tolist() == [[0, 0, 0, 1], [0, 1, 0, 0]]
    assert data.antecedents.cardinality.tolist() == [1, 2]
    assert data.y.tolist() == [0, 1, 0, 1]
    assert data.minority.tolist() == [False, False, False, True]
    write_corels(data, tmp_path / "q.out")
    assert (tmp_path / "q.out").read_text() == "{a} 0 0 0 1\n{b,c} 0 1 0 0\n"


def test_labels_and_minor_are_optional(tmp_path: Path) -> None:
    out = _write(tmp_path / "p.out", "{a} 1 0\n")
    data = read_corels(out)
    assert data.y is None and data.minority is None and data.label_names == []
    assert write_corels(data, tmp_path / "q.out") == [tmp_path / "q.out"]


def test_explicit_label_path(tmp_path: Path) -> None:
    out = _write(tmp_path / "p.out", "{a} 1 0\n")
    lab = _write(tmp_path / "other.txt", "{no} 0 1\n{yes} 1 0\n")
    data = read_corels(out, label_path=lab)
    assert data.y.tolist() == [1, 0] and data.label_names == ["no", "yes"]


def test_vector_line_of_the_wrong_length(tmp_path: Path) -> None:
    out = _write(tmp_path / "p.out", "{a} 1 0 1\n{b} 1 0\n")
    with pytest.raises(DataError) as err:
        read_corels(out)
    assert err.value.line == 2 and "2 values" in str(err.value) and "line 1" in str(err.value)
    assert str(out) in str(err.value)


def test_mismatched_sample_counts_across_files(tmp_path: Path) -> None:
    out = _write(tmp_path / "p.out", "{a} 1 0 1\n")
    _write(tmp_path / "p.label", "{n} 0 1\n{y} 1 0\n")
    with pytest.raises(DataError, match="2 samples here but 3") as err:
        read_corels(out)
    assert err.value.file.endswith("p.label")
    _write(tmp_path / "p.label", "{n} 0 1 0\n{y} 1 0 1\n")
    _write(tmp_path / "p.minor", "{group_minority} 0 0 1 1\n")
    with pytest.raises(DataError, match="4 samples here but 3") as err:
        read_corels(out)
    assert err.value.file.endswith("p.minor")


def test_bad_tokens_braces_and_empty_files(tmp_path: Path) -> None:
    with pytest.raises(DataError, match=r"'2' at position 2 is not 0 or 1"):
        read_corels(_write(tmp_path / "a.out", "{a} 1 2 0\n"))
    with pytest.raises(DataError, match="braces") as err:
        read_corels(_write(tmp_path / "b.out", "{a} 1 0\nb 1 0\n"))
    assert err.value.line == 2
    with pytest.raises(DataError, match="no vectors"):
        read_corels(_write(tmp_path / "c.out", "\n"))
    with pytest.raises(DataError, match="not found"):
        read_corels(tmp_path / "missing.out")


def test_label_lines_must_be_complementary(tmp_path: Path) -> None:
    out = _write(tmp_path / "p.out", "{a} 1 0 1\n")
    _write(tmp_path / "p.label", "{n} 0 1 0\n{y} 1 1 0\n")
    with pytest.raises(DataError, match="sample 2 has 2 labels") as err:
        read_corels(out)
    assert "complementary" in str(err.value)
    _write(tmp_path / "p.label", "{n} 0 1 0\n")
    with pytest.raises(DataError, match="at least 2"):
        read_corels(out)


def test_minor_file_holds_one_line(tmp_path: Path) -> None:
    out = _write(tmp_path / "p.out", "{a} 1 0\n")
    _write(tmp_path / "p.minor", "{m} 1 0\n{m2} 0 1\n")
    with pytest.raises(DataError, match="one line"):
        read_corels(out)


def test_write_unnamed_labels(tmp_path: Path) -> None:
    from glasswork.data.rules import Antecedents

    a = Antecedents.from_matrix(np.array([[1], [0], [1]], dtype=np.uint8), ["x"])
    from glasswork.data.corels_format import CorelsData

    write_corels(CorelsData(a, np.array([0, 1, 1]), [], np.array([True, False, False])), tmp_path / "z.out")
    assert (tmp_path / "z.label").read_text() == "{label=0} 1 0 0\n{label=1} 0 1 1\n"
    assert (tmp_path / "z.minor").read_text() == "{group_minority} 1 0 0\n"


def test_names_the_reference_tool_cannot_read_are_refused(tmp_path: Path) -> None:
    from glasswork.data.corels_format import CorelsData
    from glasswork.data.rules import Antecedents

    a = Antecedents.from_matrix(np.array([[1], [0]], dtype=np.uint8), ["city:New York"])
    with pytest.raises(DataError, match="without spaces"):
        write_corels(CorelsData(a, None, [], None), tmp_path / "z.out")
