"""Building blocks the exporters of every plugin share: the Python module's prelude and missing-value
rule, decision lists as Python and SQL, the SQL select, Markdown tables. Every name and value goes
through ``glasswork.quoting``."""

from __future__ import annotations

from collections.abc import Callable, Mapping
from typing import Any

from glasswork.export.inputs import ExportRequest, ModelInputs, SqlOutputs, sql_unusable
from glasswork.quoting import markdown_text, plain, python_literal, sql_literal, sql_name
from glasswork.values import NUMBER, WHITESPACE


Exporter = Callable[[dict[str, Any], ExportRequest], str]
"""Writes a model (its ``to_dict()`` form) in one format for an export request."""


def export_kind(
    model: dict[str, Any], format: str, request: ExportRequest, kind: str, exporters: Mapping[str, Exporter]
) -> str | None:
    """A plugin's ``export_model`` hook for its models of ``kind``: the text of ``exporters[format]``, or
    ``None`` for a model of another kind or a format the plugin does not write (the next plugin's turn)."""
    if model.get("kind") != kind or format not in exporters:
        return None
    return exporters[format](model, request)


def sql_select(request: ExportRequest, outputs: list[tuple[str, str]], reads: list[str] | None = None) -> str:
    """``SELECT *, <expr> AS <name>, ... FROM <table>``: every output one CASE expression, NULL
    wherever a raw column in ``reads`` (default: every column of the inputs) has no usable value
    (``sql_unusable``)."""
    inputs = request.inputs
    if reads is None and inputs is not None:
        reads = inputs.columns
    if request.collected is not None:
        request.collected.append(SqlOutputs(list(outputs), list(reads or [])))
    if reads:
        numeric = set(inputs.numeric_columns) if inputs is not None else set()
        unknown = " OR ".join(sql_unusable(c, c in numeric) for c in reads)
        outputs = [(name, f"CASE WHEN {unknown} THEN NULL ELSE {expr} END") for name, expr in outputs]
    body = ",\n".join(f"  {expr} AS {sql_name(name)}" for name, expr in outputs)
    return f"{request.header('--', body)}\nSELECT *,\n{body}\nFROM {sql_name(request.table)}\n"


def sql_case(branches: list[tuple[str, str]], default: str, indent: str = "    ", subject: str = "") -> str:
    """``CASE WHEN c THEN v ... ELSE d END`` over ``(condition, value)`` branches; with ``subject``
    the simple form ``CASE subject WHEN value THEN ...``. No branch at all is the default alone: SQL
    has no ``CASE`` without a ``WHEN`` (an empty rule list decides every row by its default)."""
    if not branches:
        return default
    whens = "".join(f"\n{indent}WHEN {c} THEN {v}" for c, v in branches)
    return f"CASE{' ' + subject if subject else ''}{whens}\n{indent}ELSE {default}\n  END"


def markdown_table(header: list[str], rows: list[list[Any]]) -> str:
    """A GitHub-flavoured Markdown table; every cell literal text (``markdown_text``: HTML and
    Markdown-active characters escaped, one printable line)."""
    lines = ["| " + " | ".join(map(markdown_text, header)) + " |", "|" + "|".join("---" for _ in header) + "|"]
    lines += ["| " + " | ".join(map(markdown_text, r)) + " |" for r in rows]
    return "\n".join(lines) + "\n"


# Prepended by ``python_module``: the columns a model reads and how a raw value is read (the rule
# of ``is_missing`` and ``number_of``, restated so the module needs no glasswork); the exporter's
# functions start with ``if missing(row): return None`` (``NO_VALUE``).
MISSING_PYTHON = '''
READS = {reads}  # the raw columns the model reads
NUMBERS = {numbers}  # those it reads as numbers
WHITESPACE = {whitespace}
_NUMBER = re.compile({pattern})


def missing(row):
    """The columns of READS that ``row`` has no usable value in: None, pd.NA, a NaN, an empty,
    blank or 'nan' text, no key, or (a column of NUMBERS) no number. The model was trained on
    complete rows, so such a row gets no prediction (None), as the SQL export gives NULL."""
    return [c for c in READS if _absent(_value(row, c)) or (c in NUMBERS and _number(_value(row, c)) is None)]


def _value(row, column):
    try:
        return row[column]
    except (KeyError, IndexError):
        return None


def _absent(value):
    if value is None or type(value).__name__ in ("NAType", "NaTType"):
        return True
    if isinstance(value, str):
        return value.strip(WHITESPACE).lower() in ("", "nan")
    try:
        return bool(value != value)  # a NaN of any width
    except (TypeError, ValueError):
        return False


def _number(value):
    """A bool as 1 / 0, a finite number, or a text that is true / false or a decimal number."""
    if isinstance(value, str):
        text = value.strip(WHITESPACE).lower()
        if text in ("true", "false"):
            return 1.0 if text == "true" else 0.0
        return float(text) if _NUMBER.fullmatch(text) else None
    if isinstance(value, (bytes, bytearray)) or _absent(value):
        return None
    try:
        number = float(value)
    except (TypeError, ValueError, OverflowError):
        return None
    return number if math.isfinite(number) else None


def _num(row, column):
    return _number(row[column])


def _text(row, column):
    """A category is compared as the text it is written as ('003' is not 3)."""
    value = row[column]
    if isinstance(value, str):
        return value
    raise TypeError(f"column {{column!r}} holds {{value!r}} ({{type(value).__name__}}), not text: the model "
                    f"compares its categories as text; read the column as text")
'''
NO_VALUE = "    if missing(row):\n        return None\n"


