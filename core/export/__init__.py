"""Models leave the workbench: a model's inputs over the raw columns, and the export formats.

One module per concept, every public name re-exported here (where plugins and users import them):
``inputs`` (``ModelInputs``: how the matrix comes from the raw columns; raw values in SQL),
``requests`` (``ExportRequest``, what an exporter is given, and the dispatch: ``export_run``,
``export_model``, ``write_export``), ``documents`` (the json ``glasswork.model`` document and
``load_model``), ``formats`` (``FORMATS`` and the files exports go to; light, for the command
line) and ``builders`` (the pieces every plugin's exporter shares).

Formats: ``python``, ``sql`` and ``markdown`` come from the model's plugin through the
``export_model`` hook (also ``html``, the report's drawing of the model); ``json`` is the
versioned ``glasswork.model`` document (its JSON Schema is ``specs/glasswork.model.schema.json``)
that ``load_model`` reads back through the plugin's ``load_model`` hook.

What a model's inputs are, the one missing-value rule every format follows, and how generated
code quotes data: ``glasswork.export.inputs``.
"""

from __future__ import annotations

import importlib
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    from glasswork.export.builders import (
        MISSING_PYTHON,
        NO_VALUE,
        decision_list_python,
        decision_list_sql,
        Exporter,
        export_kind,
        markdown_table,
        python_module,
        python_prelude,
        sql_case,
        sql_select,
    )
    from glasswork.export.documents import (
        DOCUMENT,
        DOCUMENT_VERSION,
        LoadedModel,
        ModelDocument,
        document,
        load_model,
        member_details,
        model_schema,
        run_summary,
    )
    from glasswork.export.formats import (
        FORMATS,
        SUFFIX,
        default_path,
        write_file,
    )
    from glasswork.export.inputs import (
        Condition,
        ExportRequest,
        Feature,
        ModelInputs,
        Op,
        as_numbers,
        as_texts,
        missing_values,
        sql_number,
        sql_text,
        sql_unusable,
        trained_where,
    )
    from glasswork.export.requests import export_model, export_run, write_export
    from glasswork.quoting import (
        ExportError,
        html_text,
        markdown_text,
        plain,
        printable,
        python_comment,
        python_literal,
        script_json,
        shell_command,
        sql_comment,
        sql_literal,
        sql_name,
        terminal_text,
    )
    from glasswork.values import NUMBER, WHITESPACE, is_missing, number_of  # what a raw value holds

# Each name loads its module on first use (PEP 562): the command line imports ``formats`` without
# NumPy or pydantic, and no submodule depends on this package's namespace.
_HOMES = {
    "NUMBER": "glasswork.values",
    "WHITESPACE": "glasswork.values",
    "is_missing": "glasswork.values",
    "number_of": "glasswork.values",
    "Condition": "glasswork.export.inputs",
    "DOCUMENT": "glasswork.export.documents",
    "DOCUMENT_VERSION": "glasswork.export.documents",
    "ExportError": "glasswork.quoting",
    "ExportRequest": "glasswork.export.inputs",
    "FORMATS": "glasswork.export.formats",
    "html_text": "glasswork.quoting",
    "terminal_text": "glasswork.quoting",
    "Feature": "glasswork.export.inputs",
    "LoadedModel": "glasswork.export.documents",
    "MISSING_PYTHON": "glasswork.export.builders",
    "ModelDocument": "glasswork.export.documents",
    "ModelInputs": "glasswork.export.inputs",
    "NO_VALUE": "glasswork.export.builders",
    "Op": "glasswork.export.inputs",
    "SUFFIX": "glasswork.export.formats",
    "as_numbers": "glasswork.export.inputs",
    "as_texts": "glasswork.export.inputs",
    "decision_list_python": "glasswork.export.builders",
    "decision_list_sql": "glasswork.export.builders",
    "default_path": "glasswork.export.formats",
    "document": "glasswork.export.documents",
    "export_model": "glasswork.export.requests",
    "Exporter": "glasswork.export.builders",
    "export_kind": "glasswork.export.builders",
    "export_run": "glasswork.export.requests",
    "load_model": "glasswork.export.documents",
    "markdown_table": "glasswork.export.builders",
    "markdown_text": "glasswork.quoting",
    "member_details": "glasswork.export.documents",
    "missing_values": "glasswork.export.inputs",
    "model_schema": "glasswork.export.documents",
    "plain": "glasswork.quoting",
    "printable": "glasswork.quoting",
    "python_comment": "glasswork.quoting",
    "python_literal": "glasswork.quoting",
    "python_module": "glasswork.export.builders",
    "python_prelude": "glasswork.export.builders",
    "script_json": "glasswork.quoting",
    "shell_command": "glasswork.quoting",
    "run_summary": "glasswork.export.documents",
    "sql_case": "glasswork.export.builders",
    "sql_comment": "glasswork.quoting",
    "sql_literal": "glasswork.quoting",
    "sql_name": "glasswork.quoting",
    "sql_number": "glasswork.export.inputs",
    "sql_select": "glasswork.export.builders",
    "sql_text": "glasswork.export.inputs",
    "sql_unusable": "glasswork.export.inputs",
    "trained_where": "glasswork.export.inputs",
    "write_export": "glasswork.export.requests",
    "write_file": "glasswork.export.formats",
}

# Every re-exported name (the keys of _HOMES), and nothing else: a star import resolves each.
__all__ = [
    "Condition",
    "DOCUMENT",
    "DOCUMENT_VERSION",
    "ExportError",
    "ExportRequest",
    "Exporter",
    "FORMATS",
    "Feature",
    "LoadedModel",
    "MISSING_PYTHON",
    "ModelDocument",
    "ModelInputs",
    "NO_VALUE",
    "NUMBER",
    "Op",
    "SUFFIX",
    "WHITESPACE",
    "as_numbers",
    "as_texts",
    "decision_list_python",
    "decision_list_sql",
    "default_path",
    "document",
    "export_kind",
    "export_model",
    "export_run",
    "html_text",
    "is_missing",
    "load_model",
    "markdown_table",
    "markdown_text",
    "member_details",
    "missing_values",
    "model_schema",
    "number_of",
    "plain",
    "printable",
    "python_comment",
    "python_literal",
    "python_module",
    "python_prelude",
    "run_summary",
    "script_json",
    "shell_command",
    "sql_case",
    "sql_comment",
    "sql_literal",
    "sql_name",
    "sql_number",
    "sql_select",
    "sql_text",
    "sql_unusable",
    "terminal_text",
    "trained_where",
    "write_export",
    "write_file",
]


def __getattr__(name: str) -> Any:
    if name in _HOMES:
        value = getattr(importlib.import_module(_HOMES[name]), name)
        globals()[name] = value
        return value
    raise AttributeError(f"module {__name__!r} has no attribute {name!r}")


def __dir__() -> list[str]:
    return sorted(set(globals()) | set(_HOMES))
