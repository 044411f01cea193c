"""Packaging: every package folder is installed under ``glasswork``, and nothing generic leaks."""

from __future__ import annotations

import sys
from pathlib import Path

if sys.version_info >= (3, 11):
    import tomllib
else:  # pragma: no cover
    import tomli as tomllib

REPO = Path(__file__).parent.parent
CONFIG = tomllib.loads((REPO / "pyproject.toml").read_text())["tool"]["setuptools"]


def test_every_package_folder_is_listed_in_pyproject():
    expected = set()
    for package, folder in CONFIG["package-dir"].items():
        for init in (REPO / folder).rglob("__init__.py"):
            rel = init.parent.relative_to(REPO / folder)
            if "__pycache__" not in rel.parts:
                expected.add(".".join([package, *rel.parts]))
    assert expected == set(CONFIG["packages"])


def test_only_glasswork_is_installed_at_the_top():
    assert all(p == "glasswork" or p.startswith("glasswork.") for p in CONFIG["packages"])
    assert set(CONFIG["package-dir"].values()) == {"core", "plugins", "cython_ext", "tui", "specs"}


def test_kernels_are_compiled_modules():
    from glasswork.cython_ext import bitset

    assert Path(bitset.__file__).suffix in (".so", ".pyd")


def test_what_ci_leaves_out_exists() -> None:
    """CI's lowest-versions step names tests to leave out; a test renamed or moved would silently
    run there again (and fail on versions it was never meant for), so each name must exist."""
    import re

    ci = (REPO / ".ci" / "run").read_text()
    missing = []
    for path in re.findall(r"--ignore=(\S+)", ci):
        if not (REPO / path).exists():
            missing.append(path)
    for node in re.findall(r"--deselect (\S+)", ci):
        file, _, name = node.partition("::")
        if not (REPO / file).exists() or not re.search(rf"^def {re.escape(name)}\(", (REPO / file).read_text(), re.M):
            missing.append(node)
    assert re.findall(r"--deselect (\S+)", ci), "the check found no --deselect in .ci/run"
    assert missing == []
