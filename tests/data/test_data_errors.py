"""Every bad-data case of issue 3: a DataError naming the file, column, row or value, and the fix."""

from __future__ import annotations

from pathlib import Path

import pytest
from glasswork.data import DataError, DataSpec, load_problem


def _csv(tmp_path: Path, text: str, name: str = "d.csv") -> Path:
    (tmp_path / name).write_text(text)
    return tmp_path


def _load(tmp_path: Path, **fields: object) -> None:
    fields.setdefault("source", "d.csv")
    fields.setdefault("split", {"kind": "none"})
    load_problem(DataSpec(**{k: v for k, v in fields.items() if v is not None}), tmp_path)


def _fails(tmp_path: Path, match: str, **fields: object) -> DataError:
    with pytest.raises(DataError, match=match) as err:
        _load(tmp_path, **fields)
    assert err.value.hint, "every data error says how to fix it"
    return err.value


def test_missing_file(tmp_path: Path) -> None:
    err = _fails(tmp_path, "data file not found", source="nope.csv", target="y")
    assert str(tmp_path / "nope.csv") in str(err) and "spec file's folder" in err.hint


def test_missing_target_column(tmp_path: Path) -> None:
    _csv(tmp_path, "a,b\n1,0\n2,1\n")
    err = _fails(tmp_path, "target column 'y' is not in the data", target="y")
    assert "a, b" in err.hint


def test_constant_target(tmp_path: Path) -> None:
    _csv(tmp_path, "a,y\n1,1\n2,1\n3,1\n")
    err = _fails(tmp_path, "target is constant", target="y")
    assert err.column == "y" and "every row is 1" in str(err)


def test_missing_target_value(tmp_path: Path) -> None:
    _csv(tmp_path, "a,y\n1,1\n2,\n3,0\n")
    err = _fails(tmp_path, "missing value .* in the target", target="y")
    assert (err.column, err.row, err.line) == ("y", 2, 3)


def test_nan_in_a_feature(tmp_path: Path) -> None:
    _csv(tmp_path, "a,b,y\n1,0.5,1\n2,nan,0\n3,,1\n")
    err = _fails(tmp_path, "missing value", target="y")
    assert (err.column, err.row) == ("b", 2)
    assert "2 row(s)" in err.hint and "missing: drop" in err.hint
    assert str(err).startswith(f"{tmp_path / 'd.csv'}:3: ")


def test_non_numeric_value_where_a_number_is_needed(tmp_path: Path) -> None:
    _csv(tmp_path, "a,b,y\n1,2,1\n2,abc,0\n3,4,1\n")
    err = _fails(tmp_path, "value 'abc' is not a number", target="y")
    assert (err.column, err.row) == ("b", 2) and "binarize" in err.hint
    # with binarization on, a numeric column with a stray word is still reported, not one-hot encoded
    err = _fails(tmp_path, "value 'abc' is not a number", target="y", binarize={})
    assert "categorical" in err.hint
    _csv(tmp_path, "a,w,y\n1,2,1\n2,x,0\n3,4,1\n")
    err = _fails(tmp_path, "value 'x' is not a number", target="y", weights="w")
    assert err.column == "w"


def test_negative_weight(tmp_path: Path) -> None:
    _csv(tmp_path, "a,w,y\n1,2,1\n2,-1,0\n3,4,1\n")
    err = _fails(tmp_path, "weight -1.0 is not a finite non-negative", target="y", weights="w")
    assert err.row == 2


def test_label_not_binary_where_binary_is_required(tmp_path: Path) -> None:
    _csv(tmp_path, "a,y\n1,cat\n2,dog\n3,cow\n")
    err = _fails(tmp_path, "binary task needs two labels, the target has 3: cat, cow, dog", target="y", task="binary")
    assert "positive" in err.hint and err.column == "y"


def test_unknown_positive_label(tmp_path: Path) -> None:
    _csv(tmp_path, "a,y\n1,cat\n2,dog\n")
    err = _fails(tmp_path, "positive label 'emu' does not occur", target="y", positive="emu")
    assert "cat, dog" in err.hint


def test_empty_data_set_after_filtering(tmp_path: Path) -> None:
    _csv(tmp_path, "a,y\n1,0\n2,1\n")
    err = _fails(tmp_path, "empty after filtering", target="y", where="a > 10")
    assert "where" in err.hint
    _fails(tmp_path, "no feature columns are left", target="y", drop=["a"])
    _csv(tmp_path, "a,y\n")
    _fails(tmp_path, "empty after filtering", target="y")


def test_bad_where_filter_and_unknown_columns(tmp_path: Path) -> None:
    _csv(tmp_path, "a,y\n1,0\n2,1\n")
    _fails(tmp_path, "'where' filter", target="y", where="nosuch > 1")
    err = _fails(tmp_path, "unknown column", target="y", columns=["zz"])
    assert "columns are: a, y" in err.hint


def test_unseen_test_label(tmp_path: Path) -> None:
    _csv(tmp_path, "a,y\n1,0\n2,1\n")
    _csv(tmp_path, "a,y\n1,0\n2,7\n", "t.csv")
    err = _fails(tmp_path, "test label 7", target="y", test="t.csv", split=None)
    assert err.row == 2


def test_text_in_a_numeric_column_of_the_test_file(tmp_path: Path) -> None:
    _csv(tmp_path, "a,y\n1,0\n2,1\n3,0\n")
    _csv(tmp_path, "a,y\n1,0\nten,1\n", "t.csv")
    err = _fails(tmp_path, "value 'ten' is not a number", target="y", test="t.csv", split=None, binarize={})
    assert err.file.endswith("t.csv") and err.row == 2


