"""How a MOSS rule set leaves the workbench: Python, SQL, Markdown, and for the report the rule
set with its place on the stability / loss frontier."""

from __future__ import annotations

from typing import Any

import numpy as np
from glasswork.display.console import fmt_number
from glasswork.display.report import esc, scatter_chart
from glasswork.export import (
    NO_VALUE,
    Exporter,
    ExportRequest,
    ModelInputs,
    export_kind,
    markdown_table,
    python_module,
    sql_case,
    sql_select,
)
from glasswork.hooks.specs import hookimpl
from glasswork.plugins.moss.model import RuleSet, RuleSetClassifier
from glasswork.plugins.moss.rules import Grid, Rule
from glasswork.quoting import ExportError, plain, printable, python_comment, python_literal, sql_literal


def _conditions(rule: dict[str, Any], inputs: ModelInputs, sql: bool) -> str:
    parts = []
    for c in rule["conditions"]:
        j = inputs.index(c["feature"])
        op = c["op"]
        if op not in ("<=", ">", "<", ">="):
            raise ExportError(f"a rule's condition has the operator {printable(op)!r}, not one of <=, >, <, >=")
        value = inputs.sql_value(j) if sql else inputs.python_value(j)
        threshold = float(c["threshold"])
        parts.append(f"{value} {op} {sql_literal(threshold) if sql else python_literal(threshold)}")
    if not parts:
        return "1 = 1" if sql else "True"
    return " AND ".join(parts) if sql else " and ".join(parts)


def _reads(model: dict[str, Any], inputs: ModelInputs) -> list[str]:
    """The raw columns the rules' conditions read."""
    return inputs.columns_of(inputs.index(c["feature"]) for rule in model["rules"] for c in rule["conditions"])


def _sql(model: dict[str, Any], request: ExportRequest) -> str:
    inputs = request.need_inputs()
    reads = _reads(model, inputs)
    total = sql_literal(float(model["intercept"]))
    for rule in model["rules"]:  # added left to right, as the model adds them
        inside, outside = sql_literal(float(rule["value_inside"])), sql_literal(float(rule["value_outside"]))
        total = f"({total} + (CASE WHEN {_conditions(rule, inputs, True)} THEN {inside} ELSE {outside} END))"
    if model.get("task") != "binary":
        return sql_select(request, [("prediction", total)], reads)
    negative, positive = model["classes"]
    p = f"1.0e0 / (1.0e0 + EXP(-{total}))"
    return sql_select(
        request,
        [
            ("prediction", sql_case([(f"{total} > 0", sql_literal(positive))], sql_literal(negative))),
            (f"p_{negative}", sql_case([(f"{total} > 0", f"1.0e0 - {p}")], f"1.0e0 - {p}")),
            (f"p_{positive}", sql_case([(f"{total} > 0", p)], p)),
        ],
        reads,
    )


def _python(model: dict[str, Any], request: ExportRequest) -> str:
    inputs = request.need_inputs()
    lines = [
        f"    total += {python_literal(float(r['value_inside']))} if {_conditions(r, inputs, False)} "
        f"else {python_literal(float(r['value_outside']))}  {python_comment(r['text'])}"
        for r in model["rules"]
    ]
    body = f"""INTERCEPT = {python_literal(float(model["intercept"]))}


def score(row):
    \"\"\"The rule set's sum for ``row``, a mapping of raw column names to values.\"\"\"
{NO_VALUE}    total = INTERCEPT
{chr(10).join(lines)}
    return total
"""
    if model.get("task") == "binary":
        classes = [plain(c) for c in model["classes"]]
        body += f"""

CLASSES = {python_literal(classes)}


def predict(row):
{NO_VALUE}    return CLASSES[1] if score(row) > 0 else CLASSES[0]


def predict_proba(row):
    \"\"\"[P(CLASSES[0]), P(CLASSES[1])]: the logistic of the score.\"\"\"
{NO_VALUE}    p = 0.5 * (1.0 + math.tanh(0.5 * score(row)))
    return [1.0 - p, p]
"""
    else:
        body += "\n\npredict = score\n"
    return python_module(
        request, "A MOSS rule set: start at the intercept, add each rule's value.", body, _reads(model, inputs)
    )


def _signed(value: float) -> str:
    """A rule's contribution as people write it, with its sign: ``-11,020``, not ``-1.102e+04``."""
    text = fmt_number(float(value), 4)
    return text if text.startswith("-") or text == "0" else f"+{text}"


