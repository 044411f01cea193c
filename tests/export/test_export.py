"""Every built-in solver's model exported to python, sql (DuckDB and SQLite), json and markdown,
from the run store, and checked on the raw test rows against the model itself: labels bit for
bit, probabilities within 1e-12. Also: old runs without inputs, a kind no plugin exports, the
json document's schema, and the CLI commands."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import numpy as np
import pytest
from click.testing import CliRunner
from export_fixtures import CASES, ROOT, runs  # noqa: F401  (the module-scoped fixture)
from glasswork.cli import cli
from glasswork.export import (
    DOCUMENT_VERSION,
    ExportError,
    ModelInputs,
    export_run,
    load_model,
    model_schema,
    python_prelude,
    sql_literal,
)
from glasswork.hooks.registry import get_registry
from glasswork.quoting import markdown_text
from glasswork.running.launch import Launch
from glasswork.store import RunStore
from glasswork.testing.exports import ROW, expected, raw_columns, run_python, run_sql


def _test_part(outcome: object, launch: Launch) -> tuple[dict[str, np.ndarray], np.ndarray]:
    problem = outcome.problem  # type: ignore[attr-defined]
    data = launch.loaded.spec.data
    return raw_columns(data, problem, "test", launch.loaded.base_dir), problem.X_test


def _same(got: tuple[list, np.ndarray | None], want: tuple[list, np.ndarray | None], what: str) -> None:
    labels, proba = got
    want_labels, want_proba = want
    assert labels == want_labels, f"{what}: labels differ"
    assert all(
        type(a) is type(b) or isinstance(a, (int, float)) and isinstance(b, (int, float))
        for a, b in zip(labels, want_labels)
    )
    if want_proba is not None:
        assert proba is not None and proba.shape == want_proba.shape
        assert np.max(np.abs(proba - want_proba)) <= 1e-12, what


@pytest.mark.parametrize("case", list(CASES))
@pytest.mark.parametrize("fmt", ["python", "sql", "json", "markdown"])
def test_export_reproduces_the_model_on_the_raw_test_rows(runs: dict, case: str, fmt: str, tmp_path: Path) -> None:
    outcome, details, launch = runs[case]
    model = outcome.result.model
    columns, X_test = _test_part(outcome, launch)
    want = expected(model, X_test)
    assert len(want[0]) == details["n_test"] > 0
    text = export_run(details, fmt)
    if fmt == "python":
        assert "glasswork" not in text.split('"""', 2)[2]  # self-contained: no glasswork import
        _same(run_python(text, columns), want, "python")
    elif fmt == "sql":
        classes = None if want[1] is None else [c.item() if hasattr(c, "item") else c for c in model.classes]
        for engine in ("duckdb", "sqlite"):
            _same(run_sql(text, columns, engine, classes), want, f"sql/{engine}")
    elif fmt == "json":
        import glasswork

        path = tmp_path / "model.json"
        path.write_text(text)
        loaded = glasswork.load_model(path)
        assert loaded.document.run["run_id"] == details["run_id"]
        labels = [v.item() if hasattr(v, "item") else v for v in np.asarray(loaded.predict(columns), dtype=object)]
        proba = None if want[1] is None else np.asarray(loaded.predict_proba(columns))
        _same((labels, proba), want, "json")
    else:
        lines = text.strip().splitlines()
        assert lines[0].startswith("| #") and set(lines[1]) <= {"|", "-"}
        names = [
            r.get("antecedent") or r.get("text") for r in details["models"][0]["model"].get("rules", [])
        ] or details["models"][0]["model"].get("features")
        assert names and all(markdown_text(n) in text for n in names)  # each name as literal Markdown text


def test_the_compas_rule_list_reads_raw_categories(runs: dict) -> None:
    text = export_run(runs["corels_compas"][1], "sql")
    assert "CAST(\"sex\" AS VARCHAR) = 'Male'" in text and "CAST(\"priors\" AS VARCHAR) = '>3'" in text
    assert text.count("CASE") == 6  # 3 outputs, each NULL on a NULL input


def test_thresholds_and_negations_are_written_over_raw_columns(runs: dict) -> None:
    details = runs["corels_breast_cancer"][1]
    inputs = ModelInputs.model_validate(details["inputs"])
    ops = {c.op for f in inputs.features for c in f.all or []}
    assert ops == {"<="}  # thresholds (CORELS mines their negations as items of value 0)
    assert set(inputs.columns) <= set(
        raw_columns(runs["corels_breast_cancer"][2].loaded.spec.data, runs["corels_breast_cancer"][0].problem, "train")
    )


