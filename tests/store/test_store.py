"""The run store, always against a real DuckDB file: recording, the runs commands, recovery
after kill -9, a database locked by another process, and schema migrations."""

from __future__ import annotations

import json
import os
import signal
import subprocess
import sys
import time
from pathlib import Path

import duckdb
import pytest
from click.testing import CliRunner
from glasswork.cli import cli
from glasswork.store import MIGRATIONS, SCHEMA_VERSION, RunStore, StoreError, StoreLocked
from spec_files import write

SPEC = """\
name: stored
solver: toy
data:
  source: sklearn:breast_cancer
  binarize: {thresholds: 2}
"""


@pytest.fixture
def invoke(toy_env, tmp_path, monkeypatch):
    monkeypatch.chdir(tmp_path)
    runner = CliRunner()

    def call(*args: str):
        return runner.invoke(cli, list(args), catch_exceptions=False)

    return call


def run_json(invoke, *args: str) -> dict:
    result = invoke("run", "--json", "-q", *args)
    assert result.exit_code == 0, result.output
    return json.loads(result.stdout)


def test_run_is_recorded_with_everything(invoke, tmp_path):
    doc = run_json(invoke, str(write(tmp_path / "s.yaml", SPEC)))
    store = RunStore(tmp_path / "glasswork.duckdb")
    [row] = store.list_runs()
    assert row.run_id == doc["run_id"] and row.state == "finished" and row.status == "optimal"
    assert row.objective == pytest.approx(doc["objective"]) and row.spec_hash and row.data_fingerprint
    details = store.details(row.run_id)
    assert details["metrics"]["train_accuracy"] == pytest.approx(doc["metrics"]["train_accuracy"])
    assert details["models"][0]["kind"] == "stump" and details["models"][0]["text"].startswith("if ")
    assert len(details["split"]["train_index"]) == row.n_train and len(details["split"]["test_index"]) == row.n_test
    assert details["spec"]["objective"]["regularization"] == 0.0  # the resolved spec, defaults filled
    kinds = [e["kind"] for e in store.events(row.run_id)]
    assert "incumbent" in kinds and "progress" in kinds
    assert not list(store.events_dir.glob("*.jsonl")), "the live log is removed once recorded"


def test_stopped_and_failed_states(invoke, tmp_path):
    stopped = run_json(
        invoke, str(write(tmp_path / "a.yaml", SPEC + "search: {behaviour: endless}\nlimits: {nodes: 4}\n"))
    )
    failed = invoke("run", "-q", str(write(tmp_path / "b.yaml", SPEC + "search: {behaviour: raise}\n")))
    assert failed.exit_code == 1
    store = RunStore(tmp_path / "glasswork.duckdb")
    states = {r.run_id: (r.state, r.error) for r in store.list_runs()}
    assert states[stopped["run_id"]][0] == "stopped"
    [(state, error)] = [v for k, v in states.items() if k != stopped["run_id"]]
    assert state == "failed" and "toy solver asked to fail" in error
    progress = [e for e in store.events(stopped["run_id"]) if e["kind"] == "progress"]
    assert [e["nodes"] for e in progress] == [1, 2, 3]
    assert progress[0]["queue"] == 1 and progress[0]["counters"] == {"queue": 1}


def test_where_the_store_goes(invoke, tmp_path, monkeypatch):
    spec = write(tmp_path / "s.yaml", SPEC)
    assert run_json(invoke, str(spec), "--no-store")["run_id"] is None
    off = write(tmp_path / "off.yaml", SPEC + "store: {enabled: false}\n")
    run_json(invoke, str(off))
    assert not (tmp_path / "glasswork.duckdb").exists()
    run_json(invoke, str(spec), "--db", str(tmp_path / "explicit.duckdb"))
    monkeypatch.setenv("GLASSWORK_DB", str(tmp_path / "env.duckdb"))
    run_json(invoke, str(spec))
    monkeypatch.delenv("GLASSWORK_DB")
    (tmp_path / "sub").mkdir()
    run_json(invoke, str(write(tmp_path / "sub" / "p.yaml", SPEC + "store: {path: here.duckdb}\n")))
    for name in ("explicit.duckdb", "env.duckdb", "sub/here.duckdb"):
        assert len(RunStore(tmp_path / name).list_runs()) == 1, name


