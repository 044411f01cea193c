"""Exports that data cannot hijack, and one missing-value rule in every format (issue 23).

A property test drives names, class labels, category values and column names made of quotes,
newlines, comment markers, backslashes, NUL, bidi marks, ESC and code through every built-in
solver's model and every format: the module parses to constants and functions only and imports
with no side effect, the SQL is one ``SELECT`` (DuckDB's and SQLite's parsers) that leaves a
sentinel table alone, and the Python module, DuckDB, SQLite and ``load_model`` predict what the
model predicts, also on rows with each kind of missing value (no prediction). The solvers run
once, on a small table with plain names; each example renames every name in the model, its
inputs and the raw table consistently, which changes no prediction.

Then one regression test per finding of the issue, each run through the real path (spec, data
file, run store, CLI).
"""

from __future__ import annotations

import builtins
import csv
import json
import sqlite3
from pathlib import Path
from typing import Any

import numpy as np
import pandas as pd
import pytest
from click.testing import CliRunner
from glasswork.cli import cli
from glasswork.export import ExportError, ExportRequest, ModelInputs, export_model, export_run, load_model
from glasswork.hooks.registry import get_registry
from glasswork.quoting import printable
from glasswork.running.launch import Launch
from glasswork.store import RunStore
from glasswork.testing.exports import ROW, check_python, check_sql, expected, run_python, run_sql
from hypothesis import HealthCheck, assume, given, settings
from hypothesis import strategies as st

PWN = "gw_pwned"  # what an injected statement would set on builtins
PIECES = [
    '"',
    "'",
    '"""',
    "'''",
    "\n",
    "\r",
    "\r\n",
    "\t",
    "*/",
    "/*",
    "--",
    "#",
    "\\",
    "\\n",
    "\x00",
    "\u202e",
    "\u2028",
    "\x1b[31m",
    "\x1b]0;t\x07",
    ";",
    "[red]",
    "<script>",
    "|",
    "_",
    "*",
    "{",
    "}",
    "x",
    "é",
    f"\nimport builtins; builtins.{PWN} = 1\n#",
    f"\n    import builtins; builtins.{PWN} = 1\n#",
    "\nDROP TABLE glasswork_sentinel;\n--",
    "'); DROP TABLE data; --",
    '" || "',
    "%s",
    "{0}",
]
hostile = st.lists(st.sampled_from(PIECES), min_size=1, max_size=5).map("".join)

# the plain names the solvers see; each example renames every one of them
COLUMNS = ["col_num", "col_two", "col_cat", "col_flag"]
VALUES = ["cv_p", "cv_q", "cv_r"]
CLASSES = ["cls_no", "cls_yes"]
TOKENS = [*COLUMNS, *VALUES, *CLASSES]
N = 90


def _table() -> dict[str, np.ndarray]:
    rng = np.random.default_rng(23)
    num = rng.integers(0, 10, N) / 10
    two = rng.integers(0, 5, N).astype(np.float64)
    cat = np.asarray(rng.choice(VALUES, N), dtype=object)
    flag = rng.random(N) < 0.5
    label = ((cat == "cv_p") & (num > 0.3)) ^ flag ^ (rng.random(N) < 0.1)
    return {
        "col_num": num,
        "col_two": two,
        "col_cat": cat,
        "col_flag": flag,
        "col_label": np.asarray(np.where(label, "cls_yes", "cls_no"), dtype=object),
        "col_y": num * 3 + flag * 2 - two + rng.normal(0, 0.1, N),
    }


def _write_parquet(columns: dict[str, np.ndarray], path: Path) -> None:
    import duckdb

    con = duckdb.connect()
    con.register("t", {k: (v.astype(str) if v.dtype.kind == "O" else v) for k, v in columns.items()})
    con.execute(f"COPY t TO '{path}' (FORMAT parquet)")
    con.close()


