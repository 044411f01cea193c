"""The json model document (``glasswork.model``, schema ``specs/glasswork.model.schema.json``):
written from a stored run, and read back into a model (``load_model``) through the model's
plugin (the ``load_model`` hook)."""

from __future__ import annotations

import json
from collections.abc import Mapping
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING, Any, Final, Literal

import numpy as np
from pydantic import BaseModel, ConfigDict, Field, ValidationError

from glasswork.export.inputs import ModelInputs
from glasswork.quoting import ExportError

if TYPE_CHECKING:
    from glasswork.registry import Registry

DOCUMENT: Final = "glasswork.model"
DOCUMENT_VERSION: Final = 1


class ModelDocument(BaseModel):
    """A model as ``glasswork export --format json`` writes it (the ``glasswork.model`` schema)."""

    model_config = ConfigDict(extra="forbid", title="glasswork model document")
    format: Literal["glasswork.model"] = Field(DOCUMENT, description="Always 'glasswork.model'.")
    version: Literal[1] = Field(DOCUMENT_VERSION, description="The document's schema version.")
    kind: str = Field(description="The model's kind (its to_dict()['kind']): the plugin that reads it.")
    model: dict[str, Any] = Field(description="The model as its plugin's to_dict() writes it; 'kind' inside.")
    inputs: ModelInputs | None = Field(
        None,
        description="How each column of the model's matrix comes from the raw columns; null "
        "for runs recorded before glasswork kept it.",
    )
    run: dict[str, Any] = Field(
        default_factory=dict,
        description="run_id, name, solver, solver_version, "
        "spec_hash, data_fingerprint, spec: where the model comes from.",
    )
    where: str | None = Field(
        None,
        description="The data.where filter that chose the rows the model was trained on (the spec's, "
        "as written); null when it was trained on every row of its data.",
    )
    certificate: dict[str, Any] = Field(default_factory=dict, description="status, objective, lower_bound, gap.")
    metrics: dict[str, Any] = Field(default_factory=dict, description="Training and test metrics.")


def model_schema() -> dict[str, Any]:
    """The JSON Schema of the model document (``specs/glasswork.model.schema.json``)."""
    schema = ModelDocument.model_json_schema()
    schema["$schema"] = "https://json-schema.org/draft/2020-12/schema"
    return schema


def run_summary(details: dict[str, Any]) -> dict[str, Any]:
    """Where a model comes from, from a stored run (``RunStore.details``)."""
    keys = ("run_id", "name", "solver", "solver_version", "spec_hash", "data_fingerprint", "spec")
    return {k: details.get(k) for k in keys}


def document(details: dict[str, Any]) -> ModelDocument:
    """The json document of a stored run's model."""
    model = _model_of(details)
    inputs = details.get("inputs")
    return ModelDocument(
        kind=str(model.get("kind")),
        model=model,
        inputs=None if inputs is None else ModelInputs.model_validate(inputs),
        run=run_summary(details),
        where=trained_where(details),
        certificate={k: details.get(k) for k in ("status", "objective", "lower_bound", "gap")},
        metrics=details.get("metrics") or {},
    )


def member_details(
    details: dict[str, Any], rank: int, objective: float | None, model: dict[str, Any], *, point: int | None = None
) -> dict[str, Any]:
    """A stored run's details (``RunStore.details``) with member ``rank`` of its Rashomon set in
    place of its model, so every export reads a member as it reads any run's model: the run's
    inputs, spec and filter, the member's objective, no certificate (a member is within the
    threshold, not certified optimal) and no metrics (the run's are the optimum's). With
    ``point``, the member is of that sweep point's set (a frontier point's), and named so."""
    where = f"Rashomon member {rank}" if point is None else f"Rashomon set of point {point}, member {rank}"
    return {
        **details,
        "name": f"{details.get('name')} ({where})",
        "models": [{"name": "model", "kind": model.get("kind"), "model": model, "text": None}],
        "status": "rashomon member",
        "objective": objective,
        "lower_bound": None,
        "gap": None,
        "metrics": {},
    }


def _model_of(details: dict[str, Any]) -> dict[str, Any]:
    model = next((m.get("model") for m in details.get("models") or [] if m.get("model")), None)
    if model is None:
        if details.get("no_model"):  # the run ended without one (infeasible, or stopped before any): say why
            raise ExportError(f"run {str(details.get('run_id'))[:12]} has no model to export: {details['no_model']}")
        raise ExportError(
            f"run {str(details.get('run_id'))[:12]} has no model "
            f"(state {details.get('state')}{': ' + details['error'] if details.get('error') else ''})"
        )
    return model


