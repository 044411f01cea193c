"""A sweep's results: what it did (``SweepReport``: every point's outcome), mean and sd across
folds per grid point, the best point, and the summary as a table file or a plot of the path."""

from __future__ import annotations

import json
import math
import statistics
from collections.abc import Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING, Any

from glasswork.fairness.audit import headline
from glasswork.hooks.extras import require

if TYPE_CHECKING:
    from glasswork.sweep.plan import Sweep
    from glasswork.sweep.workers import PointOutcome


@dataclass
class SweepReport:
    """What a sweep did: every point's outcome (new or resumed), and the summary rows."""

    sweep: Sweep
    outcomes: list[PointOutcome] = field(default_factory=list)
    resumed: dict[str, str] = field(default_factory=dict)  # point key -> run id already stored
    interrupted: bool = False

    @property
    def failed(self) -> list[PointOutcome]:
        return [o for o in self.outcomes if o.result is None and o.stopped is None]

    @property
    def stopped_before_search(self) -> list[PointOutcome]:
        """The points their limit stopped while their data were read: no model, not recorded."""
        return [o for o in self.outcomes if o.stopped is not None]


@dataclass
class SummaryRow:
    """One grid point, aggregated over its folds."""

    coords: dict[str, Any]
    runs: int
    statuses: dict[str, int]
    values: dict[str, tuple[float, float]]  # name -> (mean, sd)
    best: bool = False

    def to_dict(self) -> dict[str, Any]:
        out: dict[str, Any] = {
            **self.coords,
            "runs": self.runs,
            "status": ", ".join(f"{k} {v}" for k, v in sorted(self.statuses.items())),
        }
        for name, (mean, sd) in self.values.items():
            out[f"{name}_mean"] = mean
            out[f"{name}_sd"] = sd
        out["best"] = self.best
        return out


def summarise(report: SweepReport, store: Any = None) -> list[SummaryRow]:
    """Mean and sd across folds of objective, proven gap, metrics and model size, per grid point.

    Points resumed from the store are read back from it, so a resumed sweep's summary covers
    every point, not just the ones run this time.
    """
    results: dict[str, list[dict[str, Any] | None]] = {}
    coords_of: dict[str, dict[str, Any]] = {}
    by_key = {p.key: p for p in report.sweep.points}
    for outcome in report.outcomes:
        group = json.dumps(outcome.point.coords, sort_keys=True, default=str)
        coords_of[group] = outcome.point.coords
        results.setdefault(group, []).append(
            outcome.result if outcome.stopped is None else {"status": outcome.stopped}  # stopped, no model
        )
    if store is not None:
        for key, run_id in report.resumed.items():
            point = by_key.get(key)
            if point is None:
                continue
            doc = store.details(run_id)
            stored = {
                "status": doc["status"],
                "objective": doc["objective"],
                "lower_bound": doc.get("lower_bound"),
                "gap": doc.get("gap"),
                "metrics": doc["metrics"],
                "stats": doc["stats"],
                "fairness": doc.get("fairness"),
            }
            group = json.dumps(point.coords, sort_keys=True, default=str)
            coords_of[group] = point.coords
            results.setdefault(group, []).append(stored)
    rows = []
    for group, items in results.items():
        statuses: dict[str, int] = {}
        series: dict[str, list[float]] = {}
        for result in items:
            if result is None:
                statuses["failed"] = statuses.get("failed", 0) + 1
                continue
            statuses[result["status"]] = statuses.get(result["status"], 0) + 1
            values = {
                "objective": result.get("objective"),
                "lower_bound": result.get("lower_bound"),
                "gap": result.get("gap"),
                "model_size": (result.get("stats") or {}).get("model_size"),
                **(result.get("metrics") or {}),
                **headline(result.get("fairness")),  # the fairness audit's figures, when the spec asks for one
            }
            for name, value in values.items():
                if isinstance(value, (int, float)) and not isinstance(value, bool) and math.isfinite(value):
                    series.setdefault(name, []).append(float(value))
        values = {name: (statistics.fmean(v), statistics.stdev(v) if len(v) > 1 else 0.0) for name, v in series.items()}
        rows.append(SummaryRow(coords_of[group], len(items), statuses, values))
    metric = report.sweep.metric
    scored = [r for r in rows if metric in r.values]
    if scored:
        pick = max if report.sweep.maximise else min
        pick(scored, key=lambda r: r.values[metric][0]).best = True
    order = list(report.sweep.spec.grid)
    rows.sort(key=lambda r: tuple(_sortable(r.coords.get(k)) for k in order))
    return rows


