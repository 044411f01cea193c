"""A Rashomon set's prediction as code to deploy (``glasswork export RUN --set``): per row, the
kept members' vote share for the positive class, the lowest and highest risk they give it (the
probability of the positive class; a member without probabilities gives its 0/1 prediction), and
whether they disagree, so a deployed query says when the good models do not agree.

Both formats are built from each member's own export (its plugin's ``export_model``), so a
member decides a row in the set exactly as its own export does:

- ``sql``: one ``SELECT *, ... FROM <table>`` whose outputs combine the members' expressions
  (``sql_select`` hands them over through ``ExportRequest.collected``); the lowest and highest risk
  are ``MIN`` and ``MAX`` over a ``UNION ALL`` of the members' risks (standard SQL: SQLite and
  DuckDB give the same rows). ``ambiguous`` is 1 or 0.
- ``python``: one module holding each member's module inside a function of its own
  (``_member_K``, returning its ``predict`` and ``predict_proba``), and ``predict_set(row)``.

A row with no usable value in a column any member reads gets no prediction (SQL NULL, Python
``None``), as each member's own export gives none.
"""

from __future__ import annotations

import textwrap
from collections.abc import Sequence
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

from glasswork.export.documents import LoadedModel, document, load_model, member_details, run_summary
from glasswork.export.inputs import sql_unusable
from glasswork.export.inputs import ExportRequest, SqlOutputs
from glasswork.export.requests import export_model
from glasswork.quoting import ExportError, plain, printable, python_literal, sql_literal, sql_name

if TYPE_CHECKING:
    from glasswork.hooks.registry import Registry

SET_FORMATS = ("sql", "python")
OUTPUTS = ("vote_share", "risk_min", "risk_max", "ambiguous")
# members' risks per UNION ALL (SQLite allows 500 terms in one compound SELECT)
CHUNK = 200


@dataclass
class Member:
    """A kept member of a run's set, as the store holds it."""

    rank: int
    objective: float | None
    model: dict[str, Any]


def positive_class(models: Sequence[LoadedModel]) -> Any:
    """The positive class the set votes for: the second of a binary classifier's classes (the
    column ``predict_proba`` gives as the risk), as its model writes it; an ``ExportError`` for a
    set that is not of binary classifiers, whose vote share and risk range mean nothing."""
    if not models:
        raise ExportError("the set keeps no member with a model, so it cannot predict")
    first = models[0].model
    classes = getattr(first, "classes", None)
    if getattr(first, "task", None) != "binary" or classes is None or len(classes) != 2:
        raise ExportError(
            "a set's vote share and risk range are for binary classifiers; this set's models are "
            f"{getattr(first, 'task', 'of another task')}: use one member (--member K)"
        )
    label = classes[1]
    return label.item() if hasattr(label, "item") else label


def export_set(
    details: dict[str, Any],
    members: Sequence[Member],
    fmt: str,
    *,
    table: str = "data",
    count: int | None = None,
    registry: Registry | None = None,
) -> str:
    """The text of the set's prediction in ``fmt`` (``SET_FORMATS``) over ``members``; ``count``
    is how many models the set counts (said in the header)."""
    if fmt not in SET_FORMATS:
        raise ExportError(f"a set exports as {' or '.join(SET_FORMATS)}, not {fmt}")
    if not members:
        raise ExportError("the set keeps no member with a model, so it cannot predict")
    docs = [document(member_details(details, m.rank, m.objective, m.model)) for m in members]
    positive = positive_class([load_model(d.model_dump(), registry) for d in docs])
    request = ExportRequest(fmt, docs[0].inputs, table, run_summary(details))  # the set's run, not a member
    about = [
        f"The prediction of the Rashomon set: its {len(members):,} kept member(s)"
        + (f" of the {count:,} it counts" if count is not None else "")
        + f" (ranks {members[0].rank} to {members[-1].rank}), positive class {plain(positive)!r}.",
    ]
    if fmt == "sql":
        return _sql(request, docs, positive, about, registry)
    return _python(request, docs, positive, about, registry)


# -- SQL ---------------------------------------------------------------------------------------------


