"""The import rules and the solver-neutral core of ``docs/architecture.md``, enforced.

Dependencies point one way: ``tui`` and ``plugins`` may import the core; the core imports
neither and never names a built-in solver; plugins never import the TUI; only the TUI imports
Textual. Everything a solver shows reaches the core and the TUI through hooks, so a third-party
solver is served exactly as a built-in one.
"""

from __future__ import annotations

import ast
import re
from collections.abc import Iterator
from pathlib import Path

import pytest

REPO = Path(__file__).resolve().parents[1]
BUILTIN_SOLVERS = ("corels", "fasterrisk", "moss")
BUILTIN_MODEL_KINDS = ("rule_list", "score_card", "rule_set")
# The CORELS *text format* (.out/.label/.minor files) is a data format of the core's data layer,
# which any rule solver can read: this module and these names refer to the format, not to the
# corels plugin (nothing in them knows the plugin exists).
DATA_FORMAT_MODULE = "core/data/corels_format.py"
DATA_FORMAT_NAMES = {"corels_format", "load_corels", "read_corels", "write_corels", "CorelsData"}


def modules(folder: str) -> Iterator[tuple[Path, ast.Module]]:
    for path in sorted((REPO / folder).rglob("*.py")):
        yield path, ast.parse(path.read_text(encoding="utf-8"), filename=str(path))


def imported(tree: ast.Module) -> Iterator[tuple[int, str]]:
    for node in ast.walk(tree):
        if isinstance(node, ast.Import):
            for alias in node.names:
                yield node.lineno, alias.name
        elif isinstance(node, ast.ImportFrom) and node.module and node.level == 0:
            yield node.lineno, node.module
            for alias in node.names:
                yield node.lineno, f"{node.module}.{alias.name}"


def violations(folder: str, forbidden: tuple[str, ...]) -> list[str]:
    return [
        f"{path.relative_to(REPO)}:{line}: imports {name}"
        for path, tree in modules(folder)
        for line, name in imported(tree)
        if any(name == f or name.startswith(f + ".") for f in forbidden)
    ]


@pytest.mark.parametrize(
    "folder, forbidden",
    [
        ("core", ("glasswork.plugins", "glasswork.tui", "textual", "textual_plotext")),
        ("plugins", ("glasswork.tui", "textual", "textual_plotext")),
        ("cython_ext", ("glasswork.plugins", "glasswork.tui", "textual")),
    ],
)
def test_dependencies_point_one_way(folder: str, forbidden: tuple[str, ...]) -> None:
    assert violations(folder, forbidden) == []


