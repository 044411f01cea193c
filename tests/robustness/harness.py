"""The torture harness (issue 17), in the spirit of SQLite's testing page: real ``glasswork``
processes killed with SIGKILL at random points, many runs on one store, a store held by another
process, a damaged file, a full disk, and a third-party plugin that misbehaves. After every case
the store is opened (which recovers it), checked (``RunStore.check``: every table read to its
last block, no orphan or duplicate event, no gap in a run's event numbers, no ended run without
its model), and compared with the independent ``--events`` file each run also wrote: an event
that reached that file was already in the run's log, so it must be in the store ("events lost",
which must be 0).

``tests/robustness/test_torture.py`` runs a bounded version in CI; ``bench/torture.py`` the long
one, whose figures go to docs/reliability.md.
"""

from __future__ import annotations

import json
import os
import random
import signal
import subprocess
import sys
import time
from collections.abc import Iterator
from contextlib import contextmanager
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

HERE = Path(__file__).resolve().parent
TESTS = HERE.parent

SPEC = """\
name: torture-{tag}
solver: toy
data:
  source: sklearn:breast_cancer
  binarize: {{thresholds: 2}}
search: {{behaviour: {behaviour}, step_seconds: {step}}}
limits: {{time: {time}}}
"""
SWEEP = (
    SPEC
    + """\
sweep:
  grid: {{objective.regularization: [0.0, 0.01, 0.02, 0.03]}}
"""
)


@dataclass
class Tally:
    """What a torture session did and found."""

    cases: int = 0
    kills: int = 0
    runs_checked: int = 0
    events_checked: int = 0
    events_lost: int = 0
    results_lost: int = 0
    problems: list[str] = field(default_factory=list)
    refused: int = 0
    reads: int = 0
    seconds: float = 0.0
    by_case: dict[str, int] = field(default_factory=dict)

    def count(self, case: str) -> None:
        self.cases += 1
        self.by_case[case] = self.by_case.get(case, 0) + 1

    def to_dict(self) -> dict[str, Any]:
        return dict(self.__dict__)


def child_env(extra_modules: str = "") -> dict[str, str]:
    env = dict(os.environ)
    modules = ",".join(m for m in ("toy_plugin", extra_modules) if m)
    env["GLASSWORK_PLUGIN_MODULES"] = modules
    env["PYTHONPATH"] = os.pathsep.join([str(TESTS), str(HERE), env.get("PYTHONPATH", "")])
    env.pop("GLASSWORK_DB", None)
    return env


def _default_sigint() -> None:
    signal.signal(signal.SIGINT, signal.SIG_DFL)


def start(args: list[str], env: dict[str, str], cwd: Path, **kwargs: Any) -> subprocess.Popen:
    return subprocess.Popen(
        [sys.executable, "-m", "glasswork", *args],
        env=env,
        cwd=cwd,
        start_new_session=True,
        preexec_fn=_default_sigint,
        **kwargs,
    )


def kill_group(proc: subprocess.Popen, sig: int = signal.SIGKILL) -> None:
    try:
        os.killpg(proc.pid, sig)
    except (ProcessLookupError, PermissionError):
        pass
    if sig == signal.SIGKILL:
        proc.wait()
        for stream in (proc.stdout, proc.stderr):
            if stream is not None:
                stream.close()


def write_spec(
    folder: Path, tag: str, behaviour: str = "endless", step: float = 0.002, time_limit: float = 30, sweep: bool = False
) -> Path:
    path = folder / f"{tag}.yaml"
    path.write_text((SWEEP if sweep else SPEC).format(tag=tag, behaviour=behaviour, step=step, time=time_limit))
    return path


def _records(path: Path) -> list[dict[str, Any]]:
    """The complete lines of a JSON-lines file (a torn last line from a kill is not an event)."""
    records = []
    if path.exists():  # read here, not with glasswork's reader, so the harness can audit older versions
        for line in path.read_bytes().split(b"\n")[:-1]:
            try:
                record = json.loads(line)
            except ValueError:
                continue
            if isinstance(record, dict):
                records.append(record)
    return records


