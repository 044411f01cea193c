"""What a CORELS run shows: the rule list as the paper prints it, and the search's panels."""

from __future__ import annotations

from typing import Any

from glasswork.display.console import fmt_number as fmt
from glasswork.display.console import plain_text
from glasswork.display.panels import BarsPanel, Panel, SeriesPanel
from glasswork.display.views import model_table
from glasswork.hooks.specs import hookimpl
from rich.console import RenderableType


def _pct(value: float | None) -> str:
    return "-" if value is None else f"{value:.2%}"


def rule_list_view(model: dict[str, Any], compact: bool = False) -> RenderableType:
    """Each rule with its capture count and the probability of its prediction (and, in full,
    the class counts it captures)."""
    classes = [str(c) for c in model.get("classes") or []]
    target = model.get("target")

    def label(value: Any) -> str:
        return f"{target}:{value}" if target else str(value)

    table = model_table()
    table.add_column("#", justify="right", style="dim")
    table.add_column("rule", min_width=24, ratio=1)
    table.add_column("captured", justify="right")
    table.add_column("p(pred)", justify="right")
    if not compact:
        for column in classes:
            table.add_column(plain_text(f"n {column}"), justify="right", style="dim")
    rules = list(model.get("rules") or [])
    default = model.get("default") or {}
    weights = [float(w) for w in model.get("class_weights") or [1.0] * len(classes)]
    rows = [
        (r, f"{'if' if i == 0 else 'else if'} ({{{r.get('antecedent')}}}) then ({{{label(r.get('prediction'))}}})")
        for i, r in enumerate(rules)
    ]
    rows.append((default, f"{'else ' if rules else ''}({{{label(default.get('prediction'))}}})"))
    for i, (rule, text) in enumerate(rows):
        counts = [int(c) for c in rule.get("class_counts") or []]
        captured = rule.get("captured", sum(counts))
        prediction = str(rule.get("prediction"))
        p = None
        if counts and captured and prediction in classes:  # the weighted share, as the exports give it
            shares = [c * w for c, w in zip(counts, weights)]
            p = shares[classes.index(prediction)] / sum(shares) if sum(shares) > 0 else None
        number = str(i + 1) if i < len(rules) else ""
        cells = [] if compact else [fmt(c) for c in counts] + ["-"] * (len(classes) - len(counts))
        table.add_row(number, plain_text(text), fmt(captured), _pct(p), *cells)
    return table


@hookimpl
def render_model(model: dict[str, Any], compact: bool, stats: dict[str, Any]) -> RenderableType | None:
    return rule_list_view(model, compact) if model.get("kind") == "rule_list" else None


@hookimpl
def monitor_panels(solver: str) -> list[Panel] | None:
    if solver != "corels":
        return None
    return [
        SeriesPanel("log10 remaining space", counter="log10_remaining", color="magenta"),
        BarsPanel("queue by prefix length", counter="queue_lengths", xlabel="prefix length", color="blue"),
    ]