def test_inputs_agree_with_the_binarizer_on_every_row(runs: dict) -> None:
    for case in ("corels_breast_cancer", "fasterrisk_breast_cancer"):
        outcome, details, launch = runs[case]
        inputs = ModelInputs.model_validate(details["inputs"])
        columns, X_test = _test_part(outcome, launch)
        assert np.array_equal(inputs.matrix(columns), X_test)


def test_a_run_without_inputs_says_what_is_missing(runs: dict) -> None:
    details = dict(runs["corels_compas"][1], inputs=None)
    for fmt in ("python", "sql"):
        with pytest.raises(ExportError, match="recorded before glasswork kept a model's inputs"):
            export_run(details, fmt)
    assert export_run(details, "markdown").startswith("| #")  # what needs no inputs still works
    assert json.loads(export_run(details, "json"))["inputs"] is None


def test_a_kind_no_plugin_exports_is_named() -> None:
    details = {"run_id": "x" * 32, "name": "n", "models": [{"model": {"kind": "mystery_tree"}}]}
    with pytest.raises(ExportError, match="no installed plugin exports 'mystery_tree' models as sql"):
        export_run(details, "sql")
    with pytest.raises(ExportError, match="no installed plugin reads 'mystery_tree'"):
        load_model(
            {"format": "glasswork.model", "version": 1, "kind": "mystery_tree", "model": {"kind": "mystery_tree"}}
        )


def test_an_export_or_load_hook_answering_the_wrong_type_is_named() -> None:
    """A plugin whose ``export_model`` answers with something that is not text, or whose
    ``load_model`` answers with something that cannot predict, is named in the error."""
    from glasswork import hookimpl
    from glasswork.hooks.registry import Registry

    class _Wrong:
        @staticmethod
        @hookimpl
        def export_model(model: dict[str, Any]) -> Any:
            return b"bytes" if model.get("kind") == "odd" else None

        @staticmethod
        @hookimpl
        def load_model(model: dict[str, Any]) -> Any:
            return dict(model) if model.get("kind") == "odd" else None

    registry = Registry(builtins=False, entry_points=False, disabled=(), extra=[("wrong", _Wrong)])
    details = {"run_id": "x" * 32, "name": "n", "models": [{"model": {"kind": "odd"}}]}
    with pytest.raises(ExportError, match=r"\(plugin 'wrong'\) returned bytes, not text"):
        export_run(details, "markdown", registry=registry)
    document = {"format": "glasswork.model", "version": 1, "kind": "odd", "model": {"kind": "odd"}}
    with pytest.raises(ExportError, match="plugin 'wrong' rebuilt the 'odd' model as a dict, which has no predict"):
        load_model(document, registry=registry)


def test_load_model_rejects_other_documents(tmp_path: Path) -> None:
    bad = tmp_path / "bad.json"
    bad.write_text('{"format": "glasswork.model", "version": 99, "kind": "rule_list", "model": {}}')
    with pytest.raises(ExportError, match="version 99"):
        load_model(bad)
    bad.write_text('{"kind": 3}')
    with pytest.raises(ExportError, match="not a glasswork model document"):
        load_model(bad)
    with pytest.raises(ExportError, match="cannot read"):
        load_model(tmp_path / "absent.json")


def test_the_published_model_schema_is_current() -> None:
    published = json.loads((ROOT / "specs" / "glasswork.model.schema.json").read_text())
    assert published == json.loads(json.dumps(model_schema()))
    assert published["properties"]["version"]["const"] == DOCUMENT_VERSION


def test_sql_literals_read_back_as_the_same_double() -> None:
    import sqlite3

    import duckdb

    values = [0.1, 1 / 3, 25.0, -1e-300, 123456789.123456789, 2.0**60]
    for v in values:
        text = sql_literal(v)
        assert duckdb.connect().execute(f"SELECT {text}").fetchone()[0] == v
        assert sqlite3.connect(":memory:").execute(f"SELECT {text}").fetchone()[0] == v
    assert sql_literal("O'Neil") == "'O''Neil'"


