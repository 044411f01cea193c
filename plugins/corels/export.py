"""How a CORELS rule list leaves the workbench: Python, SQL, Markdown, and its drawing in the report."""

from __future__ import annotations

from typing import Any

from glasswork.hooks.specs import hookimpl
from glasswork.export import (
    Exporter,
    ExportRequest,
    ModelInputs,
    decision_list_python,
    decision_list_sql,
    export_kind,
    markdown_table,
)
from glasswork.display.report import class_legend, esc, stacked_bar
from glasswork.plugins.corels.model import RuleList


def _parts(model: dict[str, Any]) -> tuple[RuleList, list[Any], list[list[float]], list[Any]]:
    rules = RuleList.from_dict(model)
    labels = [r["prediction"] for r in model["rules"]] + [model["default"]["prediction"]]
    probas = [rules._proba(r.counts, r.prediction).tolist() for r in rules.rules]
    probas.append(rules._proba(rules.default_counts, rules.default).tolist())
    return rules, labels, probas, list(model["classes"])


def _tests(rules: RuleList, inputs: ModelInputs, sql: bool) -> list[str]:
    """Each rule's antecedent over the raw columns: every item ``(feature, value)`` holds."""
    out = []
    for rule in rules.rules:
        items = [inputs.sql_test(j, v) if sql else inputs.python_test(j, v) for j, v in rule.items]
        out.append((" AND " if sql else " and ").join(items) if items else ("1 = 1" if sql else "True"))
    return out


def rule_list_markdown(model: dict[str, Any]) -> str:
    classes = list(model["classes"])
    rows = []
    for i, r in enumerate([*model["rules"], model["default"]]):
        rule = r.get("antecedent")
        head = "else" if rule is None else ("if" if i == 0 else "else if")
        rows.append([i + 1, f"{head} {rule or ''}".strip(), r["prediction"], r["captured"], *r["class_counts"]])
    return markdown_table(["#", "rule", "prediction", "captured", *[f"n {c}" for c in classes]], rows)


def rule_list_html(model: dict[str, Any]) -> str:
    """Each rule with its capture (bar length) and the class mix it captures (bar colours)."""
    classes = list(model["classes"])
    entries = [*model["rules"], model["default"]]
    most = max((e["captured"] for e in entries), default=1) or 1
    rows = []
    for i, e in enumerate(entries):
        rule = e.get("antecedent")
        head = "else" if rule is None else ("if" if i == 0 else "else if")
        text = f"{head} {esc(rule)}" if rule is not None else head
        rows.append(
            f"<tr><td>{i + 1}</td><td><code>{text}</code></td><td><b>{esc(e['prediction'])}</b></td>"
            f"<td class=n>{e['captured']:,}</td><td>{stacked_bar(e['class_counts'], e['captured'] / most)}</td></tr>"
        )
    legend = class_legend(classes)
    return (
        f"<table class=model><tr><th>#</th><th>rule</th><th>then</th><th>captured</th><th>class mix "
        f"{legend}</th></tr>{''.join(rows)}</table>"
    )


def _decision_list(model: dict[str, Any], request: ExportRequest, sql: bool) -> str:
    rules, labels, probas, classes = _parts(model)
    inputs = request.need_inputs()
    tests = _tests(rules, inputs, sql=sql)
    reads = inputs.columns_of(rules.features_used)
    if sql:
        return decision_list_sql(request, tests, labels, probas, classes, reads)
    return decision_list_python(
        request, "A CORELS rule list: the first rule that holds decides.", tests, labels, probas, classes, reads
    )


EXPORTERS: dict[str, Exporter] = {
    "python": lambda model, request: _decision_list(model, request, sql=False),
    "sql": lambda model, request: _decision_list(model, request, sql=True),
    "markdown": lambda model, _: rule_list_markdown(model),
    "html": lambda model, _: rule_list_html(model),
}


@hookimpl
def export_model(model: dict[str, Any], format: str, request: ExportRequest) -> str | None:
    return export_kind(model, format, request, "rule_list", EXPORTERS)


@hookimpl
def load_model(model: dict[str, Any], inputs: ModelInputs | None) -> RuleList | None:
    return RuleList.from_dict(model) if model.get("kind") == "rule_list" else None
