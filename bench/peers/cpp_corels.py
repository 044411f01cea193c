"""Run the reference C++ CORELS command-line tool once and read what it says, for the benchmarks'
side-by-side figures (the peer measured in the same run as glasswork, not copied from a page).

The binary is built by ``bench/peers/build_cpp_corels.sh`` (without GMP: the GMP build misreads the
``.minor`` file and never certifies COMPAS). CORELS is GPL-3.0: this module only runs the binary a
maintainer built and reads its printed output; none of its code is here.

Settings are those of the peer figures: the lower bound policy (``-c 2``), the prefix permutation
map (``-p 1``) and a node cap (``-n``) far above what any certified COMPAS run stores, so the search
ends only when its queue is empty (certified) or at the time limit. The tool writes a log file to
``../logs/`` relative to its working directory, so each run gets a temporary directory of its own.
Wall time is the whole process (parsing its text input included). Peak memory is the tool's
``ru_maxrss`` as GNU ``time`` (``/usr/bin/time``) reports it, with its user and system CPU time:
``os.wait4`` on a child of this Python process would not do, since Linux carries the high-water
mark of the process that forked over an ``exec``, so the tool would inherit the interpreter's
resident memory as its floor; ``time`` forks it from a process of about a megabyte.
"""

from __future__ import annotations

import math
import os
import re
import resource
import signal
import subprocess
import tempfile
import time
from dataclasses import dataclass, field
from pathlib import Path
from types import FrameType

GNU_TIME = Path("/usr/bin/time")
NODE_CAP = 2_000_000_000  # the tool's -n is a C int; certified COMPAS runs store far fewer nodes
LOWER_BOUND_POLICY = "2"  # -c 2: curious_lb, the queue ordered by lower bound
PREFIX_PERMUTATION_MAP = "1"  # -p 1

CERTIFIED = "Exited because queue empty"
NODE_CAP_REACHED = "Exited because max number of nodes in the tree was reached"


@dataclass
class CppRun:
    """One run of the tool: how it ended, its figures and what it printed about its list."""

    command: list[str]
    status: str  # "certified", "node cap", "stopped at N s", "out of memory", "failed: ..."
    wall_s: float
    cpu_s: float  # user + system seconds, as GNU time reports them (to 0.01 s)
    peak_rss: int  # bytes
    load: tuple[float, float]  # 1-minute load average before and after
    objective: float = math.nan
    evaluated: int = -1
    own_time_s: float = math.nan  # the tool's "final total time" (after reading its input)
    rules: list[str] = field(default_factory=list)

    @property
    def certified(self) -> bool:
        return self.status == "certified"


def command(binary: Path, lam: float, base: Path) -> list[str]:
    """The tool's command line on ``base.{out,label,minor}`` at regularisation ``lam``."""
    files = [str(base.with_name(base.name + ext)) for ext in (".out", ".label", ".minor")]
    return [
        str(binary),
        "-r",
        repr(lam),
        "-c",
        LOWER_BOUND_POLICY,
        "-p",
        PREFIX_PERMUTATION_MAP,
        "-n",
        str(NODE_CAP),
        *files,
    ]


@dataclass(frozen=True)
class Reading:
    """What a finished run printed: how it exited, its objective (10 decimals), evaluations, the
    tool's own time and its list as it prints it."""

    ending: str  # "certified" or "node cap"
    objective: float
    evaluated: int
    own_time_s: float
    rules: list[str]


def _number(lines: list[str], pattern: str) -> str:
    for line in lines:
        match = re.match(pattern, line)
        if match:
            return match.group(1)
    raise ValueError(f"no line matching {pattern!r} in its output")