def test_the_check_sees_a_forbidden_import(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    (tmp_path / "core").mkdir()
    (tmp_path / "core" / "bad.py").write_text("from glasswork.tui.app import GlassworkApp\nimport textual\n")
    monkeypatch.setitem(globals(), "REPO", tmp_path)
    assert sorted(v.split(": ", 1)[1] for v in violations("core", ("glasswork.tui", "textual"))) == [
        "imports glasswork.tui.app",
        "imports glasswork.tui.app.GlassworkApp",
        "imports textual",
    ]


def _docstrings(tree: ast.Module) -> set[int]:
    ids = set()
    for node in ast.walk(tree):
        if isinstance(node, (ast.Module, ast.ClassDef, ast.FunctionDef, ast.AsyncFunctionDef)):
            body = node.body
            if body and isinstance(body[0], ast.Expr) and isinstance(body[0].value, ast.Constant):
                ids.add(id(body[0].value))
    return ids


def solver_mentions(folder: str) -> list[str]:
    """Code (not prose: docstrings and messages) in ``folder`` that names a built-in solver or one
    of its model kinds, as a string key, a name or an import."""
    words = re.compile(r"\b(" + "|".join(BUILTIN_SOLVERS + BUILTIN_MODEL_KINDS) + r")\b", re.I)
    found = []
    for path, tree in modules(folder):
        if path.relative_to(REPO).as_posix() == DATA_FORMAT_MODULE:
            continue
        prose = _docstrings(tree)
        for node in ast.walk(tree):
            text = None
            if (
                isinstance(node, ast.Constant)
                and isinstance(node.value, str)
                and id(node) not in prose
                and not re.search(r"\s", node.value.strip())
            ):  # a name or key, not a sentence
                text = node.value
            elif isinstance(node, ast.Name):
                text = node.id
            elif isinstance(node, ast.Attribute):
                text = node.attr
            elif isinstance(node, (ast.FunctionDef, ast.ClassDef)):
                text = node.name
            elif isinstance(node, ast.alias):
                text = node.name
            if text is None:
                continue
            parts = [p for p in re.split(r"[.\s]", text) if p not in DATA_FORMAT_NAMES]
            if any(words.search(p) or words.search(p.replace("_", " ")) for p in parts):
                found.append(f"{path.relative_to(REPO)}:{getattr(node, 'lineno', '?')}: {text[:60]!r}")
    return found


@pytest.mark.parametrize("folder", ["core", "tui"])
def test_core_and_tui_never_name_a_builtin_solver(folder: str) -> None:
    assert solver_mentions(folder) == []


def test_the_solver_check_sees_a_name(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setitem(globals(), "REPO", tmp_path)
    (tmp_path / "tui").mkdir()
    (tmp_path / "tui" / "bad.py").write_text(
        '"""Prose may mention moss."""\nif solver == "moss":\n    view = rule_list(model)\n'
    )
    assert sorted(m.split(": ", 1)[1] for m in solver_mentions("tui")) == ["'moss'", "'rule_list'"]


# -- heavy libraries load when a feature needs them ----------------------------------------------

HEAVY = ("sklearn", "scipy", "textual", "cvxpy", "matplotlib")
REPORT_MODULES = (
    "import atexit, sys\n"
    "atexit.register(lambda: print(' '.join(sorted(m for m in sys.modules "
    "if m.split('.')[0] in {heavy!r})), file=open({out!r}, 'w')))\n"
)


def _modules_loaded(tmp_path: Path, code: str) -> set[str]:
    import subprocess
    import sys

    out = tmp_path / "modules.txt"
    script = REPORT_MODULES.format(heavy=HEAVY, out=str(out)) + code
    subprocess.run([sys.executable, "-c", script], cwd=tmp_path, capture_output=True, text=True, timeout=300)
    return {m.split(".")[0] for m in out.read_text().split()}


def test_importing_glasswork_loads_no_heavy_library(tmp_path: Path) -> None:
    assert _modules_loaded(tmp_path, "import glasswork, glasswork.cli\n") == set()


def test_glasswork_run_loads_no_heavy_library(tmp_path: Path) -> None:
    """A CORELS run on a CSV without a split: no scikit-learn (metrics are NumPy), no scipy (MOSS's
    kernels load it when MOSS runs), never Textual; the registry loads the CORELS plugin only."""
    rows = ["a,b,y"] + [f"{i % 7},{'uvw'[i % 3]},{'yes' if (i % 7 > 3) != (i % 11 == 0) else 'no'}" for i in range(120)]
    (tmp_path / "d.csv").write_text("\n".join(rows) + "\n")
    (tmp_path / "s.yaml").write_text(
        "name: t\ndata:\n  source: d.csv\n  target: y\n  binarize: {}\n  split: {kind: none}\nsolver: corels\n"
    )
    loaded = _modules_loaded(
        tmp_path,
        "sys.argv = ['glasswork', 'run', 's.yaml', '--no-store', '--json']\nfrom glasswork.cli import main\nmain()\n",
    )
    assert loaded == set()


def test_importing_glasswork_loads_only_the_package() -> None:
    """``glasswork``'s public names load on first use: the package alone (and ``startup``, which
    must come first) until one is asked for; every name of ``__all__`` is still there."""
    import subprocess
    import sys

    code = (
        "import sys, glasswork\n"
        "print(sorted(m for m in sys.modules if m.split('.')[0] in {'glasswork', 'numpy', 'pydantic'}))\n"
        "missing = [n for n in glasswork.__all__ if getattr(glasswork, n, None) is None]\n"
        "print(missing, glasswork.spec.load.load_spec is glasswork.load_spec)\n"
    )
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, timeout=300, check=True)
    assert out.stdout.splitlines() == ["['glasswork', 'glasswork._version', 'glasswork.startup']", "[] True"]


@pytest.mark.parametrize(
    ("as_command", "preset", "expected"), [(True, None, "4"), (True, "20", "20"), (False, None, None)]
)
def test_the_command_lets_openblas_idle_threads_sleep(
    as_command: bool, preset: str | None, expected: str | None
) -> None:
    """OpenBLAS's threads spin ~0.1 CPU-s each after NumPy's import unless told to sleep: the
    command tells them (before NumPy loads, so OpenBLAS reads it), the user's setting wins, and a
    library import of glasswork leaves the environment alone."""
    import os
    import subprocess
    import sys

    code = (
        "import sys; sys.argv = ['glasswork', 'run']\n" if as_command else ""
    ) + "import os, glasswork, numpy\nprint(os.environ.get('OPENBLAS_THREAD_TIMEOUT'))\n"
    env = {k: v for k, v in os.environ.items() if k != "OPENBLAS_THREAD_TIMEOUT"}
    if preset is not None:
        env["OPENBLAS_THREAD_TIMEOUT"] = preset
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, timeout=300, env=env, check=True)
    assert out.stdout.strip() == str(expected)