def test_runs_commands(invoke, tmp_path):
    spec = str(write(tmp_path / "s.yaml", SPEC))
    first = run_json(invoke, spec)["run_id"]
    second = run_json(invoke, spec, "--set", "objective.regularization=0.05")["run_id"]

    listed = json.loads(invoke("runs", "list", "--json").stdout)
    assert [r["run_id"] for r in listed] == [second, first]
    assert json.loads(invoke("runs", "list", "--json", "--state", "failed").stdout) == []
    assert "stored" in invoke("runs", "list").stdout

    shown = json.loads(invoke("runs", "show", "latest", "--json").stdout)
    assert shown["run_id"] == second and shown["metrics"] and shown["models"]
    human = invoke("runs", "show", first[:6]).stdout
    assert "Certificate" in human and "Model" in human and "regularization" in human

    compared = json.loads(invoke("runs", "compare", first[:8], second[:8], "--json").stdout)
    fields = {row["field"]: row["values"] for row in compared["rows"]}
    assert fields["spec.objective.regularization"] == [0.0, 0.05]
    assert "spec.name" not in fields  # only the differing keys
    assert fields["objective"][1] == pytest.approx(fields["objective"][0] + 0.05)

    exported = json.loads(invoke("runs", "export", first, second, "--format", "json").stdout)
    assert [d["run_id"] for d in exported] == [first, second] and exported[0]["events"]
    assert compared["runs"] == [first, second]  # the table heads its columns with ids and names
    assert compared["names"] == [d["name"] for d in exported]
    for fmt in ("csv", "parquet"):
        assert invoke("runs", "export", "latest", "--format", fmt, "-o", str(tmp_path / "out")).exit_code == 0
        con = duckdb.connect()
        events = con.execute(f"SELECT count(*) FROM '{tmp_path / ('out.events.' + fmt)}'").fetchone()[0]
        runs = con.execute(f"SELECT run_id FROM '{tmp_path / ('out.runs.' + fmt)}'").fetchall()
        assert events >= 2 and runs == [(second,)]

    assert invoke("runs", "delete", first, "--yes").exit_code == 0
    assert [r["run_id"] for r in json.loads(invoke("runs", "list", "--json").stdout)] == [second]


def test_run_references(invoke, tmp_path):
    store = RunStore(tmp_path / "glasswork.duckdb")
    missing = invoke("runs", "show", "latest")
    assert missing.exit_code == 2 and "no run store" in missing.output
    spec = str(write(tmp_path / "s.yaml", SPEC))
    ids = [run_json(invoke, spec)["run_id"] for _ in range(3)]
    assert store.resolve(["latest"]) == [ids[-1]]
    bad = invoke("runs", "show", "zzzz")
    assert bad.exit_code == 2 and "no run with an id starting 'zzzz'" in bad.output
    with pytest.raises(StoreError, match="matches 3 runs"):
        store.resolve([""])


def _child_env(toy_env: dict, **extra: str) -> dict:
    env = dict(toy_env)
    env.update(extra)
    return env


@pytest.mark.slow
def test_kill_9_leaves_a_consistent_store_and_the_run_marked_failed(toy_env, tmp_path):
    db = tmp_path / "glasswork.duckdb"
    spec = write(tmp_path / "s.yaml", SPEC + "search: {behaviour: endless, step_seconds: 0.002}\n")
    proc = subprocess.Popen(
        [sys.executable, "-m", "glasswork", "run", "-q", "--db", str(db), str(spec)],
        stdout=subprocess.DEVNULL,
        stderr=subprocess.PIPE,
        env=_child_env(toy_env),
    )
    store = RunStore(db)
    deadline = time.monotonic() + 60
    seen = 0
    while time.monotonic() < deadline and seen < 50:
        time.sleep(0.3)
        if db.exists():
            try:
                runs = store.list_runs()
                seen = len(store.events(runs[0].run_id)) if runs else 0
            except StoreError:
                continue
    assert seen >= 50, proc.stderr.read() if proc.poll() is not None else "no events recorded"
    proc.send_signal(signal.SIGKILL)
    proc.wait()
    store = RunStore(db).open()  # opening recovers
    [run] = store.list_runs()
    assert run.state == "failed" and "killed or crashed" in run.error
    assert len(store.events(run.run_id)) >= seen  # nothing already written is lost
    assert not list(store.events_dir.glob("*.jsonl"))