def trained_where(run: Mapping[str, Any]) -> str | None:
    """The ``data.where`` filter of the spec a run was made from; ``None`` when it had none."""
    spec = run.get("spec")
    data = spec.get("data") if isinstance(spec, Mapping) else None
    where = data.get("where") if isinstance(data, Mapping) else None
    return where if isinstance(where, str) and where.strip() else None


# -- reading a model back ----------------------------------------------------------------------------


@dataclass
class LoadedModel:
    """A model read back from its json document: the plugin's model object and its inputs.

    ``model`` predicts from the training matrix (``model.predict(X)``); ``predict`` and
    ``predict_proba`` take the raw columns (a mapping ``name -> values``, such as a DataFrame).
    """

    model: Any
    inputs: ModelInputs | None
    document: ModelDocument

    def matrix(self, columns: Mapping[str, Any]) -> np.ndarray:
        """The model's matrix from the raw columns (only the features it uses: a column it does not
        read may be absent or of any type)."""
        if self.inputs is None:
            raise ExportError("this document has no inputs: give the model its feature matrix (.model.predict)")
        return self.inputs.matrix(columns, getattr(self.model, "features_used", None))

    def missing(self, columns: Mapping[str, Any]) -> np.ndarray:
        """Rows with no usable value in a raw column the model reads (its ``features_used``; every
        feature of the inputs for a model that does not say): they get no prediction."""
        if self.inputs is None:
            raise ExportError("this document has no inputs: give the model its feature matrix (.model.predict)")
        return self.inputs.missing(columns, getattr(self.model, "features_used", None))

    def predict(self, columns: Mapping[str, Any]) -> np.ndarray:
        """Class labels (classifiers) or values (regression), from raw columns; ``None`` for a
        row with a missing value in a column the model reads (as SQL gives NULL)."""
        with np.errstate(invalid="ignore"):  # NaN in the rows judged missing below
            encoded = self.model.predict(self.matrix(columns))
        classes = getattr(self.model, "classes", None)
        out = (
            encoded
            if classes is None or getattr(self.model, "task", "") == "regression"
            else np.asarray(classes)[encoded]
        )
        missing = self.missing(columns)
        if not missing.any():
            return out
        out = np.asarray(out, dtype=object)
        out[missing] = None
        return out

    def predict_proba(self, columns: Mapping[str, Any]) -> np.ndarray:
        """Class probabilities; a row of NaN where ``predict`` gives ``None``."""
        with np.errstate(invalid="ignore"):
            proba = np.array(self.model.predict_proba(self.matrix(columns)), dtype=np.float64)
        proba[self.missing(columns)] = np.nan
        return proba


def load_model(source: str | Path | dict[str, Any], registry: Registry | None = None) -> LoadedModel:
    """Read a ``glasswork.model`` json document (a path, or the parsed document) back into a model."""
    from glasswork.registry import get_registry

    if isinstance(source, dict):
        data, where = source, "the document"
    else:
        where = str(source)
        try:
            data = json.loads(Path(source).read_text(encoding="utf-8"))
        except (OSError, ValueError) as exc:
            raise ExportError(f"{where}: cannot read a model document: {exc}") from exc
    if isinstance(data, dict) and data.get("format") == DOCUMENT and data.get("version") != DOCUMENT_VERSION:
        raise ExportError(
            f"{where}: model document version {data.get('version')!r}; this glasswork reads "
            f"version {DOCUMENT_VERSION} (upgrade glasswork)"
        )
    try:
        doc = ModelDocument.model_validate(data)
    except ValidationError as exc:
        first = exc.errors()[0]
        path = ".".join(str(p) for p in first["loc"]) or "(top)"
        raise ExportError(f"{where}: not a glasswork model document: {path}: {first['msg']}") from None
    registry = registry or get_registry()
    answer = registry.rebuild_model(doc.model, doc.inputs)
    model = answer.value
    if model is None:
        if answer.errors:
            raise ExportError(f"{where}: the plugin could not read the {doc.kind!r} model ({answer.failure()})")
        raise ExportError(
            f"{where}: no installed plugin reads {doc.kind!r} models "
            f"(install the plugin that made it; see 'glasswork plugins')"
        )
    if not callable(getattr(model, "predict", None)):  # the plugin's answer, not the document, is at fault
        raise ExportError(
            f"{where}: plugin {answer.plugin!r} rebuilt the {doc.kind!r} model as a {type(model).__name__}, "
            "which has no predict (its load_model hook must return the model object)"
        )
    return LoadedModel(model, doc.inputs, doc)
