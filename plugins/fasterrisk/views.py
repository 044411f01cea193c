"""What a FasterRisk run shows: the score card with its risk table, and the best loss per size."""

from __future__ import annotations

from typing import Any

from glasswork.display.console import fmt_number as fmt
from glasswork.display.console import plain_text
from glasswork.display.panels import BarsPanel, Panel
from glasswork.display.views import model_table
from glasswork.hooks.specs import hookimpl
from glasswork.plugins.fasterrisk.model import certified_words, format_risk
from rich.console import Group, RenderableType
from rich.text import Text


def score_card_view(model: dict[str, Any]) -> RenderableType:
    """The points per feature, then the score-to-risk table, as the card is printed on paper."""
    card = model_table()
    card.add_column("#", justify="right", style="dim")
    card.add_column("feature")
    card.add_column("points", justify="right")
    features = model.get("features") or []
    binary = model.get("binary") or [True] * len(features)
    for i, (feature, points) in enumerate(zip(features, model.get("points") or [])):
        name = feature if (i >= len(binary) or binary[i]) else f"{feature} x"
        card.add_row(str(i + 1), plain_text(name), f"{points:+d}" if isinstance(points, int) else fmt(points))
    card.add_row("", Text("SCORE", style="bold"), Text("= sum", style="dim"))
    risks = model_table("risk by score")
    risks.add_column("score", justify="right")
    risks.add_column("risk", justify="right")
    for row in model.get("table") or []:
        risk = row.get("risk")
        risks.add_row(fmt(row.get("score"), 4), format_risk(risk))
    classes = model.get("classes") or []
    note = plain_text(f"risk = P({classes[1]})" if len(classes) > 1 else "", "dim")
    gap = model.get("certified_gap")
    if gap is None:
        return Group(card, risks, note)
    proof = plain_text(certified_words(model.get("loss"), gap, model.get("certified_against")), "bold green")
    return Group(card, risks, note, proof)


@hookimpl
def render_model(model: dict[str, Any], compact: bool, stats: dict[str, Any]) -> RenderableType | None:
    return score_card_view(model) if model.get("kind") == "score_card" else None


@hookimpl
def monitor_panels(solver: str) -> list[Panel] | None:
    if solver != "fasterrisk":
        return None
    return [BarsPanel("best loss by support size", counter="best_loss_by_size", xlabel="support size", color="green")]