@pytest.mark.parametrize(("as_command", "preset"), [(True, None), (True, ""), (False, None)])
def test_the_command_never_builds_pydantics_self_schema(as_command: bool, preset: str | None) -> None:
    """On pydantic before 2.11, a Ctrl-C while pydantic-core builds its self-schema validator is a
    Rust panic whose backtrace reaches the terminal (the lowest-versions CI run met it): the
    command skips that check, which pydantic 2.11 and later skip anyway; a user's own setting
    stays, and a library import of glasswork leaves the environment alone. Where pydantic-core
    still has the check, the test counts its calls while glasswork's spec models are built."""
    import os
    import subprocess
    import sys

    from glasswork.startup import SKIP_SELF_SCHEMA_CHECK

    code = ("import sys; sys.argv = ['glasswork', 'run']\n" if as_command else "") + (
        "import os, glasswork, pydantic_core\n"
        "calls = []\n"
        "check = getattr(pydantic_core, 'validate_core_schema', None)\n"
        "if check is not None:\n"
        "    def counted(*args, **kwargs):\n"
        "        calls.append(1)\n"
        "        return check(*args, **kwargs)\n"
        "    pydantic_core.validate_core_schema = counted\n"
        "    import pydantic._internal._core_utils as utils\n"
        "    if hasattr(utils, '_validate_core_schema'):\n"
        "        utils._validate_core_schema = counted\n"
        "import glasswork.spec.models\n"
        f"print(repr(os.environ.get({SKIP_SELF_SCHEMA_CHECK!r})), check is not None, len(calls))\n"
    )
    env = {k: v for k, v in os.environ.items() if k != SKIP_SELF_SCHEMA_CHECK}
    if preset is not None:
        env[SKIP_SELF_SCHEMA_CHECK] = preset
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, timeout=300, env=env, check=True)
    setting, has_check, calls = out.stdout.split()
    expected = repr(preset) if preset is not None else ("'1'" if as_command else "None")
    assert setting == expected
    if as_command and has_check == "True":
        assert calls == "0"


def test_the_readme_example_loads_no_heavy_library(tmp_path: Path) -> None:
    """The README's first command (scikit-learn's breast-cancer data, a stratified holdout): the
    bundled CSV is read and the split drawn without importing scikit-learn (1.7 CPU-s)."""
    spec = Path(__file__).resolve().parents[1] / "specs" / "corels_breast_cancer.yaml"
    loaded = _modules_loaded(
        tmp_path,
        f"sys.argv = ['glasswork', 'run', {str(spec)!r}, '--no-store', '--json']\n"
        "from glasswork.cli import main\nmain()\n",
    )
    assert loaded == set()


