"""The command line: exit codes, messages, --json documents, and signals on a real process."""

from __future__ import annotations

import json
import signal
import subprocess
import sys
import time
from pathlib import Path

import pytest
from click.testing import CliRunner
from glasswork import __version__
from glasswork.cli import cli
from processes import running
from spec_files import write

SPEC = """\
name: cli
solver: toy
data:
  source: sklearn:breast_cancer
  binarize: {thresholds: 2}
"""

RESULT_KEYS = {"solver", "status", "objective", "lower_bound", "gap", "model", "metrics", "stats", "run_id"}


@pytest.fixture
def invoke(toy_env, tmp_path, monkeypatch):
    monkeypatch.chdir(tmp_path)  # runs are recorded in ./glasswork.duckdb
    runner = CliRunner()

    def call(*args: str):
        return runner.invoke(cli, list(args), catch_exceptions=False)

    return call


def test_version(invoke):
    result = invoke("--version")
    assert result.exit_code == 0 and __version__ in result.output


def test_validate_ok_and_invalid(invoke, tmp_path):
    ok = write(tmp_path / "ok.yaml", SPEC)
    bad = write(tmp_path / "bad.yaml", SPEC + "objective: {regularization: -1}\n")
    result = invoke("validate", str(ok))
    assert result.exit_code == 0 and "ok (toy, 'cli')" in result.output
    result = invoke("validate", str(ok), str(bad))
    assert result.exit_code == 2
    assert f"{bad}:6:29: objective.regularization: Input should be greater than or equal to 0" in result.output
    assert "1 of 2 spec(s) invalid" in result.output


def test_validate_json(invoke, tmp_path):
    bad = write(tmp_path / "bad.yaml", SPEC.replace("solver: toy", "solver: nope"))
    result = invoke("validate", "--json", str(bad))
    assert result.exit_code == 2
    [entry] = json.loads(result.stdout)
    assert entry["valid"] is False and entry["issues"][0]["line"] == 2


def test_run_prints_model_certificate_and_metrics(invoke, tmp_path):
    result = invoke("run", "-q", str(write(tmp_path / "s.yaml", SPEC)))
    assert result.exit_code == 0, result.output
    for heading in ("Model", "Certificate", "Metrics", "Search"):
        assert heading in result.stdout
    assert "optimal" in result.stdout and "train_accuracy" in result.stdout


def test_run_json_document(invoke, tmp_path):
    result = invoke("run", "--json", "-q", str(write(tmp_path / "s.yaml", SPEC)))
    assert result.exit_code == 0
    doc = json.loads(result.stdout)
    assert RESULT_KEYS <= set(doc)
    assert doc["solver"] == "toy" and doc["status"] == "optimal" and doc["gap"] == 0.0
    assert doc["model"]["kind"] == "stump" and doc["metrics"]["test_accuracy"] > 0.5


def test_run_with_override(invoke, tmp_path):
    path = str(write(tmp_path / "s.yaml", SPEC))
    base = json.loads(invoke("run", "--json", "-q", path).stdout)["objective"]
    more = json.loads(invoke("run", "--json", "-q", path, "--set", "objective.regularization=0.01").stdout)
    assert more["objective"] == pytest.approx(base + 0.01)
    bad = invoke("run", "-q", path, "--set", "objective.regularization=lots")
    assert bad.exit_code == 2 and "objective.regularization" in bad.output
    # a value YAML cannot read (a where-filter starting with a quoted column name) is a user error
    # naming the field and the quoting that works, not an internal error
    for value in ('"patient age" >= 30', "[1, 2", "{a"):
        bad = invoke("run", "-q", path, "--set", f"data.where={value}")
        assert bad.exit_code == 2 and isinstance(bad.exception, SystemExit), (value, bad.exception)
        assert "data.where" in bad.output and "quote it" in bad.output and "nothing was run" in bad.output


def test_invalid_spec_runs_nothing_and_writes_nothing(invoke, tmp_path):
    events = tmp_path / "events.jsonl"
    result = invoke("run", str(write(tmp_path / "s.yaml", SPEC + "limits: {time: 0}\n")), "--events", str(events))
    assert result.exit_code == 2
    assert "limits.time" in result.output and "nothing was run" in result.output
    assert not events.exists()


def test_invalid_spec_with_json_gives_an_error_document(invoke, tmp_path):
    result = invoke("run", "--json", str(write(tmp_path / "s.yaml", SPEC + "colour: red\n")))
    assert result.exit_code == 2
    doc = json.loads(result.stdout)
    assert doc["issues"][0]["path"] == "colour"


