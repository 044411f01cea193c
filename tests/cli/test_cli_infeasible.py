"""A run that ends with no model: proven infeasible (no model meets ``constraints.fairness``) or
stopped before any model met it. ``run`` says why (and ``--json``), exits 0 as a finished run,
the store keeps and lists it, ``runs show`` and the card say why, ``export`` refuses with the
reason, and a solver that claims a model breaking its constraint is refused as a plugin fault.
The toy solver (tests/toy_plugin.py) brute-forces the constrained problem."""

from __future__ import annotations

import json
from pathlib import Path

import numpy as np
import pytest
from click.testing import CliRunner

from glasswork.cli import cli
from glasswork.store import RunStore

GROUP = "[bold red]g[/] <b>x</b> '); DROP TABLE runs;--"


def write_data(folder: Path, rows: int = 120, seed: int = 4) -> None:
    """Feature a mostly decides the label; the protected group is drawn at random, so no stump is
    exactly as precise in both groups (predictive parity at most 0 is infeasible) while a constant
    model always has a statistical parity of 0 (feasible)."""
    rng = np.random.default_rng(seed)
    a, b = rng.integers(0, 2, rows), rng.integers(0, 2, rows)
    group = np.where(rng.random(rows) < 0.4, GROUP, "other")
    y = a ^ (rng.random(rows) < 0.2)
    lines = ["a,b,grp,label"] + [f'{i},{j},"{g}",{k}' for i, j, g, k in zip(a, b, group, y)]
    (folder / "d.csv").write_text("\n".join(lines) + "\n", encoding="utf-8")


def spec_text(metric: str, at_most: float, search: str = "") -> str:
    return (
        "name: constrained\nsolver: toy\n"
        "data: {source: d.csv, target: label, audit_only: [grp]}\n"
        f"fairness:\n  protected: {{column: grp, value: {json.dumps(GROUP)}}}\n"
        f"  metrics: [{metric}]\n"
        f"constraints:\n  fairness: {{metric: {metric}, at_most: {at_most}}}\n" + search
    )


@pytest.fixture
def invoke(toy_env, tmp_path, monkeypatch):
    monkeypatch.chdir(tmp_path)
    write_data(tmp_path)
    (tmp_path / "infeasible.yaml").write_text(spec_text("predictive_parity", 0.0), encoding="utf-8")
    (tmp_path / "stopped.yaml").write_text(
        spec_text("statistical_parity", 0.05, "search: {behaviour: endless}\nlimits: {time: 0.3}\n"), encoding="utf-8"
    )
    (tmp_path / "feasible.yaml").write_text(spec_text("statistical_parity", 0.05), encoding="utf-8")
    (tmp_path / "unfair.yaml").write_text(
        spec_text("statistical_parity", 0.0, "search: {behaviour: unfair}\n"), encoding="utf-8"
    )
    runner = CliRunner()

    def call(*args: str):
        return runner.invoke(cli, list(args), catch_exceptions=False)

    return call


def _latest(invoke) -> str:
    return json.loads(invoke("runs", "list", "--json").stdout)[0]["run_id"]


def test_an_infeasible_run_says_so_and_exits_0(invoke):
    shown = invoke("run", "infeasible.yaml")
    assert shown.exit_code == 0, shown.output
    assert "no model meets constraints.fairness (predictive_parity <= 0): proven infeasible" in shown.stdout
    assert "infeasible" in shown.stdout.split("Certificate", 1)[1]
    doc = json.loads(invoke("run", "--json", "-q", "infeasible.yaml").stdout)
    assert doc["status"] == "infeasible" and doc["model"] is None and doc["model_text"] is None
    assert doc["objective"] is None and doc["gap"] is None and doc["stats"]["model_size"] is None
    assert doc["no_model"].startswith("no model meets constraints.fairness (predictive_parity <= 0)")
    assert "fairness" not in doc  # no model, no audit of one


def test_an_infeasible_run_is_stored_listed_and_shown(invoke):
    assert invoke("run", "-q", "infeasible.yaml").exit_code == 0
    listed = json.loads(invoke("runs", "list", "--json").stdout)
    assert listed[0]["status"] == "infeasible" and listed[0]["state"] == "finished"
    table = invoke("runs", "list")
    assert table.exit_code == 0 and "infeasible" in table.stdout
    run_id = listed[0]["run_id"]
    shown = invoke("runs", "show", run_id)
    assert shown.exit_code == 0, shown.output
    assert "proven infeasible" in shown.stdout and "Model" in shown.stdout
    details = json.loads(invoke("runs", "show", "--json", run_id).stdout)
    assert details["models"] == [] and "proven infeasible" in details["no_model"]


def test_export_of_a_run_without_a_model_says_why_and_fails(invoke, tmp_path):
    assert invoke("run", "-q", "infeasible.yaml").exit_code == 0
    run_id = _latest(invoke)
    for fmt in ("python", "json", "sql"):
        refused = invoke("export", run_id, "--format", fmt)
        assert refused.exit_code == 2, refused.output
        assert "has no model to export: no model meets constraints.fairness" in refused.output
    with_export = invoke("run", "-q", "infeasible.yaml", "--export", "python:m.py")
    assert with_export.exit_code == 2 and "no model to export" in with_export.output
    assert not (tmp_path / "m.py").exists()


def test_the_card_of_an_infeasible_run_says_proven_infeasible(invoke, tmp_path):
    assert invoke("run", "-q", "infeasible.yaml").exit_code == 0
    run_id = _latest(invoke)
    made = invoke("report", run_id, "-o", "card.html")
    assert made.exit_code == 0, made.output
    html = (tmp_path / "card.html").read_text(encoding="utf-8")
    assert "Proven infeasible." in html and "no model meets constraints.fairness" in html
    assert "<b>x</b>" not in html  # the group's name is data, escaped


def test_a_run_stopped_before_any_feasible_model(invoke):
    shown = invoke("run", "stopped.yaml")
    assert shown.exit_code == 0, shown.output
    assert (
        "stopped at the time limit before finding a model that meets constraints.fairness "
        "(statistical_parity <= 0.05)" in shown.stdout
    )
    doc = json.loads(invoke("run", "--json", "-q", "stopped.yaml").stdout)
    assert doc["status"] == "stopped_time" and doc["model"] is None and doc["lower_bound"] == 0.0
    run_id = _latest(invoke)
    details = RunStore("glasswork.duckdb").details(run_id)
    assert details["state"] == "stopped" and details["status"] == "stopped_time"
    assert details["lower_bound"] == 0.0 and details["objective"] is None
    assert "stopped at the time limit" in invoke("runs", "show", run_id).stdout
    refused = invoke("export", run_id, "--format", "python")
    assert refused.exit_code == 2 and "stopped at the time limit before finding" in refused.output


def test_a_feasible_constrained_run_meets_its_constraint(invoke):
    doc = json.loads(invoke("run", "--json", "-q", "feasible.yaml").stdout)
    assert doc["status"] == "optimal" and doc["model"] is not None
    assert doc["fairness"]["train"]["statistical_parity"] <= 0.05


def test_a_solver_claiming_a_model_that_breaks_its_constraint_is_refused(invoke):
    refused = invoke("run", "-q", "unfair.yaml")
    assert refused.exit_code == 1, refused.output
    assert "solver 'toy'" in refused.output and "breaks constraints.fairness" in refused.output
    assert "statistical_parity" in refused.output and "a fault in that plugin" in refused.output
    listed = json.loads(invoke("runs", "list", "--json").stdout)
    assert listed[0]["state"] == "failed"  # recorded as the failure it is, not as a certified model