SPECS = {
    "corels": {
        "data": {"binarize": {"thresholds": 2}, "target": "col_label", "drop": ["col_y"]},
        "objective": {"regularization": 0.01},
        "constraints": {"max_card": 2},
    },
    "fasterrisk": {
        "data": {"binarize": {"thresholds": 2}, "target": "col_label", "positive": "cls_yes", "drop": ["col_y"]},
        "constraints": {"sparsity": 3, "coefficient_bounds": [-5, 5]},
    },
    "moss": {
        "data": {"target": "col_y", "columns": ["col_num", "col_two", "col_flag"]},
        "objective": {"candidates": {"trees": 30, "depth": 2, "seed": 0}},
        "constraints": {"max_rules": 3},
    },
}


@pytest.fixture(scope="module")
def solved(tmp_path_factory: pytest.TempPathFactory) -> dict[str, tuple[Any, ModelInputs, np.ndarray]]:
    """Each built-in solver's model of the small table: (model, inputs, training matrix)."""
    from ruamel.yaml import YAML

    folder = tmp_path_factory.mktemp("hostile")
    _write_parquet(_table(), folder / "t.parquet")
    out = {}
    for solver, extra in SPECS.items():
        spec = {
            "name": f"hostile-{solver}",
            "solver": solver,
            "limits": {"time": 20},
            **extra,
            "data": {"source": "t.parquet", "split": {"kind": "none"}, **extra["data"]},
        }
        path = folder / f"{solver}.yaml"
        with path.open("w") as f:
            YAML().dump(spec, f)
        outcome = Launch.from_file(path, no_store=True).run([])
        problem = outcome.problem
        out[solver] = (outcome.result.model, ModelInputs.of_problem(problem), problem.X)
    return out


def _rename(value: Any, names: dict[str, str]) -> Any:
    """Every plain name inside ``value`` (a model's dict, its inputs) replaced by its new name."""
    if isinstance(value, str):
        for old, new in names.items():
            value = value.replace(old, new)
        return value
    if isinstance(value, list):
        return [_rename(v, names) for v in value]
    if isinstance(value, dict):
        return {_rename(k, names): _rename(v, names) for k, v in value.items()}
    return value


MISSING = [None, float("nan"), np.float32("nan"), np.float16("nan"), "", " \t", "NaN", " nan\n", "NAN", pd.NA]
NOT_A_NUMBER = ["abc", float("inf"), "1e5e5", "--1", "0x10", "1_0"]


def _flag_form(value: bool, form: str) -> Any:
    return {"bool": value, "text": str(value), "lower": str(value).lower(), "int": int(value), "float": float(value)}[
        form
    ]