# A run's steps seen from inside its process: how often glasswork opened DuckDB, and whether
# DuckDB was imported before the search began; ``kill_at`` kills the process (SIGKILL) there.
PROBE = """
import atexit, json, os, signal, sys
from glasswork.running import runner
from glasswork.store import RunStore
from glasswork.store.schema import StoreFile

seen = {"opens": 0}
kill_at = os.environ.get("PROBE_KILL_AT")
open_duckdb = StoreFile._open
def counted(self, *args, **kwargs):
    seen["opens"] += 1
    return open_duckdb(self, *args, **kwargs)
StoreFile._open = counted
solve = runner.Runner.solve
def probed(self, *args, **kwargs):
    seen["duckdb_before_search"] = "duckdb" in sys.modules
    seen["opens_before_search"] = seen["opens"]
    return solve(self, *args, **kwargs)
runner.Runner.solve = probed
finish_sinks = runner.Runner.finish_sinks
def finishing(self, *args, **kwargs):
    if kill_at == "before_finish_record":
        os.kill(os.getpid(), signal.SIGKILL)
    return finish_sinks(self, *args, **kwargs)
runner.Runner.finish_sinks = finishing
fold = RunStore.fold
def folding(self, *args, **kwargs):
    if kill_at == "before_fold":
        os.kill(os.getpid(), signal.SIGKILL)
    return fold(self, *args, **kwargs)
RunStore.fold = folding
def report():
    seen["duckdb_python_layer"] = "duckdb" in sys.modules
    print("PROBE " + json.dumps(seen), file=sys.stderr)
atexit.register(report)
from glasswork.cli import main
sys.argv = ["glasswork", *sys.argv[1:]]
main()
"""


def probe_run(env: dict[str, str], db: Path, spec: Path, kill_at: str = "") -> tuple[int, dict]:
    proc = subprocess.run(
        [sys.executable, "-c", PROBE, "run", "-q", "--json", "--db", str(db), str(spec)],
        capture_output=True,
        text=True,
        env={**_child_env(env), "PROBE_KILL_AT": kill_at},
        timeout=120,
    )
    probes = [line for line in proc.stderr.splitlines() if line.startswith("PROBE ")]
    return proc.returncode, json.loads(probes[-1][6:]) if probes else {}


def test_a_run_opens_duckdb_once_at_its_end_unless_the_store_needs_it_before(toy_env, tmp_path):
    """A run checks the store without DuckDB when no journal waits and the file is as glasswork
    left it: DuckDB's engine is imported and opened once, for the run's own fold at its end
    (not ``duckdb``'s Python layer, 0.1-0.2 CPU-s to import). A store changed by another program
    since is checked with DuckDB before the run, as before."""
    db = tmp_path / "glasswork.duckdb"
    spec = write(tmp_path / "s.yaml", SPEC)
    code, first = probe_run(toy_env, db, spec)  # a new store: created before the run
    assert code == 0 and first["opens_before_search"] == 1
    code, second = probe_run(toy_env, db, spec)
    assert code == 0, second
    assert second == {
        "opens": 1,
        "opens_before_search": 0,
        "duckdb_before_search": False,
        "duckdb_python_layer": False,  # the fold needs DuckDB's engine only
    }
    con = duckdb.connect(str(db))  # another program writes to the store
    con.execute("CREATE TABLE notes (x INT)")
    con.close()
    code, third = probe_run(toy_env, db, spec)
    assert code == 0 and third["opens_before_search"] == 1 and third["opens"] == 2
    assert [r.state for r in RunStore(db).list_runs()] == ["finished"] * 3


