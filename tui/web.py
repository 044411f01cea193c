"""``glasswork tui --web``: the same terminal UI served to a browser by ``textual-serve`` (the
``web`` extra). Each browser tab that opens the page starts its own ``glasswork tui --db STORE``
process, which the server drives through a web terminal; the store is the one the command was
given (``--db``, else ``$GLASSWORK_DB``, else ``./glasswork.duckdb``), as an absolute path.

``textual-serve`` runs that command through the shell, so it is built by
``glasswork.quoting.shell_command``: a store path with spaces, quotes, ``$(...)`` or ``;``
reaches the served command as the one argument it was. The server listens on ``127.0.0.1`` unless
``--host`` says otherwise: whoever reaches the port gets the whole UI (it can run specs and write
exports), with no password.
"""

from __future__ import annotations

import asyncio
import logging
import signal
import sys
from typing import Any, NoReturn

import click
from glasswork.cli.app import EXIT_INVALID, EXIT_OK, fail, interrupted

DEFAULT_HOST = "127.0.0.1"
DEFAULT_PORT = 8000


def served_argv(db: str | None) -> list[str]:
    """The command each browser tab runs: this interpreter's ``glasswork tui`` on the same store."""
    from glasswork.store import default_db_path

    return [sys.executable, "-m", "glasswork", "tui", "--db", str(default_db_path(db).absolute())]


def served_command(db: str | None) -> str:
    """``served_argv`` as the shell command line ``textual-serve`` runs."""
    from glasswork.quoting import shell_command

    return shell_command(served_argv(db))


def exposed(host: str) -> bool:
    """Whether listening on ``host`` lets other machines in (anything but a loopback address)."""
    import ipaddress

    if host.strip("[]").lower() in ("localhost", "localhost."):
        return False
    try:
        return not ipaddress.ip_address(host.strip("[]")).is_loopback
    except ValueError:  # a host name: it may resolve to any interface
        return True


def page_url(host: str, port: int) -> str:
    """The address a browser opens (an IPv6 host in brackets)."""
    shown = f"[{host}]" if ":" in host and not host.startswith("[") else host
    return f"http://{shown}:{port}"


def serve(db: str | None, host: str, port: int) -> NoReturn:
    """Serve the UI until Ctrl-C (or SIGTERM): exit 130 then, as every command stopped so.
    Without ``textual-serve``: exit 2 and the ``pip install`` line; a port that cannot be
    listened on: exit 2 and why."""
    from glasswork.hooks.extras import MissingExtra, require

    try:
        require("web", "glasswork tui --web")
    except MissingExtra as exc:
        fail(str(exc), EXIT_INVALID)
    from textual_serve.server import Server

    from glasswork.quoting import terminal_text

    url = page_url(host, port)

    class GlassworkServer(Server):
        """textual-serve's server, saying where it serves once it listens, and how it was stopped."""

        stopped = False

        def request_exit(self) -> None:
            self.stopped = True
            super().request_exit()

        async def on_startup(self, app: Any) -> None:
            """Nothing: textual-serve's banner would say where it serves before it listens (and
            print the command line); ``announce`` says it once the socket is open."""

        def serve(self, debug: bool = False) -> None:
            """``Server.serve`` with the address printed once the socket listens (aiohttp's
            ``print`` hook, which textual-serve silences), and a loop of its own."""
            from aiohttp import web

            self.debug = debug
            self.initialize_logging()
            logging.getLogger("aiohttp.access").setLevel(logging.WARNING)  # not a line per request
            loop = asyncio.new_event_loop()
            for signum in (signal.SIGINT, signal.SIGTERM):
                try:
                    loop.add_signal_handler(signum, self.request_exit)
                except NotImplementedError:  # Windows: Ctrl-C is a KeyboardInterrupt
                    pass
            web.run_app(
                self._make_app(),
                host=self.host,
                port=self.port,
                handle_signals=False,
                loop=loop,
                print=lambda *_: announce(),
            )

    def announce() -> None:
        click.echo(f"glasswork: serving the terminal UI at {url} (Ctrl-C stops it)")
        if exposed(host):
            click.echo(
                f"glasswork: warning: {terminal_text(host)} is not this machine's loopback address: anyone who "
                "reaches the port can use the UI (run specs, read the store, write exports); there is no password",
                err=True,
            )
        sys.stdout.flush()

    server = GlassworkServer(served_command(db), host=host, port=port, title="glasswork", public_url=url)
    try:
        server.serve()
    except OSError as exc:  # the port is taken, the host is not an address of this machine
        why = terminal_text(f"cannot listen on {url}: {exc.strerror or exc}")
        fail(f"glasswork tui --web: {why}; choose another --host or --port", EXIT_INVALID)
    if server.stopped:
        interrupted("glasswork tui --web: stopped.")
    sys.exit(EXIT_OK)