def test_data_error_exits_2_and_writes_nothing(invoke, tmp_path):
    spec = SPEC.replace("sklearn:breast_cancer", "missing.csv\n  target: y")
    result = invoke("run", "-q", str(write(tmp_path / "s.yaml", spec)))
    assert result.exit_code == 2
    assert "data error" in result.output and "missing.csv" in result.output
    assert list(tmp_path.iterdir()) == [tmp_path / "s.yaml"]  # no run store was created


def test_solver_failure_exits_1(invoke, tmp_path):
    result = invoke("run", "-q", str(write(tmp_path / "s.yaml", SPEC + "search: {behaviour: raise}\n")))
    assert result.exit_code == 1
    assert "toy solver asked to fail" in result.output and "--debug" in result.output


def test_stopped_at_a_limit_is_exit_0_with_a_gap(invoke, tmp_path):
    spec = SPEC + "search: {behaviour: endless}\nlimits: {nodes: 3}\n"
    result = invoke("run", "--json", "-q", str(write(tmp_path / "s.yaml", spec)))
    assert result.exit_code == 0
    doc = json.loads(result.stdout)
    assert doc["status"] == "stopped_nodes" and doc["gap"] > 0


def test_schema_to_file(invoke, tmp_path):
    out = tmp_path / "schema.json"
    assert invoke("schema", "-o", str(out)).exit_code == 0
    schema = json.loads(out.read_text())
    assert "ToySearch" in json.dumps(schema) and schema["title"] == "glasswork problem spec"


def test_plugins_json_shows_origin_version_and_errors(invoke, monkeypatch):
    from glasswork.hooks.registry import get_registry

    monkeypatch.setenv("GLASSWORK_PLUGIN_MODULES", "toy_plugin,no_such_plugin_module")
    get_registry(refresh=True)
    result = invoke("plugins", "--json")
    assert result.exit_code == 0
    rows = {row["name"]: row for row in json.loads(result.stdout)["plugins"]}
    assert rows["toy_plugin"]["solvers"] == ["toy"] and rows["toy_plugin"]["status"] == "ok"
    assert rows["toy_plugin"]["rashomon"] == ["toy"]  # the solvers that take a spec's `rashomon:` section
    assert rows["toy_plugin"]["fairness_frontier"] == ["toy"]  # and those the core walks a fairness frontier through
    assert rows["no_such_plugin_module"]["status"] == "error" and rows["no_such_plugin_module"]["rashomon"] == []
    assert "ModuleNotFoundError" in rows["no_such_plugin_module"]["error"]
    human = invoke("plugins")
    assert "toy_plugin" in human.stdout and "error" in human.stdout


def test_plugins_prints_hostile_plugin_names_and_errors_as_text(invoke, monkeypatch):
    """A plugin's name, origin and load error are data (an entry point's name, an exception's
    message): the table shows them as written, never as rich markup ('[/]' crashed the listing)."""
    from glasswork.hooks.registry import get_registry

    hostile = "[/]bad[red]\x1b[2J"
    monkeypatch.setenv("GLASSWORK_PLUGIN_MODULES", f"toy_plugin,{hostile}")
    get_registry(refresh=True)
    human = invoke("plugins")
    assert human.exit_code == 0, human.output
    assert "[/]bad[red]" in human.stdout and "\x1b" not in human.stdout
    rows = {row["name"]: row for row in json.loads(invoke("plugins", "--json").stdout)["plugins"]}
    assert rows[hostile]["status"] == "error" and rows[hostile]["module"] == hostile


def test_plugins_shows_a_misspelled_hook(invoke, monkeypatch, tmp_path):
    from glasswork.hooks.registry import get_registry

    (tmp_path / "typo_plugin.py").write_text(
        "from glasswork import hookimpl\n\n@hookimpl\ndef monitor_panel(solver):\n    return []\n"
    )
    monkeypatch.syspath_prepend(str(tmp_path))
    monkeypatch.setenv("GLASSWORK_PLUGIN_MODULES", "typo_plugin")
    get_registry(refresh=True)
    rows = {row["name"]: row for row in json.loads(invoke("plugins", "--json").stdout)["plugins"]}
    assert rows["typo_plugin"]["status"] == "error"
    assert "did you mean 'monitor_panels'" in rows["typo_plugin"]["error"]
    assert "monitor_panel" in invoke("plugins").stdout


def _wait_for_events(path: Path, proc: subprocess.Popen, timeout: float = 30.0) -> None:
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        if path.exists() and '"progress"' in path.read_text():
            return
        if proc.poll() is not None:
            raise AssertionError(f"process ended early: {proc.communicate()}")
        time.sleep(0.05)
    raise AssertionError("no progress event arrived")


