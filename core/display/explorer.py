"""The set explorer: the part of a run's report (``glasswork report RUN``) that lets a person
choose among the members of its Rashomon set, in the browser, with no network.

Python gathers everything here, once, at report time, and embeds it as one JSON document in a
``<script type="application/json">`` block (``glasswork.quoting.script_json``: no text in the
data can close the block); the page's own script (``explorer.js``, inline) draws from it and
never builds markup from data (it sets ``textContent``). The document holds:

- each kept member's figures (``glasswork.rashomon.query.figures_of``: the names ``--where`` and
  ``--sort`` take), its rules as it prints them, the features it uses (indices into
  ``features``) and the member it decides as (``like``: ``glasswork.rashomon.decides_as``, as the
  ``glasswork rashomon`` listing says it: lists that differ in their text often decide every
  training row alike); ``columns`` maps
  each raw column of the data to the features made from it, as ``uses(COLUMN)`` reads it
  (``glasswork.rashomon.multiplicity.raw_columns``), so the page filters on "uses"/"avoids"
  exactly as ``--where`` does;
- each member's model reliance on each feature some member uses
  (``glasswork.rashomon.multiplicity.member_reliance``: its loss with the feature's column permuted
  over its loss as it is, the definition the card's ranges use), so the page's bars give the range
  over the members a filter leaves;
- the members' predictions on the rows the set's figures are computed on (the test rows, else the
  training rows; ``multiplicity.rows_of``), packed in base64 (one byte per row and member for a
  classifier, a float32 for regression), for the pairwise agreement and two members side by side;
  and a sample of the rows the members split on, with the values of the features they read.

The store keeps no rows, so the rows come from the data the run's spec points to, loaded again and
checked against the run's data fingerprint (as the card's ROC curve is); when they cannot be, the
page says why and shows the members, their figures and variable use only. Bounds
(``MAX_MEMBERS``, ``MAX_PREDICTION_BYTES``, ``MAX_SAMPLE_ROWS``, ``HEATMAP_MEMBERS``) keep the file
small; what each leaves out, the page says.
"""

from __future__ import annotations

import base64
import math
from collections.abc import Sequence
from importlib import resources
from typing import TYPE_CHECKING, Any

import numpy as np

from glasswork.quoting import printable, script_json

if TYPE_CHECKING:
    from glasswork.data import Problem
    from glasswork.hooks.registry import Registry

MAX_MEMBERS = 2_000  # members in the page, best first
MAX_PREDICTION_BYTES = 4_000_000  # members x rows of predictions embedded (about 5.3 MB of base64)
MAX_SAMPLE_ROWS = 300  # rows the members split on, embedded with their values
HEATMAP_MEMBERS = 50  # members drawn in the agreement heatmap (the first the table shows)
FIXED_FIGURES = ("rank", "objective", "size")


def _number(value: Any) -> float | None:
    if isinstance(value, bool) or not isinstance(value, (int, float, np.integer, np.floating)):
        return None
    value = float(value)
    return value if math.isfinite(value) else None


def figure_order(names: Sequence[str]) -> list[str]:
    """The figures the page offers: rank, objective and size (the rule count), then each metric on
    the training and test rows side by side (``train_accuracy``, ``test_accuracy``, ...), then any
    other; a bare fairness ``METRIC`` (``--where``'s name for ``train_METRIC``) is left out, its
    ``train_`` twin standing for it."""
    rest = [n for n in names if n not in FIXED_FIGURES]
    split = [n for n in rest if n.startswith(("train_", "test_"))]
    bases = list(dict.fromkeys(n.split("_", 1)[1] for n in split))
    paired = [f"{part}_{base}" for base in bases for part in ("train", "test") if f"{part}_{base}" in split]
    others = [n for n in rest if n not in split and f"train_{n}" not in split]
    return [*FIXED_FIGURES, *paired, *others]