def _plugins_imported(tmp_path: Path, code: str) -> set[str]:
    """The built-in plugins whose modules ``code`` imported (``glasswork.plugins.NAME...``)."""
    import subprocess
    import sys

    out = tmp_path / "plugins.txt"
    report = (
        "import atexit, sys\n"
        "atexit.register(lambda: print(' '.join(sorted({m.split('.')[2] for m in sys.modules "
        f"if m.startswith('glasswork.plugins.')}})), file=open({str(out)!r}, 'w')))\n"
    )
    subprocess.run([sys.executable, "-c", report + code], cwd=tmp_path, capture_output=True, text=True, timeout=300)
    return set(out.read_text().split())


def test_the_readme_example_imports_only_its_own_plugin(tmp_path: Path) -> None:
    """The README's first command, with its run store: the registry imports the CORELS plugin
    only, not MOSS's or FasterRisk's modules (and spec models), which it does not use."""
    spec = Path(__file__).resolve().parents[1] / "specs" / "corels_breast_cancer.yaml"
    loaded = _plugins_imported(
        tmp_path,
        f"sys.argv = ['glasswork', 'run', {str(spec)!r}, '--db', 'runs.duckdb', '-q']\n"
        "from glasswork.cli import main\nmain()\n",
    )
    assert loaded == {"corels"}


def test_the_plugin_import_check_sees_every_plugin(tmp_path: Path) -> None:
    """``glasswork plugins`` lists every plugin, so it imports them all."""
    loaded = _plugins_imported(
        tmp_path, "sys.argv = ['glasswork', 'plugins', '--json']\nfrom glasswork.cli import main\nmain()\n"
    )
    assert loaded == {"corels", "fasterrisk", "moss"}


def test_the_heavy_import_check_sees_an_import(tmp_path: Path) -> None:
    assert _modules_loaded(tmp_path, "import glasswork\nimport sklearn.metrics\n") >= {"sklearn", "scipy"}


RUN_PATH = "core/running/launch.py"  # the one module that builds the run's internal search step


def runners_built(folders: tuple[str, ...] = ("core", "plugins", "tui", "tests", "bench")) -> list[str]:
    """Every ``Runner(...)`` call outside the run path: a caller that skips a step of the run."""
    found = []
    for folder in folders:
        for path, tree in modules(folder):
            if path.relative_to(REPO).as_posix() == RUN_PATH:
                continue
            for node in ast.walk(tree):
                if isinstance(node, ast.Call):
                    func = node.func
                    name = (
                        func.id if isinstance(func, ast.Name) else func.attr if isinstance(func, ast.Attribute) else ""
                    )
                    if name == "Runner":
                        found.append(f"{path.relative_to(REPO)}:{node.lineno}: builds a Runner")
    return found


def test_only_the_run_path_builds_a_runner() -> None:
    """The CLI, the monitor, the sweep workers, the contract suite, the fixtures, the tests and the
    benchmarks all run through ``glasswork.running.launch.Launch``, so a step added there reaches them all."""
    assert runners_built() == []