def audit(db: Path, events_files: list[Path], tally: Tally) -> None:
    """Open (recover) and check the store; every event of every ``--events`` file must be in it,
    and a run whose file holds a result must have it recorded."""
    from glasswork.store import RunStore, StoreError

    try:
        store = RunStore(db, lock_timeout=60).open()
    except StoreError as exc:
        tally.problems.append(f"{db.name}: cannot open after the case: {exc}")
        return
    report = store.check()
    tally.problems.extend(f"{db.name}: {p}" for p in report["problems"])
    if report["pending_logs"]:
        tally.problems.append(f"{db.name}: {len(report['pending_logs'])} log(s) left after recovery")
    for path in events_files:
        records = _records(path)
        if not records or records[0].get("kind") != "start":
            continue  # killed before the run started: nothing was promised
        run_id = records[0]["run_id"]
        expected = [r for r in records[1:] if r.get("kind") != "finish"]
        finish = next((r for r in records if r.get("kind") == "finish"), None)
        tally.runs_checked += 1
        tally.events_checked += len(expected)
        try:
            stored = store.events(run_id)
            row = store.get_run(run_id)
        except StoreError:
            tally.events_lost += len(expected)
            tally.problems.append(f"run {run_id[:8]} is missing from the store")
            continue
        kept = [(e["kind"], round(float(e["elapsed"]), 6)) for e in stored]
        for i, record in enumerate(expected):
            if i >= len(kept) or kept[i] != (record["kind"], round(float(record["elapsed"]), 6)):
                tally.events_lost += len(expected) - i
                tally.problems.append(f"run {run_id[:8]}: events from #{i} on are missing or out of order")
                break
        if finish is not None and finish.get("result") is not None:
            if row.state not in ("finished", "stopped", "cancelled") or row.status != finish["result"]["status"]:
                tally.results_lost += 1
                tally.problems.append(
                    f"run {run_id[:8]}: its result ({finish['result']['status']}) was not recorded (state {row.state})"
                )
        elif row.state == "running":
            tally.problems.append(f"run {run_id[:8]} is still 'running' after its process was killed")


# -- the cases ------------------------------------------------------------------------------


def kill_runs(work: Path, n: int, rng: random.Random, tally: Tally) -> None:
    """``glasswork run`` killed with SIGKILL at a random moment: during start-up, the search,
    a batch write or the final record (some specs finish in well under a second)."""
    env = child_env()
    db = work / "kills.duckdb"
    files = []
    for i in range(n):
        behaviour = rng.choice(["endless", "endless", "exact"])
        spec = write_spec(work, f"kill{i}", behaviour, step=rng.choice([0.001, 0.002, 0.01]))
        events = work / f"kill{i}.events.jsonl"
        files.append(events)
        proc = start(
            ["run", "-q", "--db", str(db), str(spec), "--events", str(events)],
            env,
            work,
            stdout=subprocess.DEVNULL,
            stderr=subprocess.DEVNULL,
        )
        if rng.random() < 0.25:  # during start-up: imports, data, opening and recovering the store
            time.sleep(rng.uniform(0.0, 3.0))
        else:  # once the run has started: the search, a batch write, the final record
            _wait_for(events, '"start"', proc, timeout=120, quiet=True)
            time.sleep(rng.uniform(0.0, 1.5))
        kill_group(proc)
        tally.kills += 1
        tally.count("kill -9 a run")
    audit(db, files, tally)


def kill_sweeps(work: Path, n: int, rng: random.Random, tally: Tally) -> None:
    """``glasswork sweep`` (owner and workers) killed with SIGKILL at a random moment."""
    env = child_env()
    db = work / "sweeps.duckdb"
    for i in range(n):
        spec = write_spec(work, f"sweep{i}", rng.choice(["exact", "endless"]), time_limit=1.0, sweep=True)
        proc = start(
            ["sweep", str(spec), "-j", "2", "--db", str(db)],
            env,
            work,
            stdout=subprocess.DEVNULL,
            stderr=subprocess.DEVNULL,
        )
        time.sleep(rng.uniform(2.0, 10.0))  # start-up takes a few seconds on a busy machine
        kill_group(proc)
        tally.kills += 1
        tally.count("kill -9 a sweep")
    audit(db, [], tally)


READER = """\
import json, sys, time
from glasswork.store import RunStore, StoreError
from pathlib import Path
db, stop, out = sys.argv[1], Path(sys.argv[2]), sys.argv[3]
reads, errors = 0, []
while not stop.exists():
    try:
        store = RunStore(db)
        rows = store.list_runs(limit=None)
        for row in rows[:3]:
            store.events(row.run_id)
        store.sweeps()
        reads += 1
    except StoreError as exc:
        errors.append(str(exc)[:300])
    time.sleep(0.2)
json.dump({"reads": reads, "errors": errors}, open(out, "w"))
"""

