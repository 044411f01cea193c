"""A model that decides every row alike (the certified optimum of a CORELS run can be the empty rule
list) exports as valid SQL in SQLite and DuckDB and as Python, and its header says it reads no column
(issue 36)."""

from __future__ import annotations

import numpy as np
import pytest
from glasswork.export import export_run
from glasswork.running.launch import Launch
from glasswork.store import RunStore
from glasswork.testing.exports import run_python, run_sql
from loans_table import loans_frame, loans_spec


@pytest.fixture(scope="module")
def empty_list(tmp_path_factory: pytest.TempPathFactory) -> dict:
    folder = tmp_path_factory.mktemp("empty")
    spec = loans_spec(folder, "corels", "objective: {regularization: 0.3}\n", binarize=True)
    db = folder / "runs.duckdb"
    outcome = Launch.from_file(spec, [], db=db).run([])
    details = RunStore(db).open().details(outcome.info.run_id)
    assert details["models"][0]["model"]["rules"] == []  # the optimum at this lambda: the default alone
    return details


@pytest.mark.parametrize("engine", ["sqlite", "duckdb"])
def test_the_empty_rule_list_is_valid_sql(empty_list: dict, engine: str) -> None:
    text = export_run(empty_list, "sql")
    assert "CASE" not in text
    frame = loans_frame(50, seed=7).drop(columns="default")
    columns = {c: frame[c].to_numpy() for c in frame.columns}
    labels, probas = run_sql(text, columns, engine, list(empty_list["models"][0]["model"]["classes"]))
    default = empty_list["models"][0]["model"]["default"]["prediction"]
    assert labels == [default] * 50
    python_labels, python_probas = run_python(export_run(empty_list, "python"), columns)
    assert python_labels == labels
    assert probas is not None and python_probas is not None
    np.testing.assert_allclose(probas, python_probas)


@pytest.mark.parametrize("fmt", ["sql", "python"])
def test_the_header_of_a_model_that_reads_nothing_says_so(empty_list: dict, fmt: str) -> None:
    header = [line for line in export_run(empty_list, fmt).splitlines() if "Reads" in line]
    assert len(header) == 1
    assert "Reads none of the raw columns" in header[0]
    assert "credit_score" not in header[0]