@settings(
    max_examples=25,
    derandomize=True,
    deadline=None,
    database=None,
    suppress_health_check=[HealthCheck.function_scoped_fixture, HealthCheck.too_slow],
)
@given(
    names=st.lists(hostile, min_size=len(TOKENS), max_size=len(TOKENS)),
    flag_form=st.sampled_from(["bool", "text", "lower", "int", "float"]),
    numbers_as_text=st.booleans(),
    holes=st.lists(
        st.tuples(st.integers(0, 3), st.integers(0, len(MISSING) + len(NOT_A_NUMBER) - 1)), min_size=1, max_size=4
    ),
)
def test_hostile_names_stay_data_in_every_format(
    solved: dict, names: list[str], flag_form: str, numbers_as_text: bool, holes: list[tuple[int, int]]
) -> None:
    names = [f"{n}{i}" for i, n in enumerate(names)]  # distinct, also to DuckDB (its names ignore case)
    assume(not any(n.casefold() in (ROW, "prediction") or n.casefold().startswith("p_") for n in names))
    assume(not any(t in n for n in names for t in TOKENS))
    rename = dict(zip(TOKENS, names))
    table = _table()
    registry = get_registry()
    for solver, (model, inputs, X) in solved.items():
        doc = _rename(model.to_dict(), rename)
        hostile_inputs = ModelInputs.model_validate(_rename(inputs.model_dump(mode="json"), rename))
        assume(len({f.name for f in hostile_inputs.features}) == len(hostile_inputs.features))
        want_labels, want_proba = expected(model, X)
        want_labels = [_rename(v, rename) if isinstance(v, str) else v for v in want_labels]
        reads = hostile_inputs.columns_of(getattr(model, "features_used", range(len(inputs.features))))
        numeric = set(hostile_inputs.numeric_columns)
        # the raw rows under their new names, numbers and yes/no as the chosen reader gives them
        columns: dict[str, np.ndarray] = {}
        for old in COLUMNS:
            values = table[old].tolist()
            if old == "col_flag":
                values = [_flag_form(v, flag_form) for v in values]
            elif old == "col_cat":
                values = [rename[v] for v in values]
            elif numbers_as_text:
                values = [repr(v) for v in values]
            columns[rename[old]] = np.asarray(values, dtype=object)
        # rows with no usable value in a column the model reads: no prediction in any format
        labels, proba = list(want_labels), None if want_proba is None else want_proba.copy()
        for row, (k, kind) in enumerate(holes):
            column = reads[k % len(reads)]
            bad = (MISSING + NOT_A_NUMBER)[kind]
            if kind >= len(MISSING) and column not in numeric:
                bad = MISSING[kind % len(MISSING)]
            columns[column][row] = bad
            labels[row] = None
            if proba is not None:
                proba[row] = np.nan
        classes = None if want_proba is None else [_rename(str(c), rename) for c in model.classes]
        request = ExportRequest("python", hostile_inputs, "data", {"run_id": "hostile", "name": names[0]})
        got = {"python": run_python(export_model(doc, request, registry), columns)}
        request.format = "sql"
        try:
            sql = export_model(doc, request, registry)
        except ExportError as exc:  # NUL: no SQL engine takes it, so the SQL export refuses it
            assert "NUL" in str(exc) and any("\x00" in n for n in names), exc
        else:
            if not any("\x00" in c for c in columns):
                got.update({f"sql/{e}": run_sql(sql, columns, e, classes) for e in ("duckdb", "sqlite")})
            else:
                check_sql(sql)
        document = {
            "format": "glasswork.model",
            "version": 1,
            "kind": doc["kind"],
            "model": doc,
            "inputs": hostile_inputs.model_dump(mode="json"),
        }
        loaded = load_model(json.loads(json.dumps(document)), registry)
        got["json"] = (list(loaded.predict(columns)), None if proba is None else loaded.predict_proba(columns))
        for fmt, (got_labels, got_proba) in got.items():
            assert [None if v is None else v for v in got_labels] == labels or (
                want_proba is None and _close(got_labels, labels)
            ), (solver, fmt)
            if proba is not None:
                assert np.array_equal(np.isnan(got_proba), np.isnan(proba)), (solver, fmt)
                assert np.nanmax(np.abs(got_proba - proba)) <= 1e-12, (solver, fmt)
        assert not hasattr(builtins, PWN)


def _close(got: list, want: list) -> bool:
    return all(
        (a is None and b is None) or (a is not None and b is not None and abs(a - b) <= 1e-9) for a, b in zip(got, want)
    ) and len(got) == len(want)


# -- one test per finding ----------------------------------------------------------------------------


def _run(
    tmp_path: Path,
    spec: dict,
    columns: dict[str, np.ndarray] | None = None,
    csv_text: str | None = None,
) -> tuple[Path, dict]:
    """Run ``spec`` on a Parquet file of ``columns`` (or a CSV of ``csv_text``), recorded in a store."""
    from ruamel.yaml import YAML

    if csv_text is not None:
        (tmp_path / "d.csv").write_text(csv_text, encoding="utf-8")
        source = "d.csv"
    else:
        _write_parquet(columns, tmp_path / "d.parquet")
        source = "d.parquet"
    spec = {**spec, "data": {"source": source, "split": {"kind": "none"}, **spec.get("data", {})}}
    path = tmp_path / "spec.yaml"
    with path.open("w") as f:
        YAML().dump(spec, f)
    db = tmp_path / "runs.duckdb"
    outcome = Launch.from_file(path, db=db).run([])
    return db, RunStore(db).open().details(outcome.info.run_id)


