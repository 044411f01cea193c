"""The example third-party plugin, installed with pip into a fresh virtual environment.

This is issue 2's promise 5: a solver that ships as its own distribution is found through the
``glasswork`` entry-point group and works from a spec (discovery, validation, schema, running)
without glasswork knowing about it. The venv is made with ``--system-site-packages`` so the
already installed glasswork and its dependencies are visible, and the plugin is installed with
``--no-deps --no-build-isolation --no-index``, so nothing is downloaded.
"""

from __future__ import annotations

import json
import os
import re
import shutil
import site
import subprocess
import sys
from pathlib import Path
from typing import Any

import pytest

REPO = Path(__file__).resolve().parents[2]
EXAMPLE = REPO / "examples" / "glasswork-greedy"

pytestmark = pytest.mark.slow

SPEC = """\
name: breast-cancer-greedy
data:
  source: sklearn:breast_cancer
  binarize: {thresholds: 3}
solver: greedy
objective:
  regularization: 0.01
constraints:
  max_rules: 8
"""


def _example_version() -> str:
    text = (EXAMPLE / "src" / "glasswork_greedy" / "__init__.py").read_text()
    match = re.search(r'^__version__ = "([^"]+)"', text, re.M)
    assert match, "glasswork_greedy/__init__.py must set __version__"
    return match.group(1)


class Venv:
    """A virtual environment holding glasswork-greedy; runs commands in a scratch folder."""

    def __init__(self, root: Path) -> None:
        self.root = root
        bindir = root / ("Scripts" if os.name == "nt" else "bin")
        self.python = bindir / ("python.exe" if os.name == "nt" else "python")
        self.work = root.parent / "work"
        self.work.mkdir(exist_ok=True)
        # a clean environment: no toy plugins, no disabled plugins, no PYTHONPATH from the suite
        self.env = {
            k: v for k, v in os.environ.items()
            if not k.startswith("GLASSWORK_") and k not in ("PYTHONPATH", "PYTHONHOME")
        }
        self.env["PYTHONNOUSERSITE"] = "1"

    def run(self, *args: str, env: dict[str, str] | None = None,
            timeout: float = 120) -> subprocess.CompletedProcess[str]:
        return subprocess.run(
            [str(self.python), *args], cwd=self.work, env={**self.env, **(env or {})},
            capture_output=True, text=True, timeout=timeout,
        )

    def glasswork(self, *args: str, env: dict[str, str] | None = None) -> subprocess.CompletedProcess[str]:
        return self.run("-m", "glasswork", *args, env=env)

    def write(self, name: str, text: str) -> Path:
        path = self.work / name
        path.write_text(text, encoding="utf-8")
        return path


def _check(proc: subprocess.CompletedProcess[str], what: str) -> None:
    assert proc.returncode == 0, f"{what} failed ({proc.returncode}):\n{proc.stdout}\n{proc.stderr}"


@pytest.fixture(scope="module")
def venv(tmp_path_factory: pytest.TempPathFactory) -> Venv:
    base = tmp_path_factory.mktemp("third-party-plugin")
    # build from a copy, so pip's in-tree build folders never land in the repository
    source = base / "glasswork-greedy"
    shutil.copytree(EXAMPLE, source, ignore=shutil.ignore_patterns(
        "build", "dist", "*.egg-info", "__pycache__", ".pytest_cache"))
    env = Venv(base / "venv")
    proc = subprocess.run([sys.executable, "-m", "venv", "--system-site-packages", str(env.root)],
                          capture_output=True, text=True, timeout=300)
    _check(proc, "python -m venv")
    # --system-site-packages reaches the base interpreter's packages, not those of the venv the
    # suite runs in (where glasswork is installed, editable or not): chain that venv's site
    # folders in with addsitedir, so their own .pth files (an editable finder) run too.
    purelib = env.run("-c", "import sysconfig; print(sysconfig.get_paths()['purelib'])").stdout.strip()
    chained = [p for p in site.getsitepackages() if Path(p).is_dir()]
    (Path(purelib) / "_glasswork_suite.pth").write_text(
        "".join(f"import site; site.addsitedir({p!r})\n" for p in chained), encoding="utf-8")
    _check(env.run("-c", "import glasswork"), "importing glasswork in the venv")
    pip = ["-m", "pip", "install", "--no-deps", "--disable-pip-version-check", "--no-cache-dir"]
    if env.run("-c", "import setuptools").returncode == 0:
        pip += ["--no-build-isolation", "--no-index"]  # offline: build with the venv's setuptools
    # else (e.g. Python >= 3.12 venvs carry no setuptools): let pip fetch the build backend
    _check(env.run(*pip, str(source), timeout=600), "pip install glasswork-greedy")
    return env


