"""Columns are read as written (issue 23, item 3): text stays text unless every value is a plain
number, labels keep their text, one missing-value rule holds for every reader, and ``data.types``
overrides the rare column."""

from __future__ import annotations

from pathlib import Path

import duckdb
import numpy as np
import pytest
from click.testing import CliRunner
from glasswork.cli import cli
from glasswork.data import DataError, DataSpec, load_problem
from glasswork.data.sources import is_missing, missing_mask, read_file


def _table(tmp_path: Path, text: str, **kwargs: object):
    path = tmp_path / "d.csv"
    path.write_text(text)
    return read_file(path, "d.csv", **kwargs)


def _load(tmp_path: Path, text: str, **fields: object):
    (tmp_path / "d.csv").write_text(text)
    fields.setdefault("split", {"kind": "none"})
    return load_problem(DataSpec(source="d.csv", **fields), tmp_path)


@pytest.mark.parametrize(
    "values, kind",
    [
        (["yes", "no", "yes"], "O"),
        (["true", "false", "true"], "O"),
        (["True", "False", "True"], "O"),
        (["Y", "N", "Y"], "O"),
        (["T", "F", "F"], "O"),
        (["01", "02", "10"], "O"),
        (["003", "012", "100"], "O"),
        (["+5", "6", "7"], "O"),
        (["0x1F", "2", "3"], "O"),
        (["inf", "1", "2"], "O"),
        (["1,000", "2", "3"], "O"),
        (["1_000", "2", "3"], "O"),
        (["2020-01-02", "2021-03-04", "2022-05-06"], "O"),
        (["2020-01-02 10:00:00", "2021-03-04 11:00:00", "x"], "O"),
        (["1", "2", "-3"], "i"),
        (["0", "1", "0"], "i"),
        (["1e3", "2", "3"], "f"),
        (["1.50", "-0.5", ".5"], "f"),
        (["0.0", "5.", "-0"], "f"),
        ([" 5", "6 ", "7"], "i"),
        (["9223372036854775807", "1", "2"], "i"),
        (["12345678901234567890", "1", "2"], "O"),
    ],
)
def test_a_csv_column_is_a_number_only_when_every_value_is_one_as_written(tmp_path, values, kind):
    table = _table(tmp_path, "c,y\n" + "".join(f'"{v}",{i % 2}\n' for i, v in enumerate(values)))
    assert table.columns["c"].dtype.kind == kind
    if kind == "O":  # text exactly as written: no BOOLEAN, no DATE, no number
        assert table.columns["c"].tolist() == values


def test_numbers_read_as_written_keep_their_values(tmp_path):
    table = _table(tmp_path, "c,d\n1e3,1\n-0.5,-2\n.5,30\n")
    assert table.columns["c"].tolist() == [1000.0, -0.5, 0.5] and table.columns["d"].tolist() == [1, -2, 30]


MISSING_CELLS = ["", "  ", "\t", "nan", "NaN", "NAN", " nan ", '""', '" NaN "', '" \r\t"']


@pytest.mark.parametrize("cell", MISSING_CELLS)
@pytest.mark.parametrize("column", ["number", "text"])
def test_one_missing_value_rule_for_csv_cells(tmp_path, cell, column):
    other = {"number": "5", "text": "abc"}[column]
    table = _table(tmp_path, f"c,y\n{other},1\n{cell},0\n{other},1\n")
    assert table.missing["c"].tolist() == [False, True, False]
    assert table.columns["c"].dtype.kind == ("i" if column == "number" else "O")


@pytest.mark.parametrize("cell", ["NA", "?", "null", "None", "-", "n/a"])
def test_other_tokens_are_categories_not_missing(tmp_path, cell):
    table = _table(tmp_path, f"c,y\nabc,1\n{cell},0\n")
    assert table.missing["c"].tolist() == [False, False] and table.columns["c"].tolist() == ["abc", cell]


def test_the_missing_rule_itself():
    import pandas as pd

    for value in [
        None,
        pd.NA,
        float("nan"),
        np.float16("nan"),
        np.float32("nan"),
        np.float64("nan"),
        "",
        " \t\n",
        "nan",
        "NaN",
        " NAN ",
        "\r\nnan\t",
    ]:
        assert is_missing(value), repr(value)
    # outside the one whitespace set (space, CR, tab, LF) a cell is text as written
    for value in ["NA", "?", "0", 0, 0.0, False, "nan1", "n a n", np.inf, "\u00a0", "\u3000nan"]:
        assert not is_missing(value), repr(value)
    column = np.array([1.0, np.nan], dtype=np.float32)
    assert missing_mask(column).tolist() == [False, True]