@pytest.mark.parametrize(("kill_at", "state"), [("before_finish_record", "failed"), ("before_fold", "finished")])
def test_a_run_killed_after_its_search_is_recovered_from_its_journal(toy_env, tmp_path, kill_at, state):
    """The run's only DuckDB session is its fold at the end: a kill -9 after the search, before
    its finish record or before its fold, leaves the journal, and the next reader records it."""
    db = tmp_path / "glasswork.duckdb"
    spec = write(tmp_path / "s.yaml", SPEC)
    assert probe_run(toy_env, db, spec)[0] == 0
    code, _ = probe_run(toy_env, db, spec, kill_at=kill_at)
    assert code == -signal.SIGKILL
    assert len(list(RunStore(db).events_dir.glob("*.jsonl"))) == 1
    latest, earlier = RunStore(db).list_runs()  # reading folds it
    assert earlier.state == "finished" and latest.state == state and latest.objective is not None
    if state == "failed":
        assert "killed or crashed" in latest.error
    assert not list(RunStore(db).events_dir.glob("*.jsonl"))


@pytest.mark.slow
def test_a_store_held_by_another_program_never_refuses_a_run(toy_env, tmp_path):
    """A program outside glasswork holding the DuckDB file (the duckdb shell, a notebook) does
    not stop a run: it exits 0 with its result, says where the run is kept, and the run is
    recorded once the store is free."""
    db = tmp_path / "glasswork.duckdb"
    RunStore(db).open()
    hold = (
        "import duckdb, sys, time; c = duckdb.connect(sys.argv[1]); print('held', flush=True); "
        "time.sleep(float(sys.argv[2]))"
    )
    spec = str(write(tmp_path / "s.yaml", SPEC))
    holder = subprocess.Popen([sys.executable, "-c", hold, str(db), "900"], stdout=subprocess.PIPE, text=True)
    try:
        assert holder.stdout.readline().strip() == "held"
        # a run that waited for the holder would wait 600 s and miss the 240 s timeout
        held = subprocess.run(
            [sys.executable, "-m", "glasswork", "run", "--json", "-q", "--db", str(db), spec],
            capture_output=True,
            text=True,
            timeout=240,
            env=_child_env(toy_env, GLASSWORK_DB_LOCK_TIMEOUT="600"),
        )
    finally:
        holder.kill()
        holder.wait()
    assert held.returncode == 0, held.stderr
    doc = json.loads(held.stdout)
    assert f"locked by process {holder.pid}." in held.stderr and "kept in its journal" in held.stderr
    assert held.stderr.count("locked by process") == 1 and "waited" not in held.stderr
    [row] = RunStore(db).list_runs()  # the holder is gone: reading folds the journal
    assert row.run_id == doc["run_id"] and row.state == "finished" and row.objective == pytest.approx(doc["objective"])
    assert not list(RunStore(db).events_dir.glob("*.jsonl"))


def test_lock_timeout_raises_store_locked(tmp_path):
    db = tmp_path / "x.duckdb"
    RunStore(db).open()
    code = "import duckdb, sys, time; c = duckdb.connect(sys.argv[1]); print('held', flush=True); time.sleep(20)"
    holder = subprocess.Popen([sys.executable, "-c", code, str(db)], stdout=subprocess.PIPE, text=True)
    try:
        assert holder.stdout.readline().strip() == "held"
        started = time.monotonic()
        with pytest.raises(StoreLocked, match=f"locked by process {holder.pid}"):
            RunStore(db, lock_timeout=0.5).open()
        assert time.monotonic() - started < 5
    finally:
        holder.kill()
        holder.wait()


def test_a_run_whose_fold_failed_is_recorded_from_its_journal(tmp_path, toy_registry):
    """The journal is the run's record: when folding fails, the next open records the run from
    it, a torn last line (a kill mid-write) dropped."""
    from glasswork.running.launch import Launch
    from glasswork.spec.load import validate_spec

    db = tmp_path / "glasswork.duckdb"
    spec = validate_spec(
        {"name": "locked", "solver": "toy", "data": {"source": "sklearn:breast_cancer", "binarize": {"thresholds": 2}}},
        toy_registry,
    )
    launch = Launch(spec, registry=toy_registry, db=db)
    store = launch.open_store()
    assert store is not None

    def always_locked(*args, **kwargs):
        raise StoreLocked("locked for the test")

    store.fold = always_locked  # type: ignore[method-assign]
    outcome = launch.run()
    assert any("recorded the next time the store is opened" in w for w in launch.warnings)
    log = store.log_path(outcome.info.run_id)
    records = [json.loads(line) for line in log.read_text().splitlines()]
    with log.open("a") as fh:
        fh.write('{"kind": "torn')
    reopened = RunStore(db).open()
    [row] = reopened.list_runs()
    assert row.run_id == outcome.info.run_id and row.state == "finished" and row.status == "optimal"
    assert len(reopened.events(row.run_id)) == len(records) - 2  # minus start and finish lines
    assert reopened.details(row.run_id)["models"][0]["kind"] == "stump"
    assert not log.exists()