REFUSALS = ("locked by", "waited", "is busy", "cannot open the run store", "Traceback", "internal error")


def concurrent_runs(
    work: Path,
    n: int,
    tally: Tally,
    *,
    rng: random.Random | None = None,
    kills: int = 0,
    sweeps: int = 0,
    readers: int = 0,
) -> None:
    """``n`` runs at once on one store, with ``sweeps`` sweeps (``-j 2``) and ``readers``
    processes reading it the whole time, and ``kills`` of the runs killed with SIGKILL: every
    other run exits 0 without waiting for the store or being refused, and is recorded with
    exactly the status and objective it printed, every event in place; readers are never
    refused; the store is sound with no journal left once opened."""
    rng = rng or random.Random(0)
    env = child_env()
    db = work / "concurrent.duckdb"
    procs, files = [], []
    for i in range(n):
        behaviour = rng.choice(["exact", "endless", "endless"])
        spec = write_spec(
            work, f"conc{i}", behaviour, step=rng.choice([0.002, 0.005, 0.01]), time_limit=rng.choice([1.0, 2.0, 3.0])
        )
        events = work / f"conc{i}.events.jsonl"
        files.append(events)
        procs.append(
            start(
                ["run", "--json", "-q", "--db", str(db), str(spec), "--events", str(events)],
                env,
                work,
                stdout=subprocess.PIPE,
                stderr=subprocess.PIPE,
                text=True,
            )
        )
    sweep_procs = []
    for i in range(sweeps):
        spec = write_spec(work, f"csweep{i}", "exact", time_limit=1.0, sweep=True)
        sweep_procs.append(
            start(
                ["sweep", str(spec), "-j", "2", "--db", str(db)],
                env,
                work,
                stdout=subprocess.DEVNULL,
                stderr=subprocess.PIPE,
                text=True,
            )
        )
    stop = work / "readers.stop"  # the readers read until every run and sweep has ended
    reader_procs = [
        subprocess.Popen(
            [sys.executable, "-c", READER, str(db), str(stop), str(work / f"reader{i}.json")],
            env=env,
            cwd=work,
            start_new_session=True,
        )
        for i in range(readers)
    ]
    killed = set(rng.sample(range(n), kills)) if kills else set()
    for i in sorted(killed, key=lambda _: rng.random()):
        _wait_for(files[i], '"start"', procs[i], timeout=300, quiet=True)
        time.sleep(rng.uniform(0.0, 1.0))
        kill_group(procs[i])
        tally.kills += 1
    printed: dict[str, dict[str, Any]] = {}
    for i, proc in enumerate(procs):
        if i in killed:
            continue
        try:
            out, err = proc.communicate(timeout=600)
        finally:
            kill_group(proc)
        refused = [word for word in REFUSALS if word in err]
        if proc.returncode != 0 or refused:
            tally.refused += 1
            tally.problems.append(f"concurrent run {i} ended with {proc.returncode}: {err.strip()[-300:]}")
            continue
        doc = json.loads(out)
        printed[doc["run_id"]] = doc
    for proc in sweep_procs:
        try:
            _, err = proc.communicate(timeout=600)
        finally:
            kill_group(proc)
        if proc.returncode != 0 or any(word in err for word in REFUSALS):
            tally.refused += 1
            tally.problems.append(f"a concurrent sweep ended with {proc.returncode}: {err.strip()[-300:]}")
    stop.touch()
    for i, proc in enumerate(reader_procs):
        proc.wait(timeout=300)
        doc = json.loads((work / f"reader{i}.json").read_text())
        tally.reads += doc["reads"]
        if doc["errors"]:
            tally.refused += len(doc["errors"])
            tally.problems.append(f"reader {i} was refused {len(doc['errors'])} time(s): {doc['errors'][0]}")
    tally.count(f"{n} concurrent runs ({kills} killed), {sweeps} sweeps and {readers} readers on one store")
    audit(db, files, tally)
    from glasswork.store import RunStore

    store = RunStore(db)
    rows = {r.run_id: r for r in store.list_runs(limit=None)}
    for run_id, doc in printed.items():
        row = rows.get(run_id)
        if row is None or row.status != doc["status"] or row.objective != doc["objective"]:
            tally.results_lost += 1
            tally.problems.append(
                f"run {run_id[:8]} printed {doc['status']} {doc['objective']} but is stored as "
                f"{None if row is None else (row.state, row.status, row.objective)}"
            )
    for i in range(sweeps):
        recorded = [r for r in rows.values() if r.name == f"torture-csweep{i}"]
        if len(recorded) != 4 or any(r.state != "finished" for r in recorded):
            tally.problems.append(f"sweep {i}: recorded {sorted(r.state for r in recorded)}, expected 4 finished")