def table_figures(names: Sequence[str], details: dict[str, Any]) -> list[str]:
    """The figures the member table shows as columns (every one is in the filters and side by
    side): rank, objective and size, accuracy and AUC (R² for regression) on the training and test
    rows, and the fairness metric the spec constrains (else the first it audits) on both."""
    fairness = (details.get("rashomon") or {}).get("fairness") or {}
    metric = (fairness.get("constraint") or {}).get("metric") or next(iter(fairness.get("metrics") or []), None)
    bases = ("accuracy", "auc", "r2", *([metric] if isinstance(metric, str) else []))
    wanted = {f"{part}_{base}" for part in ("train", "test") for base in bases}
    return [n for n in names if n in FIXED_FIGURES or n in wanted]


def _features_of(
    members: Sequence[Any], details: dict[str, Any]
) -> tuple[list[str], dict[str, list[int]], list[list[int]]]:
    """Every feature some member uses or the data has (the data's order first), the features made
    from each raw column (as ``uses(COLUMN)`` reads them), and each member's features as indices."""
    from glasswork.rashomon.multiplicity import raw_columns

    inputs = details.get("inputs") or {}
    known = [f["name"] for f in inputs.get("features") or [] if isinstance(f, dict) and isinstance(f.get("name"), str)]
    names = list(dict.fromkeys([*known, *(f for m in members for f in m.features)]))
    index = {name: j for j, name in enumerate(names)}
    columns: dict[str, list[int]] = {}
    read_by_members = {f for m in members for f in m.features}
    for j, read in sorted(raw_columns(inputs, names).items()):
        if names[j] not in read_by_members:
            continue  # a column no member reads: every member avoids it, none uses it
        for column in sorted(read):
            if column not in index:  # a column that is also a feature's name means the feature
                columns.setdefault(column, []).append(j)
    used = [[index[f] for f in m.features] for m in members]
    return names, columns, used


def _models(members: Sequence[Any], details: dict[str, Any], registry: Registry) -> list[Any] | str:
    """Each member's model object rebuilt by its plugin, or why they cannot be."""
    from glasswork.export import ModelInputs

    inputs = details.get("inputs")
    loaded = None if inputs is None else ModelInputs.model_validate(inputs)
    models = []
    for member in members:
        if member.model is None:
            return "the members were kept as summaries (rashomon.keep: summary), so they have no model to predict with"
        answer = registry.rebuild_model(member.model, loaded)
        if answer.value is None:
            why = answer.failure() if answer.errors else "no installed plugin gives load_model for it"
            return f"member {member.rank}'s model could not be rebuilt ({printable(why)})"
        models.append(answer.value)
    return models


