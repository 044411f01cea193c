"""``glasswork sweep``: a grid, path or cross-validation, run and summarised."""

from __future__ import annotations

import json
import sys
from pathlib import Path
from typing import Any

import click
from glasswork.cli.app import (
    DB_OPTION,
    EXIT_INTERRUPTED,
    EXIT_INVALID,
    EXIT_SOLVER,
    cli,
    fail,
    fail_run,
    file_option,
    interrupted,
    overrides_option,
    print_spec_error,
)


@cli.command()
@click.argument("spec", type=click.Path(path_type=str))
@click.option(
    "--executor",
    default="local",
    show_default=True,
    metavar="local|dask|dask:local|dask:ADDRESS",
    help="Where the points run: a local process pool, or a dask.distributed cluster.",
)
@click.option("--scheduler", metavar="ADDRESS", help="Dask scheduler address (with --executor dask).")
@click.option("-j", "--jobs", type=click.IntRange(min=1), help="Worker processes (default: one per core).")
@overrides_option("Override a spec field.")
@DB_OPTION
@click.option("--no-store", is_flag=True, help="Do not record the runs (the sweep cannot be resumed).")
@click.option("--restart", is_flag=True, help="Run every point again, even those already finished.")
@file_option("--summary", "summary_file", help="Write the summary table to FILE.csv or FILE.parquet.")
@file_option("--plot", "plot_file", help="Draw the path (metric and model size against the swept value) to a PNG.")
@click.option("--dry-run", is_flag=True, help="Validate and list the points without running them.")
@click.option(
    "--json", "as_json", is_flag=True, help="Print the summary and every point as JSON (with --dry-run: the points)."
)
def sweep(
    spec: str,
    executor: str,
    scheduler: str | None,
    jobs: int | None,
    overrides: tuple[str, ...],
    db: str | None,
    no_store: bool,
    restart: bool,
    summary_file: Path | None,
    plot_file: Path | None,
    dry_run: bool,
    as_json: bool,
) -> None:
    """Run the grid, path or cross-validation in SPEC's sweep: section.

    Every point is validated before any runs. Running the same sweep again resumes it: points
    already finished are not run again (unless --restart).
    """
    from glasswork import sweep as sweeps
    from glasswork.display.console import fmt_gap, fmt_number, make_console
    from glasswork.hooks.extras import MissingExtra, require
    from glasswork.hooks.registry import get_registry
    from glasswork.spec.document import SpecError, apply_overrides, read_spec_document
    from glasswork.store import RunStore, StoreError, default_db_path
    from rich.table import Table

    try:  # a backend that is not installed stops the sweep before anything runs
        if executor == "dask" or executor.startswith("dask:"):
            require("dask", f"--executor {executor}")
        if plot_file is not None:
            require("plot", "--plot")
    except MissingExtra as exc:
        fail(f"{spec}: {exc}; nothing was run.", EXIT_INVALID, as_json=as_json)

    path = Path(spec)
    try:
        document, positions = read_spec_document(path)
        apply_overrides(document, overrides)
        plan = sweeps.expand(document, get_registry(), file=spec, positions=positions, path=path.resolve())
    except SpecError as exc:
        print_spec_error(exc)
        fail(
            f"{spec}: invalid sweep ({len(exc.issues)} error(s)); nothing was run.",
            EXIT_INVALID,
            as_json=as_json,
            extra={"issues": [i.to_dict() for i in exc.issues]},
        )
    except KeyboardInterrupt:
        interrupted(f"{spec}: interrupted while reading the sweep; nothing was run.", as_json=as_json)
    if dry_run:
        if as_json:
            listing = {"sweep_id": plan.sweep_id, "metric": plan.metric, "points": [p.to_dict() for p in plan.points]}
            click.echo(json.dumps(listing, indent=2, default=str))
        else:
            for point in plan.points:
                click.echo(f"{point.index:>4}  {point.label()}")
        click.echo(f"{len(plan.points)} point(s) in sweep {plan.sweep_id}", err=True)
        return

    store = None
    if not no_store and (db is not None or plan.loaded.spec.store.enabled):
        try:
            store = RunStore(default_db_path(db, plan.loaded.spec.store.path, plan.loaded.base_dir)).open()
        except StoreError as exc:
            fail_run(spec, exc, as_json=as_json)
        except KeyboardInterrupt:
            interrupted(f"{spec}: interrupted while opening the run store; nothing was run.", as_json=as_json)
    try:
        pool = sweeps.make_executor(executor, jobs=jobs, scheduler=scheduler)
    except Exception as exc:
        fail(f"{spec}: cannot start the {executor} executor: {exc}", EXIT_SOLVER, as_json=as_json)

    total = len(plan.points)
    done = [0]

    def progress(outcome: Any) -> None:
        done[0] += 1
        result = outcome.result
        if result:
            what = f"{result['status']} {fmt_number(result['objective'])}"
        else:
            what = f"stopped: {outcome.message}" if outcome.stopped else f"failed: {outcome.error}"
        click.echo(f"[{done[0]}/{total - len(report_resumed)}] {outcome.point.label()}: {what}", err=True)

    report_resumed: dict[str, str] = store.sweep_points(plan.sweep_id) if (store and not restart) else {}
    if report_resumed:
        click.echo(f"resuming sweep {plan.sweep_id}: {len(report_resumed)} of {total} point(s) already done", err=True)
    try:
        report = sweeps.run_sweep(plan, pool, store=store, restart=restart, on_outcome=progress)
    except KeyboardInterrupt:
        fail(
            f"{spec}: sweep abandoned by a second interrupt; finished points are stored, run it again to resume.",
            EXIT_INTERRUPTED,
            as_json=as_json,
        )
    finally:
        pool.close()

    rows = sweeps.summarise(report, store)
    if summary_file is not None:
        sweeps.write_summary(rows, summary_file)
        click.echo(f"wrote {summary_file}", err=True)
    if plot_file is not None:
        try:
            sweeps.plot_path(report, rows, plot_file)
            click.echo(f"wrote {plot_file}", err=True)
        except ValueError as exc:
            click.echo(f"no plot: {exc}", err=True)
    if as_json:
        click.echo(
            json.dumps(
                {
                    "sweep_id": plan.sweep_id,
                    "metric": plan.metric,
                    "points": total,
                    "resumed": len(report.resumed),
                    "failed": [{"point": o.point.to_dict(), "error": o.error} for o in report.failed],
                    "stopped_before_search": [
                        {"point": o.point.to_dict(), "status": o.stopped, "message": o.message}
                        for o in report.stopped_before_search
                    ],
                    "summary": [r.to_dict() for r in rows],
                },
                indent=2,
                default=str,
            )
        )
    else:
        table = Table(
            title=f"sweep {plan.sweep_id} ({plan.metric}, {'higher' if plan.maximise else 'lower'} is better)",
            title_justify="left",
        )
        names = list(plan.spec.grid) or ["point"]
        train = plan.metric.replace("test_", "train_", 1)
        metrics = [
            m
            for m in dict.fromkeys(("objective", train, plan.metric, "model_size"))
            if any(m in r.values for r in rows)
        ]
        for name in ["", *names, "status", *metrics, "gap"]:
            table.add_column(
                name.replace("objective.", "").replace("constraints.", "").replace("search.", ""),
                justify="left" if name in ("", "status") else "right",
            )
        for row in rows:
            cells = ["*" if row.best else ""]
            cells += [fmt_number(row.coords.get(n)) for n in names] if plan.spec.grid else ["base"]
            cells.append(", ".join(f"{k} {v}" for k, v in sorted(row.statuses.items())))
            for m in metrics:
                mean, sd = row.values.get(m, (None, None))
                cells.append(
                    "-"
                    if mean is None
                    else (f"{fmt_number(mean, 4)} ± {fmt_number(sd, 2)}" if plan.spec.folds else fmt_number(mean, 4))
                )
            proven = set(row.statuses) == {"optimal"}
            cells.append(
                fmt_gap(
                    row.values.get("objective", (None,))[0],
                    row.values.get("lower_bound", (None,))[0],
                    "optimal" if proven else None,
                )
            )
            table.add_row(*cells, style="bold green" if row.best else None)
        table.caption = "* the best point" + (
            f"; mean ± sd over {plan.spec.folds} folds, the gap of the mean objective to the mean bound"
            if plan.spec.folds
            else ""
        )
        make_console().print(table)
        for outcome in report.failed:
            click.echo(f"failed: {outcome.point.label()}: {outcome.error}", err=True)
        for outcome in report.stopped_before_search:
            click.echo(f"stopped: {outcome.point.label()}: {outcome.message}", err=True)
    if report.interrupted:
        click.echo(f"{spec}: interrupted; the points that finished are stored. Run it again to resume.", err=True)
        sys.exit(EXIT_INTERRUPTED)
    if report.failed:
        sys.exit(EXIT_SOLVER)
