"""Optional backends (issue 14): the extras table matches pyproject.toml, and asking for a backend
that is not installed stops before anything runs, with exit 2 and the ``pip install`` line.

The missing packages are really missing: each case runs the command line in a fresh interpreter
whose ``sys.meta_path`` refuses to find them (``find_spec`` and ``import`` both fail, as in an
environment where they were never installed), so nothing imported by the suite can leak in.
"""

from __future__ import annotations

import json
import os
import re
import subprocess
import sys
from pathlib import Path

import pytest
from glasswork.hooks.extras import EXTRAS, MissingExtra, report, require

if sys.version_info >= (3, 11):
    import tomllib
else:  # pragma: no cover
    import tomli as tomllib

REPO = Path(__file__).resolve().parent.parent
PROJECT = tomllib.loads((REPO / "pyproject.toml").read_text())["project"]
OPTIONAL = PROJECT["optional-dependencies"]

# A fresh interpreter in which the named top-level modules cannot be found, then the CLI.
BLOCKED_CLI = """
import sys
blocked = set(sys.argv[1].split(","))

class Blocker:
    def find_spec(self, name, path=None, target=None):
        if name.partition(".")[0] in blocked:
            raise ModuleNotFoundError(f"No module named {name!r}", name=name)
        return None

sys.meta_path.insert(0, Blocker())
sys.argv = ["glasswork", *sys.argv[2:]]
from glasswork.cli import main
main()
"""

MOSS_SPEC = """\
name: moss-mio
data: {source: sklearn:diabetes}
solver: moss
objective: {candidates: {trees: 20, depth: 2}}
constraints: {max_rules: 2, min_stability: 0.0}
search: {policy: mio, backend: %s}
"""

SWEEP_SPEC = """\
name: corels-sweep
data: {source: sklearn:breast_cancer, binarize: {thresholds: 2}}
solver: corels
objective: {regularization: 0.05}
constraints: {max_prefix_length: 2}
sweep:
  grid: {objective.regularization: [0.05, 0.1]}
"""


def _requirement_names(requirements: list[str]) -> set[str]:
    """Distribution names, normalised as module names are spelt (textual-serve: textual_serve)."""
    return {re.split(r"[\[<>=!~; ]", r, maxsplit=1)[0].lower().replace("-", "_") for r in requirements}


def run_blocked(blocked: str, *args: str, cwd: Path) -> subprocess.CompletedProcess[str]:
    env = {k: v for k, v in os.environ.items() if not k.startswith("GLASSWORK_")}
    env["COLUMNS"] = "200"  # tables unwrapped
    return subprocess.run(
        [sys.executable, "-c", BLOCKED_CLI, blocked, *args],
        cwd=cwd,
        env=env,
        capture_output=True,
        text=True,
        timeout=120,
    )


def test_every_extra_is_declared_and_all_and_test_pull_them():
    for name, extra in EXTRAS.items():
        names = _requirement_names(OPTIONAL[name])
        # a module is provided by the distribution of its name (dask[distributed] gives both)
        assert {m.lower() for m in extra.modules} <= names | {"distributed"}, (name, names)
    assert OPTIONAL["all"] == [f"glasswork[{','.join(EXTRAS)}]"]
    assert "glasswork[all]" in OPTIONAL["test"]
    core = _requirement_names(PROJECT["dependencies"])
    assert not core & {m for extra in EXTRAS.values() for m in extra.modules}, "an extra leaked into the core"


def test_require_names_the_pip_command(monkeypatch):
    monkeypatch.setattr("glasswork.hooks.extras.installed", lambda module: module != "matplotlib")
    with pytest.raises(MissingExtra) as err:
        require("plot", "--plot")
    assert str(err.value) == "--plot needs matplotlib, not installed here: pip install 'glasswork[plot]'"
    require("dask", "--executor dask")  # installed: no error
    rows = {row["extra"]: row for row in report()}
    assert rows["plot"]["available"] is False and rows["plot"]["missing"] == ["matplotlib"]
    assert rows["dask"]["available"] is True


@pytest.mark.parametrize(
    ("backend", "blocked", "extra"),
    [
        ("auto", "cvxpy,pyscipopt,mosek", "mio"),
        ("scip", "pyscipopt", "mio"),
        ("mosek", "mosek", "mosek"),
    ],
)
def test_a_mio_policy_without_its_extra_stops_before_running(tmp_path, backend, blocked, extra):
    spec = tmp_path / "mio.yaml"
    spec.write_text(MOSS_SPEC % backend)
    db = tmp_path / "runs.duckdb"
    proc = run_blocked(blocked, "run", str(spec), "--db", str(db), cwd=tmp_path)
    assert proc.returncode == 2, proc.stdout + proc.stderr
    lines = [line for line in proc.stderr.splitlines() if f"pip install 'glasswork[{extra}]'" in line]
    assert len(lines) == 1, proc.stderr
    assert "mio.yaml:6:" in lines[0] and "nothing was run" in proc.stderr
    assert not db.exists()


@pytest.mark.parametrize(
    ("option", "blocked", "message"),
    [
        (
            ("--executor", "dask:local"),
            "dask,distributed",
            "--executor dask:local needs dask and distributed, not installed here: pip install 'glasswork[dask]'",
        ),
        (
            ("--plot", "path.png"),
            "matplotlib",
            "--plot needs matplotlib, not installed here: pip install 'glasswork[plot]'",
        ),
    ],
)
def test_a_sweep_backend_without_its_extra_stops_before_running(tmp_path, option, blocked, message):
    spec = tmp_path / "sweep.yaml"
    spec.write_text(SWEEP_SPEC)
    db = tmp_path / "runs.duckdb"
    proc = run_blocked(blocked, "sweep", str(spec), "--db", str(db), "-j", "1", *option, cwd=tmp_path)
    assert proc.returncode == 2, proc.stdout + proc.stderr
    assert proc.stderr.strip().splitlines() == [f"{spec}: {message}; nothing was run."]
    assert not db.exists() and not (tmp_path / "path.png").exists()


def test_plugins_shows_which_backends_are_installed(tmp_path):
    proc = run_blocked("cvxpy,pyscipopt", "plugins", "--json", cwd=tmp_path)
    assert proc.returncode == 0, proc.stderr
    rows = {row["extra"]: row for row in json.loads(proc.stdout)["backends"]}
    assert set(rows) == set(EXTRAS)
    assert rows["mio"]["available"] is False and rows["mio"]["missing"] == ["cvxpy", "pyscipopt"]
    assert rows["mio"]["install"] == "pip install 'glasswork[mio]'"
    assert rows["dask"]["available"] is True  # the suite's environment has every extra
    table = run_blocked("cvxpy,pyscipopt", "plugins", cwd=tmp_path)
    assert "optional backends" in table.stdout and "glasswork[mio]" in table.stdout
