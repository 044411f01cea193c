"""A ``limits.time`` (or ``limits.memory``) that ends the run while the data are read: a valid
spec, so a stopped run (status ``stopped_time``, no model, exit 0, as the README gives every
stopped run), never the exit 2 of bad data."""

from __future__ import annotations

import json
from pathlib import Path

from click.testing import CliRunner
from glasswork.cli import cli
from spec_files import write_slow_read_spec


def test_a_time_limit_shorter_than_reading_the_data_is_a_stopped_run(tmp_path: Path) -> None:
    spec = write_slow_read_spec(tmp_path, 400_000)  # reading takes longer than one look at the clock (50 ms)
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
    spec = write_slow_read_spec(tmp_path, 300)
    result = CliRunner().invoke(cli, ["run", str(spec), "--no-store", "-q", "--json"])
    assert result.exit_code == 0, result.output
    document = json.loads(result.stdout)
    assert document["model"] is not None and document["status"] in {"optimal", "stopped_time"}
