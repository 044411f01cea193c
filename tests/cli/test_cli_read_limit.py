"""A ``limits.time`` (or ``limits.memory``) that ends the run while the data are read: a valid
spec, so a stopped run (status ``stopped_time``, no model, exit 0, as the README gives every
stopped run), never the exit 2 of bad data."""

from __future__ import annotations

import json
from pathlib import Path

import numpy as np
from click.testing import CliRunner

from glasswork.cli import cli

# a comma, a quote, markup and a unicode name: the header is data
COLUMNS = ["a,b", 'x"y', "<b>", "Ünïcødé", "[bold]m[/bold]"]


def write_data(path: Path, rows: int) -> None:
    rng = np.random.default_rng(0)
    X = rng.integers(0, 2, size=(rows, len(COLUMNS)))
    y = (X[:, 0] | X[:, 2]) ^ (rng.random(rows) < 0.1)
    header = ",".join('"' + c.replace('"', '""') + '"' for c in COLUMNS) + ",y\n"
    body = "\n".join(",".join(map(str, r)) for r in np.column_stack([X, y]))
    path.write_text(header + body + "\n", encoding="utf-8")


def write_spec(tmp_path: Path, rows: int) -> Path:
    write_data(tmp_path / "d.csv", rows)
    spec = tmp_path / "s.yaml"
    spec.write_text(
        "name: tiny\nsolver: corels\ndata: {source: d.csv, target: y}\n"
        "objective: {regularization: 0.01}\nlimits: {time: 0.000001}\n"
    )
    return spec


def test_a_time_limit_shorter_than_reading_the_data_is_a_stopped_run(tmp_path: Path) -> None:
    spec = write_spec(tmp_path, 400_000)  # reading takes longer than one look at the clock (50 ms)
    db = str(tmp_path / "g.duckdb")
    runner = CliRunner()
    result = runner.invoke(cli, ["run", str(spec), "--db", db, "-q"])
    assert result.exit_code == 0, result.output
    assert "status stopped_time" in result.output and "no model" in result.output
    assert "limits.time" in result.output and "data error" not in result.output
    result = runner.invoke(cli, ["run", str(spec), "--db", db, "-q", "--json"])
    assert result.exit_code == 0, result.output
    document = json.loads(result.stdout)
    assert document["status"] == "stopped_time" and document["model"] is None and document["gap"] is None
    assert document["name"] == "tiny" and document["solver"] == "corels"
    result = runner.invoke(cli, ["validate", str(spec)])  # a valid spec: validate says so, and warns
    assert result.exit_code == 0, result.output
    assert "stopped_time" in result.output


def test_a_tiny_time_limit_on_data_read_in_time_still_runs(tmp_path: Path) -> None:
    """Data read before the first look at the clock: the search then stops (or certifies) as
    ever, with a model; the hostile column names printed as data."""
    spec = write_spec(tmp_path, 300)
    result = CliRunner().invoke(cli, ["run", str(spec), "--no-store", "-q", "--json"])
    assert result.exit_code == 0, result.output
    document = json.loads(result.stdout)
    assert document["model"] is not None and document["status"] in {"optimal", "stopped_time"}