def test_cli_export_and_report(runs: dict, tmp_path: Path) -> None:
    db = Path(runs["corels_compas"][2].store.path)
    run_id = runs["corels_compas"][1]["run_id"]
    cli_runner = CliRunner()
    result = cli_runner.invoke(cli, ["export", run_id[:10], "--format", "sql", "--db", str(db), "--table", "compas"])
    assert result.exit_code == 0, result.output
    assert 'FROM "compas"' in result.output
    out = tmp_path / "m.py"
    result = cli_runner.invoke(cli, ["export", run_id, "--format", "python", "-o", str(out), "--db", str(db)])
    assert result.exit_code == 0 and "def predict_proba" in out.read_text()
    result = cli_runner.invoke(cli, ["export", "nope", "--format", "python", "--db", str(db)])
    assert result.exit_code == 2 and "no run with an id starting 'nope'" in result.output
    card = tmp_path / "card.html"
    result = cli_runner.invoke(cli, ["report", run_id, "-o", str(card), "--db", str(db)])
    assert result.exit_code == 0, result.output
    assert "Proven optimal" in card.read_text()


def test_cli_export_of_an_unexportable_kind_exits_2(tmp_path: Path) -> None:
    from glasswork.contract.record import RunInfo, start_record

    store = RunStore(tmp_path / "s.duckdb").open()
    info = RunInfo("f" * 32, "odd", "mystery", "1", "h", {}, None, "fp", 1, 0, 1, "2026-01-01T00:00:00+00:00")
    store.write_records(
        [
            start_record(info),
            {
                "kind": "finish",
                "run_id": info.run_id,
                "result": {
                    "status": "heuristic",
                    "objective": 1.0,
                    "model": {"kind": "mystery_tree"},
                    "stats": {},
                    "metrics": {},
                },
            },
        ]
    )
    result = CliRunner().invoke(cli, ["export", "latest", "--format", "sql", "--db", str(store.path)])
    assert result.exit_code == 2
    assert "no installed plugin exports 'mystery_tree' models as sql" in result.output
    assert "inputs" not in store.details(info.run_id) or store.details(info.run_id)["inputs"] is None
    assert get_registry() is not None


def test_cli_export_of_a_run_recorded_without_inputs_exits_2(runs: dict, tmp_path: Path) -> None:
    from glasswork.contract.record import RunInfo, start_record

    details = runs["corels_compas"][1]
    store = RunStore(tmp_path / "old.duckdb").open()
    info = RunInfo("e" * 32, "old", "corels", "1", "h", {}, None, "fp", 1, 0, 1, "2026-01-01T00:00:00+00:00")
    assert info.inputs is None  # as every run recorded before schema version 3
    store.write_records(
        [
            start_record(info),
            {
                "kind": "finish",
                "run_id": info.run_id,
                "result": {
                    "status": "optimal",
                    "objective": 0.3,
                    "lower_bound": 0.3,
                    "model": details["models"][0]["model"],
                    "stats": {},
                    "metrics": {},
                },
            },
        ]
    )
    result = CliRunner().invoke(cli, ["export", "latest", "--format", "sql", "--db", str(store.path)])
    assert result.exit_code == 2
    assert "does not record how its features come from the raw columns" in result.output
    result = CliRunner().invoke(cli, ["export", "latest", "--format", "markdown", "--db", str(store.path)])
    assert result.exit_code == 0 and "sex:Male" in result.output