def test_an_older_schema_is_migrated(tmp_path):
    db = tmp_path / "old.duckdb"
    con = duckdb.connect(str(db))
    for statement in MIGRATIONS[0]:
        con.execute(statement)
    con.execute("INSERT INTO meta VALUES ('schema_version', '1')")
    con.execute(
        "INSERT INTO runs (run_id, name, solver, state, started_at) "
        "VALUES ('abc', 'old', 'toy', 'finished', now()::TIMESTAMP)"
    )
    con.close()
    store = RunStore(db).open()
    [row] = store.list_runs()
    assert row.run_id == "abc" and row.sweep_id is None
    con = duckdb.connect(str(db))
    assert con.execute("SELECT value FROM meta WHERE key = 'schema_version'").fetchone()[0] == str(SCHEMA_VERSION)
    con.close()


def test_a_newer_schema_is_refused(tmp_path):
    db = tmp_path / "new.duckdb"
    RunStore(db).open()
    con = duckdb.connect(str(db))
    con.execute("UPDATE meta SET value = '99' WHERE key = 'schema_version'")
    con.close()
    with pytest.raises(StoreError, match="schema version 99, newer than this glasswork understands"):
        RunStore(db).open()


def test_a_foreign_duckdb_file_is_refused(tmp_path):
    db = tmp_path / "other.duckdb"
    con = duckdb.connect(str(db))
    con.execute("CREATE TABLE t (x INT)")
    con.close()
    with pytest.raises(StoreError, match="not a glasswork run store"):
        RunStore(db).open()


def _info(run_id: str, **extra):
    from glasswork.running.runner import RunInfo

    return RunInfo(
        run_id=run_id,
        name="b",
        solver="toy",
        solver_version="1",
        spec_hash="h",
        spec={},
        spec_path=None,
        data_fingerprint="f",
        n_train=1,
        n_test=0,
        n_features=1,
        started_at="2026-01-01T00:00:00+00:00",
        **extra,
    )


def test_thousands_of_events_are_folded_in_one_go(tmp_path):
    from glasswork.contract.events import Event
    from glasswork.store import StoreSink

    store = RunStore(tmp_path / "glasswork.duckdb").open()
    info = _info("batch")
    sink = StoreSink(store)
    sink.on_start(info)
    for i in range(5000):
        sink.on_event(Event("progress", i * 1e-3, objective=1.0, lower_bound=0.5, nodes=i, counters={"queue": i}))
    assert store.live("batch") and store.get_run("batch").state == "running"  # merged from the live journal
    assert len(store.events("batch")) == 5000
    sink.on_finish(info, None, RuntimeError("stop"))
    events = store.events("batch")
    assert len(events) == 5000 and events[-1]["nodes"] == 4999 and events[-1]["gap"] == pytest.approx(0.5)
    assert store.get_run("batch").state == "failed" and not store.log_path("batch").exists()


def test_a_live_run_is_read_without_writing_and_a_dead_one_as_failed(tmp_path):
    """Readers merge the journals not folded yet: a live one (its writer holds its lock) reads
    as running and is left alone; one whose writer died reads as a fold would record it."""
    from glasswork.contract.events import Event
    from glasswork.store import StoreSink

    store = RunStore(tmp_path / "glasswork.duckdb").open()
    sink = StoreSink(store)
    sink.on_start(_info("live"))
    sink.on_event(Event("incumbent", 0.1, objective=2.0, lower_bound=1.0))
    assert [(r.run_id, r.state) for r in store.list_runs()] == [("live", "running")]
    assert store.log_path("live").exists() and store.check()["live_logs"] == ["live.jsonl"]
    assert store.check()["pending_logs"] == [] and store.check()["ok"]
    sink.journal._fh.close()  # the process dies: its lock goes with it, no finish record
    sink.journal._fh = None
    dead = json.loads(store.log_path("live").read_text().splitlines()[0])
    dead["pid"] = 2**22 + 12345  # a process of this host that no longer exists
    lines = store.log_path("live").read_text().splitlines()
    store.log_path("live").write_text("\n".join([json.dumps(dead), *lines[1:]]) + "\n")
    row = store.get_run("live")
    assert row.state == "failed" and "killed or crashed" in row.error and row.objective == 2.0
    assert not store.log_path("live").exists()  # reading found the lock free and folded it


