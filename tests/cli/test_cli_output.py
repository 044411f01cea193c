"""The command line's output in pipes and files: full lines (no wrapping at 80 columns, no table cut
with an ellipsis, no colour codes), one gap format, and a reader that leaves early (``| head``)
ends nothing: no traceback, exit 0, the run stored and its exports written."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

import numpy as np
import pytest
from click.testing import CliRunner
from glasswork.cli import cli
from processes import running

LONG_COLUMN = "mean_number_of_prior_admissions_in_the_last_five_years_before_the_index_visit"
LONG_NAME = "a run whose name is longer than any terminal is wide " * 3
BROKEN_PIPE_NOISE = ("Traceback", "BrokenPipeError", "Exception ignored", "internal error")


@pytest.fixture
def spec(tmp_path: Path) -> Path:
    """A toy run over a column whose name alone is as wide as a terminal: the model's rule is long."""
    rng = np.random.default_rng(0)
    a, b = rng.integers(0, 2, 60), rng.integers(0, 2, 60)
    label = a.copy()
    label[:6] = 1 - label[:6]
    data = tmp_path / "wide.csv"
    data.write_text(f"{LONG_COLUMN},b,label\n" + "".join(f"{i},{j},{k}\n" for i, j, k in zip(a, b, label)))
    path = tmp_path / "wide.yaml"
    path.write_text(f"name: {LONG_NAME.strip()}\nsolver: toy\ndata:\n  source: {data}\n  target: label\n")
    return path


@pytest.fixture
def invoke(toy_env, tmp_path, monkeypatch):
    monkeypatch.chdir(tmp_path)

    def call(*args: str):
        result = CliRunner().invoke(cli, list(args), catch_exceptions=False)
        assert result.exit_code == 0, result.output
        return result.stdout

    return call


def _one_line_with(text: str, *pieces: str) -> str:
    lines = [line for line in text.splitlines() if all(piece in line for piece in pieces)]
    assert lines, f"no line holds all of {pieces}:\n{text}"
    return lines[0]


def _unwrapped(text: str) -> None:
    assert "…" not in text and "\x1b" not in text
    assert max(len(line) for line in text.splitlines()) < 1000  # nothing padded to the pipe's width


def test_run_runs_list_show_and_compare_into_a_pipe_keep_every_line_whole(invoke, spec):
    out = invoke("run", "-q", str(spec))
    _unwrapped(out)
    assert f"if {LONG_COLUMN}" in _one_line_with(out, LONG_COLUMN, " then ")  # the rule on one line
    assert _one_line_with(out, "gap").split(None, 1)[1].strip() == "0 % (optimal)"
    invoke("run", "-q", str(spec), "--set", "search.behaviour=endless", "--set", "limits.nodes=3")

    listed = invoke("runs", "list")
    _unwrapped(listed)
    assert "20 % (lower bound" not in listed  # the toy's bound is 0: a 100 % gap
    assert "100 % (lower bound 0)" in _one_line_with(listed, LONG_NAME.strip(), "stopped_nodes")
    assert "0 % (optimal)" in _one_line_with(listed, LONG_NAME.strip(), "optimal")

    shown = invoke("runs", "show", "latest")
    _unwrapped(shown)
    assert _one_line_with(shown, "gap").split() == ["gap", "100", "%", "(lower", "bound", "0)"]
    assert LONG_NAME.strip() in _one_line_with(shown, "solver toy")

    ids = [r["run_id"] for r in json.loads(invoke("runs", "list", "--json"))]
    compared = invoke("runs", "compare", *ids)
    _unwrapped(compared)
    assert "100 % (lower bound 0)" in _one_line_with(compared, "gap", "0 % (optimal)")


def test_json_keeps_the_raw_gap(invoke, spec):
    doc = json.loads(
        invoke("run", "-q", "--json", str(spec), "--set", "search.behaviour=endless", "--set", "limits.nodes=3")
    )
    assert doc["gap"] == 1.0 and doc["lower_bound"] == 0.0
    [row] = json.loads(invoke("runs", "list", "--json"))
    assert row["gap"] == 1.0


@pytest.mark.slow  # (over 3 s: the README's command stays under 5 minutes; .ci/run's slow step runs it)
def test_sweep_table_into_a_pipe_has_whole_numbers_and_the_gap(invoke, spec):
    with spec.open("a") as f:
        f.write("sweep:\n  grid:\n    objective.regularization: [0.001, 0.05]\n  folds: 2\n")
    out = invoke("sweep", str(spec))
    _unwrapped(out)
    row = _one_line_with(out, "0.001", "optimal 2")
    assert " ± " in row and row.split("│")[-2].strip() == "0 % (optimal)"  # the gap, the last column


def _glasswork(*args: str) -> list[str]:
    return [sys.executable, "-m", "glasswork", *args]


