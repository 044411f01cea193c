"""What a plugin author tests with: the contract suite and the pytest fixtures.

``SolverContract`` (``glasswork.testing.contract``) is the suite every solver plugin keeps.
The fixtures (``glasswork.testing.plugin``) reach any test suite in an environment where
glasswork is installed, through the ``pytest11`` entry point, with nothing to import:
``glasswork_registry``, ``glasswork_run`` and ``glasswork_store``. See ``docs/plugins.md``.
The contract is imported on first use, so loading the fixtures costs next to nothing.
"""

from __future__ import annotations

from typing import Any

__all__ = ["STOP_LATENCY", "SolverContract"]


def __getattr__(name: str) -> Any:
    if name in __all__:
        from glasswork.testing import contract

        return getattr(contract, name)
    raise AttributeError(name)
