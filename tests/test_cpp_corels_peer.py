"""bench/peers/cpp_corels.py: running the reference C++ CORELS tool once and reading how it ended.

The tool itself is GPL-3.0 and not built here: each test writes a fake binary (a shell script) that
prints what the real tool prints in that case, and runs it through ``cpp_corels.run`` under GNU time,
as the benchmark does."""

from __future__ import annotations

import importlib.util
import math
import os
import shlex
import signal
import sys
import time
from pathlib import Path
from typing import Any

import pytest

BENCH = Path(__file__).resolve().parents[1] / "bench" / "peers" / "cpp_corels.py"
_spec = importlib.util.spec_from_file_location("cpp_corels", BENCH)
assert _spec is not None and _spec.loader is not None
peer = importlib.util.module_from_spec(_spec)
sys.modules["cpp_corels"] = peer
_spec.loader.exec_module(peer)

needs_time = pytest.mark.skipif(
    not peer.GNU_TIME.exists(), reason=f"{peer.GNU_TIME} (GNU time, Debian package 'time') is not installed"
)

LAM = 0.01
RULES = ["if ({priors:>3}) then ({recidivate:1})", "else if ({age:<26}) then ({recidivate:1})", "else ({recidivate:0})"]


def finished(ending: str, rules: list[str] = RULES, objective: str = "0.3253521127", evaluated: int = 48213) -> str:
    """Standard output of a run that ended, in the order the tool prints it: ``minimum objective``
    (10 decimals) long before ``final min_objective`` (5 decimals, which the reader must not take)."""
    return "\n".join(
        [
            "RUNNING 1 RULES",
            ending,
            "TREE mem usage: 1024",
            "Deleting queue elements and corresponding nodes in the cache,since they may not be reachable",
            "",
            f"minimum objective: {objective}",
            "final num_nodes: 17",
            f"final num_evaluated: {evaluated}",
            "final min_objective: 0.32535",
            "final accuracy: 0.69465",
            "",
            "OPTIMAL RULE LIST",
            *rules,
            "",
            "final total time: 1.234567",
            "",
        ]
    )


def fake_tool(tmp_path: Path, body: str) -> Path:
    """An executable shell script standing in for the tool; it records its arguments and directory."""
    record = tmp_path / "called"
    path = tmp_path / "corels"
    path.write_text(
        f'#!/bin/sh\nprintf "%s\\n" "$@" > {shlex.quote(str(record))}\npwd >> {shlex.quote(str(record))}\n{body}'
    )
    path.chmod(0o755)
    return path


def printing(tmp_path: Path, stdout: str, stderr: str = "", exit_code: int = 0, work: str = "") -> Path:
    """A fake tool that does ``work``, prints ``stdout`` and ``stderr`` byte for byte (no shell reads
    them) and exits."""
    out, err = tmp_path / "says.out", tmp_path / "says.err"
    out.write_bytes(stdout.encode())
    err.write_bytes(stderr.encode())
    return fake_tool(
        tmp_path, f"{work}\ncat {shlex.quote(str(out))}\ncat {shlex.quote(str(err))} >&2\nexit {exit_code}\n"
    )


def run(binary: Path, tmp_path: Path, time_limit: float = 20.0, memory_limit: int = 0) -> Any:
    """``cpp_corels.run`` on ``compas_train`` at λ = 0.01; a ``CppRun`` (typed ``Any``: mypy cannot
    follow a module loaded from a file)."""
    return peer.run(binary, LAM, tmp_path / "compas_train", time_limit, memory_limit)


@needs_time
@pytest.mark.parametrize(("ending", "status"), [(peer.CERTIFIED, "certified"), (peer.NODE_CAP_REACHED, "node cap")])
def test_a_finished_run_gives_its_ending_objective_evaluations_and_list(
    tmp_path: Path, ending: str, status: str
) -> None:
    busy = "awk 'BEGIN { for (i = 0; i < 4000000; i++) s += i }'"  # about 0.1 s of CPU
    result = run(printing(tmp_path, finished(ending), work=busy), tmp_path)
    assert result.status == status
    assert result.certified is (status == "certified")
    assert result.objective == pytest.approx(0.3253521127, rel=0, abs=1e-12)
    assert result.evaluated == 48213
    assert result.own_time_s == pytest.approx(1.234567)
    assert result.rules == RULES
    # measured by GNU time: its peak (KiB to bytes; any process holds more than 100 kB) and its CPU time
    assert result.peak_rss > 100_000 and result.peak_rss % 1024 == 0
    assert 0.04 <= result.cpu_s < 20 and 0 < result.wall_s < 20
    # the command line it was given, and a working directory of its own with ../logs beside it
    base = tmp_path / "compas_train"
    expected = ["-r", repr(LAM), "-c", "2", "-p", "1", "-n", str(peer.NODE_CAP)]
    expected += [f"{base}.out", f"{base}.label", f"{base}.minor"]
    *args, workdir = (tmp_path / "called").read_text().splitlines()
    assert args == expected == result.command[1:]
    assert Path(workdir).name == "run" and not Path(workdir).parent.exists()  # removed after the run


