"""glasswork-greedy: a greedy decision-list baseline, packaged as a third-party glasswork plugin.

It uses only glasswork's public API and reaches glasswork through the ``glasswork`` entry-point
group (see ``pyproject.toml``), exactly as any plugin installed with pip would.
"""

__version__ = "0.1.0"

from glasswork_greedy.model import DecisionList, Rule  # noqa: E402
from glasswork_greedy.solver import (  # noqa: E402
    GreedyFit,
    GreedySolver,
    GreedySpec,
    greedy_decision_list,
)

__all__ = [
    "DecisionList",
    "GreedyFit",
    "GreedySolver",
    "GreedySpec",
    "Rule",
    "__version__",
    "greedy_decision_list",
]