@pytest.mark.parametrize(
    "options",
    [
        {},
        {"negations": True},
        {"collapse_binary": True, "negations": True},
        {"method": "uniform", "thresholds": 3, "categorical": ["n"]},
        {"grid": {"x": [0.1, 0.35]}, "category_order": "sorted"},
    ],
)
def test_binarizer_conditions_compute_what_transform_computes(options: dict) -> None:
    from glasswork.data.binarize import Binarizer
    from glasswork.data.spec import BinarizeSpec
    from glasswork.export import Condition, Feature

    rng = np.random.default_rng(3)
    columns = {
        "x": rng.normal(size=200).round(2),
        "n": rng.integers(0, 4, size=200),
        "b": rng.integers(0, 2, size=200),
        "s": np.asarray(rng.choice(["a", "b'q"], size=200), dtype=object),
        "t": np.asarray(rng.choice(["u", "v", "w"], size=200), dtype=object),
    }
    fitted = Binarizer(BinarizeSpec(**options)).fit({k: v[:150] for k, v in columns.items()}, list(columns))
    names, X = fitted.transform(columns)
    conditions = fitted.conditions()
    assert [c[0] for c in conditions] == names
    inputs = ModelInputs(
        source="synthetic",
        features=[
            Feature(name=n, all=[Condition(column=c, op=op, value=v.item() if hasattr(v, "item") else v)])
            for n, c, op, v in conditions
        ],
    )
    assert np.array_equal(inputs.matrix(columns), X)
    rows = [
        {k: (v.item() if hasattr(v, "item") else v) for k, v in zip(columns, values)}
        for values in zip(*columns.values())
    ]
    readers: dict = {}  # the module's raw-value readers, which the expressions call
    exec(python_prelude(inputs), readers)
    for j in range(len(names)):  # the python and SQL expressions agree with the matrix too
        test = eval(compile(f"lambda row: {inputs.python_test(j)}", "<test>", "eval"), readers)
        assert [int(test(r)) for r in rows] == X[:, j].tolist(), names[j]
    import duckdb

    con = duckdb.connect()
    con.register("data", {k: np.asarray(v) for k, v in columns.items()})
    sql = ", ".join(f"CASE WHEN {inputs.sql_test(j)} THEN 1 ELSE 0 END" for j in range(len(names)))
    assert np.array_equal(np.asarray(con.execute(f"SELECT {sql} FROM data").fetchall()), X)
    # the same rows as text, as csv.DictReader and sqlite3's CSV import give them: numeric
    # categories (n:1) and thresholds must still be judged as numbers
    import sqlite3

    text_rows = [{k: str(v) for k, v in r.items()} for r in rows]
    for j in range(len(names)):
        test = eval(compile(f"lambda row: {inputs.python_test(j)}", "<test>", "eval"), readers)
        assert [int(test(r)) for r in text_rows] == X[:, j].tolist(), f"python on text rows: {names[j]}"
    lite = sqlite3.connect(":memory:")
    lite.execute("CREATE TABLE data (" + ", ".join(f'"{k}" TEXT' for k in columns) + ")")
    lite.executemany(
        f"INSERT INTO data VALUES ({', '.join('?' for _ in columns)})", [list(r.values()) for r in text_rows]
    )
    assert np.array_equal(np.asarray(lite.execute(f"SELECT {sql} FROM data").fetchall()), X), "sqlite on text"
    assert np.array_equal(inputs.matrix({k: np.asarray([r[k] for r in text_rows]) for k in columns}), X)


def test_a_version_2_store_upgrades_and_its_runs_say_inputs_are_missing(runs: dict, tmp_path: Path) -> None:
    import duckdb
    from glasswork.store import MIGRATIONS

    path = tmp_path / "v2.duckdb"
    con = duckdb.connect(str(path))
    for step in MIGRATIONS[:2]:  # the store as glasswork wrote it before inputs were kept
        for statement in step:
            con.execute(statement)
    con.execute("INSERT INTO meta VALUES ('schema_version', '2')")
    model = runs["corels_compas"][1]["models"][0]["model"]
    con.execute(
        "INSERT INTO runs (run_id, name, solver, spec, state, status, objective, lower_bound, started_at) "
        "VALUES ('abc123', 'old', 'corels', '{}', 'finished', 'optimal', 0.3, 0.3, now())"
    )
    con.execute("INSERT INTO artifacts VALUES ('abc123', 'model', 'rule_list', ?, 'text')", [json.dumps(model)])
    con.close()
    store = RunStore(path).open()
    details = store.details("abc123")
    assert details["inputs"] is None
    with pytest.raises(ExportError, match="cannot be exported as sql; run its spec again"):
        export_run(details, "sql")
    assert "sex:Male" in export_run(details, "markdown")


def test_run_export_writes_after_the_run(runs: dict, tmp_path: Path) -> None:
    spec = str(ROOT / "specs" / "corels_compas.yaml")
    sql, card = tmp_path / "m.sql", tmp_path / "card.html"
    result = CliRunner().invoke(
        cli,
        ["run", spec, "-q", "--db", str(tmp_path / "r.duckdb"), "--export", f"sql:{sql}", "--export", f"html:{card}"],
    )
    assert result.exit_code == 0, result.output
    assert f"wrote {sql} (sql)" in result.output and "CASE" in sql.read_text()
    assert "Proven optimal" in card.read_text()
    result = CliRunner().invoke(cli, ["run", spec, "-q", "--db", str(tmp_path / "r.duckdb"), "--export", "pdf"])
    assert result.exit_code == 2 and "unknown format 'pdf'" in result.output and "nothing was run" in result.output
    result = CliRunner().invoke(cli, ["run", spec, "-q", "--no-store", "--export", "sql"])
    assert result.exit_code == 2 and "--export needs the run store" in result.output