def _exec_module(text: str) -> dict:
    namespace: dict = {}
    exec(compile(text, "<exported>", "exec"), namespace)
    return namespace


def test_a_spec_name_cannot_run_code_through_the_python_export(tmp_path: Path) -> None:
    name = f"x\nimport builtins; builtins.{PWN} = 1\n#"
    _, details = _run(
        tmp_path,
        {
            "name": name,
            "solver": "corels",
            "data": {"target": "col_label", "drop": ["col_y"], "binarize": {"thresholds": 2}},
        },
        _table(),
    )
    text = export_run(details, "python")
    try:
        check_python(text)
        _exec_module(text)
        assert not hasattr(builtins, PWN)
    finally:
        if hasattr(builtins, PWN):
            delattr(builtins, PWN)
    assert "x\\nimport builtins" in text  # the name is in the header, as one escaped line


def test_a_column_name_cannot_run_code_through_the_python_export(tmp_path: Path) -> None:
    """A Parquet file can name a column anything; the header lists the columns the model reads."""
    evil = f"n\nimport builtins; builtins.{PWN} = 1\n#"
    table = _table()
    table[evil] = table.pop("col_num")
    _, details = _run(
        tmp_path,
        {
            "name": "cols",
            "solver": "moss",
            "data": {"target": "col_y", "columns": [evil, "col_two", "col_flag"]},
            "objective": {"candidates": {"trees": 20}},
            "constraints": {"max_rules": 3},
        },
        table,
    )
    assert evil in details["inputs"]["features"][0]["name"]
    text = export_run(details, "python")
    try:
        module = check_python(text)
        row = {evil: 0.5, "col_two": 1.0, "col_flag": True}
        module["predict"](row)
        assert not hasattr(builtins, PWN)
    finally:
        if hasattr(builtins, PWN):
            delattr(builtins, PWN)


def test_a_class_label_or_category_value_in_a_csv_cannot_run_code(tmp_path: Path) -> None:
    """A score card's module commented each term with its feature (``col:value``) inside
    ``score()``, and the risk table with the positive class: a newline in either ran code."""
    inside = f"v\n    import builtins; builtins.{PWN} = 1\n#"
    label = f"yes\nimport builtins; builtins.{PWN} = 2\n#"
    rng = np.random.default_rng(5)
    rows = []
    for i in range(120):
        cat = ["a", inside, "b"][i % 3]
        flag = bool(rng.random() < 0.5)
        positive = (cat == inside) ^ (rng.random() < 0.15) or (flag and rng.random() < 0.3)
        rows.append([cat, str(int(flag)), label if positive else "no"])
    buffer = tmp_path / "rows.csv"
    with buffer.open("w", newline="") as f:
        csv.writer(f).writerows([["cat", "flag", "label"], *rows])
    _, details = _run(
        tmp_path,
        {
            "name": "labels",
            "solver": "fasterrisk",
            "data": {"target": "label", "positive": label, "binarize": {"thresholds": 2}},
            "constraints": {"sparsity": 2, "coefficient_bounds": [-5, 5]},
        },
        csv_text=buffer.read_text(),
    )
    card = details["models"][0]["model"]
    assert any(inside in f for f in card["features"]) and label in card["classes"]
    text = export_run(details, "python")
    try:
        module = check_python(text)
        for cat, flag, _ in rows:
            module["predict"]({"cat": cat, "flag": flag, "label": ""})
        assert not hasattr(builtins, PWN)
    finally:
        if hasattr(builtins, PWN):
            delattr(builtins, PWN)
    sql = export_run(details, "sql")
    check_sql(sql)