def _corels(tmp_path: Path, out: str, label: str, minor: str | None = None) -> Path:
    (tmp_path / "p.out").write_text(out)
    (tmp_path / "p.label").write_text(label)
    if minor is not None:
        (tmp_path / "p.minor").write_text(minor)
    return tmp_path


def test_mismatched_row_counts_across_out_label_minor(tmp_path: Path) -> None:
    _corels(tmp_path, "{a} 1 0 1 0\n", "{y:0} 1 0 1\n{y:1} 0 1 0\n")
    err = _fails(tmp_path, "3 samples here but 4", source="p.out")
    assert err.file.endswith("p.label")
    _corels(tmp_path, "{a} 1 0 1 0\n", "{y:0} 1 0 1 0\n{y:1} 0 1 0 1\n", "{group_minority} 0 1\n")
    err = _fails(tmp_path, "2 samples here but 4", source="p.out")
    assert err.file.endswith("p.minor")


def test_vector_line_of_the_wrong_length(tmp_path: Path) -> None:
    _corels(tmp_path, "{a} 1 0 1 0\n{b} 1 0 1\n", "{y:0} 1 0 1 0\n{y:1} 0 1 0 1\n")
    err = _fails(tmp_path, "3 values on this line but 4 on line 1", source="p.out")
    assert err.line == 2 and "p.out:2: " in str(err)


SECRET_CASES = {
    "bad column": ("a,y\n1,0\n2,1\n", {"target": "nosuch"}, "target column 'nosuch'"),
    "bad label": ("a,y\n1,0\n2,1\n", {"target": "y", "positive": "cat"}, "positive label 'cat'"),
    "bad filter": ("a,y\n1,0\n2,1\n", {"target": "y", "where": "nosuch = 1"}, "'where' filter"),
    "bad value": ("a,y\n1,0\nabc,1\n3,0\n", {"target": "y"}, "is not a number"),
    "missing value": ("a,y\n1,0\n,1\n", {"target": "y"}, "missing value"),
    "bad file": (b"a,y\n1,0\n\xff\xfe,1\n", {"target": "y"}, "the file is not UTF-8"),
    "bad override": ("a,y\n1,0\nx,1\n", {"target": "y", "types": {"a": "numeric"}}, "data.types.a"),
    "folder": (None, {"target": "y"}, "is a folder"),
    "corels counts": ({"d.out": "{a} 1 0 1\n", "d.label": "{y:0} 1 0\n{y:1} 0 1\n"}, {}, "samples here"),
}


@pytest.mark.parametrize("case", sorted(SECRET_CASES))
def test_data_errors_never_print_what_a_variable_expanded_to(tmp_path: Path, monkeypatch, case: str) -> None:
    """docs/security.md: a ``${VAR}`` in a path is shown as written, never as its value."""
    text, fields, match = SECRET_CASES[case]
    secret = tmp_path / "s3cr3t-value"
    secret.mkdir()
    monkeypatch.setenv("GW_SECRET_DIR", str(secret))
    name = "d.csv"
    if isinstance(text, dict):
        for file_name, content in text.items():
            (secret / file_name).write_text(content)
        name = "d.out"
    elif text is None:
        (secret / "d.csv").mkdir()
    elif isinstance(text, bytes):
        (secret / "d.csv").write_bytes(text)
    else:
        (secret / "d.csv").write_text(text)
    with pytest.raises(DataError, match=match) as err:
        _load(tmp_path, source="${GW_SECRET_DIR}/" + name, **fields)
    shown = f"{err.value} {err.value.file}"
    assert "s3cr3t" not in shown and "${GW_SECRET_DIR}/d." in shown


def test_a_pipe_or_a_device_is_refused_not_read(tmp_path: Path) -> None:
    """``data.source: /dev/stdin`` or a FIFO used to hang; now it is exit 2 before anything opens it."""
    import os
    import subprocess
    import sys

    os.mkfifo(tmp_path / "pipe.csv")
    for source, kind in [(str(tmp_path / "pipe.csv"), "a pipe"), ("/dev/stdin", None), ("/dev/zero", "device")]:
        spec = tmp_path / "s.yaml"
        spec.write_text(f"name: x\nsolver: corels\ndata:\n  source: {source}\n  target: y\n  binarize: {{}}\n")
        proc = subprocess.run(
            [sys.executable, "-m", "glasswork", "run", "--no-store", str(spec)],
            capture_output=True,
            text=True,
            timeout=60,
            stdin=subprocess.PIPE,
        )
        assert proc.returncode == 2, proc.stderr
        assert "not a data file" in proc.stderr and (kind is None or kind in proc.stderr)


def test_a_column_name_with_a_line_break_is_named_with_what_to_do(tmp_path: Path) -> None:
    """A quoted line break in a header is valid CSV that DuckDB's reader cannot always read; the
    message names the column and says to rename it, not "check that it is a well-formed CSV"."""
    rows = "".join(f"{i % 6},{'yes' if i % 3 else 'no'}\r\n" for i in range(50))
    (tmp_path / "d.csv").write_bytes(('"new\nline",outcome\r\n' + rows).encode())  # as Python's csv writes it
    error = _fails(tmp_path, "line break", target="outcome")
    assert "'new\\nline'" in str(error) and "rename" in str(error) and "well-formed" not in str(error)