def python_module(request: ExportRequest, doc: str, body: str, reads: list[str] | None = None) -> str:
    """A self-contained Python module: header, docstring, ``READS`` and ``missing(row)`` and the
    readers of raw values (``_num``, ``_text``), then the exporter's code (no glasswork import).
    ``reads``: the raw columns the model reads (default: every column of the inputs), for the
    exporter's ``NO_VALUE`` guards."""
    prelude = python_prelude(request.need_inputs(), reads)
    return f'{request.header("#", body)}\n"""{doc}"""\n\n{prelude}\n\n\n{body.strip()}\n'


def python_prelude(inputs: ModelInputs, reads: list[str] | None = None) -> str:
    """The imports, ``READS``, ``missing(row)`` and the raw-value readers (``_num``, ``_text``) the
    expressions of ``ModelInputs.python_test`` / ``python_value`` call (every exported module starts
    with them)."""
    reads = inputs.columns if reads is None else list(reads)
    numbers = [c for c in reads if c in set(inputs.numeric_columns)]
    prelude = MISSING_PYTHON.format(
        reads=python_literal(reads),
        numbers=python_literal(numbers),
        whitespace=python_literal(WHITESPACE),
        pattern=python_literal(NUMBER.pattern),
    )
    return f"import math\nimport re\n\n{prelude.strip()}"


def decision_list_python(
    request: ExportRequest,
    doc: str,
    tests: list[str],
    labels: list[Any],
    probas: list[list[float]],
    classes: list[Any],
    reads: list[str] | None = None,
) -> str:
    """An ordered list of rules as Python: the first rule whose test (a Python expression over
    ``row``) holds decides; ``labels`` and ``probas`` have one entry per rule and the default;
    ``reads``: see ``python_module``."""
    branches = "".join(f"    if {t}:\n        return {i}\n" for i, t in enumerate(tests))
    body = f"""CLASSES = {python_literal(list(classes))}
LABELS = {python_literal(list(labels))}
PROBA = {python_literal([[float(p) for p in row] for row in probas])}


def rule_of(row):
    \"\"\"The index of the rule that decides ``row`` (len(LABELS) - 1: the default).\"\"\"
{branches}    return {len(tests)}


def predict(row):
    \"\"\"The predicted label of ``row``, a mapping of raw column names to values.\"\"\"
{NO_VALUE}    return LABELS[rule_of(row)]


def predict_proba(row):
    \"\"\"The class probabilities of ``row`` (in CLASSES order): the training class mix of its rule.\"\"\"
{NO_VALUE}    return list(PROBA[rule_of(row)])
"""
    return python_module(request, doc, body, reads)


def decision_list_sql(
    request: ExportRequest,
    tests: list[str],
    labels: list[Any],
    probas: list[list[float]],
    classes: list[Any],
    reads: list[str] | None = None,
) -> str:
    """An ordered list of rules as SQL: ``prediction`` and ``p_<class>``, each one CASE expression."""
    outputs = [("prediction", sql_case([(t, sql_literal(v)) for t, v in zip(tests, labels)], sql_literal(labels[-1])))]
    for k, c in enumerate(classes):
        outputs.append(
            (
                f"p_{plain(c)}",
                sql_case(
                    [(t, sql_literal(float(p[k]))) for t, p in zip(tests, probas)], sql_literal(float(probas[-1][k]))
                ),
            )
        )
    return sql_select(request, outputs, reads)