@pytest.mark.slow  # 10 to 22 s (a timeout waited out, or every character tried): .ci/run's slow step
def test_the_sql_whitespace_class_is_the_one_rule(tmp_path):
    """The CSV reader's 'blank' is exactly ``glasswork.values.WHITESPACE`` (space, CR, tab, LF), the
    set every export format tests for, over every BMP character."""
    from glasswork.data import sources
    from glasswork.values import WHITESPACE

    con = duckdb.connect()
    blanks = [
        c
        for c in map(chr, range(1, 0x10000))
        if not 0xD800 <= ord(c) < 0xE000
        and con.execute("SELECT regexp_full_match(?, ?)", [c, sources._MISSING_RE]).fetchone()[0]
    ]
    con.close()
    assert sorted(blanks) == sorted(WHITESPACE)


def test_parquet_keeps_stored_types_and_the_same_missing_rule(tmp_path):
    path = tmp_path / "d.parquet"
    duckdb.execute(
        "COPY (SELECT * FROM (VALUES (TRUE, 'yes', '003', 1.5::FLOAT, 'nan', 1), (FALSE, 'no', '004', 'NaN'::FLOAT, "
        "' ', 0), (TRUE, NULL, '005', 2.5::FLOAT, 'x', 1), (FALSE, 'no', '006', NULL, 'y', 0)) "
        f"AS t(flag, answer, code, f, s, y)) TO '{path}' (FORMAT parquet)"
    )
    table = read_file(path, "d.parquet")
    assert table.columns["flag"].dtype.kind == "b" and table.columns["code"].tolist() == ["003", "004", "005", "006"]
    assert table.missing["f"].tolist() == [False, True, False, True]
    assert table.missing["s"].tolist() == [True, True, False, False]
    assert table.missing["answer"].tolist() == [False, False, True, False]


def test_a_real_boolean_column_is_a_feature_and_a_target(tmp_path):
    path = tmp_path / "d.parquet"
    duckdb.execute(
        f"COPY (SELECT i % 3 = 0 AS flag, i % 2 = 0 AS label, i AS n FROM range(60) t(i)) TO '{path}' (FORMAT parquet)"
    )
    p = load_problem(DataSpec(source="d.parquet", target="label", split={"kind": "none"}), tmp_path)
    assert p.task == "binary" and p.classes.tolist() == [False, True]
    assert p.X[:, p.feature_names.index("flag")].tolist() == [float(i % 3 == 0) for i in range(60)]
    q = load_problem(
        DataSpec(source="d.parquet", target="label", positive=True, binarize={}, split={"kind": "none"}), tmp_path
    )
    assert q.classes.tolist() == [False, True] and q.y.tolist() == [int(i % 2 == 0) for i in range(60)]
    assert "flag" in q.feature_names


YES_NO = "x,smoker,code,y\n" + "".join(
    f"{i},{'yes' if i % 3 else 'no'},{i % 4:03d},{'yes' if i % 2 else 'no'}\n" for i in range(40)
)


def test_yes_no_labels_print_as_written_and_positive_yes_works(tmp_path):
    p = _load(tmp_path, YES_NO, target="y", positive="yes", binarize={})
    assert p.task == "binary" and p.classes.tolist() == ["no", "yes"]
    assert p.y.tolist() == [i % 2 for i in range(40)]
    assert "smoker:yes" in p.feature_names and "code:003" in p.feature_names
    q = _load(tmp_path, YES_NO, target="y", binarize={})
    assert q.classes.tolist() == ["no", "yes"]


def test_positive_true_in_yaml_names_a_true_text_label(tmp_path):
    text = "x,y\n" + "".join(f"{i},{'true' if i % 2 else 'false'}\n" for i in range(20))
    p = _load(tmp_path, text, target="y", positive=True)
    assert p.classes.tolist() == ["false", "true"] and p.y.tolist() == [i % 2 for i in range(20)]


def test_integer_targets_keep_working(tmp_path):
    text = "x,y\n" + "".join(f"{i},{i % 2}\n" for i in range(20))
    p = _load(tmp_path, text, target="y", positive=1)
    assert p.classes.tolist() == [0, 1] and p.y.tolist() == [i % 2 for i in range(20)]


def test_codes_are_not_silently_numbers_without_binarize(tmp_path):
    with pytest.raises(DataError, match="codes written like numbers") as err:
        _load(tmp_path, YES_NO, target="y", drop=["smoker"])
    assert "data.types" in err.value.hint and err.value.column == "code"