def test_folding_a_journal_twice_gives_the_same_rows(tmp_path):
    """A fold killed after its commit but before the journal was deleted is folded again: the
    rows are replaced, never doubled."""
    from glasswork.store import recovery
    from glasswork.store.journal import read_journal

    store = RunStore(tmp_path / "glasswork.duckdb").open()
    records = [
        {"kind": "start", **_info("twice").to_dict(full=True)},
        *[{"kind": "progress", "elapsed": i / 10, "objective": 3.0 - i, "lower_bound": 0.0} for i in range(3)],
        {
            "kind": "finish",
            "run_id": "twice",
            "result": None,
            "error": "RuntimeError: no",
            "ended_at": "2026-01-01T00:00:05",
        },
    ]
    store.write_records(records)
    first = store.events("twice"), store.get_run("twice")
    store.events_dir.mkdir(exist_ok=True)
    store.log_path("twice").write_text("".join(json.dumps(r) + "\n" for r in records))
    assert read_journal(store.log_path("twice")) == records
    said: list[str] = []
    with store.file.writing() as con:  # the fold committed, the journal not yet deleted: a leftover
        assert recovery.fold_journals(con, store.events_dir, said.append) == ([], [store.log_path("twice")])
    assert said == []
    assert (store.events("twice"), store.get_run("twice")) == first
    assert store.check()["ok"] and len(first[0]) == 3


def test_a_journal_killed_before_its_start_line_is_dropped(tmp_path):
    store = RunStore(tmp_path / "glasswork.duckdb").open()
    store.events_dir.mkdir()
    fresh, stale = store.events_dir / "x.abc.jsonl.new", store.events_dir / "z.abc.jsonl.new"
    fresh.write_text("")  # may be between its creation and its lock: left alone
    stale.write_text("")
    os.utime(stale, (time.time() - 120, time.time() - 120))
    from glasswork.store import recovery

    store.log_path("y").write_text('{"kind": "sta')  # no complete start record: set aside, with a word
    said: list[str] = []
    RunStore(store.path, warn=said.append).open()
    assert sorted(p.name for p in store.events_dir.iterdir()) == sorted([fresh.name, "quarantine"])
    assert store.list_runs() == []
    assert [why for _, why in recovery.quarantined(store.events_dir)] == ["it holds no complete record"]
    assert len(said) == 1 and "y.jsonl" in said[0] and "holds no complete record" in said[0]


def test_the_documented_queries_run(invoke, tmp_path):
    """docs/run-store.md's SQL runs against a real store and answers what it says."""
    import re

    spec = str(write(tmp_path / "s.yaml", SPEC))
    optimal = run_json(invoke, spec)
    stopped = run_json(
        invoke, str(write(tmp_path / "e.yaml", SPEC + "search: {behaviour: endless}\nlimits: {nodes: 3}\n"))
    )
    doc = (Path(__file__).parents[2] / "docs" / "run-store.md").read_text()
    best, trajectory, _, open_gap = re.findall(r"```sql\n(.*?)```", doc, re.S)  # the third: test_store_rashomon
    con = duckdb.connect(str(tmp_path / "glasswork.duckdb"))
    [(solver, best_objective, count)] = con.execute(best).fetchall()
    assert (
        solver == "toy"
        and count == 2
        and best_objective == pytest.approx(min(optimal["objective"], stopped["objective"]))
    )
    rows = con.execute(trajectory).fetchall()
    assert [r[4] for r in rows] == [1, 2]  # nodes of the latest run's progress events (stopped at 3)
    assert [r[0] for r in con.execute(open_gap).fetchall()] == [stopped["run_id"]]
    con.close()
