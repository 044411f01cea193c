"""``glasswork tui --web``: the real command serves a page that a real HTTP request to localhost
gets (and the script it names), Ctrl-C stops it with exit 130, the browser's terminal is the same
UI on the same store (a store path with spaces and shell metacharacters included, which reaches
the served command as one argument and runs nothing), and without textual-serve the command
says which extra to install (exit 2). Every server is bounded in time and killed at the end."""

from __future__ import annotations

import json
import os
import re
import shutil
import signal
import socket
import subprocess
import sys
import time
import urllib.request
from collections.abc import Iterator
from pathlib import Path

import pytest
from tui_fixtures import history_db, utc  # noqa: F401 (fixtures)

from glasswork.quoting import shell_command
from glasswork.tui.web import exposed, page_url, served_argv, served_command

pytest.importorskip("textual_serve")
HOSTILE_FOLDER = "st ore $(touch pwned) ; 'q\" `touch tick` & x"
STARTUP = 30.0  # seconds a server may take to say where it listens (a loaded machine)


def free_port() -> int:
    with socket.socket() as probe:
        probe.bind(("127.0.0.1", 0))
        return int(probe.getsockname()[1])


def start(*args: str, cwd: Path) -> subprocess.Popen[str]:
    env = {k: v for k, v in os.environ.items() if k != "GLASSWORK_DB"}
    return subprocess.Popen(
        [sys.executable, "-m", "glasswork", "tui", *args],
        cwd=cwd,
        env=env,
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
    )


def wait_for_url(proc: subprocess.Popen[str], printed: list[str] | None = None) -> str:
    """The address the server prints once it listens (fails the test after ``STARTUP`` s); the
    lines printed up to it go to ``printed``."""
    assert proc.stdout is not None
    deadline = time.monotonic() + STARTUP
    line = ""
    while time.monotonic() < deadline:
        line = proc.stdout.readline()
        if printed is not None and line:
            printed.append(line)
        found = re.search(r"serving the terminal UI at (http://\S+) ", line)
        if found:
            return found.group(1)
        if not line and proc.poll() is not None:
            break
    raise AssertionError(f"the server said no address: {line!r} {proc.stderr.read() if proc.stderr else ''}")


@pytest.fixture
def servers() -> Iterator[list[subprocess.Popen[str]]]:
    """Servers a test starts: each killed at the end, whatever happened."""
    started: list[subprocess.Popen[str]] = []
    yield started
    for proc in started:
        if proc.poll() is None:
            proc.kill()
        proc.wait(timeout=10)


def test_the_served_command_is_the_tui_on_the_same_store_quoted_for_the_shell(tmp_path: Path) -> None:
    db = tmp_path / HOSTILE_FOLDER / "runs.duckdb"
    argv = served_argv(str(db))
    assert argv == [sys.executable, "-m", "glasswork", "tui", "--db", str(db.absolute())]
    # what the shell textual-serve starts makes of the command line: the same words, nothing run
    echo = [sys.executable, "-c", "import json, sys; print(json.dumps(sys.argv[1:]))", *argv[1:]]
    said = subprocess.run(["sh", "-c", shell_command(echo)], cwd=tmp_path, capture_output=True, text=True, timeout=60)
    assert said.returncode == 0, said.stderr
    assert json.loads(said.stdout) == argv[1:]
    assert not (tmp_path / "pwned").exists() and not (tmp_path / "tick").exists()
    assert served_command(str(db)) == shell_command(argv)
    with pytest.raises(ValueError, match="NUL"):
        shell_command(["a\x00b"])


def test_the_address_printed_puts_an_ipv6_host_in_brackets() -> None:
    assert page_url("127.0.0.1", 8000) == "http://127.0.0.1:8000"
    assert page_url("::1", 8123) == "http://[::1]:8123"


def test_only_a_loopback_host_is_said_to_keep_other_machines_out() -> None:
    for host in ("127.0.0.1", "127.0.0.2", "::1", "localhost"):
        assert not exposed(host), host
    for host in ("0.0.0.0", "::", "192.168.1.10", "example.org"):
        assert exposed(host), host


def test_the_server_answers_a_get_on_its_page_and_ctrl_c_stops_it(tmp_path: Path, servers: list) -> None:
    port = free_port()
    proc = start("--web", "--port", str(port), "--db", str(tmp_path / "runs.duckdb"), cwd=tmp_path)
    servers.append(proc)
    printed: list[str] = []
    url = wait_for_url(proc, printed)
    assert url == f"http://127.0.0.1:{port}"  # loopback unless --host says otherwise
    assert printed == [f"glasswork: serving the terminal UI at {url} (Ctrl-C stops it)\n"]  # its first line
    with urllib.request.urlopen(url + "/", timeout=10) as response:
        assert response.status == 200
        page = response.read().decode()
    assert "<div>glasswork</div>" in page  # the name the page shows while the terminal connects
    assert f'ws://127.0.0.1:{port}/ws"' in page  # the terminal's socket, on the same server
    script = re.search(r'<script src="([^"]+\.js)"', page)
    assert script is not None
    with urllib.request.urlopen(script.group(1), timeout=10) as response:  # the page's own script loads
        assert response.status == 200
    proc.send_signal(signal.SIGINT)
    out, err = proc.communicate(timeout=20)
    assert proc.returncode == 130, err
    assert "glasswork tui --web: stopped." in err and "Traceback" not in err
    assert out == "", out  # and nothing more: no banner, no line per request


