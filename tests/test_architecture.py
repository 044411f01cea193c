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
    kernels load it when MOSS runs), never Textual; the registry still loads every plugin."""
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


def test_the_heavy_import_check_sees_an_import(tmp_path: Path) -> None:
    assert _modules_loaded(tmp_path, "import glasswork\nimport sklearn.metrics\n") >= {"sklearn", "scipy"}


# The relative gap written out: a division by max(|x|, floor), or a tolerance times |x| compared
# with a difference (the same test with the division multiplied out).
GAP_FORMULA = re.compile(r"/\s*max\(\s*abs\(|<=\s*[\w.]*(?:tol|gap)\w*\s*\*\s*(?:max\(\s*)?abs\(")


def test_the_gap_formula_has_one_home():
    """Every gap (certificates, events, the store, the monitor, the solvers' stopping tests) comes
    from ``glasswork.result.relative_gap``; a copy elsewhere would drift (issue 24 found six)."""
    home = REPO / "core" / "result.py"
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
