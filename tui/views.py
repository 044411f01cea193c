"""Model views as Rich renderables, chosen by the model's ``kind`` (its ``to_dict`` form).

A rule list reads as the CORELS paper prints it, with each rule's capture count and the
probability of its prediction; a score card shows its points and its score -> risk table; a
MOSS rule set its rules with their values and stability; a frontier its points. Any other kind
falls back to the model's own text, so a third-party solver's model is always readable.
"""

from __future__ import annotations

import math
from typing import Any

from rich import box
from rich.console import Group, RenderableType
from rich.table import Table
from rich.text import Text

from glasswork.console import fmt_number as fmt


def fmt_rate(value: float | None) -> str:
    """A rate per second: thousands separated when large, three figures when small."""
    if value is None or math.isnan(value):
        return ""
    if abs(value) < 0.005:
        return "0"
    return f"{value:,.0f}" if abs(value) >= 1000 else f"{value:.3g}"


def fmt_pct(value: float | None) -> str:
    return "-" if value is None else f"{value:.2%}"


def _table(title: str | None = None) -> Table:
    return Table(title=title, title_justify="left", box=box.SIMPLE_HEAD, pad_edge=False, expand=False)


def rule_list(model: dict[str, Any], compact: bool = False) -> RenderableType:
    classes = [str(c) for c in model.get("classes") or []]
    target = model.get("target")

    def label(value: Any) -> str:
        return f"{target}:{value}" if target else str(value)

    table = _table()
    table.add_column("#", justify="right", style="dim")
    table.add_column("rule", min_width=24, ratio=1)
    table.add_column("captured", justify="right")
    table.add_column("p(pred)", justify="right")
    if not compact:
        for column in classes:
            table.add_column(f"n {column}", justify="right", style="dim")
    rules = list(model.get("rules") or [])
    default = model.get("default") or {}
    rows = [(r, f"{'if' if i == 0 else 'else if'} ({{{r.get('antecedent')}}}) then ({{{label(r.get('prediction'))}}})")
            for i, r in enumerate(rules)]
    rows.append((default, f"{'else ' if rules else ''}({{{label(default.get('prediction'))}}})"))
    for i, (rule, text) in enumerate(rows):
        counts = [int(c) for c in rule.get("class_counts") or []]
        captured = rule.get("captured", sum(counts))
        prediction = str(rule.get("prediction"))
        p = None
        if counts and captured and prediction in classes:
            p = counts[classes.index(prediction)] / captured
        number = str(i + 1) if i < len(rules) else ""
        cells = [] if compact else [fmt(c) for c in counts] + ["-"] * (len(classes) - len(counts))
        table.add_row(number, Text(text), fmt(captured), fmt_pct(p), *cells)
    return table


def score_card(model: dict[str, Any]) -> RenderableType:
    card = _table()
    card.add_column("#", justify="right", style="dim")
    card.add_column("feature")
    card.add_column("points", justify="right")
    features = model.get("features") or []
    binary = model.get("binary") or [True] * len(features)
    for i, (feature, points) in enumerate(zip(features, model.get("points") or [])):
        name = feature if (i >= len(binary) or binary[i]) else f"{feature} x"
        card.add_row(str(i + 1), name, f"{points:+d}" if isinstance(points, int) else fmt(points))
    card.add_row("", Text("SCORE", style="bold"), Text("= sum", style="dim"))
    risks = _table("risk by score")
    risks.add_column("score", justify="right")
    risks.add_column("risk", justify="right")
    for row in model.get("table") or []:
        risk = row.get("risk")
        risks.add_row(fmt(row.get("score"), 4), "-" if risk is None else f"{100 * risk:.1f}%")
    classes = model.get("classes") or []
    note = Text(f"risk = P({classes[1]})" if len(classes) > 1 else "", style="dim")
    return Group(card, risks, note)


def rule_set(model: dict[str, Any]) -> RenderableType:
    table = _table()
    table.add_column("#", justify="right", style="dim")
    table.add_column("rule")
    table.add_column("inside", justify="right")
    table.add_column("outside", justify="right")
    table.add_column("Pi", justify="right")
    table.add_row("", Text("start at", style="bold"), fmt(model.get("intercept")), "", "")
    for i, rule in enumerate(model.get("rules") or []):
        table.add_row(str(i + 1), Text(str(rule.get("text"))), fmt(rule.get("value_inside"), 4),
                      fmt(rule.get("value_outside"), 4), fmt(rule.get("pi"), 3))
    tail = []
    for key, name in (("h1", "stability H1"), ("h2", "ridge loss H2"), ("epsilon", "epsilon")):
        if model.get(key) is not None:
            tail.append(f"{name} = {fmt(model[key], 5)}")
    return Group(table, Text("; ".join(tail), style="dim"))


def frontier_table(points: list[dict[str, Any]]) -> RenderableType:
    table = _table()
    for column in ("#", "epsilon", "H1", "H2", "lower", "gap", "status", "k"):
        table.add_column(column, justify="left" if column == "status" else "right")
    for i, p in enumerate(points):
        mark = "*" if p.get("chosen") else ""
        table.add_row(f"{p.get('point', i + 1)}{mark}", fmt(p.get("epsilon"), 4), fmt(p.get("h1"), 4),
                      fmt(p.get("h2"), 6), fmt(p.get("lower_bound"), 6), fmt(p.get("gap"), 3),
                      str(p.get("status", "")), str(len(p.get("rules") or [])))
    return table


RENDERERS = {"rule_list": rule_list, "score_card": score_card, "rule_set": rule_set}


def model_view(model: dict[str, Any] | None, text: str | None = None, *, compact: bool = False) -> RenderableType:
    """The structured view of a model, or its text when its kind has no view of its own."""
    if model is not None:
        render = RENDERERS.get(str(model.get("kind")))
        if render is not None:
            try:
                return rule_list(model, compact) if render is rule_list else render(model)
            except (TypeError, ValueError, KeyError, AttributeError):
                pass  # a model shaped unlike its kind's usual form: its text is still right
    if text:
        return Text(text)
    return Text("(no model yet)", style="dim")
