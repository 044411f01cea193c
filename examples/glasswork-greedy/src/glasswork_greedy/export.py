"""How a decision list leaves the workbench, through glasswork's ``export_model`` and
``load_model`` hooks: Python and SQL over the raw columns (``glasswork.export`` turns each 0/1
feature into an expression over them), a Markdown table, and the report's drawing."""

from __future__ import annotations

from typing import Any

from glasswork import hookimpl
from glasswork.export import ExportRequest, ModelInputs, decision_list_python, decision_list_sql, markdown_table
from glasswork.display.report import esc, stacked_bar
from glasswork_greedy.model import DecisionList


@hookimpl
def export_model(model: dict[str, Any], format: str, request: ExportRequest) -> str | None:
    if model.get("kind") != DecisionList.kind:
        return None
    rules = model["rules"]
    entries = [*rules, {**model["default"], "condition": "otherwise"}]
    if format == "markdown":
        return markdown_table(
            ["#", "condition", "prediction", "class counts"],
            [
                [i + 1, e["condition"], e["prediction"], " / ".join(f"{c:g}" for c in e["counts"])]
                for i, e in enumerate(entries)
            ],
        )
    if format == "html":
        most = max(sum(e["counts"]) for e in entries) or 1.0
        rows = "".join(
            f"<tr><td>{i + 1}</td><td><code>{esc(e['condition'])}</code></td><td>{esc(e['prediction'])}"
            f"</td><td>{stacked_bar(e['counts'], sum(e['counts']) / most)}</td></tr>"
            for i, e in enumerate(entries)
        )
        return f"<table class=model><tr><th>#</th><th>condition</th><th>then</th><th>class mix</th></tr>{rows}</table>"
    if format not in ("python", "sql"):
        return None
    inputs = request.need_inputs()
    dlist = DecisionList.from_dict(model)
    sql = format == "sql"
    tests = [
        inputs.sql_test(r.feature, r.value) if sql else inputs.python_test(r.feature, r.value) for r in dlist.rules
    ]
    labels = [e["prediction"] for e in entries]
    probas = [list(dlist._mix(r.counts)) for r in dlist.rules] + [list(dlist._mix(dlist.default_counts))]
    classes = list(model["classes"])
    if sql:
        return decision_list_sql(request, tests, labels, probas, classes)
    return decision_list_python(
        request, "A greedy decision list: the first rule that holds decides.", tests, labels, probas, classes
    )


@hookimpl
def load_model(model: dict[str, Any], inputs: ModelInputs | None) -> DecisionList | None:
    return DecisionList.from_dict(model) if model.get("kind") == DecisionList.kind else None