def test_export_and_report_into_a_missing_folder_make_it(runs: dict, tmp_path: Path) -> None:
    db = Path(runs["corels_compas"][2].store.path)
    sql, card = tmp_path / "new" / "deeper" / "m.sql", tmp_path / "cards" / "card.html"
    result = CliRunner().invoke(cli, ["export", "latest", "--format", "sql", "-o", str(sql), "--db", str(db)])
    assert result.exit_code == 0, result.output
    assert "CASE" in sql.read_text()
    result = CliRunner().invoke(cli, ["report", "latest", "-o", str(card), "--db", str(db)])
    assert result.exit_code == 0, result.output
    assert card.read_text().startswith("<!doctype html>")


def test_an_unwritable_output_is_a_clear_user_error(runs: dict, tmp_path: Path) -> None:
    db = Path(runs["corels_compas"][2].store.path)
    blocker = tmp_path / "a-file"
    blocker.write_text("not a folder")
    for command in (["export", "latest", "--format", "json"], ["report", "latest"]):
        result = CliRunner().invoke(cli, [*command, "-o", str(blocker / "out.txt"), "--db", str(db)])
        assert result.exit_code == 2, result.output
        assert f"cannot write {blocker / 'out.txt'}" in result.output and "internal error" not in result.output


def test_sql_reads_numbers_stored_as_text(runs: dict) -> None:
    """sqlite3's ``.import`` of a CSV makes every column TEXT: thresholds on raw numeric columns
    must still compare numbers, not strings."""
    import sqlite3

    for case in ("moss_diabetes", "fasterrisk_adult"):
        outcome, details, launch = runs[case]
        columns, X_test = _test_part(outcome, launch)
        want_labels, want_proba = expected(outcome.result.model, X_test)
        names = list(columns)
        con = sqlite3.connect(":memory:")
        con.execute("CREATE TABLE data (" + ", ".join(f'"{k}" TEXT' for k in [*names, ROW]) + ")")
        con.executemany(
            f"INSERT INTO data VALUES ({', '.join('?' for _ in range(len(names) + 1))})",
            [
                [repr(v.item() if hasattr(v, "item") else v) for v in row] + [str(i)]
                for i, row in enumerate(zip(*(columns[k] for k in names)))
            ],
        )
        text = export_run(details, "sql").rstrip().rstrip(";")
        got = [r[0] for r in con.execute(f'SELECT prediction FROM ({text}) ORDER BY CAST("{ROW}" AS INTEGER)')]
        if want_proba is None:
            assert np.max(np.abs(np.asarray(got, dtype=float) - np.asarray(want_labels, dtype=float))) <= 1e-9, case
        else:
            assert [str(g) for g in got] == [str(w) for w in want_labels], case


def _with_where(details: dict, where: str | None) -> dict:
    spec = json.loads(json.dumps(details["spec"]))
    spec["data"]["where"] = where
    return dict(details, spec=spec)


@pytest.mark.parametrize("case", ["corels_compas", "fasterrisk_adult", "moss_diabetes"])
def test_every_export_names_the_where_filter_it_was_trained_under(runs: dict, case: str) -> None:
    """A model of the filtered rows is not a model of the whole file: the header says which rows."""
    details = _with_where(runs[case][1], "age >= 18 AND\n  sex = 'Male'")
    for fmt, comment in (("python", "#"), ("sql", "--")):
        text = export_run(details, fmt)
        head = [line for line in text.splitlines() if line.startswith(comment)]
        assert f"{comment} Trained only on the rows where: age >= 18 AND sex = 'Male'" in head, (fmt, head)
    doc = json.loads(export_run(details, "json"))
    assert doc["where"] == "age >= 18 AND\n  sex = 'Male'"
    unfiltered = _with_where(runs[case][1], None)
    assert "Trained on every row of its data (no data.where filter)." in export_run(unfiltered, "sql")
    assert json.loads(export_run(unfiltered, "json"))["where"] is None