def read_output(text: str) -> Reading:
    """Read the tool's standard output; ``ValueError`` when it lacks a line every finished run prints."""
    # the tool ends its lines with "\n" alone; splitlines would also cut a rule name at \x1c or U+2028
    lines = text.split("\n")
    if CERTIFIED in lines:
        ending = "certified"
    elif NODE_CAP_REACHED in lines:
        ending = "node cap"
    else:
        raise ValueError("its output says neither that the queue emptied nor that the node cap was reached")
    rules: list[str] = []
    if "OPTIMAL RULE LIST" in lines:
        for line in lines[lines.index("OPTIMAL RULE LIST") + 1 :]:
            if not line.strip():
                break
            rules.append(line)
    return Reading(
        ending,
        float(_number(lines, r"minimum objective: ([0-9.eE+-]+)$")),
        int(_number(lines, r"final num_evaluated: ([0-9]+)$")),
        float(_number(lines, r"final total time: ([0-9.eE+-]+)$")),
        rules,
    )


def run(binary: Path, lam: float, base: Path, time_limit: float, memory_limit: int = 0) -> CppRun:
    """Run the tool once, stopping it at ``time_limit`` seconds of wall time (and, with
    ``memory_limit`` > 0, at that many bytes of address space), and measure it."""
    if not GNU_TIME.exists():
        raise FileNotFoundError(f"{GNU_TIME} (GNU time) measures the tool's peak memory: apt-get install time")
    argv = command(binary, lam, base)
    stopped = False

    def stop(signum: int, frame: FrameType | None) -> None:
        nonlocal stopped
        stopped = True
        os.killpg(proc.pid, signal.SIGKILL)  # time and the tool; not reaped yet: wait4 is blocked on time

    def limit_memory() -> None:
        if memory_limit > 0:
            resource.setrlimit(resource.RLIMIT_AS, (memory_limit, memory_limit))

    with tempfile.TemporaryDirectory(prefix="glasswork-cpp-corels-") as tmp:
        (Path(tmp) / "logs").mkdir()  # the tool logs to ../logs/ from its working directory
        workdir = Path(tmp) / "run"
        workdir.mkdir()
        out_path, err_path, peak_path = Path(tmp) / "stdout", Path(tmp) / "stderr", Path(tmp) / "peak"
        timed = [str(GNU_TIME), "-o", str(peak_path), "-f", "%M %U %S", *argv]
        load_before = os.getloadavg()[0]
        previous = signal.signal(signal.SIGALRM, stop)
        with out_path.open("wb") as out, err_path.open("wb") as err:
            t0 = time.perf_counter()
            proc = subprocess.Popen(
                timed, cwd=workdir, stdout=out, stderr=err, preexec_fn=limit_memory, start_new_session=True
            )
            try:
                signal.setitimer(signal.ITIMER_REAL, time_limit)
                _, wait_status, _ = os.wait4(proc.pid, 0)
            finally:
                signal.setitimer(signal.ITIMER_REAL, 0)
                signal.signal(signal.SIGALRM, previous)
            wall = time.perf_counter() - t0
        proc.returncode = os.waitstatus_to_exitcode(wait_status)  # reaped here, not by Popen
        load = (load_before, os.getloadavg()[0])
        text = out_path.read_text(errors="replace")
        errors = err_path.read_text(errors="replace")
        measured = peak_path.read_text().splitlines() if peak_path.exists() else []
    peak, cpu = -1, math.nan  # time's last line; absent when the run was stopped (time was killed too)
    fields = measured[-1].split() if measured else []
    if len(fields) == 3 and fields[0].isdigit():
        peak, cpu = int(fields[0]) * 1024, float(fields[1]) + float(fields[2])
    result = CppRun(argv, "", wall, cpu, peak, load)
    if stopped:
        result.status = f"stopped at {time_limit:g} s"
        return result
    if proc.returncode != 0:
        if "bad_alloc" in errors and memory_limit > 0:
            result.status = f"out of memory at {memory_limit / 2**30:g} GiB"
        else:
            last = (errors.strip().splitlines() or text.strip().splitlines() or ["no output"])[-1]
            result.status = f"failed: exit {proc.returncode}: {last}"
        return result
    try:
        found = read_output(text)
    except ValueError as exc:
        result.status = f"failed: {exc}"
        return result
    result.status = found.ending
    result.objective, result.evaluated, result.own_time_s = found.objective, found.evaluated, found.own_time_s
    result.rules = found.rules
    return result