def test_types_override(tmp_path):
    p = _load(
        tmp_path, YES_NO, target="y", types={"code": "numeric", "smoker": "boolean", "x": "category"}, binarize={}
    )
    names = p.feature_names
    assert "smoker" in names and any(n.startswith("code<=") for n in names) and "x:0" in names
    table = _table(
        tmp_path, "a,b,c\n+5,yes,1\n007,N,0\n,TRUE,1\n", types={"a": "numeric", "b": "boolean", "c": "category"}
    )
    assert table.columns["a"][:2].tolist() == [5.0, 7.0] and table.missing["a"].tolist() == [False, False, True]
    assert table.columns["b"].tolist() == [True, False, True] and table.columns["c"].tolist() == ["1", "0", "1"]


@pytest.mark.parametrize(
    "types, match, row",
    [
        ({"code": "numeric", "smoker": "numeric"}, "value 'no' is not a number, but data.types.smoker is numeric", 1),
        ({"x": "boolean"}, "value '2' is not a yes/no value", 3),
        ({"nosuch": "numeric"}, "data.types names column.*'nosuch'", None),
    ],
)
def test_a_wrong_override_names_the_value_and_row(tmp_path, types, match, row):
    with pytest.raises(DataError, match=match) as err:
        _load(tmp_path, YES_NO, target="y", types=types)
    assert err.value.row == row and err.value.hint
    if row is None:
        assert "data.types.nosuch" in err.value.hint


def test_a_column_named_like_the_row_numbers_is_kept(tmp_path):
    table = _table(tmp_path, "__gw_row,__gw_row_,y\n10,a,1\n20,b,0\n30,c,1\n")
    assert table.columns["__gw_row"].tolist() == [10, 20, 30] and table.columns["__gw_row_"].tolist() == ["a", "b", "c"]
    assert table.rows.tolist() == [1, 2, 3]
    filtered = _table(tmp_path, "__gw_row,y\n10,1\n20,0\n30,1\n", where="__gw_row > 15")
    assert filtered.rows.tolist() == [2, 3] and filtered.columns["__gw_row"].tolist() == [20, 30]


def _shop_csv(path: Path) -> None:
    """1,000 rows: numbers, text, a yes/no feature and target, a 003-style code, a few gaps."""
    rng = np.random.default_rng(1)
    lines = ["age,income,smoker,code,region,bought"]
    for i in range(1000):
        age, income = int(rng.integers(18, 80)), round(float(rng.normal(50, 15)), 2)
        smoker, code = ("yes" if rng.random() < 0.3 else "no"), f"{int(rng.integers(1, 4)):03d}"
        region = ["north", "south", "east"][int(rng.integers(0, 3))]
        score = (age > 40) + (smoker == "yes") + (code == "003") + rng.normal(0, 0.5)
        cells = [
            str(age),
            {5: "", 500: "", 77: "NaN"}.get(i, str(income)),
            smoker,
            code,
            "  " if i == 300 else region,
            "yes" if score > 1.2 else "no",
        ]
        lines.append(",".join(cells))
    path.write_text("\n".join(lines) + "\n")


def test_end_to_end_yes_no_target_through_the_cli(tmp_path):
    """A user's CSV through ``glasswork validate`` and ``run`` (CORELS): the model's labels and
    conditions are the file's text (``yes``, ``smoker:yes``, ``code:003``), never True/3."""
    _shop_csv(tmp_path / "shop.csv")
    spec = tmp_path / "s.yaml"
    spec.write_text(
        "name: shop\nsolver: corels\ndata:\n  source: shop.csv\n  target: bought\n  positive: yes\n"
        "  missing: drop\n  binarize: {}\nconstraints: {max_card: 1}\nobjective: {regularization: 0.01}\n"
        "limits: {time: 60}\n"
    )
    assert CliRunner().invoke(cli, ["validate", str(spec)]).exit_code == 0
    run = CliRunner().invoke(cli, ["run", "--no-store", str(spec)], terminal_width=200)
    assert run.exit_code == 0, run.output
    model = run.stdout.split("Certificate")[0]
    assert "{smoker:yes}" in model and "{code:003}" in model and "({yes})" in model and "({no})" in model
    assert "True" not in model and "False" not in model
    p = load_problem(
        DataSpec(source="shop.csv", target="bought", positive="yes", missing="drop", binarize={}), tmp_path
    )
    assert p.classes.tolist() == ["no", "yes"] and p.n_samples + len(p.test_index) == 996
    assert {"smoker:yes", "code:003", "code:001"} <= set(p.feature_names)


def test_types_override_a_scikit_learn_source():
    p = load_problem(
        DataSpec(source="sklearn:iris", types={"sepal_length_(cm)": "category"}, binarize={}, split={"kind": "none"})
    )
    assert "sepal_length_(cm):5" in p.feature_names and "sepal_length_(cm):5.1" in p.feature_names
    with pytest.raises(DataError, match="data.types names column 'nosuch'"):
        load_problem(DataSpec(source="sklearn:iris", types={"nosuch": "numeric"}))