def test_a_name_cannot_drop_a_table_through_the_sql_export(tmp_path: Path) -> None:
    """``sqlite3 db < model.sql`` runs every statement of the file (executescript here)."""
    name = "x\nDROP TABLE data;\n--"
    table = _table()
    evil = 'c"\nDROP TABLE data;\n--'
    table[evil] = table.pop("col_cat")
    _, details = _run(
        tmp_path,
        {
            "name": name,
            "solver": "corels",
            "data": {"target": "col_label", "drop": ["col_y"], "binarize": {"thresholds": 2}},
        },
        table,
    )
    sql = export_run(details, "sql")
    check_sql(sql)
    con = sqlite3.connect(tmp_path / "user.db")
    names = [evil if k == evil else k for k in table if k not in ("col_y",)]
    con.execute("CREATE TABLE data (" + ", ".join('"' + k.replace('"', '""') + '"' for k in names) + ")")
    rows = [[(v.item() if hasattr(v, "item") else v) for v in values] for values in zip(*(table[k] for k in names))]
    con.executemany(f"INSERT INTO data VALUES ({', '.join('?' for _ in names)})", rows)
    con.commit()
    con.executescript(sql.rstrip() + ";")  # what the sqlite3 shell does with the file
    assert con.execute("SELECT COUNT(*) FROM data").fetchone()[0] == N
    import duckdb

    assert len(duckdb.extract_statements(sql)) == 1


def test_sql_refuses_nul_in_a_name_with_a_clear_message() -> None:
    inputs = ModelInputs(source="s", features=[{"name": "f", "column": "a\x00b"}])
    request = ExportRequest("sql", inputs, "data", {"run_id": "r"})
    from glasswork.export import sql_select

    with pytest.raises(ExportError, match="NUL character"):
        sql_select(request, [("prediction", inputs.sql_value(0))])


def test_runs_list_and_show_print_no_control_codes_or_markup(tmp_path: Path) -> None:
    name = "esc\x1b[2J\x1b]0;title\x07 [red]literal[/red] \u202eevil"
    db, details = _run(
        tmp_path,
        {
            "name": name,
            "solver": "corels",
            "data": {"target": "col_label", "drop": ["col_y"], "binarize": {"thresholds": 2}},
        },
        _table(),
    )
    for command in (["runs", "list"], ["runs", "show", "latest"], ["runs", "compare", "latest", "latest"]):
        result = CliRunner().invoke(cli, [*command, "--db", str(db)], env={"COLUMNS": "200"})
        assert result.exit_code == 0, result.output
        assert "\x1b" not in result.output and "\x07" not in result.output and "\u202e" not in result.output, command
        assert "[red]literal" in result.output, command  # markup in data prints as it is written


def _markdown_of(tmp_path: Path, seed: int, values: list[str], yes: str, no: str, spec: dict[str, Any]) -> str:
    """The markdown export of a run whose label is ``yes`` mostly where ``cat`` is ``values[0]``."""
    rng = np.random.default_rng(seed)
    cat = np.asarray(rng.choice(values, N), dtype=object)
    label = np.where((cat == values[0]) ^ (rng.random(N) < 0.05), yes, no).astype(object)
    _, details = _run(tmp_path, {"name": "md", **spec}, {"cat": cat, "label": label})
    return export_run(details, "markdown")


def test_markdown_export_escapes_html_and_markdown(tmp_path: Path) -> None:
    """Class labels and category values with HTML, pipes and emphasis show as text in the table."""
    yes, no = "<script>alert(1)</script>", "*bold*|x"
    spec = {
        "solver": "corels",
        "data": {"target": "label", "binarize": {"thresholds": 2}},
        "objective": {"regularization": 0.001},
    }
    text = _markdown_of(tmp_path, 2, ["c_d", "<b>a</b>|b"], yes, no, spec)
    assert "<script>" not in text and "<b>" not in text and "*bold*" not in text
    assert "&lt;script&gt;alert(1)&lt;/script&gt;" in text and "\\*bold\\*\\|x" in text
    widths = {line.count("|") - line.count("\\|") for line in text.strip().splitlines()}
    assert len(widths) == 1  # no cell broke the table