def test_the_runner_check_sees_a_runner_built(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    (tmp_path / "tests").mkdir()
    (tmp_path / "tests" / "t.py").write_text(
        "from glasswork.running import runner\nfrom glasswork.running.runner import Runner\n"
        "Runner()\nrunner.Runner(None)\n"
        "from click.testing import CliRunner\nCliRunner()\n"
    )
    monkeypatch.setitem(globals(), "REPO", tmp_path)
    assert runners_built(("tests",)) == ["tests/t.py:3: builds a Runner", "tests/t.py:4: builds a Runner"]


# -- the import graph has no cycle ------------------------------------------------------------------

# Where each folder is installed (pyproject.toml's package-dir).
PACKAGES = {
    "core": "glasswork",
    "plugins": "glasswork.plugins",
    "tui": "glasswork.tui",
    "cython_ext": "glasswork.cython_ext",
}


def module_names() -> dict[str, Path]:
    """Every glasswork module by its dotted name (a package by its ``__init__``)."""
    found = {}
    for folder, package in PACKAGES.items():
        for path in sorted((REPO / folder).rglob("*.py")):
            parts = list(path.relative_to(REPO / folder).with_suffix("").parts)
            if parts[-1] == "__init__":
                parts = parts[:-1]
            found[".".join([package, *parts])] = path
    return found


def _type_checking_only(node: ast.AST) -> bool:
    return isinstance(node, ast.If) and "TYPE_CHECKING" in ast.unparse(node.test)


def import_statements(tree: ast.Module, *, types: bool = False) -> Iterator[tuple[ast.Import | ast.ImportFrom, bool]]:
    """Every import that runs, at the top and inside functions, each with ``False``; with
    ``types``, also those under ``if TYPE_CHECKING:``, each with ``True`` (they never execute, so
    they cannot make Python's import fail, but they still say which concept needs which)."""

    def visit(node: ast.AST, for_types: bool) -> Iterator[tuple[ast.Import | ast.ImportFrom, bool]]:
        for child in ast.iter_child_nodes(node):
            if _type_checking_only(child):
                assert isinstance(child, ast.If)
                if types:
                    for statement in child.body:
                        yield from visit(ast.Module(body=[statement], type_ignores=[]), True)
                for statement in child.orelse:
                    yield from visit(ast.Module(body=[statement], type_ignores=[]), for_types)
                continue
            if isinstance(child, (ast.Import, ast.ImportFrom)):
                yield child, for_types
            yield from visit(child, for_types)

    yield from visit(tree, False)


def import_graph(*, types: bool = False) -> dict[str, dict[str, int]]:
    """Module -> the glasswork modules it makes Python import (with the line that does), for every
    import that runs. ``from a.b import c`` names module ``a.b.c`` when ``c`` is a submodule, else
    it needs ``a.b`` itself; importing ``a.b.c`` also runs ``a`` and ``a.b`` (the importer's own
    enclosing packages excepted, which are already running when it runs).

    With ``types``, the imports under ``if TYPE_CHECKING:`` count too: such an import needs the
    module it names (a package's lazy re-exports, its own typed names), but runs no package."""
    names = module_names()

    def home(dotted: str) -> str | None:
        while dotted and dotted not in names:
            dotted = dotted.rpartition(".")[0]
        return dotted or None

    graph: dict[str, dict[str, int]] = {}
    for name, path in names.items():
        edges: dict[str, int] = {}

        def needs(target: str, line: int, for_types: bool, *, name: str = name, edges: dict[str, int] = edges) -> None:
            parts = target.split(".")
            for i in range(len(parts) if for_types else 1, len(parts) + 1):
                module = ".".join(parts[:i])
                if module in names and module != name and not name.startswith(module + "."):
                    edges.setdefault(module, line)

        package = name.split(".") if path.name == "__init__.py" else name.split(".")[:-1]
        tree = ast.parse(path.read_text(encoding="utf-8"), filename=str(path))
        for node, for_types in import_statements(tree, types=types):
            if isinstance(node, ast.Import):
                for alias in node.names:
                    if (target := home(alias.name)) and alias.name.startswith("glasswork"):
                        needs(target, node.lineno, for_types)
                continue
            base = ".".join(package[: len(package) - node.level + 1] + [node.module or ""]).strip(".")
            source = base if node.level else (node.module or "")
            if not source.startswith("glasswork") or (owner := home(source)) is None:
                continue
            for alias in node.names:
                if f"{source}.{alias.name}" in names:
                    needs(f"{source}.{alias.name}", node.lineno, for_types)
                elif owner == name or not name.startswith(owner + "."):
                    needs(owner, node.lineno, for_types)
                else:  # a name from an enclosing package: that package's body must have run
                    edges.setdefault(owner, node.lineno)
        graph[name] = edges
    return graph


def import_cycles(graph: dict[str, dict[str, int]]) -> list[list[str]]:
    """The strongly connected components of more than one module (Tarjan), each as its edges."""
    index: dict[str, int] = {}
    low: dict[str, int] = {}
    stack: list[str] = []
    on_stack: set[str] = set()
    components: list[list[str]] = []

    def connect(v: str) -> None:
        index[v] = low[v] = len(index)
        stack.append(v)
        on_stack.add(v)
        for w in graph.get(v, {}):
            if w not in index:
                connect(w)
                low[v] = min(low[v], low[w])
            elif w in on_stack:
                low[v] = min(low[v], index[w])
        if low[v] == index[v]:
            component = []
            while True:
                w = stack.pop()
                on_stack.discard(w)
                component.append(w)
                if w == v:
                    break
            if len(component) > 1:
                members = set(component)
                components.append(
                    sorted(
                        f"{m} -> {w} (line {line})" for m in component for w, line in graph[m].items() if w in members
                    )
                )

    for v in sorted(graph):
        if v not in index:
            connect(v)
    return components


def test_no_import_cycle() -> None:
    """Counting imports inside functions too: a cycle hidden behind a function-local import is
    still two concepts that need each other (docs/architecture.md, import rules)."""
    cycles = import_cycles(import_graph())
    assert cycles == [], "import cycles:\n" + "\n\n".join("\n".join(c) for c in cycles)


def test_no_import_cycle_even_for_types() -> None:
    """Type-only imports (``if TYPE_CHECKING:``) included: the contracts solvers, events, records
    and hooks share sit below what uses them, so no two concepts need each other even to be typed
    (docs/architecture.md, import rules)."""
    cycles = import_cycles(import_graph(types=True))
    assert cycles == [], "import cycles:\n" + "\n\n".join("\n".join(c) for c in cycles)


def test_the_cycle_check_sees_a_cycle_of_types(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    (tmp_path / "core" / "pkg").mkdir(parents=True)
    (tmp_path / "core" / "a.py").write_text(
        "from typing import TYPE_CHECKING\nif TYPE_CHECKING:\n    from glasswork.b import B\n"
        "else:\n    import glasswork.c\nA = 1\n"
    )
    (tmp_path / "core" / "b.py").write_text("from glasswork.a import A\nB = 2\n")
    (tmp_path / "core" / "c.py").write_text("C = 3\n")
    (tmp_path / "core" / "pkg" / "__init__.py").write_text(
        "import typing\nif typing.TYPE_CHECKING:\n    from glasswork.pkg.d import D\n"
    )
    (tmp_path / "core" / "pkg" / "d.py").write_text("from glasswork.e import E\nD = 0\n")
    (tmp_path / "core" / "e.py").write_text(
        "from typing import TYPE_CHECKING\nif TYPE_CHECKING:\n    from glasswork.pkg.f import F\nE = 0\n"
    )
    (tmp_path / "core" / "pkg" / "f.py").write_text("F = 0\n")  # a type-only import runs no package
    monkeypatch.setitem(globals(), "REPO", tmp_path)
    assert import_cycles(import_graph()) == []
    assert import_graph()["glasswork.a"] == {"glasswork.c": 5}
    assert import_cycles(import_graph(types=True)) == [
        ["glasswork.a -> glasswork.b (line 3)", "glasswork.b -> glasswork.a (line 1)"]
    ]


def test_the_cycle_check_sees_a_cycle(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    (tmp_path / "core" / "pkg").mkdir(parents=True)
    (tmp_path / "core" / "__init__.py").write_text("from glasswork.a import A\n")
    (tmp_path / "core" / "a.py").write_text("def f():\n    from glasswork.b import B\nA = 1\n")
    (tmp_path / "core" / "b.py").write_text("from glasswork import a\nB = 2\n")  # a submodule: no edge to glasswork
    (tmp_path / "core" / "c.py").write_text(
        "from typing import TYPE_CHECKING\nif TYPE_CHECKING:\n    from glasswork.pkg.d import D\n"
    )
    (tmp_path / "core" / "pkg" / "__init__.py").write_text("from .d import D\n")
    (tmp_path / "core" / "pkg" / "d.py").write_text("from glasswork.c import C\nD = 0\n")
    (tmp_path / "core" / "e.py").write_text("from glasswork.pkg.f import F\n")
    (tmp_path / "core" / "pkg" / "f.py").write_text("def g():\n    import glasswork.e\nF = 0\n")
    monkeypatch.setitem(globals(), "REPO", tmp_path)
    assert import_cycles(import_graph()) == [
        ["glasswork.a -> glasswork.b (line 2)", "glasswork.b -> glasswork.a (line 1)"],
        ["glasswork.e -> glasswork.pkg.f (line 1)", "glasswork.pkg.f -> glasswork.e (line 2)"],
    ]


def test_modules_import_names_from_their_home_not_the_glasswork_namespace() -> None:
    """``glasswork``'s re-exports are for users; a module that took a name from there would tie
    every module to the package's ``__init__`` (the cycle the re-exports used to make)."""
    names = module_names()
    found = [
        f"{path.relative_to(REPO)}:{node.lineno}: from glasswork import {alias.name}"
        for module, path in names.items()
        for node in ast.walk(ast.parse(path.read_text(encoding="utf-8")))
        if isinstance(node, ast.ImportFrom) and node.level == 0 and node.module == "glasswork"
        for alias in node.names
        if f"glasswork.{alias.name}" not in names
    ]
    assert found == []


def test_the_export_formats_have_one_home() -> None:
    """The list of export formats is written once (``glasswork.export.formats``), in a module the
    command line imports without NumPy or pydantic; everything else names it."""
    formats = {"python", "sql", "json", "markdown"}
    homes = [
        f"{path.relative_to(REPO)}:{node.lineno}"
        for folder in ("core", "tui")
        for path, tree in modules(folder)
        for node in ast.walk(tree)
        if isinstance(node, (ast.Tuple, ast.List, ast.Set))
        and formats <= {e.value for e in node.elts if isinstance(e, ast.Constant)}
    ]
    assert homes == ["core/export/formats.py:14"]


def test_the_export_formats_load_light() -> None:
    import subprocess
    import sys

    code = (
        "import sys, glasswork.export.formats\n"
        "print(sorted({m.split('.')[0] for m in sys.modules} & {'numpy', 'pydantic'}))"
    )
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, timeout=120, check=True)
    assert out.stdout.strip() == "[]"


def private_crossings(names: dict[str, Path]) -> list[str]:
    """Private names (``_x``, not dunders) one glasswork module takes from another: imported
    (``from glasswork.m import _x``) or reached as an attribute of an imported module (``m._x``)."""
    found = []
    for module, path in names.items():
        tree = ast.parse(path.read_text(encoding="utf-8"), filename=str(path))
        package = module.split(".") if path.name == "__init__.py" else module.split(".")[:-1]
        modules_named: dict[str, str] = {}
        for node in ast.walk(tree):
            if isinstance(node, ast.ImportFrom):
                source = (
                    ".".join(package[: len(package) - node.level + 1] + [node.module or ""]).strip(".")
                    if node.level
                    else node.module or ""
                )
                if not source.startswith("glasswork") or source == module:
                    continue
                for alias in node.names:
                    if f"{source}.{alias.name}" in names:
                        modules_named[alias.asname or alias.name] = f"{source}.{alias.name}"
                    elif alias.name.startswith("_") and not alias.name.startswith("__"):
                        found.append(f"{path.relative_to(REPO)}:{node.lineno}: {source}.{alias.name}")
            elif isinstance(node, ast.Import):
                for alias in node.names:
                    if alias.name in names:
                        modules_named[alias.asname or alias.name] = alias.name
        for node in ast.walk(tree):
            if isinstance(node, ast.Attribute) and node.attr.startswith("_") and not node.attr.startswith("__"):
                base = ast.unparse(node.value)
                target = modules_named.get(base, base if base in names else None)
                if target is not None and target != module:
                    found.append(f"{path.relative_to(REPO)}:{node.lineno}: {target}.{node.attr}")
    return found


def test_no_module_takes_a_private_name_from_another() -> None:
    """A helper two modules share is a concept with a public name (documented where it lives);
    one only its module uses keeps its underscore. Plugins included."""
    assert private_crossings(module_names()) == []


def test_the_private_name_check_sees_a_crossing(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    (tmp_path / "core" / "pkg").mkdir(parents=True)
    (tmp_path / "core" / "a.py").write_text("def _helper(): ...\n__all__ = ['_helper']\n")
    (tmp_path / "core" / "pkg" / "__init__.py").write_text("")
    (tmp_path / "core" / "pkg" / "b.py").write_text(
        "from glasswork.a import _helper, __all__\nfrom glasswork import a as alias\n"
        "def f():\n    from ..a import _helper as h\n    return alias._helper, h\n"
    )
    monkeypatch.setitem(globals(), "REPO", tmp_path)
    assert private_crossings(module_names()) == [
        "core/pkg/b.py:1: glasswork.a._helper",
        "core/pkg/b.py:4: glasswork.a._helper",
        "core/pkg/b.py:5: glasswork.a._helper",
    ]


# The relative gap written out: a division by max(|x|, floor), or a tolerance times |x| compared
# with a difference (the same test with the division multiplied out).
GAP_FORMULA = re.compile(r"/\s*max\(\s*abs\(|<=\s*[\w.]*(?:tol|gap)\w*\s*\*\s*(?:max\(\s*)?abs\(")


def test_the_gap_formula_has_one_home():
    """Every gap (certificates, events, the store, the monitor, the solvers' stopping tests) comes
    from ``glasswork.contract.result.relative_gap``; a copy elsewhere would drift (issue 24 found six)."""
    home = REPO / "core" / "contract" / "result.py"
    copies = [
        f"{path.relative_to(REPO)}:{number}: {line.strip()}"
        for folder in ("core", "plugins", "tui")
        for path in sorted((REPO / folder).rglob("*.py"))
        if path != home
        for number, line in enumerate(path.read_text(encoding="utf-8").splitlines(), 1)
        if GAP_FORMULA.search(line)
    ]
    assert copies == [], "use glasswork.relative_gap instead of:\n" + "\n".join(copies)
    assert GAP_FORMULA.search(home.read_text(encoding="utf-8"))


# -- the tests mirror the packages ---------------------------------------------------------------------


def misplaced_tests() -> list[str]:
    """Flat ``tests/test_<package>...py`` files whose subject is a package of the core: they belong
    in ``tests/<package>/``, as the README says the tests mirror the packages."""
    packages = {p.parent.name for p in (REPO / "core").glob("*/__init__.py")}
    return [
        f"tests/{path.name} belongs in tests/{path.stem.split('_')[1]}/"
        for path in sorted((REPO / "tests").glob("test_*.py"))
        if path.stem.split("_")[1] in packages
    ]


def test_tests_of_a_core_package_sit_in_its_folder() -> None:
    assert misplaced_tests() == []


def test_the_mirror_check_sees_a_misplaced_test(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    (tmp_path / "core" / "store").mkdir(parents=True)
    (tmp_path / "core" / "store" / "__init__.py").write_text("")
    (tmp_path / "tests").mkdir()
    for name in ("test_store_more.py", "test_storage.py", "test_launch.py"):
        (tmp_path / "tests" / name).write_text("")
    monkeypatch.setitem(globals(), "REPO", tmp_path)
    assert misplaced_tests() == ["tests/test_store_more.py belongs in tests/store/"]


def test_no_two_test_files_share_a_name() -> None:
    """pytest imports test files by their base name (the test folders are not packages): two
    ``test_x.py`` in different folders stop the whole suite at collection."""
    seen: dict[str, list[str]] = {}
    for path in sorted((REPO / "tests").rglob("test_*.py")):
        seen.setdefault(path.name, []).append(str(path.relative_to(REPO)))
    assert {name: paths for name, paths in seen.items() if len(paths) > 1} == {}