@pytest.mark.parametrize("sig", [signal.SIGINT, signal.SIGTERM])
def test_signal_cancels_a_real_run_and_keeps_the_model(toy_env, tmp_path, sig):
    spec = write(tmp_path / "s.yaml", SPEC + "search: {behaviour: endless}\n")
    events = tmp_path / "events.jsonl"
    with running(
        [sys.executable, "-m", "glasswork", "run", "--json", "-q", str(spec), "--events", str(events)],
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
        env=toy_env,
        cwd=tmp_path,
    ) as proc:
        _wait_for_events(events, proc)
        proc.send_signal(sig)
        out, err = proc.communicate(timeout=30)
    assert proc.returncode == 130, err
    doc = json.loads(out)
    assert doc["status"] == "cancelled" and doc["model"]["kind"] == "stump"
    assert "interrupted" in err
    last = json.loads(events.read_text().splitlines()[-1])
    assert last["kind"] == "finish" and last["result"]["status"] == "cancelled"


# -- Ctrl-C before the search starts (issue 23, item 6): exit 130 and one line, wherever it lands --

SLOW_START = """\
import os, sys, time

def _pause(stage):
    sys.stderr.write(f"slow-start: {stage}\\n")
    sys.stderr.flush()
    time.sleep(60)

STAGE = os.environ.get("SLOW_STAGE")
if STAGE == "plugins":
    _pause("plugins")
elif STAGE == "data":
    import glasswork.data as _data  # the run path (Launch.prepare) reads it from there when it loads
    _data.load_problem = lambda *args, **kwargs: _pause("data")
elif STAGE == "store":
    from glasswork.store import RunStore
    RunStore.open = lambda self, *args, **kwargs: _pause("store")
elif STAGE == "exit":
    import atexit
    atexit.register(_pause, "exit")  # Python's shutdown, after the command has ended
elif STAGE == "finalization":
    import signal

    class _CtrlCAtTheEnd:
        # Ctrl-C as this module's globals are cleared: after the exit handlers, when Python has
        # put the default SIGINT action back
        def __del__(self):
            os.kill(os.getpid(), signal.SIGINT)
            time.sleep(0.2)

    _LAST = _CtrlCAtTheEnd()
"""


def slow_start_env(toy_env: dict, tmp_path: Path, stage: str) -> dict:
    """The toy environment with SLOW_START installed as a plugin module that pauses at ``stage``."""
    (tmp_path / "slow_start.py").write_text(SLOW_START)
    return {
        **toy_env,
        "SLOW_STAGE": stage,
        "GLASSWORK_PLUGIN_MODULES": "toy_plugin,slow_start",
        "PYTHONPATH": f"{tmp_path}:{toy_env.get('PYTHONPATH', '')}",
    }


def _interrupted_cleanly(proc: subprocess.Popen, err: str) -> None:
    assert proc.returncode == 130, err
    assert "interrupted" in err
    for noise in ("Traceback", "internal error", "Aborted!", "KeyboardInterrupt"):
        assert noise not in err, err


def _wait_for_numpy(proc: subprocess.Popen, timeout: float = 60.0) -> None:
    """Until the child maps numpy's core, which ``import glasswork`` loads: glasswork's code is
    running (earlier, a Ctrl-C lands in Python's own start-up, which no program can handle)."""
    maps = Path(f"/proc/{proc.pid}/maps")
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline and proc.poll() is None:
        try:
            if "_multiarray_umath" in maps.read_text():
                return
        except OSError:
            pass
        time.sleep(0.005)
    raise AssertionError("the child never imported numpy")


@pytest.mark.skipif(not Path("/proc/self/maps").exists(), reason="needs /proc to see the child's imports")
@pytest.mark.parametrize("delay", [0.0, 0.3, 1.0])
def test_ctrl_c_at_any_moment_of_start_up_exits_130(delay, toy_env, tmp_path):
    """Whatever it hits (imports, the plugins, the spec, the data), one line and exit 130."""
    spec = write(tmp_path / "s.yaml", SPEC)
    with running(
        [sys.executable, "-m", "glasswork", "run", "--no-store", "-q", str(spec)],
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
        env=toy_env,
        cwd=tmp_path,
    ) as proc:
        _wait_for_numpy(proc)
        time.sleep(delay)
        proc.send_signal(signal.SIGINT)
        out, err = proc.communicate(timeout=60)
    if proc.returncode == 0:  # a fast machine finished the whole run first: nothing to check
        pytest.skip(f"the run ended within {delay} s")
    _interrupted_cleanly(proc, err)


