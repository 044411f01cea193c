"""A newcomer's own table, read as they meant it or refused with what to write: numbers written
with formatting (``12%``, ``$1,200``, ``1,234``, a decimal comma) and dates are not silently
one-hot encoded into one feature per value, a positive label is not silently split by case or
stray whitespace, and an empty file or a repeated column name is named as such."""

from __future__ import annotations

from pathlib import Path

import pytest
from glasswork.data import DataError, DataSpec, load_problem


def _load(tmp_path: Path, text: str, **fields: object):
    (tmp_path / "d.csv").write_text(text)
    fields.setdefault("split", {"kind": "none"})
    fields.setdefault("target", "y")
    return load_problem(DataSpec(source="d.csv", **fields), tmp_path)


def _csv(values: list[str], delimiter: str = ",") -> str:
    rows = [f'"{v}"{delimiter}{"yes" if i % 3 else "no"}' for i, v in enumerate(values)]
    return f"c{delimiter}y\n" + "\n".join(rows) + "\n"


FORMATTED = {
    "percent": ["12%", "5%", "80%", "33%", "7%", "61%"],
    "currency": ["$1,200", "$950", "$12,000", "$3,400", "$88", "$1,000,000"],
    "euro": ["1.200 €", "950 €", "€ 12", "3.400,50 €", "88 €", "1 €"],
    "thousands": ["1,234", "2,345", "12,000", "3,400", "1,000,000", "5,555"],
    "decimal comma": ["1,66", "2,00", "1,5", "0,75", "1,82", "1,70"],
    "dates": ["2020-01-02", "2021-03-04", "2022-05-06", "2020-07-08", "2021-09-10", "2022-11-12"],
    "date times": ["2020-01-02 10:00", "2021-03-04T11:30:00", "2022-05-06 09:15:00"] * 2,
}


@pytest.mark.parametrize("case", sorted(FORMATTED))
@pytest.mark.parametrize("binarize", [{}, {"numeric": "keep"}])
def test_formatted_numbers_and_dates_are_refused_not_one_hot_encoded(tmp_path, case, binarize):
    values = FORMATTED[case]
    delimiter = ";" if case == "decimal comma" else ","
    with pytest.raises(DataError) as info:
        _load(tmp_path, _csv(values, delimiter), binarize=binarize)
    message = str(info.value)
    assert "d.csv:2" in message and "column 'c'" in message and repr(values[0]) in message
    assert "binarize.categorical" in message  # what to write to keep them as categories


@pytest.mark.parametrize("case", sorted(FORMATTED))
def test_listing_the_column_as_categorical_keeps_its_values_as_written(tmp_path, case):
    values = FORMATTED[case]
    delimiter = ";" if case == "decimal comma" else ","
    problem = _load(tmp_path, _csv(values, delimiter), binarize={"categorical": ["c"]})
    assert {f"c:{v}" for v in values} <= set(problem.feature_names)


def test_without_binarize_a_formatted_number_says_to_write_plain_numbers(tmp_path):
    with pytest.raises(DataError, match=r"d\.csv:2: value '12%' is not a number.*plain number"):
        _load(tmp_path, _csv(FORMATTED["percent"]))


@pytest.mark.parametrize(
    "values",
    [
        ["Paris", "Lyon", "Nice", "Paris", "Lyon", "Nice"],
        ["18-25", "26-40", "41-65", ">65", "18-25", "26-40"],
        ["A1", "B2", "C3", "A1", "B2", "C3"],
        ["01", "02", "003", "01", "02", "003"],
        ["1-2", "3/4", "No. 5", "1st", "2nd", "3rd"],
    ],
)
def test_real_categories_are_still_one_hot_encoded(tmp_path, values):
    problem = _load(tmp_path, _csv(values), binarize={})
    assert {f"c:{v}" for v in values} <= set(problem.feature_names)


@pytest.mark.parametrize(
    "labels, positive",
    [
        (["Yes", "yes", "YES", "no", "No", "no"], None),
        (["Yes", "yes", "YES", "no", "No", "no"], "yes"),
        ([" yes", "yes", "yes ", "no", "no", "no"], None),
        ([" yes", "yes", "yes ", "no", "no", "no"], "yes"),
    ],
)
def test_labels_differing_only_in_case_or_spaces_are_refused_not_split(tmp_path, labels, positive):
    """``positive: yes`` made ``Yes`` and ``YES`` negatives, and without it the target had five
    classes: a label flipped or split by a spreadsheet's spelling."""
    text = "a,y\n" + "".join(f"{i % 4},{v}\n" for i, v in enumerate(labels * 3))
    fields = {} if positive is None else {"positive": positive}
    with pytest.raises(DataError) as info:
        _load(tmp_path, text, binarize={}, **fields)
    message = str(info.value)
    assert "column 'y'" in message and "differ only in case or spaces" in message
    assert "d.csv:" in message


