"""``glasswork monitor`` and ``glasswork tui`` (imported lazily by the CLI)."""

from __future__ import annotations

import sys
from pathlib import Path

import click
from click.core import ParameterSource
from glasswork.cli.app import DB_OPTION, EXIT_INVALID, EXIT_SOLVER, fail, fail_run, overrides_option
from glasswork.tui.web import DEFAULT_HOST, DEFAULT_PORT


@click.command()
@click.argument("target", metavar="SPEC|RUN")
@DB_OPTION
@click.option("--no-store", is_flag=True, help="Do not record this run in the run store (SPEC only).")
@overrides_option("Override a spec field, e.g. --set limits.time=60 (repeatable; SPEC only).")
def monitor(target: str, db: str | None, no_store: bool, overrides: tuple[str, ...]) -> None:
    """Watch a run live: run SPEC here, or follow RUN (an id prefix or 'latest') that another
    process runs. Keys: c cancels (the best model is kept), m shows the model, q closes, ? helps.
    """
    from glasswork.running.launch import Launch
    from glasswork.spec.document import SpecError
    from glasswork.store import RunStore, StoreError, StoreLocked, default_db_path
    from glasswork.tui.app import GlassworkApp
    from glasswork.tui.sources import FollowedRun, OwnedRun

    source: OwnedRun | FollowedRun
    if Path(target).is_file():
        try:
            launch = Launch.from_file(target, overrides, db=db, no_store=no_store)
            launch.open_store()  # a store that cannot be used stops us before the UI starts
        except (SpecError, StoreError) as exc:
            fail_run(target, exc)
        source = OwnedRun(launch)  # the data are loaded in the UI, which shows a data error
    else:
        if overrides or no_store:
            fail(f"{target}: --set and --no-store apply to a spec file, and there is no such file", EXIT_INVALID)
        path = default_db_path(db)
        if not path.exists():
            fail(f"{target}: not a spec file, and there is no run store at {path} to find a run in", EXIT_INVALID)
        store = RunStore(path)
        try:
            [run_id] = store.resolve([target])
            source = FollowedRun(store, run_id)  # StoreError: a stored id that cannot name a journal
        except StoreLocked as exc:
            fail(str(exc), EXIT_SOLVER)
        except StoreError as exc:
            fail(str(exc), EXIT_INVALID)
    app = GlassworkApp(db=db, source=source)
    app.run()
    if app.exit_summary is not None:  # as `glasswork run` ends: the run, its certificate and model
        from rich.console import Console

        Console(soft_wrap=False).print(app.exit_summary)
    sys.exit(app.return_code or 0)


@click.command()
@DB_OPTION
@click.option(
    "--web",
    is_flag=True,
    help="Serve the UI to a browser (needs the web extra: pip install 'glasswork[web]'); Ctrl-C stops it.",
)
@click.option("--host", default=DEFAULT_HOST, show_default=True, help="With --web: the address to listen on.")
@click.option(
    "--port",
    type=click.IntRange(1, 65535),
    default=DEFAULT_PORT,
    show_default=True,
    help="With --web: the port to listen on.",
)
def tui(db: str | None, web: bool, host: str, port: int) -> None:
    """Browse recorded runs: filter, open a run's model and bounds, compare two, launch a spec.

    Press ? on any screen for its keys. With --web, the same UI in a browser: open the address
    it prints.
    """
    if web:
        from glasswork.tui.web import serve

        serve(db, host, port)
    ctx = click.get_current_context()
    given = [f"--{name}" for name in ("host", "port") if ctx.get_parameter_source(name) is not ParameterSource.DEFAULT]
    if given:
        fail(f"{' and '.join(given)} apply with --web only", EXIT_INVALID)
    from glasswork.tui.app import GlassworkApp

    app = GlassworkApp(db=db)
    app.run()
    sys.exit(app.return_code or 0)
