"""The fairness audit on the command line and in the store: ``run`` (its table and ``--json``),
``runs show``, the model card, a store of the schema before audits, and hostile group names."""

from __future__ import annotations

import json

import duckdb
import pytest
from click.testing import CliRunner
from glasswork.cli import cli
from glasswork.fairness import figures as fairness
from glasswork.store import MIGRATIONS, SCHEMA_VERSION, RunStore

GROUP = "[bold red]boom[/] <img src=x onerror=alert(1)> '); DROP TABLE runs;--"
COLUMN = "grp[/]"


def _write(folder) -> None:
    import numpy as np

    rng = np.random.default_rng(4)
    n = 120
    a, b = rng.integers(0, 2, n), rng.integers(0, 2, n)
    group = np.where(rng.random(n) < 0.5, GROUP, "other")
    y = a ^ (rng.random(n) < 0.15)
    lines = [f'a,b,"{COLUMN}",label'] + [
        f'{i},{j},"{g.replace(chr(34), chr(34) * 2)}",{k}' for i, j, g, k in zip(a, b, group, y)
    ]
    (folder / "d.csv").write_text("\n".join(lines) + "\n", encoding="utf-8")
    (folder / "s.yaml").write_text(
        "name: audited\nsolver: corels\n"
        f"data:\n  source: d.csv\n  target: label\n  audit_only: ['{COLUMN}']\n"
        "  split: {kind: holdout, test_size: 0.3, seed: 1}\n"
        "objective: {regularization: 0.01}\n"
        f"fairness:\n  protected: {{column: '{COLUMN}', value: {json.dumps(GROUP)}}}\n",
        encoding="utf-8",
    )


@pytest.fixture
def invoke(tmp_path, monkeypatch):
    monkeypatch.chdir(tmp_path)
    _write(tmp_path)
    runner = CliRunner()

    def call(*args: str):
        return runner.invoke(cli, list(args), catch_exceptions=False)

    return call


def test_run_json_carries_the_six_metrics_for_training_and_test_rows(invoke):
    result = invoke("run", "--json", "-q", "s.yaml")
    assert result.exit_code == 0, result.output
    doc = json.loads(result.stdout)["fairness"]
    for part in ("train", "test"):
        for metric in fairness.METRICS:
            assert metric in doc[part]
        assert doc[part]["protected_rows"] > 0 and doc[part]["reference_rows"] > 0
    assert doc["groups"] == [f"{COLUMN} = {GROUP}"]


def test_run_and_runs_show_print_the_table_with_the_names_as_data(invoke):
    shown = invoke("run", "s.yaml")
    assert shown.exit_code == 0, shown.output
    assert f"Fairness: {COLUMN} = {GROUP} against the rest" in shown.stdout  # markup shown, not read
    assert "statistical_parity" in shown.stdout and "protected" in shown.stdout
    run_id = json.loads(invoke("runs", "list", "--json").stdout)[0]["run_id"]
    stored = invoke("runs", "show", run_id)
    assert stored.exit_code == 0, stored.output
    assert f"Fairness: {COLUMN} = {GROUP} against the rest" in stored.stdout
    details = RunStore("glasswork.duckdb").details(run_id)
    assert details["fairness"]["train"]["groups"][0]["label"] == f"{COLUMN} = {GROUP}"


def test_the_model_card_draws_the_group_bars_with_the_names_escaped(invoke, tmp_path):
    assert invoke("run", "-q", "s.yaml").exit_code == 0
    run_id = json.loads(invoke("runs", "list", "--json").stdout)[0]["run_id"]
    result = invoke("report", run_id, "-o", "card.html")
    assert result.exit_code == 0, result.output
    html = (tmp_path / "card.html").read_text(encoding="utf-8")
    assert "<h2>Fairness</h2>" in html and "false positive rate" in html
    assert "<img src=x" not in html and "&lt;img src=x onerror=alert(1)&gt;" in html
    assert 'role="img" aria-label="protected ' in html
    assert "http://" not in html.split("<h2>Fairness</h2>")[1] and "https://" not in html.split("<h2>Fairness</h2>")[1]


def test_a_store_of_the_schema_before_audits_is_migrated(invoke, tmp_path):
    db = tmp_path / "glasswork.duckdb"
    con = duckdb.connect(str(db))
    for step in MIGRATIONS[:6]:  # the schema before audits (version 7 added runs.fairness)
        for statement in step:
            con.execute(statement)
    con.execute("INSERT INTO meta VALUES ('schema_version', '6')")
    con.execute(
        "INSERT INTO runs (run_id, name, solver, state, started_at, ended_at) "
        "VALUES ('old', 'old', 'toy', 'failed', now()::TIMESTAMP, now()::TIMESTAMP)"
    )
    con.close()
    assert invoke("run", "-q", "s.yaml").exit_code == 0
    store = RunStore(db)
    assert "fairness" not in store.details("old")
    new = [r for r in json.loads(invoke("runs", "list", "--json").stdout) if r["run_id"] != "old"][0]
    assert store.details(new["run_id"])["fairness"]["metrics"]
    con = duckdb.connect(str(db))
    try:
        assert con.execute("SELECT value FROM meta WHERE key = 'schema_version'").fetchall() == [(str(SCHEMA_VERSION),)]
    finally:
        con.close()
