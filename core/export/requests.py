"""The dispatch of an export: json written here, every other format asked of the model's plugin
through ``export_model`` (what the plugin is given, ``ExportRequest``, is in ``inputs``)."""

from __future__ import annotations

from pathlib import Path
from typing import TYPE_CHECKING, Any

from glasswork.export.documents import document
from glasswork.export.formats import default_path, write_file
from glasswork.export.inputs import ExportRequest
from glasswork.quoting import ExportError

if TYPE_CHECKING:
    from glasswork.hooks.registry import Registry


# -- dispatch --------------------------------------------------------------------------------------


def export_run(details: dict[str, Any], fmt: str, *, table: str = "data", registry: Registry | None = None) -> str:
    """The text of a stored run's model in ``fmt`` (``FORMATS``, or ``html``: the report's drawing)."""
    if fmt == "json":
        return document(details).model_dump_json(indent=2) + "\n"
    doc = document(details)
    request = ExportRequest(fmt, doc.inputs, table, doc.run, details.get("stats") or {})
    return export_model(doc.model, request, registry)


def export_model(model: dict[str, Any], request: ExportRequest, registry: Registry | None = None) -> str:
    """Ask the plugins for ``model`` in ``request.format``; an ``ExportError`` when none has it."""
    from glasswork.hooks.registry import get_registry

    registry = registry or get_registry()
    answer = registry.export_model(model, request.format, request)
    text = answer.value
    if text is None:
        kind = model.get("kind")
        if answer.errors:
            first = answer.errors[0][1]
            if isinstance(first, ExportError):  # the plugin's own word on why it cannot
                raise first
            raise ExportError(f"the exporter of {kind!r} models failed ({answer.failure()})")
        raise ExportError(
            f"no installed plugin exports {kind!r} models as {request.format} (the plugin of "
            f"{kind!r} models has no exporter for it; see 'glasswork plugins')"
        )
    if not isinstance(text, str):
        raise ExportError(
            f"the exporter of {model.get('kind')!r} models (plugin {answer.plugin!r}) returned "
            f"{type(text).__name__}, not text; a fault in that plugin"
        )
    return text


def write_export(
    store: Any,
    run_id: str,
    fmt: str,
    path: str | Path | None = None,
    *,
    table: str = "data",
    registry: Registry | None = None,
) -> Path:
    """Export a stored run's model to ``path`` (default: ``default_path``); returns the path."""
    details = store.details(run_id)
    text = export_run(details, fmt, table=table, registry=registry)
    out = Path(path) if path is not None else default_path(details, fmt)
    write_file(out, text)
    return out