def test_the_plugin_is_installed_in_the_venv_only(venv: Venv) -> None:
    proc = venv.run("-c", "import importlib.metadata as m, glasswork_greedy as g; "
                          "print(m.version('glasswork-greedy')); print(g.__file__)")
    _check(proc, "importing glasswork_greedy")
    version, location = proc.stdout.split()
    assert version == _example_version()
    assert Path(location).resolve().is_relative_to(venv.root.resolve())


def test_plugins_lists_greedy_with_its_origin_and_version(venv: Venv) -> None:
    proc = venv.glasswork("plugins", "--json")
    _check(proc, "glasswork plugins --json")
    rows = {row["name"]: row for row in json.loads(proc.stdout)["plugins"]}
    assert "greedy" in rows, rows
    greedy = rows["greedy"]
    assert greedy["origin"] == "glasswork-greedy"
    assert greedy["version"] == _example_version()
    assert greedy["module"] == "glasswork_greedy.plugin"
    assert greedy["solvers"] == ["greedy"]
    assert greedy["status"] == "ok" and greedy["error"] is None

    table = venv.glasswork("plugins")
    _check(table, "glasswork plugins")
    assert "glasswork-greedy" in table.stdout and _example_version() in table.stdout


def test_validate_accepts_greedy_specs(venv: Venv) -> None:
    spec = venv.write("good.yaml", SPEC)
    readme = (EXAMPLE / "README.md").read_text()
    blocks = re.findall(r"```yaml\n(.*?)```", readme, re.S)
    assert blocks, "the example's README shows a spec"
    shown = venv.write("readme.yaml", blocks[0])
    proc = venv.glasswork("validate", str(spec), str(shown))
    _check(proc, "glasswork validate")
    assert proc.stdout.count("ok (greedy") == 2, proc.stdout


def test_validate_rejects_bad_greedy_fields_with_their_positions(venv: Venv) -> None:
    text = SPEC.replace("max_rules: 8", "max_rules: 100\n  min_suport: 0.1")
    spec = venv.write("bad.yaml", text)
    lines = text.splitlines()
    row = next(i for i, line in enumerate(lines) if "max_rules" in line)
    typo = next(i for i, line in enumerate(lines) if "min_suport" in line)

    proc = venv.glasswork("validate", str(spec))
    assert proc.returncode == 2, proc.stdout + proc.stderr
    # an out-of-range number points at the value, with the allowed range
    value_at = f"{spec}:{row + 1}:{lines[row].index('100') + 1}: constraints.max_rules:"
    assert value_at in proc.stderr, proc.stderr
    assert "64" in proc.stderr.split(value_at, 1)[1].splitlines()[0]
    # an unknown key points at the key and suggests the field the plugin defines
    key_at = f"{spec}:{typo + 1}:{lines[typo].index('min_suport') + 1}: constraints.min_suport:"
    assert key_at in proc.stderr, proc.stderr
    assert "min_support" in proc.stderr.split(key_at, 1)[1].splitlines()[0]

    run = venv.glasswork("run", str(spec), "--json")
    assert run.returncode == 2, run.stdout + run.stderr
    assert value_at in run.stderr


def _find_solver_schema(node: Any, solver: str) -> dict[str, Any] | None:
    """The object schema whose ``solver`` property is the constant ``solver``."""
    if isinstance(node, dict):
        tag = node.get("properties", {}).get("solver") if isinstance(node.get("properties"), dict) else None
        if isinstance(tag, dict) and (tag.get("const") == solver or tag.get("enum") == [solver]):
            return node
        children: Any = node.values()
    elif isinstance(node, list):
        children = node
    else:
        return None
    for child in children:
        found = _find_solver_schema(child, solver)
        if found is not None:
            return found
    return None