def test_the_score_card_markdown_escapes_the_positive_label(tmp_path: Path) -> None:
    """Issue 36: FasterRisk's markdown wrote the positive label raw in "Risk of LABEL by score"."""
    yes = "<script>x</script>\n# heading\x1b[31m\u202e"
    spec = {
        "solver": "fasterrisk",
        "data": {"target": "label", "positive": yes, "binarize": {"thresholds": 2}},
        "constraints": {"sparsity": 1},
    }
    text = _markdown_of(tmp_path, 3, ["a", "b"], yes, "no", spec)
    risk_line = next(line for line in text.splitlines() if line.startswith("Risk of"))
    assert "<script>" not in text and "\x1b" not in text and "\u202e" not in text
    assert "&lt;script&gt;" in risk_line and not any(line.startswith("# heading") for line in text.splitlines())


def test_yes_no_and_missing_read_alike_in_every_reader(tmp_path: Path) -> None:
    """A BOOLEAN (Parquet) column read by a module from csv.DictReader text, by SQLite from text,
    by DuckDB from VARCHAR, and a blank / NaN text: what the model gives, or no prediction."""
    table = _table()
    _, details = _run(
        tmp_path,
        {
            "name": "flags",
            "solver": "moss",
            "data": {"target": "col_y", "columns": ["col_num", "col_two", "col_flag"]},
            "objective": {"candidates": {"trees": 30}},
            "constraints": {"max_rules": 3},
        },
        table,
    )
    assert "col_flag" in ModelInputs.model_validate(details["inputs"]).columns
    loaded = load_model(json.loads(export_run(details, "json")))
    want = loaded.predict({k: table[k] for k in ("col_num", "col_two", "col_flag")})
    read = [c for c in loaded.inputs.columns_of(loaded.model.features_used) if c != "col_flag"][0]
    csv_path = tmp_path / "rows.csv"
    with csv_path.open("w", newline="") as f:
        writer = csv.writer(f)
        writer.writerow(["col_num", "col_two", "col_flag"])
        writer.writerows(
            [
                [repr(a), repr(b), str(c)]
                for a, b, c in zip(table["col_num"].tolist(), table["col_two"].tolist(), table["col_flag"].tolist())
            ]
        )
        for bad in ("NaN", " ", "abc"):  # in a column the model reads: no prediction
            writer.writerow([bad if c == read else "1" for c in ("col_num", "col_two")] + ["True"])
    with csv_path.open(newline="") as f:
        rows = list(csv.DictReader(f))
    text_columns = {k: np.asarray([r[k] for r in rows], dtype=object) for k in rows[0]}
    expect = [*want.tolist(), None, None, None]
    labels, _ = run_python(export_run(details, "python"), text_columns)
    assert _close(labels, expect), [(i, a, b) for i, (a, b) in enumerate(zip(labels, expect)) if a != b][:3]
    sql = export_run(details, "sql")
    for engine in ("sqlite", "duckdb"):
        labels, _ = run_sql(sql, text_columns, engine, None)
        assert _close(labels, expect), engine
    assert _close(list(loaded.predict(text_columns)), expect)


def test_load_model_refuses_a_category_pandas_read_as_numbers(tmp_path: Path) -> None:
    """Training saw the text categories "003", "010", "A7"; a batch to predict holds no "A7", so
    pd.read_csv reads the column as int (3, 10): refused, naming the column, never misread."""
    import pandas as pd

    rng = np.random.default_rng(1)
    codes = np.asarray(rng.choice(["003", "010", "A7"], N), dtype=object)
    label = np.where((codes == "003") ^ (rng.random(N) < 0.05), "yes", "no").astype(object)
    _, details = _run(
        tmp_path,
        {
            "name": "codes",
            "solver": "corels",
            "data": {"target": "label", "binarize": {"categorical": ["code"]}},
            "objective": {"regularization": 0.01},
        },
        {"code": codes, "label": label},
    )
    assert "code:003" in json.dumps(details["models"][0]["model"])
    path = tmp_path / "batch.csv"
    batch = codes[codes != "A7"]
    pd.DataFrame({"code": batch}).to_csv(path, index=False)
    frame = pd.read_csv(path)
    assert frame["code"].dtype.kind == "i"  # pandas made "003" the number 3
    loaded = load_model(json.loads(export_run(details, "json")))
    with pytest.raises(ExportError, match=r"column 'code' holds (3|10) .*compares it as text"):
        loaded.predict(frame)
    got = loaded.predict(pd.read_csv(path, dtype={"code": str}))  # read as text: the model's predictions
    want = loaded.model.predict(loaded.inputs.matrix({"code": batch}))
    assert list(got) == list(np.asarray(loaded.model.classes)[want])
    assert "yes" in list(got)