def held_store(work: Path, tally: Tally) -> None:
    """A store held by another program (DuckDB's lock), or by a glasswork process that keeps
    the store's lock (a fold that hangs): neither stops nor delays a run, which exits 0 and is
    recorded once the store is free."""
    env = child_env()
    db = work / "held.duckdb"
    from glasswork.store import RunStore

    RunStore(db).open()
    holds = {
        "duckdb": (
            "import duckdb, sys, time; c = duckdb.connect(sys.argv[1]); print('held', flush=True); time.sleep(900)"
        ),
        "store lock": (
            "import fcntl, sys, time; f = open(sys.argv[1] + '.lock', 'a'); fcntl.flock(f, fcntl.LOCK_EX); "
            "print('held', flush=True); time.sleep(900)"
        ),
    }
    spec = write_spec(work, "held", "exact")
    for what, hold in holds.items():
        holder = subprocess.Popen(
            [sys.executable, "-c", hold, str(db)], stdout=subprocess.PIPE, text=True, start_new_session=True
        )
        events = work / f"held-{what.replace(' ', '-')}.events.jsonl"
        try:
            holder.stdout.readline()
            # a run that waited for the holder would wait 600 s and miss the 240 s timeout
            proc = subprocess.run(
                [sys.executable, "-m", "glasswork", "run", "-q", "--db", str(db), str(spec), "--events", str(events)],
                capture_output=True,
                text=True,
                timeout=240,
                env={**env, "GLASSWORK_DB_LOCK_TIMEOUT": "600"},
            )
        except subprocess.TimeoutExpired:
            tally.problems.append(f"store held ({what}): the run waited for the store")
            continue
        finally:
            kill_group(holder)
        if proc.returncode != 0 or "waited" in proc.stderr:
            tally.problems.append(f"store held ({what}): exit {proc.returncode}: {proc.stderr[-300:]}")
        tally.count("store held by another process")
        audit(db, [events], tally)


def damage(db: Path) -> None:
    """Pad a store with one run's own events (so it spans several 256 KiB blocks), then
    overwrite the start of its third block with garbage, as a bad sector or a stray write would."""
    import duckdb

    con = duckdb.connect(str(db))
    run_id = con.execute("SELECT run_id FROM runs LIMIT 1").fetchall()[0][0]
    first = con.execute("SELECT max(seq) + 1 FROM events WHERE run_id = ?", [run_id]).fetchall()[0][0]
    con.execute(
        "INSERT INTO events SELECT ?, ? + i, 'progress', i, 1.0, 0.5, 0.5, i, 0, NULL, repeat('x', 40) "
        "FROM range(150000) t(i)",
        [run_id, first],
    )
    con.close()
    data = bytearray(db.read_bytes())
    start_at = 12288 + 2 * 262144  # DuckDB: three 4 KiB headers, then 256 KiB blocks
    assert len(data) > start_at + 262144
    data[start_at : start_at + 4096] = bytes(b ^ 0x5A for b in data[start_at : start_at + 4096])
    db.write_bytes(bytes(data))


def damaged_store(work: Path, tally: Tally) -> None:
    """A block overwritten with garbage: every command names the file and the way out, nothing
    writes to it, and salvage recovers the runs."""
    import hashlib

    from glasswork.store import RunStore

    env = child_env()
    db = work / "damaged.duckdb"
    spec = write_spec(work, "damaged", "exact")
    for _ in range(2):
        subprocess.run(
            [sys.executable, "-m", "glasswork", "run", "-q", "--db", str(db), str(spec)],
            capture_output=True,
            env=env,
            timeout=120,
            check=True,
        )
    damage(db)
    before = hashlib.sha256(db.read_bytes()).hexdigest()
    for args in (["runs", "list", "--db", str(db)], ["run", "-q", "--db", str(db), str(spec)]):
        proc = subprocess.run(
            [sys.executable, "-m", "glasswork", *args], capture_output=True, text=True, env=env, timeout=120
        )
        if proc.returncode != 1 or "is damaged" not in proc.stderr or "--salvage" not in proc.stderr:
            tally.problems.append(f"damaged store, {args[0]}: exit {proc.returncode}: {proc.stderr[-300:]}")
    if hashlib.sha256(db.read_bytes()).hexdigest() != before:
        tally.problems.append("a damaged store was written to")
    rescued = work / "rescued.duckdb"
    subprocess.run(
        [sys.executable, "-m", "glasswork", "runs", "check", "--db", str(db), "--salvage", str(rescued)],
        capture_output=True,
        env=env,
        timeout=120,
    )
    if len(RunStore(rescued).list_runs()) != 2:
        tally.problems.append("salvage did not recover both runs")
    tally.count("damaged store file")
    audit(rescued, [], tally)


