"""The export formats and the files they go to: light enough for the command line to import
before any export runs (no NumPy, no pydantic).

``FORMATS`` are what ``glasswork export`` writes: ``python``, ``sql`` and ``markdown`` from the
model's plugin (``export_model``), ``json`` the ``glasswork.model`` document. ``html`` is the
model card's drawing of the model, which plugins also give and ``glasswork run --export`` writes.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

FORMATS = ("python", "sql", "json", "markdown")
DRAWING = "html"
ALL_FORMATS = (*FORMATS, DRAWING)  # what glasswork run --export accepts


SUFFIX = {"python": ".py", "sql": ".sql", "json": ".json", "markdown": ".md", "html": ".html"}


def default_path(details: dict[str, Any], fmt: str, folder: str | Path = ".") -> Path:
    """``<name>-<run id>.<ext>`` in ``folder``: where a run's export goes when no file is named."""
    name = "".join(c if c.isalnum() or c in "-_" else "-" for c in str(details.get("name") or "model")).strip("-")
    return Path(folder) / f"{name or 'model'}-{str(details.get('run_id'))[:8]}{SUFFIX[fmt]}"


def write_file(path: Path, text: str) -> None:
    """Write an export or report, making its folder; an ``ExportError`` saying why it cannot."""
    from glasswork.quoting import ExportError

    try:
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text(text, encoding="utf-8")
    except OSError as exc:
        raise ExportError(f"cannot write {path}: {exc.strerror or exc}") from None