@pytest.mark.parametrize(
    "stage,where", [("plugins", "reading the spec"), ("data", "loading the data"), ("store", "opening the run store")]
)
def test_ctrl_c_in_each_stage_says_where(stage, where, toy_env, tmp_path):
    env = slow_start_env(toy_env, tmp_path, stage)
    spec = write(tmp_path / "s.yaml", SPEC)
    with running(
        [sys.executable, "-m", "glasswork", "run", "-q", "--db", str(tmp_path / "g.duckdb"), str(spec)],
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
        env=env,
        cwd=tmp_path,
    ) as proc:
        line = proc.stderr.readline()
        assert line.strip() == f"slow-start: {stage}", line + proc.stderr.read()
        proc.send_signal(signal.SIGINT)
        out, err = proc.communicate(timeout=30)
    _interrupted_cleanly(proc, err)
    assert f"interrupted while {where}; nothing was run" in err
    assert not (tmp_path / "g.duckdb").exists() or stage == "store"


def test_ctrl_c_while_a_plain_command_starts_is_not_click_s_aborted(toy_env, tmp_path):
    env = slow_start_env(toy_env, tmp_path, "plugins")
    with running(
        [sys.executable, "-m", "glasswork", "plugins"],
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
        env=env,
        cwd=tmp_path,
    ) as proc:
        assert proc.stderr.readline().strip() == "slow-start: plugins"
        proc.send_signal(signal.SIGINT)
        out, err = proc.communicate(timeout=30)
    _interrupted_cleanly(proc, err)
    assert "glasswork plugins: interrupted" in err


def test_an_interrupt_that_python_wrapped_is_still_an_interrupt(monkeypatch, capsys):
    """Ctrl-C while a library's class body runs reaches us as 'RuntimeError: Error calling
    __set_name__' (an import: ImportError) with the KeyboardInterrupt behind it: exit 130, not an
    internal error (seen in CI: pandas imported one second into a run)."""
    import glasswork.cli

    def interrupted_inside_a_class_body(**kwargs):
        try:
            raise KeyboardInterrupt
        except KeyboardInterrupt as exc:
            raise RuntimeError("Error calling __set_name__ on 'not_implemented' instance 'hist' in 'Series'") from exc

    monkeypatch.setattr(glasswork.cli.cli, "main", interrupted_inside_a_class_body)
    with pytest.raises(SystemExit) as exit_info:
        glasswork.cli.main()
    assert exit_info.value.code == 130
    err = capsys.readouterr().err
    assert "interrupted" in err and "internal error" not in err


def test_ctrl_c_in_the_last_moments_of_shutdown_keeps_the_exit_status(toy_env, tmp_path):
    """Once Python's finalization has put the default SIGINT action back, a Ctrl-C would kill the
    process by the signal (status -2, no message) after a run that ended well; CI caught it
    in the Ctrl-C-at-any-moment test."""
    env = slow_start_env(toy_env, tmp_path, "finalization")
    spec = write(tmp_path / "s.yaml", SPEC)
    proc = subprocess.run(
        [sys.executable, "-m", "glasswork", "run", "--no-store", "--json", str(spec)],
        capture_output=True,
        text=True,
        env=env,
        cwd=tmp_path,
        timeout=60,
    )
    assert proc.returncode == 0, proc.stderr
    assert json.loads(proc.stdout)["status"] == "optimal"


def test_ctrl_c_after_the_command_ended_keeps_its_exit_status(toy_env, tmp_path):
    """A Ctrl-C while Python shuts down (after the run printed its result) exits with the run's
    status, not by dying of SIGINT without a word."""
    env = slow_start_env(toy_env, tmp_path, "exit")
    spec = write(tmp_path / "s.yaml", SPEC)
    with running(
        [sys.executable, "-m", "glasswork", "run", "--no-store", "--json", str(spec)],
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
        env=env,
        cwd=tmp_path,
    ) as proc:
        line = proc.stderr.readline()
        while line and line.strip() != "slow-start: exit":
            line = proc.stderr.readline()
        proc.send_signal(signal.SIGINT)
        out, err = proc.communicate(timeout=30)
    assert proc.returncode == 0, err
    assert json.loads(out)["status"] == "optimal"


def test_a_ctrl_c_turned_into_a_pyo3_panic_is_an_interrupt(monkeypatch, capsys):
    # older pydantic-core turns a KeyboardInterrupt raised while it builds a schema into a pyo3
    # PanicException (a BaseException): still one line and exit 130, not a Rust backtrace
    import glasswork.cli as cli_package

    class PanicException(BaseException):
        pass

    def panics(**_: object) -> None:
        raise PanicException("Error building schema validator:\n  KeyboardInterrupt: ")

    monkeypatch.setattr(cli_package.cli, "main", panics)
    with pytest.raises(SystemExit) as exit_info:
        cli_package.main()
    assert exit_info.value.code == 130
    assert "interrupted" in capsys.readouterr().err

    def other_panic(**_: object) -> None:
        raise PanicException("index out of bounds")

    monkeypatch.setattr(cli_package.cli, "main", other_panic)
    with pytest.raises(PanicException):  # any other panic is not hidden
        cli_package.main()