def _sortable(value: Any) -> tuple[int, Any]:
    return (0, value) if isinstance(value, (int, float)) else (1, str(value))


def write_summary(rows: Sequence[SummaryRow], path: Path) -> None:
    """CSV or Parquet (by extension), through DuckDB so no data-frame library is needed."""
    import duckdb
    import numpy as np

    records = [r.to_dict() for r in rows]
    columns = list(dict.fromkeys(k for r in records for k in r))
    data = {}
    for column in columns:
        values = [r.get(column) for r in records]
        if all(isinstance(v, (int, float)) and not isinstance(v, bool) or v is None for v in values):
            data[column] = np.array([np.nan if v is None else float(v) for v in values])
        else:
            data[column] = np.array([None if v is None else str(v) for v in values], dtype=object)
    fmt = "parquet" if path.suffix.lower() == ".parquet" else "csv"
    con = duckdb.connect()
    con.register("summary", data)
    target = str(path).replace("'", "''")
    con.execute(f"COPY summary TO '{target}' (FORMAT {fmt}{', HEADER true' if fmt == 'csv' else ''})")
    con.close()


def plot_path(report: SweepReport, rows: Sequence[SummaryRow], path: Path) -> None:
    """The regularization path: the chosen metric and the model size against the swept value."""
    require("plot", "--plot")
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    grid = list(report.sweep.spec.grid)
    if not grid:
        raise ValueError("--plot needs a grid to plot against")
    x_key, others = grid[0], grid[1:]
    metric = report.sweep.metric
    fig, ax = plt.subplots(figsize=(7, 4.2), dpi=120)
    size_ax = ax.twinx()
    groups: dict[str, list[SummaryRow]] = {}
    for row in rows:
        groups.setdefault(", ".join(f"{k}={row.coords.get(k)}" for k in others), []).append(row)
    for label, members in groups.items():
        members = [m for m in members if isinstance(m.coords.get(x_key), (int, float))]
        members.sort(key=lambda m: m.coords[x_key])
        xs = [m.coords[x_key] for m in members]
        if metric in (members[0].values if members else {}):
            ax.errorbar(
                xs,
                [m.values[metric][0] for m in members],
                yerr=[m.values[metric][1] for m in members],
                marker="o",
                capsize=3,
                label=f"{metric} {label}".strip(),
            )
        if members and "model_size" in members[0].values:
            size_ax.plot(
                xs,
                [m.values["model_size"][0] for m in members],
                linestyle="--",
                marker="s",
                color="tab:orange",
                alpha=0.7,
                label=f"model size {label}".strip(),
            )
    if all(isinstance(x := r.coords.get(x_key), (int, float)) and x > 0 for r in rows):
        values = sorted({r.coords[x_key] for r in rows})
        if len(values) > 2 and values[-1] / values[0] >= 20:
            ax.set_xscale("log")
    ax.set_xlabel(x_key)
    ax.set_ylabel(metric + (" (mean ± sd over folds)" if report.sweep.spec.folds else ""))
    size_ax.set_ylabel("model size")
    handles = ax.get_legend_handles_labels()
    size_handles = size_ax.get_legend_handles_labels()
    ax.legend(handles[0] + size_handles[0], handles[1] + size_handles[1], fontsize=8, loc="best")
    ax.set_title(f"{report.sweep.loaded.spec.name}: {metric} and model size along {x_key}")
    fig.tight_layout()
    fig.savefig(path)
    plt.close(fig)
