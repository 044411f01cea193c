"""An ID column (issue 25, item 4): a text column with a value per row, one-hot encoded into
hundreds of features, is named in a warning at load with the line that leaves it out."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from click.testing import CliRunner
from glasswork.cli import cli
from glasswork.data import DataSpec, load_problem

HOSTILE = 'id\x1b[31m"]'


def _csv(path: Path, n: int = 300, id_name: str = "passenger_id") -> Path:
    header = '"' + id_name.replace('"', '""') + '"'  # CSV-quoted: any text can be a header
    rows = [f"{header},sex,age,y"]
    rows += [f"P{i:05d},{'mf'[i % 2]},{20 + i % 50},{'yes' if i % 3 == 0 else 'no'}" for i in range(n)]
    path.write_text("\n".join(rows) + "\n", encoding="utf-8")
    return path


def _load(tmp_path: Path, **fields: object):
    _csv(tmp_path / "d.csv", id_name=str(fields.pop("id_name", "passenger_id")))
    fields.setdefault("split", {"kind": "none"})
    return load_problem(DataSpec(source="d.csv", target="y", binarize={}, **fields), tmp_path)


def test_an_id_column_is_named_with_the_line_that_drops_it(tmp_path: Path):
    problem = load_problem(
        DataSpec(source=str(_csv(tmp_path / "d.csv")), target="y", binarize={}, split={"kind": "none"}), tmp_path
    )
    assert len(problem.warnings) == 1
    warning = problem.warnings[0]
    assert 'column "passenger_id" has 300 distinct values in 300 training rows' in warning
    assert "one-hot encoded into 300 features" in warning
    assert 'drop: ["passenger_id"]' in warning


def test_the_training_rows_decide_after_a_split(tmp_path: Path):
    problem = _load(tmp_path, split={"kind": "holdout", "test_size": 0.25, "seed": 0})
    assert "225 distinct values in 225 training rows" in problem.warnings[0]


@pytest.mark.parametrize(
    "fields",
    [
        {"drop": ["passenger_id"]},
        {"columns": ["sex", "age"]},
    ],
)
def test_a_left_out_id_column_gives_no_warning(tmp_path: Path, fields: dict):
    assert _load(tmp_path, **fields).warnings == []


def test_a_few_categories_or_a_small_table_give_no_warning(tmp_path: Path):
    path = tmp_path / "d.csv"
    _csv(path, n=60)  # 60 distinct IDs: fewer than a hundred features, not worth a word
    spec = DataSpec(source="d.csv", target="y", binarize={}, split={"kind": "none"})
    assert load_problem(spec, tmp_path).warnings == []


def test_an_integer_id_listed_as_categorical_is_named(tmp_path: Path):
    rows = ["code,y"] + [f"{1000 + i},{'ab'[i % 2]}" for i in range(150)]
    (tmp_path / "d.csv").write_text("\n".join(rows) + "\n")
    spec = DataSpec(source="d.csv", target="y", binarize={"categorical": ["code"]}, split={"kind": "none"})
    [warning] = load_problem(spec, tmp_path).warnings
    assert 'column "code" has 150 distinct values' in warning


def test_a_hostile_column_name_is_quoted_and_escaped(tmp_path: Path):
    [warning] = _load(tmp_path, id_name=HOSTILE).warnings
    assert "\x1b" not in warning
    assert json.dumps(HOSTILE) in warning


def test_glasswork_run_warns_on_stderr_and_in_the_runs_log(toy_env, tmp_path: Path, monkeypatch):
    monkeypatch.chdir(tmp_path)
    _csv(tmp_path / "d.csv")
    (tmp_path / "s.yaml").write_text(
        "name: ids\nsolver: toy\ndata:\n  source: d.csv\n  target: y\n  binarize: {}\n  split: {kind: none}\n"
    )
    for quiet in ([], ["-q"]):
        events = tmp_path / f"events{len(quiet)}.jsonl"
        result = CliRunner().invoke(
            cli, ["run", "s.yaml", "--no-store", "--events", str(events), *quiet], catch_exceptions=False
        )
        assert result.exit_code == 0, result.output
        stderr = " ".join(result.stderr.split())  # the progress display may wrap it
        assert stderr.count('column "passenger_id" has 300 distinct values') == 1
        assert 'drop: ["passenger_id"]' in stderr
        logged = [json.loads(line) for line in events.read_text().splitlines()]
        warnings = [e for e in logged if e.get("kind") == "log" and e.get("level") == "warning"]
        assert len(warnings) == 1 and "passenger_id" in warnings[0]["message"]