@pytest.mark.slow
def test_the_browsers_terminal_is_the_tui_on_the_same_store(
    history_db: Path,  # noqa: F811
    tmp_path: Path,
    servers: list,
) -> None:
    """Through the page's web socket, the served process draws the history of the store the
    command was given, found at a path full of shell metacharacters."""
    import asyncio

    import aiohttp

    folder = tmp_path / HOSTILE_FOLDER
    folder.mkdir()
    db = folder / "runs.duckdb"
    shutil.copy(history_db, db)
    port = free_port()
    proc = start("--web", "--port", str(port), "--db", str(db), cwd=tmp_path)
    servers.append(proc)
    url = wait_for_url(proc)

    alive: list[int] = []

    async def drawn() -> str:
        seen = b""
        async with aiohttp.ClientSession() as session:
            async with session.ws_connect(f"{url}/ws?width=160&height=40") as ws:
                deadline = time.monotonic() + 60
                while b"compas rule list" not in seen and time.monotonic() < deadline:
                    try:
                        message = await ws.receive(timeout=5)
                    except asyncio.TimeoutError:
                        continue
                    if message.type == aiohttp.WSMsgType.BINARY:
                        seen += message.data
                    elif message.type in (aiohttp.WSMsgType.CLOSE, aiohttp.WSMsgType.CLOSED):
                        break
                alive.extend(serving(db))  # the tab's own glasswork tui, on the store given
        return seen.decode("utf-8", "replace")

    screen = asyncio.run(drawn())
    assert "compas rule list" in screen and "risk card" in screen  # the store's runs, in the history
    assert alive
    assert not (tmp_path / "pwned").exists() and not (tmp_path / "tick").exists()
    proc.send_signal(signal.SIGTERM)  # stops it as Ctrl-C does
    _, err = proc.communicate(timeout=20)
    assert proc.returncode == 130, err
    deadline = time.monotonic() + 10
    while serving(db) and time.monotonic() < deadline:  # the tab's process ends with its page
        time.sleep(0.1)
    assert serving(db) == []


def serving(db: Path) -> list[int]:
    """The processes whose command line names ``db`` (the served UI of a tab)."""
    found = []
    for entry in Path("/proc").iterdir():
        try:
            words = (entry / "cmdline").read_bytes().split(b"\0")
        except OSError:
            continue
        if entry.name.isdigit() and os.fsencode(str(db)) in words:
            found.append(int(entry.name))
    return found


def test_a_taken_port_is_exit_2_with_the_reason(tmp_path: Path) -> None:
    with socket.socket() as taken:
        taken.bind(("127.0.0.1", 0))
        taken.listen()
        port = taken.getsockname()[1]
        proc = start("--web", "--port", str(port), "--db", str(tmp_path / "runs.duckdb"), cwd=tmp_path)
        _, err = proc.communicate(timeout=60)
    assert proc.returncode == 2, err
    assert f"cannot listen on http://127.0.0.1:{port}" in err and "choose another --host or --port" in err
    assert "Traceback" not in err


def test_a_host_that_is_no_address_here_is_exit_2_and_shown_inert(tmp_path: Path) -> None:
    proc = start("--web", "--host", "\x1b[31mno.such.host.invalid", "--db", str(tmp_path / "runs.duckdb"), cwd=tmp_path)
    _, err = proc.communicate(timeout=60)
    assert proc.returncode == 2, err
    assert "cannot listen on http://\\x1b[31mno.such.host.invalid:8000" in err and "\x1b" not in err


def test_host_and_port_without_web_are_a_usage_error(tmp_path: Path) -> None:
    from click.testing import CliRunner

    from glasswork.cli import cli

    result = CliRunner().invoke(cli, ["tui", "--port", "9000", "--db", str(tmp_path / "runs.duckdb")])
    assert result.exit_code == 2
    assert "--port apply with --web only" in result.stderr


def test_without_textual_serve_the_command_names_the_web_extra(tmp_path: Path) -> None:
    from test_extras import run_blocked

    proc = run_blocked("textual_serve", "tui", "--web", "--db", str(tmp_path / "runs.duckdb"), cwd=tmp_path)
    assert proc.returncode == 2, proc.stdout + proc.stderr
    assert proc.stderr.strip().splitlines() == [
        "glasswork tui --web needs textual_serve, not installed here: pip install 'glasswork[web]'"
    ]
    assert not (tmp_path / "runs.duckdb").exists()
