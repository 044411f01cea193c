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
