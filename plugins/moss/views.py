"""What a MOSS run shows: the rule set (with its frontier in the full view), the frontier as
its points are certified, and the metric sweeps pick by default (R², MOSS being a regression)."""

from __future__ import annotations

from typing import Any

from glasswork.display.console import fmt_gap, plain_text
from glasswork.display.console import fmt_number as fmt
from glasswork.display.panels import Panel, ScatterPanel
from glasswork.display.views import model_table
from glasswork.hooks.specs import hookimpl
from rich.console import Group, RenderableType
from rich.text import Text


def rule_set_view(model: dict[str, Any]) -> RenderableType:
    """The intercept, each rule's value inside and outside it and its stability Pi."""
    table = model_table()
    table.add_column("#", justify="right", style="dim")
    table.add_column("rule")
    table.add_column("inside", justify="right")
    table.add_column("outside", justify="right")
    table.add_column("Pi", justify="right")
    table.add_row("", Text("start at", style="bold"), fmt(model.get("intercept")), "", "")
    for i, rule in enumerate(model.get("rules") or []):
        table.add_row(
            str(i + 1),
            plain_text(rule.get("text")),
            fmt(rule.get("value_inside"), 4),
            fmt(rule.get("value_outside"), 4),
            fmt(rule.get("pi"), 3),
        )
    tail = []
    for key, name in (("h1", "stability H1"), ("h2", "ridge loss H2"), ("epsilon", "epsilon")):
        if model.get(key) is not None:
            tail.append(f"{name} = {fmt(model[key], 5)}")
    return Group(table, Text("; ".join(tail), style="dim"))


def frontier_view(points: list[dict[str, Any]]) -> RenderableType:
    """Every frontier point with its certificate (and its Rashomon set's size, when the spec asked
    for sets: ``+`` marks an incomplete count, ``-`` a point not reached); the chosen one starred."""
    table = model_table()
    sets = any(p.get("rashomon_count") is not None for p in points)
    columns = ("#", "epsilon", "H1", "H2", "lower", "gap", "status", "k") + (("rashomon",) if sets else ())
    for column in columns:
        table.add_column(column, justify="left" if column == "status" else "right")
    for i, p in enumerate(points):
        mark = "*" if p.get("chosen") else ""
        cells: list[RenderableType] = [
            f"{p.get('point', i + 1)}{mark}",
            fmt(p.get("epsilon"), 4),
            fmt(p.get("h1"), 4),
            fmt(p.get("h2"), 6),
            fmt(p.get("lower_bound"), 6),
            fmt_gap(p.get("h2"), p.get("lower_bound"), compact=True),  # the lower bound is its neighbour
            plain_text(p.get("status", "")),
            str(len(p.get("rules") or [])),
        ]
        if sets:
            count = p.get("rashomon_count")
            cells.append("-" if count is None else f"{count:,}{'' if p.get('rashomon_complete') else '+'}")
        table.add_row(*cells)
    return table


@hookimpl
def render_model(model: dict[str, Any], compact: bool, stats: dict[str, Any]) -> RenderableType | None:
    if model.get("kind") != "rule_set":
        return None
    frontier = stats.get("frontier")
    if compact or not isinstance(frontier, list) or not frontier:
        return rule_set_view(model)
    return Group(frontier_view(frontier), Text(""), rule_set_view(model))


@hookimpl
def monitor_panels(solver: str) -> list[Panel] | None:
    if solver != "moss":
        return None
    return [
        ScatterPanel(
            "frontier: loss H2 by stability H1",
            xlabel="H1",
            color="orange",
            x="h1",
            y="objective",
            result_points="frontier",
            result_x="h1",
            result_y="h2",
        )
    ]


@hookimpl
def sweep_defaults(solver: str) -> dict[str, Any] | None:
    return {"metric": "test_r2"} if solver == "moss" else None
