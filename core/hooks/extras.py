"""Optional backends: which of glasswork's extras are installed, and one message when one is missing.

The core install runs every solver's default policy, the run store, the command line and the
terminal UI. Heavy or commercial backends are extras (``[project.optional-dependencies]`` in
pyproject.toml; ``tests/test_extras.py`` keeps this table in step with it). A feature that needs
one calls ``require`` before anything runs, so a missing backend is a user's fixable mistake
(exit 2, one line naming the ``pip install`` command) rather than an ``ImportError`` halfway
through a run. Availability is probed with ``importlib.util.find_spec``: nothing is imported.
"""

from __future__ import annotations

import importlib.util
from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any


@dataclass(frozen=True)
class Extra:
    """One extra of the glasswork distribution: the modules it provides and what needs them."""

    name: str
    modules: tuple[str, ...]
    purpose: str

    @property
    def install(self) -> str:
        return f"pip install 'glasswork[{self.name}]'"


EXTRAS: dict[str, Extra] = {
    extra.name: extra
    for extra in (
        Extra("mio", ("cvxpy", "pyscipopt"), "exact MIO models through cvxpy and SCIP (search.policy: mio)"),
        Extra("mosek", ("mosek",), "MOSEK as the MIO backend (search.backend: mosek; needs a licence)"),
        Extra("dask", ("dask", "distributed"), "Dask clusters (sweep --executor dask; run --executor dask:...)"),
        Extra("plot", ("matplotlib",), "the regularization path as a PNG (glasswork sweep --plot)"),
        Extra("web", ("textual_serve",), "the terminal UI served to a browser (glasswork tui --web)"),
    )
}


class MissingExtra(ValueError):
    """A feature was asked for whose extra is not installed; the message names the fix. A
    ``ValueError``, so a spec validator that raises it reports a spec issue (exit 2)."""

    def __init__(self, feature: str, extra: str, missing: Sequence[str]) -> None:
        self.feature, self.extra, self.missing = feature, extra, tuple(missing)
        super().__init__(f"{feature} needs {' and '.join(self.missing)}, not installed here: {EXTRAS[extra].install}")


def installed(module: str) -> bool:
    """Whether ``module`` can be found, without importing it."""
    try:
        return importlib.util.find_spec(module) is not None
    except (ImportError, ValueError):  # a parent package that is missing, or a broken one
        return False


def missing(extra: str, modules: Sequence[str] | None = None) -> list[str]:
    """The modules of ``extra`` (or the given subset of them) that cannot be found."""
    return [m for m in (EXTRAS[extra].modules if modules is None else modules) if not installed(m)]


def require(extra: str, feature: str, modules: Sequence[str] | None = None) -> None:
    """Raise ``MissingExtra`` unless ``extra``'s modules (or the given subset) are installed."""
    absent = missing(extra, modules)
    if absent:
        raise MissingExtra(feature, extra, absent)


def report() -> list[dict[str, Any]]:
    """Every extra with whether it is available here (``glasswork plugins`` shows it)."""
    rows = []
    for extra in EXTRAS.values():
        absent = missing(extra.name)
        rows.append(
            {
                "extra": extra.name,
                "modules": list(extra.modules),
                "purpose": extra.purpose,
                "available": not absent,
                "missing": absent,
                "install": extra.install,
            }
        )
    return rows
