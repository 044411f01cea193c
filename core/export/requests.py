"""What an exporter is given (``ExportRequest``), and the dispatch of an export: json written
here, every other format asked of the model's plugin through ``export_model``."""

from __future__ import annotations

from dataclasses import dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING, Any

from glasswork._version import __version__
from glasswork.export.documents import document, trained_where
from glasswork.export.formats import default_path, write_file
from glasswork.export.inputs import ModelInputs
from glasswork.quoting import ExportError, printable, sql_name

if TYPE_CHECKING:
    from glasswork.registry import Registry


@dataclass
class SqlOutputs:
    """One SQL export's outputs as ``sql_select`` received them: ``(name, expression)`` pairs with no
    missing-value guard, and the raw columns the expressions read."""

    outputs: list[tuple[str, str]]
    reads: list[str]


@dataclass
class ExportRequest:
    """What the ``export_model`` hook receives besides the model: its inputs (``None`` for runs
    recorded before inputs were kept), the table name the SQL reads, and the run it comes from."""

    format: str
    inputs: ModelInputs | None = None
    table: str = "data"
    run: dict[str, Any] = field(default_factory=dict)
    stats: dict[str, Any] = field(default_factory=dict)  # the result's stats (the report's drawings)
    # when a list, ``sql_select`` appends each query's outputs to it, unguarded (``SqlOutputs``): how
    # a Rashomon set's SQL (``glasswork.export.sets``) combines its members' expressions
    collected: list[SqlOutputs] | None = None

    def need_inputs(self) -> ModelInputs:
        """The inputs, or the error saying the run does not have them."""
        if self.inputs is None:
            raise ExportError(
                f"run {str(self.run.get('run_id', '?'))[:12]} does not record how its features come from the raw "
                f"columns (it was recorded before glasswork kept a model's inputs), so it cannot be exported as "
                f"{self.format}; run its spec again, or export it as json or markdown"
            )
        return self.inputs

    def header(self, comment: str, body: str = "") -> str:
        """A comment block naming the run, the rows it was trained on and the raw columns ``body``
        reads, for the top of a file; every line printable, so no name or path can end the comment."""
        lines = [
            f"Exported by glasswork {__version__} from run {self.run.get('run_id', '?')}"
            f" ({self.run.get('name', '?')}, solver {self.run.get('solver', '?')})."
        ]
        if self.run.get("spec_hash"):
            lines.append(f"spec {str(self.run['spec_hash'])[:16]}, data {str(self.run.get('data_fingerprint'))[:16]}")
        where = trained_where(self.run)
        if where is not None:  # a model of the filtered rows is not a model of the whole file
            lines.append(f"Trained only on the rows where: {' '.join(where.split())}")
        elif self.run.get("spec"):
            lines.append("Trained on every row of its data (no data.where filter).")
        if self.inputs is not None:
            reads = (
                f"the columns the antecedents of {self.inputs.source} name"
                if self.inputs.source.endswith(".out")
                else f"the raw columns of {self.inputs.source}"
            )
            if body:  # what the code reads: none at all for a model that decides every row alike
                used = [c for c in self.inputs.columns if _mentions(body, c)]
                lines.append(f"Reads {reads}: {', '.join(used)}" if used else f"Reads none of {reads}.")
            else:
                lines.append(f"Reads {reads}: {', '.join(self.inputs.columns)}")
        return "\n".join(f"{comment} {printable(line)}" for line in lines)


def _mentions(body: str, column: str) -> bool:
    return repr(column) in body or ("\x00" not in column and sql_name(column) in body)


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
    from glasswork.registry import get_registry

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