def test_labels_with_consistent_spelling_are_kept_as_written(tmp_path):
    text = "a,y\n" + "".join(f"{i % 4},{' Yes' if i % 3 else 'no '}\n" for i in range(12))
    problem = _load(tmp_path, text, binarize={})
    assert list(problem.classes) == [" Yes", "no "]


def test_a_test_file_label_spelled_differently_is_not_made_negative(tmp_path):
    (tmp_path / "t.csv").write_text("a,y\n1,Yes\n2,no\n")
    text = "a,y\n" + "".join(f"{i % 4},{'yes' if i % 3 else 'no'}\n" for i in range(12))
    with pytest.raises(DataError, match=r"t\.csv:2: test label 'Yes' differs from the positive label 'yes'"):
        _load(tmp_path, text, binarize={}, positive="yes", test="t.csv")


@pytest.mark.parametrize("text", ["", "\n", "\n\n  \n"])
def test_an_empty_file_is_named_as_empty(tmp_path, text):
    """DuckDB reads an empty file as one column 'column0', so the message was 'target column 'y'
    is not in the data; set 'target' to one of: column0'."""
    with pytest.raises(DataError) as info:
        _load(tmp_path, text, binarize={})
    message = str(info.value)
    assert "d.csv" in message and "empty" in message and "column0" not in message


@pytest.mark.parametrize(
    "header, repeated",
    [("age,age,y", "age"), ("a,b,A,y", None), ("x,x,x,y", "x"), ("age,age_1,y", None), ('"a,b","a,b",y', "a,b")],
)
def test_a_column_name_written_twice_is_refused_not_renamed(tmp_path, header, repeated):
    """DuckDB renames the second 'age' to 'age_1', a column the user's table does not have: the
    exports would read a column that is not there."""
    n = header.count(",") + 1 - header.count('"a,b"')
    text = (
        header
        + "\n"
        + "".join(
            ",".join([str(i % 5 + j) for j in range(n - 1)] + ["yes" if i % 3 else "no"]) + "\n" for i in range(12)
        )
    )
    if repeated is None:
        assert _load(tmp_path, text, binarize={}).feature_names
        return
    with pytest.raises(DataError) as info:
        _load(tmp_path, text, binarize={})
    message = str(info.value)
    assert "d.csv:1" in message and repr(repeated) in message and "in the header" in message


def test_missing_markers_in_a_text_column_are_named_in_a_warning(tmp_path):
    """'NA', 'N/A', 'null', '?', '-' stay categories (they may be real values), but a user who
    meant them as missing is told, not left with silent 'city:N/A' features."""
    cities = ["Paris", "Lyon", "N/A", "Nice", "null", "Paris", "?", "Lyon", "-", "NA", "Nice", "Paris"]
    text = "city,y\n" + "".join(f"{c},{'yes' if i % 3 else 'no'}\n" for i, c in enumerate(cities))
    problem = _load(tmp_path, text, binarize={})
    assert "city:N/A" in problem.feature_names  # still read as written
    assert len(problem.warnings) == 1
    warning = problem.warnings[0]
    for marker in ["'N/A'", "'null'", "'?'", "'-'", "'NA'"]:
        assert marker in warning
    assert 'column "city"' in warning and "not missing" in warning and "empty" in warning


def test_no_warning_for_ordinary_categories(tmp_path):
    text = "city,y\n" + "".join(
        f"{c},{'yes' if i % 3 else 'no'}\n" for i, c in enumerate(["Paris", "Lyon", "Nice"] * 4)
    )
    assert _load(tmp_path, text, binarize={}).warnings == []


def test_missing_markers_in_a_numeric_column_say_how_to_write_missing(tmp_path):
    ages = ["30", "41", "NA", "52", "?", "60", "33", "-", "45", "29", "38", "50"]
    text = "age,y\n" + "".join(f"{a},{'yes' if i % 3 else 'no'}\n" for i, a in enumerate(ages))
    with pytest.raises(DataError, match=r"d\.csv:4: value 'NA' is not a number.*leave the cell empty.*missing: drop"):
        _load(tmp_path, text, binarize={})


