"""A risk strictly between 0 and 1 is never printed as 0.0 % or 100.0 %, wherever the card's
score-to-risk table is shown: the card's text, the terminal view, the Markdown export and the
report's drawing."""

from __future__ import annotations

import html
import re

import pytest
from glasswork.plugins.fasterrisk.export import score_card_html, score_card_markdown
from glasswork.plugins.fasterrisk.model import ScoreCard, format_risk
from glasswork.plugins.fasterrisk.views import score_card_view
from rich.console import Console


def _card() -> ScoreCard:
    # risk = sigmoid(score): 8 points -> 99.966 %, -8 -> 0.034 %, 12 -> 99.9994 %, -12 -> 0.0006 %
    return ScoreCard(
        features=["a", "b"],
        columns=[0, 1],
        points=[8, 4],
        intercept=-0.0,
        multiplier=1.0,
        classes=["no", "yes"],
        scores=[-12, -8, 0, 8, 12],
    )


@pytest.mark.parametrize(
    "risk, text",
    [
        (0.9996, "99.96%"),
        (0.99966, "99.97%"),
        (0.999994, ">99.99%"),
        (0.0004, "0.04%"),
        (0.000006, "<0.01%"),
        (0.5, "50.0%"),
        (0.1234, "12.3%"),
        (None, "-"),
        (float("nan"), "-"),
    ],
)
def test_format_risk(risk, text):
    assert format_risk(risk) == text


def _shown(text: str, markup: bool = False) -> list[str]:
    if markup:  # the report's cells, as a reader sees them
        text = html.unescape(re.sub(r"<[^>]*>", " ", text))
    return re.findall(r"[<>]?\d+(?:\.\d+)?%", text)


def test_every_rendering_of_the_risk_table_keeps_extreme_risks_off_0_and_100_percent():
    card = _card()
    model = card.to_dict()
    console = Console(width=120, record=True, color_system=None)
    console.print(score_card_view(model))
    renderings = {
        "text": card.to_text(),
        "view": console.export_text(),
        "markdown": score_card_markdown(model),
        "html": score_card_html(model),
    }
    for where, text in renderings.items():
        # the html and the markdown (whose cells escape < and > as entities) as a reader sees them
        shown = _shown(text, markup=where in ("html", "markdown"))
        assert len(shown) >= 5, (where, shown)
        assert "100.0%" not in shown and "0.0%" not in shown and "100%" not in shown, (where, shown)
        assert {">99.99%", "99.97%", "50.0%", "0.03%", "<0.01%"} <= set(shown), (where, shown)