def _rows_document(
    problem: Problem, models: Sequence[Any], used: Sequence[list[int]], names: Sequence[str], notes: list[str]
) -> dict[str, Any]:
    """Predictions, per-member reliance and the sample of split rows (module docstring)."""
    from glasswork.rashomon.multiplicity import bounded_rows, member_reliance, rows_of, weights_of

    X, y, part = rows_of(problem)
    n = int(len(y))
    regression = problem.task == "regression"
    width = 4 if regression else 1
    limit = max(0, MAX_PREDICTION_BYTES // max(1, n * width))
    predicted = list(models[:limit])
    if len(predicted) < len(models):
        notes.append(
            f"predictions of the best {len(predicted):,} of {len(models):,} members are in the page (its size is "
            "bounded): only they can be compared or drawn in the heatmap"
        )
    if regression:
        matrix = np.stack([np.asarray(m.predict(X), dtype=np.float32) for m in predicted]) if predicted else None
    else:
        matrix = np.stack([np.asarray(m.predict(X)).astype(np.int64) for m in predicted]) if predicted else None
        if matrix is not None and (matrix.min() < 0 or matrix.max() > 255):
            notes.append("the members' classes do not fit one byte each, so the page holds no predictions")
            matrix = None
    index = {name: j for j, name in enumerate(problem.feature_names)}
    columns = [[index[names[j]] for j in u if names[j] in index] for u in used]
    data: dict[str, Any] = {"part": part, "n_rows": n, "regression": regression}
    if matrix is not None:
        raw = matrix.astype("<f4" if regression else np.uint8).tobytes()
        data["predictions"] = {"members": len(predicted), "data": base64.b64encode(raw).decode("ascii")}
        if regression:
            spread = matrix.max(axis=0) - matrix.min(axis=0)
            split = np.flatnonzero(spread > 1e-6 * max(1.0, float(np.abs(matrix).max())))
        else:
            split = np.flatnonzero((matrix != matrix[0][None, :]).any(axis=0))
        shown = split[:MAX_SAMPLE_ROWS]
        read = sorted({j for u in columns for j in u})
        source_rows = problem.test_index if part == "test" else problem.train_index
        separate_test = part == "test" and problem.test_index is None
        labels = (
            [float(v) for v in y[shown]]
            if regression
            else [printable(problem.classes[int(v)]) if problem.classes is not None else int(v) for v in y[shown]]
        )
        data["sample"] = {
            "at": [int(r) for r in shown],
            "rows": [int(r) + 1 for r in (shown if source_rows is None else np.asarray(source_rows)[shown])],
            "row_source": "the test file's" if separate_test else "the loaded data's (after data.where)",
            "split_rows": int(len(split)),
            "label": labels,
            "values": {names.index(problem.feature_names[j]): [_number(v) for v in X[shown, j]] for j in read},
        }
        if len(split) > len(shown):
            notes.append(
                f"values of {len(shown):,} of the {len(split):,} rows the members split on are in the page: the "
                "side by side view samples its rows from them"
            )
    weights = weights_of(problem, part)
    pairs = sum(len(u) for u in columns)
    Xr, yr, wr, reliance_rows = bounded_rows(X, y, weights, pairs)
    groups = {str(names.index(problem.feature_names[j])): [j] for j in sorted({j for u in columns for j in u})}
    ratios = member_reliance(models, [set(u) for u in columns], Xr, yr, groups, regression, wr)
    data["reliance"] = {k: [round(v, 6) for v in vs] for k, vs in ratios.items()}
    data["reliance_rows"] = reliance_rows
    if reliance_rows < n:
        notes.append(f"reliance on {reliance_rows:,} of {n:,} rows (sampled, seed 0) to bound its cost")
    if problem.classes is not None and not regression:
        data["classes"] = [printable(c) for c in problem.classes]
    return data


def explorer_document(details: dict[str, Any], members: Sequence[Any], registry: Registry) -> dict[str, Any]:
    """The JSON the page embeds (module docstring); ``members`` the run's kept members, best first
    (``RunStore.rashomon_members``)."""
    from glasswork.display.console import member_rules
    from glasswork.rashomon import decides_as
    from glasswork.rashomon.query import figures_of

    notes: list[str] = []
    like = decides_as((m.rank, m.fingerprint) for m in members)
    summary = details.get("rashomon") or {}
    count = int(summary.get("count") or len(members))
    if len(members) > MAX_MEMBERS:
        notes.append(f"the best {MAX_MEMBERS:,} of the {len(members):,} kept members are in the page")
        members = members[:MAX_MEMBERS]
    names, columns, used = _features_of(members, details)
    rows = []
    seen: dict[str, None] = {}
    for member, features in zip(members, used):
        figures = {k: v for k, v in figures_of(member.to_dict(with_model=False)).items() if v is not None}
        seen.update(dict.fromkeys(figures))
        rules = member_rules(member.model)
        rows.append(
            {
                "rank": member.rank,
                "rules": printable(
                    "; ".join(rules)
                    if rules
                    else " ".join((member.model_text or "").split())
                    or f"(kept as a summary) uses {', '.join(member.features) or 'no feature'}"
                ),
                "text": printable(member.model_text or "", newlines=True),
                "features": features,
                "f": figures,
                "like": like.get(member.rank),
            }
        )
    doc: dict[str, Any] = {
        "run": printable(str(details.get("run_id") or "")[:12]),
        "count": count,
        "kept": int(summary.get("kept") or len(members)),
        "complete": summary.get("complete") is True,
        "figures": figure_order(list(seen)),
        "columns_shown": table_figures(figure_order(list(seen)), details),
        "features": [printable(n) for n in names],
        "columns": {printable(c): js for c, js in sorted(columns.items())},
        "members": rows,
        "heatmap_members": HEATMAP_MEMBERS,
        "notes": notes,
    }
    from glasswork.data import load_again

    data = (details.get("spec") or {}).get("data")
    problem = load_again(data, details.get("spec_path"), details.get("data_fingerprint"))
    models = _models(members, details, registry) if not isinstance(problem, str) else problem
    if isinstance(problem, str) or isinstance(models, str):
        doc["no_rows"] = f"{models if isinstance(models, str) else problem}: no predictions, reliance or row comparison"
        return doc
    doc.update(_rows_document(problem, models, used, names, notes))
    return doc


def _asset(name: str) -> str:
    return resources.files("glasswork.display").joinpath(name).read_text(encoding="utf-8")


STYLE_FILE, SCRIPT_FILE = "explorer.css", "explorer.js"


def style() -> str:
    """The explorer's CSS, for the report's ``<style>``."""
    return _asset(STYLE_FILE)


SKELETON = """<h2 id=explorer>Set explorer</h2>
<p id=gx-about></p>
<noscript><p class=note>The set explorer runs in the page's own script; it is off in this browser.</p></noscript>
<div class=gx-controls>
<fieldset><legend>Keep the members whose figure</legend>
<label>figure <select id=gx-figure></select></label>
<label>is <select id=gx-op><option value=">=">&gt;=</option><option value="<=">&lt;=</option></select></label>
<label>value <input id=gx-value type=number step=any size=8></label>
<button type=button id=gx-add-figure>Add</button></fieldset>
<fieldset><legend>Keep the members that</legend>
<label><select id=gx-use-mode aria-label="use or avoid"><option value=uses>use</option>
<option value=avoids>avoid</option></select></label>
<label>feature or raw column <select id=gx-feature></select></label>
<button type=button id=gx-add-feature>Add</button></fieldset>
<ul id=gx-conditions aria-label="conditions in force"></ul>
<button type=button id=gx-clear>Clear the conditions</button>
</div>
<p id=gx-count role=status aria-live=polite></p>
<p class=note>The same choice on the command line: <code id=gx-where></code></p>
<p class=note>Sort by a column with its heading's button (again: the other way). In the table, the arrow
keys move between members; Enter or <kbd>a</kbd> makes the member A, <kbd>b</kbd> makes it B (below).
"Decides as": the best member that predicts every training row alike (lists written differently often
decide alike).</p>
<div class=gx-scroll><table id=gx-members class=model><thead><tr id=gx-head></tr></thead>
<tbody id=gx-body></tbody></table></div>
<h3>Features over the members shown</h3>
<p class=note id=gx-bars-note></p>
<table id=gx-bars><thead><tr><th>feature</th><th>used by</th><th></th><th>reliance min</th>
<th>reliance max</th><th id=gx-axis></th></tr></thead><tbody></tbody></table>
<h3>Two members side by side</h3>
<label>A <select id=gx-a></select></label> <label>B <select id=gx-b></select></label>
<div id=gx-compare></div>
<h3>Agreement between members</h3>
<p class=note id=gx-heat-note></p>
<div id=gx-heat></div>
"""


def explorer_section(details: dict[str, Any], members: Sequence[Any], registry: Registry) -> str:
    """The explorer's HTML: its controls, the embedded document and the script; empty when the
    set keeps no member."""
    if not members:
        return ""
    doc = explorer_document(details, members, registry)
    return (
        f"{SKELETON}<script type=application/json id=gx-data>{script_json(doc)}</script>"
        f"<script>{_asset(SCRIPT_FILE)}</script>"
    )