@contextmanager
def tmpfs(folder: Path, size: str = "3m") -> Iterator[Path | None]:
    """A small tmpfs mounted at ``folder`` (None where mounting is not allowed: not root)."""
    folder.mkdir(exist_ok=True)
    if (
        os.geteuid() != 0
        or subprocess.run(
            ["mount", "-t", "tmpfs", "-o", f"size={size}", "tmpfs", str(folder)], capture_output=True
        ).returncode
        != 0
    ):
        yield None
        return
    try:
        yield folder
    finally:
        subprocess.run(["umount", "-l", str(folder)], capture_output=True)


def fill(folder: Path) -> Path:
    """Write zeros into ``folder/filler`` until the disk is full."""
    filler = folder / "filler"
    with filler.open("wb") as fh:
        try:
            while True:
                fh.write(b"\0" * 65536)
                fh.flush()
        except OSError:
            pass
    return filler


def full_disk(work: Path, tally: Tally) -> bool:
    """The store on a 3 MiB tmpfs filled to the last byte (needs root; skipped otherwise)."""
    from glasswork.store import RunStore

    with tmpfs(work / "disk") as mount:
        if mount is None:
            return False
        db = mount / "full.duckdb"
        RunStore(db).open()
        filler = fill(mount)
        spec = write_spec(work, "full", "endless", time_limit=1.5)
        proc = subprocess.run(
            [sys.executable, "-m", "glasswork", "run", "--json", "-q", "--db", str(db), str(spec)],
            capture_output=True,
            text=True,
            env=child_env(),
            timeout=120,
        )
        if proc.returncode != 1 or json.loads(proc.stdout or "{}").get("status") != "stopped_time":
            tally.problems.append(f"full disk: exit {proc.returncode}, no result printed: {proc.stderr[-300:]}")
        if "No space left" not in proc.stderr:
            tally.problems.append(f"full disk: no clear message: {proc.stderr[-300:]}")
        if RunStore(db).check()["tables"].get("runs") is None:
            tally.problems.append("full disk: the store is not readable while the disk is full")
        filler.unlink()
        tally.count("full disk")
        audit(db, [], tally)
    return True