def _sql(request: ExportRequest, docs: Sequence[Any], positive: Any, about: list[str], registry: Any) -> str:
    votes: list[str] = []
    risks: list[str] = []
    reads: dict[str, None] = {}
    name = f"p_{plain(positive)}"
    for doc in docs:
        collected: list[SqlOutputs] = []
        member = ExportRequest("sql", doc.inputs, request.table, doc.run, collected=collected)
        export_model(doc.model, member, registry)
        if len(collected) != 1:
            raise ExportError(f"the SQL exporter of {doc.kind!r} models does not build its query with sql_select")
        expressions = dict(collected[0].outputs)
        if "prediction" not in expressions:
            raise ExportError(f"the SQL export of a {doc.kind!r} model has no prediction")
        vote = f"CASE WHEN {expressions['prediction']} = {sql_literal(positive)} THEN 1 ELSE 0 END"
        votes.append(f"({vote})")
        # guarded here too: an engine may compute the subquery of the risks for every row (DuckDB
        # does), before the outer guard of sql_select leaves a row out, and a cast of 'n/a' fails
        numeric = set(doc.inputs.numeric_columns) if doc.inputs is not None else set()
        unknown = " OR ".join(sql_unusable(c, c in numeric) for c in collected[0].reads) or "1 = 0"
        risky = expressions.get(name, f"CAST(({vote}) AS DOUBLE PRECISION)")
        risks.append(f"CASE WHEN {unknown} THEN NULL ELSE {risky} END")
        reads.update(dict.fromkeys(collected[0].reads))
    k = len(docs)
    total = _balanced_sum(votes)
    risk, chunk = sql_name("__gw_risk"), sql_name("__gw_chunk")
    chunks = [
        " UNION ALL ".join(f"SELECT {r} AS {risk}" for r in risks[i : i + CHUNK]) for i in range(0, len(risks), CHUNK)
    ]
    union = " UNION ALL ".join(f"SELECT {risk} FROM ({c}) AS {chunk}" for c in chunks)

    def among(agg: str) -> str:
        return f"(SELECT {agg}({risk}) FROM ({union}) AS {sql_name('__gw_members')})"

    outputs = [
        ("vote_share", f"{total} * 1.0e0 / {sql_literal(k)}"),
        ("risk_min", among("MIN")),
        ("risk_max", among("MAX")),
        ("ambiguous", f"CASE WHEN {total} > 0 AND {total} < {sql_literal(k)} THEN 1 ELSE 0 END"),
    ]
    from glasswork.export.builders import sql_select  # the one SELECT, with the missing-value guard

    text = sql_select(request, outputs, list(reads))
    notes = "\n".join(
        f"-- {printable(line)}"
        for line in [
            *about,
            "vote_share: the fraction of members predicting it; risk_min, risk_max: the lowest and highest "
            "probability of it among the members; ambiguous: 1 where the members disagree. All NULL where a "
            "column a member reads has no usable value.",
        ]
    )
    head, _, body = text.partition("\nSELECT ")
    return f"{head}\n{notes}\nSELECT {body}"


def _balanced_sum(terms: Sequence[str]) -> str:
    """``(a + b + ...)`` added as a balanced tree, so the expression is log2(n) deep (SQLite
    refuses an expression tree deeper than 1,000: a set of more members than that added left
    to right)."""
    if len(terms) == 1:
        return terms[0]
    middle = len(terms) // 2
    return f"({_balanced_sum(terms[:middle])} + {_balanced_sum(terms[middle:])})"


# -- Python ------------------------------------------------------------------------------------------


def _python(request: ExportRequest, docs: Sequence[Any], positive: Any, about: list[str], registry: Any) -> str:
    blocks = []
    for k, doc in enumerate(docs, start=1):
        member = ExportRequest("python", doc.inputs, request.table, doc.run)
        text = export_model(doc.model, member, registry)
        blocks.append(
            f"def _member_{k}():\n"
            f'    """Member {k} of the set: its own exported module, kept apart from the others."""\n'
            f"{textwrap.indent(text, '    ')}\n"
            f"    return predict, locals().get('predict_proba')\n"
        )
    members = ", ".join(f"_member_{k}()" for k in range(1, len(docs) + 1))
    body = f'''POSITIVE = {python_literal(positive)}  # the class the members vote for


{chr(10).join(blocks)}

MEMBERS = [{members}]


def predict_set(row):
    """The set's prediction for ``row`` (a mapping of raw column names to values): a dict of
    vote_share, risk_min, risk_max and ambiguous; None when a member cannot predict the row (a
    column it reads has no usable value)."""
    votes, risks = [], []
    for predict, predict_proba in MEMBERS:
        label = predict(row)
        if label is None:
            return None
        vote = 1.0 if label == POSITIVE else 0.0
        votes.append(vote)
        risks.append(vote if predict_proba is None else float(predict_proba(row)[1]))
    share = sum(votes) / len(votes)
    return {{"vote_share": share, "risk_min": min(risks), "risk_max": max(risks), "ambiguous": 0.0 < share < 1.0}}
'''
    header = request.header("#", body)
    doc = " ".join(about) + " predict_set(row) gives the set's prediction for a row."
    return f"{header}\n{python_literal(printable(doc))}\n\n{body}"
