"""``glasswork monitor`` and ``glasswork tui`` on the command line: errors before the app starts,
and one end-to-end run of the real CLI in a terminal (tmux) watching CORELS converge."""

from __future__ import annotations

import os
import shutil
import subprocess
import sys
import time
from pathlib import Path

import pytest
from click.testing import CliRunner
from glasswork.cli import cli
from tui_fixtures import toy_spec

REPO = Path(__file__).resolve().parents[2]
TMUX = ["tmux", "-L", f"glasswork-tui-test-{os.getpid()}", "-f", os.devnull]  # a private server
SHARED = Path(os.environ.get("GLASSWORK_DATA", REPO.parent / "shared" / "datasets"))


def test_monitor_invalid_spec_exits_2(toy_env, tiny_csv: Path, tmp_path: Path) -> None:
    bad = toy_spec(tmp_path, tiny_csv, extra="objective:\n  regularization: 7\n")
    result = CliRunner().invoke(cli, ["monitor", str(bad), "--db", str(tmp_path / "r.duckdb")])
    assert result.exit_code == 2
    assert "objective.regularization" in result.output and "nothing was run" in result.output
    assert not (tmp_path / "r.duckdb").exists()


def test_monitor_unknown_run_exits_2(tmp_path: Path) -> None:
    result = CliRunner().invoke(cli, ["monitor", "latest", "--db", str(tmp_path / "none.duckdb")])
    assert result.exit_code == 2 and "no run store" in result.output
    from glasswork.store import RunStore

    RunStore(tmp_path / "r.duckdb").open()
    result = CliRunner().invoke(cli, ["monitor", "abc123", "--db", str(tmp_path / "r.duckdb")])
    assert result.exit_code == 2 and "no run with an id starting 'abc123'" in result.output
    result = CliRunner().invoke(cli, ["monitor", "abc123", "--no-store"])
    assert result.exit_code == 2 and "apply to a spec file" in result.output


def test_commands_are_listed() -> None:
    result = CliRunner().invoke(cli, ["--help"])
    assert "monitor" in result.output and "tui" in result.output
    assert "attaches" not in CliRunner().invoke(cli, ["tui", "--help"]).output  # its own help text
    assert "SPEC|RUN" in CliRunner().invoke(cli, ["monitor", "--help"]).output


def _gap(screen: str) -> float | None:
    import re

    match = re.search(r"gap (?:< )?([\d,]*\.?\d+) %", screen)  # as fmt_gap writes it: "2.52 % (lower bound ...)"
    return None if match is None else float(match.group(1).replace(",", ""))


def _pane(session: str) -> str:
    return subprocess.run([*TMUX, "capture-pane", "-p", "-t", session], capture_output=True, text=True).stdout


@pytest.mark.slow
@pytest.mark.skipif(shutil.which("tmux") is None, reason="tmux is not installed")
@pytest.mark.skipif(not (SHARED / "corels" / "compas_train.out").exists(), reason="shared datasets absent")
def test_monitor_in_a_real_terminal_shows_corels_converging(tmp_path: Path) -> None:
    session = f"glasswork-tui-{os.getpid()}"
    db = tmp_path / "runs.duckdb"
    done = tmp_path / "exit-code"
    # COLUMNS / LINES (set by some test runners) would override the pane's real size
    command = (
        f"cd {tmp_path} && unset COLUMNS LINES && GLASSWORK_DATA={SHARED} {sys.executable} -m glasswork monitor "
        f"{REPO / 'specs' / 'corels_compas.yaml'} --db {db} --set objective.regularization=0.002 "
        f"--set limits.time=60; echo $? > {done}"
    )
    subprocess.run([*TMUX, "new-session", "-d", "-s", session, "-x", "140", "-y", "45", command], check=True)
    try:
        deadline = time.monotonic() + 60
        screen = ""
        while time.monotonic() < deadline:
            screen = _pane(session)
            if (
                "corels-compas" in screen
                and "log10 remaining" in screen
                and "gap" in screen
                and "current best model" in screen
                and "({" in screen
                and "nodes" in screen
            ):
                break
            time.sleep(0.5)
        else:
            raise AssertionError(f"the monitor never showed the run:\n{screen}")
        assert "objective and lower bound" in screen and "queue by prefix length" in screen
        first = _gap(screen)
        time.sleep(2.0)
        later = _gap(_pane(session))
        assert first is not None and later is not None and later <= first  # the gap only closes
        subprocess.run([*TMUX, "send-keys", "-t", session, "q"], check=True)  # cancel, then close
        deadline = time.monotonic() + 60
        while not done.exists() and time.monotonic() < deadline:
            time.sleep(0.2)
        assert done.exists(), _pane(session)
        assert done.read_text().strip() == "130"  # cancelled, as Ctrl-C in 'glasswork run' exits
    finally:
        subprocess.run([*TMUX, "kill-server"], capture_output=True)
    from glasswork.store import RunStore

    [row] = RunStore(db).list_runs()
    assert row.solver == "corels" and row.state in ("cancelled", "finished")
    assert row.objective is not None and row.lower_bound is not None and row.lower_bound <= row.objective + 1e-9


def test_monitor_of_a_stored_run_whose_id_names_no_journal_exits_2(toy_env, tmp_path: Path) -> None:
    """A stored id that cannot name a file (``../``; written before ids were checked) made the
    monitor an internal error once journals refused such ids; now it says so and exits 2."""
    import duckdb
    from glasswork.store import RunStore

    db = tmp_path / "r.duckdb"
    RunStore(db).open()
    con = duckdb.connect(str(db))
    con.execute("INSERT INTO runs (run_id, name, state) VALUES ('../../victim', 'evil', 'finished')")
    con.close()
    result = CliRunner().invoke(cli, ["monitor", "../../victim", "--db", str(db)])
    assert result.exit_code == 2, result.output
    assert "is not a run id" in result.output and "Traceback" not in result.output
