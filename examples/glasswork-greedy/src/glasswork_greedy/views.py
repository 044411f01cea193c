"""What glasswork shows of a greedy run: the decision list as a table, and how the list grew.

These are the same hooks the built-in solvers implement, so ``glasswork run``, ``runs show``,
``glasswork monitor`` and ``glasswork tui`` show a decision list as they show a built-in rule
list: a table with each rule's captures, and a panel that fills in while the search runs.
"""

from __future__ import annotations

from typing import Any

from rich.console import RenderableType
from rich.text import Text

from glasswork import hookimpl
from glasswork.display.panels import Panel, ScatterPanel
from glasswork.display.views import model_table


def decision_list_view(model: dict[str, Any], compact: bool = False) -> RenderableType:
    """One row per rule: its condition, its label, how many training samples it decides and
    the share of them its label is right for (and, in full, the class mix)."""
    classes = [str(c) for c in model.get("classes") or []]
    table = model_table()
    table.add_column("#", justify="right", style="dim")
    table.add_column("rule", ratio=1)
    table.add_column("captured", justify="right")
    table.add_column("right", justify="right")
    if not compact:
        for name in classes:
            table.add_column(f"n {name}", justify="right", style="dim")
    rules = list(model.get("rules") or [])
    default = model.get("default") or {}
    rows = [
        (str(i + 1), f"{'if' if i == 0 else 'else if'} {r.get('condition')} then {r.get('prediction')}", r)
        for i, r in enumerate(rules)
    ]
    rows.append(("", f"{'else' if rules else 'always'} {default.get('prediction')}", default))
    for number, text, rule in rows:
        counts = [float(c) for c in rule.get("counts") or []]
        captured = sum(counts)
        label = int(rule.get("label", 0))
        right = f"{counts[label] / captured:.1%}" if captured and label < len(counts) else "-"
        cells = [] if compact else [f"{c:g}" for c in counts]
        table.add_row(number, Text(text), f"{captured:g}", right, *cells)
    return table


@hookimpl
def render_model(model: dict[str, Any], compact: bool, stats: dict[str, Any]) -> RenderableType | None:
    return decision_list_view(model, compact) if model.get("kind") == "decision_list" else None


@hookimpl
def monitor_panels(solver: str) -> list[Panel] | None:
    if solver != "greedy":
        return None
    return [ScatterPanel("training error by list length", x="rules", y="train_error", xlabel="rules", color="green")]
