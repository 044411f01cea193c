"""A sweep point whose ``limits.time`` ends it while its data are read is a stopped point, as the
same spec is a stopped run for ``glasswork run``: its status in the table and the JSON, no
model, nothing recorded for it, and the sweep's exit that of a sweep with stopped points (0),
not the exit 1 of a failed point."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from click.testing import CliRunner
from glasswork.cli import cli
from glasswork.store import RunStore
from spec_files import write_slow_read_spec

# the first point reads past its microsecond; the second has time to read and to solve
GRID = "sweep:\n  grid: {limits.time: [0.000001, 120]}\n"


@pytest.mark.slow  # (over 3 s: the README's command stays under 5 minutes; .ci/run's slow step runs it)
def test_a_point_stopped_while_its_data_are_read_is_a_stopped_point(tmp_path: Path) -> None:
    spec = write_slow_read_spec(tmp_path, 400_000, extra=GRID)
    db = tmp_path / "g.duckdb"
    result = CliRunner().invoke(cli, ["sweep", str(spec), "--db", str(db), "-j", "1", "--json"])
    assert result.exit_code == 0, result.output
    document = json.loads(result.stdout)
    assert document["failed"] == []
    [stopped] = document["stopped_before_search"]
    assert stopped["point"]["coords"] == {"limits.time": 0.000001} and stopped["status"] == "stopped_time"
    assert "no model" in stopped["message"] and "limits.time" in stopped["message"]
    statuses = {row["limits.time"]: row["status"] for row in document["summary"]}
    assert statuses[0.000001] == "stopped_time 1" and statuses[120] in {"optimal 1", "stopped_time 1"}
    runs = RunStore(db).list_runs()
    assert len(runs) == 1 and runs[0].state in {"finished", "stopped"}  # the stopped point recorded nothing
    text = CliRunner().invoke(cli, ["sweep", str(spec), "--db", str(tmp_path / "t.duckdb"), "-j", "1"])
    assert text.exit_code == 0, text.output
    assert "stopped_time 1" in text.output and "failed" not in text.output
    assert "stopped: limits.time=1e-06: status stopped_time" in text.output


def test_a_sweep_whose_every_point_stops_while_reading_exits_0(tmp_path: Path) -> None:
    spec = write_slow_read_spec(tmp_path, 400_000, extra="sweep:\n  grid: {objective.regularization: [0.01, 0.02]}\n")
    result = CliRunner().invoke(cli, ["sweep", str(spec), "--no-store", "-j", "1"])
    assert result.exit_code == 0, result.output
    assert result.output.count("stopped_time 1") == 2 and "failed" not in result.output