@pytest.mark.parametrize(
    "name, kind", [("d.jsonl", "JSON"), ("d.json", "JSON"), ("d.ndjson", "JSON"), ("d.xlsx", "Excel")]
)
def test_a_file_of_another_format_is_named_not_read_as_a_csv(tmp_path, name, kind):
    """A JSON-lines file was read as a one-column CSV: 'target column 'y' is not in the data; set
    'target' to one of: {"age": 26, ...}'."""
    (tmp_path / name).write_text("".join(f'{{"a": {i}, "y": "{"yes" if i % 3 else "no"}"}}\n' for i in range(12)))
    with pytest.raises(DataError) as info:
        load_problem(DataSpec(source=name, target="y", binarize={}, split={"kind": "none"}), tmp_path)
    message = str(info.value)
    assert name in message and kind in message and ".parquet" in message and "{" not in message


@pytest.mark.parametrize("command", ["validate", "run"])
def test_validate_and_run_refuse_a_spreadsheet_column_with_exit_2(tmp_path, command):
    """The semicolon file with decimal commas a European spreadsheet saves: refused before any
    search, with the file, line, column and what to write."""
    from click.testing import CliRunner
    from glasswork.cli import cli

    rows = [f"{20 + i};{1 + (i % 9) / 10:.2f};{'yes' if i % 3 else 'no'}".replace(".", ",") for i in range(30)]
    (tmp_path / "d.csv").write_text("age;height;y\n" + "\n".join(rows) + "\n")
    spec = tmp_path / "s.yaml"
    spec.write_text("name: eu\nsolver: corels\ndata:\n  source: d.csv\n  target: y\n  binarize: {}\n")
    result = CliRunner().invoke(cli, [command, "--no-store", str(spec)] if command == "run" else [command, str(spec)])
    assert result.exit_code == 2, result.output
    assert "d.csv:2: value '1,00' is a number written with formatting" in result.output
    assert "column 'height'" in result.output and "Traceback" not in result.output


def test_categories_differing_only_in_case_or_spaces_are_named_in_a_warning(tmp_path):
    """'Paris', ' Paris' and 'paris' are three features as written (the exports compare the text
    as written too), so the user is told rather than left with a city split three ways."""
    cities = ["Paris", " Paris", "paris", "Lyon", "Lyon", "Nice"] * 2
    text = "city,y\n" + "".join(f"{c},{'yes' if i % 3 else 'no'}\n" for i, c in enumerate(cities))
    problem = _load(tmp_path, text, binarize={})
    assert {"city:Paris", "city: Paris", "city:paris"} <= set(problem.feature_names)
    assert len(problem.warnings) == 1
    warning = problem.warnings[0]
    assert 'column "city"' in warning and "'Paris', ' Paris', 'paris'" in warning and "case or spaces" in warning


def test_a_repeated_column_left_out_of_the_model_does_not_stop_the_load(tmp_path):
    """The ProPublica COMPAS file writes 'decile_score' twice: leaving both copies out (the hint
    says how) loads the rest of the file."""
    text = "age,score,score,y\n" + "".join(f"{20 + i},{i % 4},{i % 4},{'yes' if i % 3 else 'no'}\n" for i in range(12))
    with pytest.raises(DataError, match=r'drop: \["score", "score_1"\]'):
        _load(tmp_path, text, binarize={})
    assert _load(tmp_path, text, binarize={}, drop=["score", "score_1"]).feature_names


def test_a_file_not_in_utf8_is_named_with_the_line_and_the_encoding_to_save(tmp_path):
    """Excel on Windows saves CSV as cp1252: DuckDB said only 'CSV Error on Line: 4'."""
    rows = ["age;city;y"] + [f"{20 + i};{'Nîmes' if i == 2 else 'Paris'};{'yes' if i % 3 else 'no'}" for i in range(12)]
    (tmp_path / "d.csv").write_bytes("\n".join(rows).encode("cp1252") + b"\n")
    with pytest.raises(DataError) as info:
        load_problem(DataSpec(source="d.csv", target="y", binarize={}, split={"kind": "none"}), tmp_path)
    message = str(info.value)
    assert "d.csv:4" in message and "UTF-8" in message and "0xee" in message.lower()


@pytest.mark.parametrize("delimiter", [";", ",", "\t"])
def test_excels_sep_line_is_named(tmp_path, delimiter):
    rows = [f"sep={delimiter}", f"age{delimiter}y"] + [
        f"{20 + i}{delimiter}{'yes' if i % 3 else 'no'}" for i in range(12)
    ]
    (tmp_path / "d.csv").write_text("\n".join(rows) + "\n")
    with pytest.raises(DataError, match=r"d\.csv:1: .*'sep=.*delete that line"):
        load_problem(DataSpec(source="d.csv", target="y", binarize={}, split={"kind": "none"}), tmp_path)
