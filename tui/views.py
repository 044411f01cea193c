"""Formatting shared by the screens, and model views through the plugins' ``render_model`` hook.

The TUI renders no model kind itself: ``glasswork.display.views.model_view`` asks the plugins, so a
third-party solver's model is shown exactly as a built-in one, and any model without a view is
shown as its own text.
"""

from __future__ import annotations

import math

from glasswork.display.console import fmt_number as fmt
from glasswork.display.views import model_view

__all__ = ["fmt", "fmt_rate", "model_view"]


def fmt_rate(value: float | None) -> str:
    """A rate per second: thousands separated when large, three figures when small."""
    if value is None or math.isnan(value):
        return ""
    if abs(value) < 0.005:
        return "0"
    return f"{value:,.0f}" if abs(value) >= 1000 else f"{value:.3g}"