def test_schema_contains_the_greedy_spec_model(venv: Venv) -> None:
    proc = venv.glasswork("schema")
    _check(proc, "glasswork schema")
    schema = json.loads(proc.stdout)
    greedy = _find_solver_schema(schema, "greedy")
    assert greedy is not None, "no spec model with solver: greedy in the schema"
    defs = schema.get("$defs", {})
    constraints = defs["GreedyConstraints"]["properties"]
    assert constraints["max_rules"]["minimum"] == 0 and constraints["max_rules"]["maximum"] == 64
    assert constraints["min_support"]["exclusiveMaximum"] == 0.5
    assert defs["GreedyObjective"]["properties"]["regularization"]["default"] == 0.01
    assert defs["GreedyConstraints"].get("additionalProperties") is False

    out = venv.work / "schema.json"
    _check(venv.glasswork("schema", "-o", str(out)), "glasswork schema -o")
    assert json.loads(out.read_text()) == schema


def test_run_json_on_breast_cancer(venv: Venv) -> None:
    spec = venv.write("run.yaml", SPEC)
    proc = venv.glasswork("run", str(spec), "--json", "-q")
    _check(proc, "glasswork run --json")
    doc = json.loads(proc.stdout)
    for key in ("solver", "status", "objective", "lower_bound", "gap", "model", "metrics", "stats", "run_id"):
        assert key in doc, key
    assert doc["solver"] == "greedy"
    assert doc["status"] == "heuristic"
    assert doc["lower_bound"] is None and doc["gap"] is None
    model = doc["model"]
    assert model["kind"] == "decision_list" and model["size"] >= 1
    assert model["classes"] == ["benign", "malignant"]
    metrics = doc["metrics"]
    assert metrics["train_accuracy"] > 0.8 and metrics["test_accuracy"] > 0.8
    assert 0.5 < metrics["train_auc"] <= 1.0
    assert metrics["train_error"] == pytest.approx(1 - metrics["train_accuracy"])
    assert doc["objective"] == pytest.approx(metrics["train_error"] + 0.01 * model["size"])
    assert doc["stats"]["nodes"] > 0

    text = venv.glasswork("run", str(spec), "-q")
    _check(text, "glasswork run")
    assert "if " in text.stdout and " then " in text.stdout and "heuristic" in text.stdout


def test_limits_reach_the_plugin(venv: Venv) -> None:
    spec = venv.write("limited.yaml", SPEC + "limits:\n  nodes: 1\n")
    proc = venv.glasswork("run", str(spec), "--json", "-q")
    _check(proc, "glasswork run with a node limit")
    doc = json.loads(proc.stdout)
    assert doc["status"] == "stopped_nodes"
    assert doc["lower_bound"] is None and doc["model"]["size"] == 1


def test_the_plugin_can_be_disabled(venv: Venv) -> None:
    spec = venv.write("disabled.yaml", SPEC)
    off = {"GLASSWORK_DISABLE_PLUGINS": "greedy"}
    proc = venv.glasswork("validate", str(spec), env=off)
    assert proc.returncode == 2, proc.stdout + proc.stderr
    assert "disabled" in proc.stderr
    rows = {row["name"]: row for row in json.loads(venv.glasswork("plugins", "--json", env=off).stdout)["plugins"]}
    assert rows["greedy"]["status"] == "disabled"


def test_the_plugins_own_suite_passes_where_it_is_installed(venv: Venv) -> None:
    tests = venv.root.parent / "glasswork-greedy" / "tests"
    proc = venv.run("-m", "pytest", str(tests), "-q", "-p", "no:cacheprovider", timeout=300)
    assert proc.returncode == 0, proc.stdout[-4000:] + proc.stderr[-2000:]
    assert re.search(r"\d+ passed", proc.stdout) and "failed" not in proc.stdout
