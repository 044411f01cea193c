"""CORELS, the built-in certifiably optimal rule list solver (search compiled in ``cython_ext/corels``).

``CorelsSolver`` is the solver, ``RuleList`` its model and ``RuleListClassifier`` the scikit-learn
estimator; ``plugin`` holds the hook implementations glasswork loads.
"""

from __future__ import annotations

from typing import Any

from glasswork.plugins.corels.model import Rule, RuleList
from glasswork.plugins.corels.solver import CorelsSolver
from glasswork.plugins.corels.spec import CorelsSpec

__all__ = ["CorelsSolver", "CorelsSpec", "Rule", "RuleList", "RuleListClassifier"]


def __getattr__(name: str) -> Any:
    # scikit-learn's estimator machinery loads when an estimator is asked for
    if name in ("RuleListClassifier",):
        from glasswork.plugins.corels import estimator

        return getattr(estimator, name)
    raise AttributeError(name)
