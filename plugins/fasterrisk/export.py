"""How a FasterRisk score card leaves the workbench: Python, SQL, Markdown, and the card drawn
with its score-to-risk curve for the report."""

from __future__ import annotations

from typing import Any

from glasswork.display.report import esc, line_chart
from glasswork.export import (
    NO_VALUE,
    ExportError,
    Exporter,
    ExportRequest,
    ModelInputs,
    export_kind,
    markdown_table,
    markdown_text,
    plain,
    python_comment,
    python_literal,
    python_module,
    sql_case,
    sql_literal,
    sql_select,
)
from glasswork.hooks.specs import hookimpl
from glasswork.plugins.fasterrisk.model import ScoreCard, format_risk


def _columns(card: ScoreCard, inputs: ModelInputs) -> list[int]:
    """The card's matrix columns, checked against the names the inputs give them."""
    for j, name in zip(card.columns, card.features):
        if j >= len(inputs.features) or inputs.features[j].name != name:
            raise ExportError(f"the card's feature {name!r} (column {j}) is not column {j} of the run's inputs")
    return card.columns


def _exact_table(card: ScoreCard) -> list[tuple[float, float]]:
    """The card's score -> risk table; a score outside it falls back on the formula."""
    return card.table()


def _sql(card: ScoreCard, request: ExportRequest) -> str:
    inputs = request.need_inputs()
    terms = []
    for j, p in zip(_columns(card, inputs), card.points):
        terms.append(f"({sql_literal(int(p) if float(p).is_integer() else float(p))} * {inputs.sql_value(j)})")
    score = "(" + " + ".join(terms) + ")" if terms else "0"
    margin = f"({score} + {sql_literal(card.intercept)})"
    formula = f"1.0e0 / (1.0e0 + EXP(-({margin} / {sql_literal(card.multiplier)})))"
    table = _exact_table(card)
    negative, positive = (plain(c) for c in card.classes)

    def risk(k: int) -> str:
        rows = [
            (sql_literal(int(s) if float(s).is_integer() else s), sql_literal(r if k == 1 else 1.0 - r))
            for s, r in table
        ]
        default = formula if k == 1 else f"1.0e0 - {formula}"
        return sql_case(rows, default, subject=score) if rows else default

    outputs = [
        ("prediction", sql_case([(f"{margin} > 0", sql_literal(positive))], sql_literal(negative))),
        (f"p_{negative}", risk(0)),
        (f"p_{positive}", risk(1)),
    ]
    return sql_select(request, outputs, inputs.columns_of(card.features_used))


def _python(card: ScoreCard, request: ExportRequest) -> str:
    inputs = request.need_inputs()
    lines = [
        f"    total += {python_literal(plain(p))} * {inputs.python_value(j)}  {python_comment(name)}"
        for j, p, name in zip(_columns(card, inputs), card.points, card.features)
    ]
    table = {float(s): float(r) for s, r in _exact_table(card)}
    classes = [plain(c) for c in card.classes]
    body = f"""CLASSES = {python_literal(classes)}
POINTS = {python_literal(dict(zip(map(str, card.features), map(plain, card.points))))}
INTERCEPT = {python_literal(float(card.intercept))}
MULTIPLIER = {python_literal(float(card.multiplier))}
RISK = {python_literal(table)}  # score -> P(CLASSES[1]), every score a row can get


def score(row):
    \"\"\"The card's total points for ``row``, a mapping of raw column names to values.\"\"\"
{NO_VALUE}    total = 0.0
{chr(10).join(lines) if lines else "    pass"}
    return total


def _risk(total):
    if total in RISK:
        return RISK[total]
    t = (total + INTERCEPT) / MULTIPLIER
    log1pexp = (t + math.log1p(math.exp(-t))) if t > 0 else math.log1p(math.exp(t))  # log(1 + e^t)
    return math.exp(t - log1pexp)


def predict(row):
    \"\"\"CLASSES[1] when the score plus the intercept is positive, else CLASSES[0].\"\"\"
{NO_VALUE}    return CLASSES[1] if score(row) + INTERCEPT > 0 else CLASSES[0]


def predict_proba(row):
    \"\"\"[P(CLASSES[0]), P(CLASSES[1])] for ``row``, from the card's score-to-risk table.\"\"\"
{NO_VALUE}    p = _risk(score(row))
    return [1.0 - p, p]
"""
    return python_module(
        request, "A FasterRisk score card: add the points, read the risk.", body, inputs.columns_of(card.features_used)
    )


def score_card_markdown(model: dict[str, Any]) -> str:
    card = markdown_table(
        ["#", "feature", "points"],
        [
            [i + 1, f if b else f"{f} × value", f"{p:+d}"]
            for i, (f, p, b) in enumerate(zip(model["features"], model["points"], _binary(model)))
        ],
    )
    risk = markdown_table(
        ["score", "risk"], [[_score(r["score"]), format_risk(r["risk"])] for r in model.get("table") or []]
    )
    return f"{card}\nRisk of {markdown_text(model['classes'][1])} by score:\n\n{risk}"


def _binary(model: dict[str, Any]) -> list[bool]:
    return list(model.get("binary") or [True] * len(model["features"]))


def _score(s: float) -> str:
    return str(int(s)) if float(s).is_integer() else f"{s:.4g}"


def score_card_html(model: dict[str, Any]) -> str:
    """The card as printed on paper (points per feature, SCORE line) beside its risk curve."""
    rows = "".join(
        f"<tr><td>{i + 1}</td><td>{esc(f)}{'' if b else ' × value'}</td><td class=n>{p:+d} "
        f"point{'s' if abs(p) != 1 else ''}</td><td>+ …</td></tr>"
        for i, (f, p, b) in enumerate(zip(model["features"], model["points"], _binary(model)))
    )
    rows += "<tr><th></th><th>SCORE</th><th></th><th>= …</th></tr>"
    table = model.get("table") or []
    scores = "".join(f"<td>{_score(r['score'])}</td>" for r in table)
    risks = "".join(f"<td>{esc(format_risk(r['risk']))}</td>" for r in table)
    curve = line_chart(
        [("risk", [r["score"] for r in table], [r["risk"] for r in table])],
        xlabel="score",
        ylabel=f"P({model['classes'][1]})",
        ylim=(0.0, 1.0),
        dots=True,
    )
    return (
        f"<div class=row><table class=model>{rows}</table>{curve}</div>"
        f"<table class=risk><tr><th>SCORE</th>{scores}</tr><tr><th>RISK</th>{risks}</tr></table>"
    )


@hookimpl
def load_model(model: dict[str, Any], inputs: ModelInputs | None) -> ScoreCard | None:
    return ScoreCard.from_dict(model) if model.get("kind") == "score_card" else None


EXPORTERS: dict[str, Exporter] = {
    "python": lambda model, request: _python(ScoreCard.from_dict(model), request),
    "sql": lambda model, request: _sql(ScoreCard.from_dict(model), request),
    "markdown": lambda model, _: score_card_markdown(model),
    "html": lambda model, _: score_card_html(model),
}


@hookimpl
def export_model(model: dict[str, Any], format: str, request: ExportRequest) -> str | None:
    return export_kind(model, format, request, "score_card", EXPORTERS)