def _with_closed_stdout(command: list[str], env: dict[str, str], cwd: Path) -> tuple[int, str]:
    """Run ``command`` with stdout a pipe whose reader has already gone: its first write fails."""
    with running(command, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True, env=env, cwd=cwd) as proc:
        proc.stdout.close()
        err = proc.stderr.read()
        proc.wait(timeout=120)
    return proc.returncode, err


@pytest.mark.slow  # (over 3 s: the README's command stays under 5 minutes; .ci/run's slow step runs it)
def test_a_reader_that_leaves_ends_nothing(toy_env, tmp_path, spec):
    report = tmp_path / "model.json"
    code, err = _with_closed_stdout(_glasswork("run", "-q", str(spec), "--export", f"json:{report}"), toy_env, tmp_path)
    assert code == 0 and not any(noise in err for noise in BROKEN_PIPE_NOISE), err
    assert report.is_file()  # the exports after the output still ran

    stored = subprocess.run(
        _glasswork("runs", "list", "--json"), capture_output=True, text=True, env=toy_env, cwd=tmp_path, timeout=120
    )
    [run] = json.loads(stored.stdout)
    assert run["state"] == "finished" and run["status"] == "optimal"

    for command in (["runs", "list"], ["runs", "show", "latest"], ["export", "latest", "--format", "json"]):
        code, err = _with_closed_stdout(_glasswork(*command), toy_env, tmp_path)
        assert code == 0 and not any(noise in err for noise in BROKEN_PIPE_NOISE), (command, err)


def test_head_after_run_and_a_log_file(toy_env, tmp_path, spec):
    """The shell's own ``| head -1`` and ``> log``."""
    glasswork = " ".join(_glasswork())
    piped = subprocess.run(
        f"set -o pipefail; {glasswork} run -q {spec} | head -1",
        shell=True,
        executable="/bin/bash",
        capture_output=True,
        text=True,
        env=toy_env,
        cwd=tmp_path,
        timeout=120,
    )
    assert piped.returncode == 0 and piped.stdout.startswith(LONG_NAME.strip()), piped.stderr
    assert not any(noise in piped.stderr for noise in BROKEN_PIPE_NOISE), piped.stderr

    log = tmp_path / "run.log"
    with log.open("w") as out:
        subprocess.run(
            _glasswork("run", "-q", str(spec)), stdout=out, env=toy_env, cwd=tmp_path, timeout=120, check=True
        )
    text = log.read_text()
    _unwrapped(text)
    assert f"if {LONG_COLUMN}" in _one_line_with(text, LONG_COLUMN, " then ")


def _with_closed_stderr(command: list[str], env: dict[str, str], cwd: Path) -> tuple[int, str]:
    """Run ``command`` with stderr a pipe whose reader has already gone: its first message fails."""
    with running(command, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True, env=env, cwd=cwd) as proc:
        proc.stderr.close()
        out = proc.stdout.read()
        proc.wait(timeout=120)
    return proc.returncode, out


def test_a_closed_stderr_keeps_the_exit_status_and_the_work(toy_env, tmp_path, spec):
    bad = tmp_path / "bad.yaml"
    bad.write_text("name: bad\nsolver: toy\ndata:\n  source: missing.csv\n  target: label\n")
    code, _ = _with_closed_stderr(_glasswork("run", "-q", str(bad)), toy_env, tmp_path)
    assert code == 2  # a bad spec, whether or not anyone reads the message

    report = tmp_path / "model.json"
    code, out = _with_closed_stderr(_glasswork("run", str(spec), "--export", f"json:{report}"), toy_env, tmp_path)
    assert code == 0 and report.is_file() and "Certificate" in out  # "wrote ..." went nowhere; the rest ran


def test_a_sweep_reporting_to_a_closed_stderr_runs_every_point(toy_env, tmp_path, spec):
    with spec.open("a") as f:
        f.write("sweep:\n  grid:\n    objective.regularization: [0.001, 0.01, 0.05]\n")
    code, out = _with_closed_stderr(_glasswork("sweep", str(spec)), toy_env, tmp_path)
    assert code == 0, out
    stored = subprocess.run(
        _glasswork("runs", "list", "--json"), capture_output=True, text=True, env=toy_env, cwd=tmp_path, timeout=120
    )
    assert len(json.loads(stored.stdout)) == 3  # progress lines went nowhere; no point was skipped


def test_lines_into_a_file_or_pipe_end_without_blanks(toy_env, tmp_path, spec):
    """rich pads a table's cells to the column width; a file keeps what a terminal hides."""
    outputs = [
        subprocess.run(_glasswork(*args), capture_output=True, text=True, env=toy_env, cwd=tmp_path, timeout=120)
        for args in (("run", "-q", str(spec)), ("runs", "list"), ("runs", "show", "latest"))
    ]
    for done in outputs:
        assert done.returncode == 0, done.stderr
        padded = [line for line in done.stdout.splitlines() if line != line.rstrip()]
        assert not padded, padded
    assert "Certificate" in outputs[0].stdout and "gap" in outputs[1].stdout  # the tables were printed