def rule_set_markdown(model: dict[str, Any]) -> str:
    rows: list[list[Any]] = [["", "start at", f"{model['intercept']:.6g}", "", ""]]
    rows += [
        [i + 1, r["text"], _signed(r["value_inside"]), _signed(r["value_outside"]), f"{r['pi']:.3f}"]
        for i, r in enumerate(model["rules"])
    ]
    return markdown_table(["#", "rule", "inside", "outside", "Pi"], rows)


def rule_set_html(model: dict[str, Any], stats: dict[str, Any] | None = None) -> str:
    rows = f"<tr><td></td><td>start at</td><td class=n>{model['intercept']:.6g}</td><td></td><td></td></tr>"
    rows += "".join(
        f"<tr><td>{i + 1}</td><td><code>{esc(r['text'])}</code></td><td class=n>{_signed(r['value_inside'])}"
        f"</td><td class=n>{_signed(r['value_outside'])}</td><td class=n>{r['pi']:.3f}</td></tr>"
        for i, r in enumerate(model["rules"])
    )
    table = (
        f"<table class=model><tr><th>#</th><th>rule</th><th>inside</th><th>outside</th><th>Pi</th></tr>{rows}</table>"
    )
    frontier = (stats or {}).get("frontier") or []
    if not frontier:
        return table
    points = [(p["h1"], p["h2"]) for p in frontier if p.get("h1") is not None and p.get("h2") is not None]
    chosen = [(p["h1"], p["h2"]) for p in frontier if p.get("chosen")]
    chart = scatter_chart(points, chosen, xlabel="stability H1", ylabel="loss H2")
    caption = "<figcaption>the frontier; this rule set ringed</figcaption>"
    return f"<div class=row>{table}<figure>{chart}{caption}</figure></div>"


def rebuild(model: dict[str, Any], inputs: ModelInputs | None) -> RuleSet:
    """A rule set from its dict: the thresholds its rules use become the grid."""
    if inputs is None:
        raise ExportError("a MOSS rule set names its features; reading it back needs the document's inputs")
    names = [f.name for f in inputs.features]
    cuts: list[set[float]] = [set() for _ in names]
    for rule in model["rules"]:
        for c in rule["conditions"]:
            cuts[inputs.index(c["feature"])].add(float(c["threshold"]))
    binary = [f.column is None for f in inputs.features]  # conditions of the data layer: 0/1 features
    grid = Grid([np.asarray(sorted(c), dtype=np.float64) for c in cuts], names, binary)
    rules = []
    for rule in model["rules"]:
        bounds: dict[int, list[int]] = {}
        for c in rule["conditions"]:
            j = inputs.index(c["feature"])
            lo_hi = bounds.setdefault(j, [-1, len(grid.thresholds[j])])
            lo_hi[0 if c["op"] == ">" else 1] = int(np.searchsorted(grid.thresholds[j], float(c["threshold"])))
        rules.append(Rule(tuple((j, lo, hi) for j, (lo, hi) in sorted(bounds.items())), grid))
    n = len(rules)
    column = {
        key: np.asarray([r[key] for r in model["rules"]], dtype=np.float64)
        for key in ("value_inside", "value_outside", "pi")
    }
    args = (rules, np.ones(n), column["value_inside"], column["value_outside"], column["pi"], float(model["intercept"]))
    kwargs = {
        "encoding": model.get("encoding", "sirus"),
        "h1": model.get("h1"),
        "h2": model.get("h2"),
        "epsilon": model.get("epsilon"),
    }
    if model.get("task") == "binary":
        return RuleSetClassifier(*args, classes=np.asarray(model["classes"]), **kwargs)
    return RuleSet(*args, **kwargs)


EXPORTERS: dict[str, Exporter] = {
    "python": _python,
    "sql": _sql,
    "markdown": lambda model, _: rule_set_markdown(model),
    "html": lambda model, request: rule_set_html(model, request.stats),
}


@hookimpl
def export_model(model: dict[str, Any], format: str, request: ExportRequest) -> str | None:
    return export_kind(model, format, request, "rule_set", EXPORTERS)


@hookimpl
def load_model(model: dict[str, Any], inputs: ModelInputs | None) -> RuleSet | None:
    return rebuild(model, inputs) if model.get("kind") == "rule_set" else None