def _gone(pid: int, within: float = 2.0) -> bool:
    """True once the process has ended (gone, or a zombie waiting for whoever adopted it)."""
    deadline = time.monotonic() + within
    while True:
        try:
            state = Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()[0]
        except (FileNotFoundError, ProcessLookupError):
            return True
        if state in ("Z", "X"):
            return True
        if time.monotonic() >= deadline:
            return False
        time.sleep(0.02)


@needs_time
def test_a_run_past_its_time_limit_is_stopped_with_every_process_it_started(tmp_path: Path) -> None:
    pids = tmp_path / "pids"
    body = f"sleep 30 &\necho $$ $! > {shlex.quote(str(pids))}\nwait\n"
    t0 = time.monotonic()
    result = run(fake_tool(tmp_path, body), tmp_path, time_limit=0.5)
    elapsed = time.monotonic() - t0
    tool, child = (int(p) for p in pids.read_text().split())
    try:
        assert elapsed < 5
        assert result.status == "stopped at 0.5 s"
        assert not result.certified
        assert 0.5 <= result.wall_s < 5
        assert math.isnan(result.objective) and result.rules == [] and result.evaluated == -1
        assert _gone(tool), f"the fake tool (pid {tool}) is still running"
        assert _gone(child), f"the process the tool started (pid {child}) is still running"
    finally:  # a broken stop leaves them behind: do not let the failing test leave them running
        for pid in (tool, child):
            if not _gone(pid, within=0):
                os.kill(pid, signal.SIGKILL)


@needs_time
def test_bad_alloc_under_a_memory_limit_is_out_of_memory(tmp_path: Path) -> None:
    stderr = "terminate called after throwing an instance of 'std::bad_alloc'\n  what():  std::bad_alloc\n"
    binary = fake_tool(tmp_path, f"echo 'RUNNING 1 RULES'\nprintf %s {shlex.quote(stderr)} >&2\nkill -ABRT $$\n")
    result = run(binary, tmp_path, memory_limit=2**30)
    assert result.status == "out of memory at 1 GiB"
    assert math.isnan(result.objective) and result.rules == []
    # the same abort without a memory limit of ours is a failure, not "out of memory"
    unlimited = run(binary, tmp_path)
    assert unlimited.status.startswith("failed: exit 134: ") and "bad_alloc" in unlimited.status


@needs_time
def test_a_non_zero_exit_is_a_failure_naming_the_last_line_it_wrote(tmp_path: Path) -> None:
    result = run(printing(tmp_path, finished(peer.CERTIFIED), "error: cannot open compas_train.minor\n", 3), tmp_path)
    assert result.status == "failed: exit 3: error: cannot open compas_train.minor"
    assert math.isnan(result.objective) and result.rules == []
    # with nothing on standard error the last line of standard output is named
    quiet = run(printing(tmp_path, "RUNNING 1 RULES\nreading rules\n", "", 2), tmp_path)
    assert quiet.status == "failed: exit 2: reading rules"
    silent = run(printing(tmp_path, "", "", 2), tmp_path)
    assert silent.status == "failed: exit 2: no output"


@needs_time
@pytest.mark.parametrize(
    ("stdout", "reason"),
    [
        ("RUNNING 1 RULES\nreading rules\n", "neither that the queue emptied nor"),
        (finished(peer.CERTIFIED).replace("final num_evaluated: 48213\n", ""), "final num_evaluated"),
        (finished(peer.CERTIFIED).replace("minimum objective: 0.3253521127\n", ""), "minimum objective"),
        (finished(peer.CERTIFIED, objective="nan-ish"), "minimum objective"),
        (finished(peer.CERTIFIED).replace("final total time: 1.234567\n", ""), "final total time"),
    ],
    ids=["no ending", "no evaluations", "no objective", "objective not a number", "no total time"],
)
def test_output_that_cannot_be_read_is_a_failure_saying_what_is_missing(
    tmp_path: Path, stdout: str, reason: str
) -> None:
    result = run(printing(tmp_path, stdout), tmp_path)
    assert result.status.startswith("failed: ") and reason in result.status
    assert not result.certified and math.isnan(result.objective) and result.rules == []


@needs_time
def test_a_missing_binary_is_a_failure_naming_it(tmp_path: Path) -> None:
    absent = tmp_path / "no-such-corels"
    result = run(absent, tmp_path)
    assert result.status.startswith("failed: exit 127: ")
    assert str(absent) in result.status


def test_without_gnu_time_it_says_what_to_install(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(peer, "GNU_TIME", tmp_path / "no-time")
    with pytest.raises(FileNotFoundError, match="apt-get install time"):
        run(tmp_path / "corels", tmp_path)


@needs_time
def test_hostile_rule_names_come_back_as_the_text_printed(tmp_path: Path) -> None:
    planted = tmp_path / "PWNED"
    rules = [
        f"if ({{$(touch {planted})}}) then ({{yes}})",
        "else if ({\x1b[2J\x1b[31mred\x1b[0m`id`}) then ({no})",
        "else if ({a\x1cb\u2028c\x85d;rm -rf /}) then ({yes})",
        "else if ({first half",  # a name with a newline in it is printed over two lines
        "second half}) then ({no})",
        "else ({no})",
    ]
    result = run(printing(tmp_path, finished(peer.CERTIFIED, rules)), tmp_path)
    assert result.status == "certified"
    assert result.rules == rules
    assert not planted.exists()