def test_an_end_to_end_run_with_a_where_filter_exports_it(tmp_path: Path) -> None:
    data = tmp_path / "d.csv"
    data.write_text("a,b,label\n" + "".join(f"{i % 2},{(i // 2) % 2},{(i % 2) ^ (i % 3 == 0)}\n" for i in range(60)))
    spec = tmp_path / "s.yaml"
    spec.write_text(
        "name: filtered\nsolver: corels\ndata:\n  source: d.csv\n  target: label\n"
        '  where: "b = 1 OR a = ANY([0])"\nobjective:\n  regularization: 0.01\n'
    )
    db = tmp_path / "runs.duckdb"
    runner = CliRunner()
    result = runner.invoke(cli, ["run", str(spec), "--db", str(db)])
    assert result.exit_code == 0, result.output
    run_id = RunStore(db).open().list_runs()[0].run_id
    out = tmp_path / "m.sql"
    result = runner.invoke(cli, ["export", run_id, "--format", "sql", "-o", str(out), "--db", str(db)])
    assert result.exit_code == 0, result.output
    assert "-- Trained only on the rows where: b = 1 OR a = ANY([0])" in out.read_text()


def _read_columns(details: dict) -> list[str]:
    """The raw columns the run's model reads, from its json document read back."""
    loaded = load_model(json.loads(export_run(details, "json")))
    return loaded.inputs.columns_of(loaded.model.features_used)


@pytest.mark.parametrize("case", list(CASES))
@pytest.mark.parametrize("blank", [None, float("nan"), ""])
def test_a_missing_value_gives_no_prediction_in_every_format(runs: dict, case: str, blank: object) -> None:
    """One documented behaviour: a row with no value in a column the model reads gets no
    prediction: SQL NULL (DuckDB and SQLite), Python None, load_model None / NaN probabilities.
    The other rows are untouched."""
    outcome, details, launch = runs[case]
    columns, X_test = _test_part(outcome, launch)
    columns = {k: np.asarray(v, dtype=object) for k, v in columns.items()}
    reads = _read_columns(details)
    assert reads
    want_labels, want_proba = expected(outcome.result.model, X_test)
    hole = {0: reads[0], 1: reads[-1]}  # row 0 misses the first column the model reads, row 1 the last
    for row, column in hole.items():
        columns[column][row] = blank
    classes = (
        None if want_proba is None else [c.item() if hasattr(c, "item") else c for c in outcome.result.model.classes]
    )
    got = {"python": run_python(export_run(details, "python"), columns)}
    if blank is None:  # a table's NULL; NaN and '' are Python's and pandas' ways of saying it
        text = export_run(details, "sql")
        got.update({f"sql/{e}": run_sql(text, columns, e, classes) for e in ("duckdb", "sqlite")})
    loaded = load_model(json.loads(export_run(details, "json")))
    got["json"] = (
        list(loaded.predict(columns)),
        None if classes is None else np.asarray(loaded.predict_proba(columns)),
    )
    for fmt, (labels, proba) in got.items():
        assert labels[0] is None and labels[1] is None, (fmt, labels[:2])
        assert [
            v == w or (isinstance(v, float) and abs(v - w) <= 1e-9) for v, w in zip(labels[2:], want_labels[2:])
        ] == [True] * (len(labels) - 2), fmt
        if classes is not None:
            assert np.isnan(proba[:2]).all(), fmt
            assert np.max(np.abs(proba[2:] - want_proba[2:])) <= 1e-12, fmt
    module: dict = {}
    exec(compile(export_run(details, "python"), "<m>", "exec"), module)
    row = {k: v[2] for k, v in columns.items()}
    del row[reads[0]]  # a key the row lacks is missing too
    assert module["predict"](row) is None and module["missing"](row) == [reads[0]]
    import sqlite3  # a sqlite3.Row is read by name too, and a NULL in it is missing

    con = sqlite3.connect(":memory:")
    con.row_factory = sqlite3.Row
    names = list(columns)
    full = {k: v[2] for k, v in columns.items()}
    full[reads[-1]] = None
    values = [x.item() if hasattr(x, "item") else x for x in (full[k] for k in names)]
    got = con.execute("SELECT " + ", ".join(f'? AS "{k}"' for k in names), values).fetchone()
    assert module["predict"](got) is None and module["missing"](got) == [reads[-1]]


def test_the_export_namespace_offers_every_quoting_helper() -> None:
    """docs/plugins.md tells plugin authors the ``glasswork.quoting`` helpers are re-exported by
    ``glasswork.export``; ``from glasswork.export import *`` gives every name of ``__all__``."""
    import subprocess
    import sys

    import glasswork.export
    import glasswork.quoting

    missing = [name for name in glasswork.quoting.__all__ if name not in glasswork.export.__all__]
    assert missing == []
    code = "from glasswork.export import *\nimport glasswork.export as e\nprint(sorted(set(e.__all__) - set(dir())))"
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, timeout=300)
    assert (out.returncode, out.stdout.strip()) == (0, "[]"), out.stderr[-500:]