def rogue_plugins(work: Path, tally: Tally) -> None:
    """A third-party solver that hangs, ignores a cancel, prints to stdout, or eats memory."""
    env = child_env("rogue_plugin")
    db = work / "rogue.duckdb"

    def spec(tag: str, search: str, limits: str = "{time: 30}") -> Path:
        path = work / f"{tag}.yaml"
        path.write_text(
            f"name: rogue-{tag}\nsolver: rogue\ndata:\n  source: sklearn:breast_cancer\n"
            f"  binarize: {{thresholds: 2}}\nsearch: {search}\nlimits: {limits}\n"
        )
        return path

    files = []
    # prints to stdout during run --json: stdout must still be one JSON document
    events = work / "chatty.events.jsonl"
    files.append(events)
    proc = subprocess.run(
        [
            sys.executable,
            "-m",
            "glasswork",
            "run",
            "--json",
            "-q",
            "--db",
            str(db),
            str(spec("chatty", "{behaviour: chatty}")),
            "--events",
            str(events),
        ],
        capture_output=True,
        text=True,
        env=env,
        timeout=120,
    )
    try:
        if json.loads(proc.stdout)["status"] != "heuristic":
            raise ValueError("wrong status")
    except (ValueError, KeyError) as exc:
        tally.problems.append(f"chatty plugin: stdout is not the result document ({exc}): {proc.stdout[:200]!r}")
    if "rogue: raw write" not in proc.stderr:
        tally.problems.append("chatty plugin: its output was lost instead of going to stderr")
    tally.count("plugin prints to stdout during run --json")

    # eats memory: the memory limit stops it, the run is recorded as stopped_memory
    events = work / "hog.events.jsonl"
    files.append(events)
    proc = subprocess.run(
        [
            sys.executable,
            "-m",
            "glasswork",
            "run",
            "--json",
            "-q",
            "--db",
            str(db),
            str(spec("hog", "{behaviour: hog}", "{time: 60, memory: 600MB}")),
            "--events",
            str(events),
        ],
        capture_output=True,
        text=True,
        env=env,
        timeout=180,
    )
    if proc.returncode != 0 or json.loads(proc.stdout or "{}").get("status") != "stopped_memory":
        tally.problems.append(f"memory-eating plugin: exit {proc.returncode}: {proc.stderr[-300:]}")
    tally.count("plugin eats memory")

    # ignores a cancel for a while: the first Ctrl-C waits for it and keeps its model
    events = work / "deaf.events.jsonl"
    files.append(events)
    proc = start(
        [
            "run",
            "--json",
            "-q",
            "--db",
            str(db),
            str(spec("deaf", "{behaviour: deaf, seconds: 2}")),
            "--events",
            str(events),
        ],
        env,
        work,
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
    )
    try:
        _wait_for(events, '"incumbent"', proc)
        proc.send_signal(signal.SIGINT)
        out, err = proc.communicate(timeout=120)
    finally:
        kill_group(proc)
    if proc.returncode != 130 or json.loads(out or "{}").get("status") != "cancelled":
        tally.problems.append(f"deaf plugin: exit {proc.returncode}: {err[-300:]}")
    tally.count("plugin ignores a cancel")

    # hangs for ever: a second Ctrl-C abandons it; the run is recorded as failed, nothing lost
    events = work / "hang.events.jsonl"
    files.append(events)
    proc = start(
        ["run", "-q", "--db", str(db), str(spec("hang", "{behaviour: hang}", "{time: 1}")), "--events", str(events)],
        env,
        work,
        stdout=subprocess.DEVNULL,
        stderr=subprocess.PIPE,
        text=True,
    )
    try:
        _wait_for(events, '"incumbent"', proc)
        time.sleep(1.5)  # past its time limit, which it ignores
        proc.send_signal(signal.SIGINT)
        time.sleep(0.5)
        proc.send_signal(signal.SIGINT)
        _, err = proc.communicate(timeout=60)
    finally:
        kill_group(proc)
    if proc.returncode != 130 or "abandoned" not in err:
        tally.problems.append(f"hanging plugin: exit {proc.returncode}: {err[-300:]}")
    tally.count("plugin hangs")
    audit(db, files, tally)
    from glasswork.store import RunStore

    hung = [r for r in RunStore(db).list_runs() if r.name == "rogue-hang"]
    if not hung or hung[0].state != "failed":
        tally.problems.append(f"hanging plugin: recorded as {[r.state for r in hung]}")


def _wait_for(path: Path, text: str, proc: subprocess.Popen, timeout: float = 60, quiet: bool = False) -> None:
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        if path.exists() and text in path.read_text():
            return
        if proc.poll() is not None:
            if quiet:
                return
            raise RuntimeError(f"process ended early with {proc.returncode}")
        time.sleep(0.05)
    raise RuntimeError(f"{text} never appeared in {path}")


def torture(
    work: Path,
    *,
    run_kills: int,
    sweep_kills: int,
    concurrent: int,
    seed: int = 0,
    extras: bool = True,
    concurrent_kills: int = 0,
    concurrent_sweeps: int = 0,
    readers: int = 0,
) -> Tally:
    """One session: the kill loops, then (with ``extras``) every other case once."""
    rng = random.Random(seed)
    tally = Tally()
    started = time.monotonic()
    kill_runs(work, run_kills, rng, tally)
    if sweep_kills:
        kill_sweeps(work, sweep_kills, rng, tally)
    if concurrent:
        concurrent_runs(
            work, concurrent, tally, rng=rng, kills=concurrent_kills, sweeps=concurrent_sweeps, readers=readers
        )
    if extras:
        held_store(work, tally)
        damaged_store(work, tally)
        if not full_disk(work, tally):
            tally.by_case["full disk (skipped: no tmpfs)"] = 0
        rogue_plugins(work, tally)
    tally.seconds = round(time.monotonic() - started, 1)
    return tally
