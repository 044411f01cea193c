"""MOSS's markdown and HTML write a rule's contribution as people write numbers (issue 36: money as
``-1.102e+04``)."""

from __future__ import annotations

from glasswork.plugins.moss.export import rule_set_html, rule_set_markdown


def _model() -> dict:
    rules = [
        {"text": "sqft > 1200", "value_inside": -11020.34, "value_outside": 250.0, "pi": 0.4},
        {"text": "beds <= 2", "value_inside": 0.0, "value_outside": -0.125, "pi": 0.6},
    ]
    return {"kind": "rule_set", "task": "regression", "rules": rules, "intercept": 180000.0}


def test_money_is_written_readably_with_its_sign() -> None:
    text = rule_set_markdown(_model())
    assert "e+" not in text
    assert "-11,020" in text and "+250" in text and "-0.125" in text
    html = rule_set_html(_model())
    assert "e+" not in html and "-11,020" in html