@pytest.mark.parametrize("blank", [None, float("nan"), np.float32("nan"), "", "  ", "NaN", "nan", "pd.NA"])
def test_every_kind_of_missing_value_gives_no_prediction(solved: dict, blank: Any) -> None:
    import pandas as pd

    blank = pd.NA if blank == "pd.NA" else blank
    model, inputs, X = solved["fasterrisk"]
    table = _table()
    columns = {k: np.asarray(table[k], dtype=object) for k in COLUMNS}
    reads = inputs.columns_of(model.features_used)
    for column in reads:
        columns[column][0] = blank
    registry = get_registry()
    request = ExportRequest("python", inputs, "data", {"run_id": "m"})
    doc = model.to_dict()
    labels, _ = run_python(export_model(doc, request, registry), columns)
    assert labels[0] is None and labels[1:] == expected(model, X)[0][1:]
    request.format = "sql"
    sql = export_model(doc, request, registry)
    for engine in ("duckdb", "sqlite"):
        labels, _ = run_sql(sql, columns, engine, [str(c) for c in model.classes])
        assert labels[0] is None and labels[1:] == expected(model, X)[0][1:], engine
    document = {
        "format": "glasswork.model",
        "version": 1,
        "kind": doc["kind"],
        "model": doc,
        "inputs": inputs.model_dump(mode="json"),
    }
    assert load_model(document, registry).predict(columns)[0] is None
    frame = pd.DataFrame({k: pd.array(v.tolist(), dtype="object") for k, v in columns.items()})
    assert load_model(document, registry).predict(frame)[0] is None


def test_export_to_a_terminal_shows_control_characters_escaped(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """SQL carries a label as written (a literal), ESC included: the exact text goes to a file or
    a pipe, and a terminal sees the control codes escaped, with a note."""
    import glasswork.cli.models as models

    label = "yes\x1b[2J\u202e"
    table = _table()
    table["col_label"] = np.asarray([label if v == "cls_yes" else "no" for v in table["col_label"]], dtype=object)
    db, details = _run(
        tmp_path,
        {
            "name": "tty",
            "solver": "corels",
            "data": {"target": "col_label", "drop": ["col_y"], "binarize": {"thresholds": 2}},
        },
        table,
    )
    label = next(c for c in details["models"][0]["model"]["classes"] if c != "no")  # as the data layer read it
    assert not label.isprintable()
    piped = CliRunner().invoke(cli, ["export", "latest", "--format", "sql", "--db", str(db)])
    assert piped.exit_code == 0 and f"'{label}'" in piped.output  # a pipe gets the exact query
    monkeypatch.setattr(models, "_to_terminal", lambda: True)
    for fmt in ("python", "sql", "json", "markdown"):
        shown = CliRunner().invoke(cli, ["export", "latest", "--format", fmt, "--db", str(db)])
        assert shown.exit_code == 0, shown.output
        assert "\x1b" not in shown.output and "\u202e" not in shown.output, fmt
    shown = CliRunner().invoke(cli, ["export", "latest", "--format", "sql", "--db", str(db)])
    assert f"'{printable(label)}'" in shown.output and "shown escaped" in shown.output
