"""A store that explains itself and keeps what it has (issue 17): a damaged file is named with
the way out and never written to; a killed run keeps its last incumbent, bound, gap and model; a
full disk ends the run with a message, the result printed and the store readable."""

from __future__ import annotations

import hashlib
import json
import os
import signal
import subprocess
import sys
import time
from pathlib import Path

import pytest
from click.testing import CliRunner
from glasswork.cli import cli
from glasswork.store import RunStore, StoreDamaged, StoreError
from processes import glasswork, running
from robustness.harness import damage, fill, tmpfs
from spec_files import write
from test_store import SPEC, _info


def digest(path: Path) -> str:
    return hashlib.sha256(path.read_bytes()).hexdigest()


@pytest.fixture
def damaged_store(toy_env, tmp_path, monkeypatch):
    """A real store (two toy runs, padded with their own events to span blocks) with one block
    overwritten by garbage, as a bad sector or a stray write would leave it."""
    monkeypatch.chdir(tmp_path)
    db = tmp_path / "glasswork.duckdb"
    spec = write(tmp_path / "s.yaml", SPEC)
    for _ in range(2):
        assert CliRunner().invoke(cli, ["run", "-q", "--db", str(db), str(spec)]).exit_code == 0
    damage(db)
    return db


def test_a_damaged_store_is_named_with_the_way_out_and_never_written(damaged_store, tmp_path):
    before = digest(damaged_store)
    for args in (
        ["runs", "list", "--db", str(damaged_store)],
        ["run", "-q", "--db", str(damaged_store), str(tmp_path / "s.yaml")],
    ):
        result = CliRunner().invoke(cli, args)
        assert result.exit_code == 1, result.output
        message = result.stderr
        assert "internal error" not in message
        assert str(damaged_store) in message and "is damaged" in message and "checksum" in message
        for way_out in ("--db", "--no-store", "glasswork runs check", "--salvage"):
            assert way_out in message
    assert "nothing was run" in message
    assert digest(damaged_store) == before, "a damaged store is never written to"
    assert not (damaged_store.parent / (damaged_store.name + ".events")).exists() or not list(
        (damaged_store.parent / (damaged_store.name + ".events")).glob("*.jsonl")
    )


def test_runs_check_reports_the_damage_and_salvage_copies_what_is_readable(damaged_store, tmp_path):
    before = digest(damaged_store)
    check = CliRunner().invoke(cli, ["runs", "check", "--db", str(damaged_store), "--json"])
    assert check.exit_code == 1
    report = json.loads(check.stdout)
    assert not report["ok"] and any("checksum" in p for p in report["problems"])
    rescued = tmp_path / "rescued.duckdb"
    salvage = CliRunner().invoke(cli, ["runs", "check", "--db", str(damaged_store), "--salvage", str(rescued)])
    assert "salvaged into" in salvage.stdout, salvage.output
    assert digest(damaged_store) == before
    runs = RunStore(rescued).list_runs()
    assert len(runs) == 2 and all(r.state == "finished" for r in runs)
    exported = CliRunner().invoke(cli, ["runs", "export", "--db", str(rescued), runs[0].run_id])
    assert exported.exit_code == 0 and json.loads(exported.stdout)[0]["models"]
    assert CliRunner().invoke(cli, ["runs", "check", "--db", str(rescued)]).exit_code == 0
    again = CliRunner().invoke(cli, ["runs", "check", "--db", str(damaged_store), "--salvage", str(rescued)])
    assert again.exit_code == 2 and "exists; salvage writes a new store" in again.stderr  # a user mistake


def test_a_sound_store_checks_clean(toy_env, tmp_path, monkeypatch):
    monkeypatch.chdir(tmp_path)
    spec = write(tmp_path / "s.yaml", SPEC)
    assert CliRunner().invoke(cli, ["run", "-q", str(spec)]).exit_code == 0
    result = CliRunner().invoke(cli, ["runs", "check"])
    assert result.exit_code == 0 and "sound" in result.stdout and "NOT" not in result.stdout


def test_a_killed_run_keeps_its_last_incumbent_bound_gap_and_model(toy_env, tmp_path):
    db = tmp_path / "glasswork.duckdb"
    spec = write(tmp_path / "s.yaml", SPEC + "search: {behaviour: endless, step_seconds: 0.01}\n")
    events = tmp_path / "events.jsonl"
    with running(
        [sys.executable, "-m", "glasswork", "run", "-q", "--db", str(db), str(spec), "--events", str(events)],
        stdout=subprocess.DEVNULL,
        stderr=subprocess.PIPE,
        env=toy_env,
    ) as proc:
        deadline = time.monotonic() + 60
        while time.monotonic() < deadline and (not events.exists() or events.read_text().count('"progress"') < 5):
            assert proc.poll() is None, proc.stderr.read()
            time.sleep(0.05)
        os.killpg(proc.pid, signal.SIGKILL)
        proc.wait()
    store = RunStore(db).open()
    [run] = store.list_runs()
    last = [json.loads(line) for line in events.read_text().splitlines() if '"progress"' in line][-1]
    assert run.state == "failed" and run.status is None
    assert run.objective == pytest.approx(last["objective"]) and run.lower_bound == 0.0
    assert run.gap == pytest.approx(1.0)
    [model] = store.details(run.run_id)["models"]
    assert model["kind"] == "stump" and model["text"].startswith("if ")
    shown = CliRunner().invoke(cli, ["runs", "show", "latest", "--db", str(db)])
    assert "state failed" in shown.stdout and "not certified" in shown.stdout
    assert f"{run.objective:.6f}"[:6] in shown.stdout and "Model" in shown.stdout


@pytest.fixture
def small_disk(tmp_path):
    """A 3 MiB tmpfs (needs root and mount); skipped where that is not allowed."""
    with tmpfs(tmp_path / "disk") as mount:
        if mount is None:
            pytest.skip("mounting a tmpfs needs root")
        yield mount


def test_a_full_disk_ends_the_run_with_a_message_the_result_and_a_readable_store(small_disk, toy_env, tmp_path):
    db = small_disk / "glasswork.duckdb"
    spec = write(tmp_path / "s.yaml", SPEC + "search: {behaviour: endless, step_seconds: 0.002}\nlimits: {time: 2}\n")
    RunStore(db).open()
    filler = fill(small_disk)
    proc = subprocess.run(
        [sys.executable, "-m", "glasswork", "run", "--json", "-q", "--db", str(db), str(spec)],
        capture_output=True,
        text=True,
        env=toy_env,
        timeout=120,
    )
    assert proc.returncode == 1, proc.stderr  # printed, not recorded: said, and not a success
    assert json.loads(proc.stdout)["status"] == "stopped_time"  # the result is printed
    assert "No space left on device" in proc.stderr or "disk" in proc.stderr
    assert "internal error" not in proc.stderr and "Traceback" not in proc.stderr
    check = glasswork("runs", "check", "--db", str(db), "--json", env=toy_env)
    assert json.loads(check.stdout)["tables"]["runs"] is not None, check.stdout  # readable while still full
    filler.unlink()
    listed = glasswork("runs", "list", "--db", str(db), "--json", env=toy_env)
    assert listed.returncode == 0, listed.stderr
    assert (
        subprocess.run(
            [sys.executable, "-m", "glasswork", "runs", "check", "--db", str(db)],
            capture_output=True,
            text=True,
            env=toy_env,
            timeout=60,
        ).returncode
        == 0
    )


def test_damage_met_after_the_store_opened_is_named_not_an_internal_error(toy_env, tmp_path, monkeypatch):
    """A damaged block of events, artifacts or metrics is only read by ``runs show``, ``export``
    or ``report``, after the store opened sound: the same message and way out, exit 1."""
    import duckdb
    from glasswork.store.schema import damaged

    monkeypatch.chdir(tmp_path)
    db = tmp_path / "glasswork.duckdb"
    assert CliRunner().invoke(cli, ["run", "-q", "--db", str(db), str(write(tmp_path / "s.yaml", SPEC))]).exit_code == 0

    def broken(self, run_id):
        raise damaged(
            self.path,
            duckdb.IOException(
                "Corrupt database file: computed checksum 1 does not match "
                "stored checksum 2 in block at location 2371584"
            ),
        )

    monkeypatch.setattr(RunStore, "details", broken)
    for args in (["runs", "show", "latest"], ["export", "latest", "--format", "json"], ["report", "latest"]):
        result = CliRunner().invoke(cli, [*args, "--db", str(db)])
        assert result.exit_code == 1 and not isinstance(result.exception, StoreDamaged), (args, result.exception)
        assert "is damaged" in result.stderr and "--salvage" in result.stderr, (args, result.output)


# -- the store's smaller findings (issue 23): each a clear message, never a silent loss -------------


def test_a_store_cut_at_an_odd_length_stops_the_run_and_is_not_written(toy_env, tmp_path, monkeypatch):
    """DuckDB opens a file cut mid-block, writes past the cut and leaves blocks that fail their
    checksum: the run said optimal and exited 0 while its result was lost."""
    from glasswork.store.schema import BLOCK_BYTES

    monkeypatch.chdir(tmp_path)
    db = tmp_path / "glasswork.duckdb"
    spec = write(tmp_path / "s.yaml", SPEC)
    assert CliRunner().invoke(cli, ["run", "-q", "--db", str(db), str(spec)]).exit_code == 0
    size = db.stat().st_size
    with db.open("r+b") as fh:
        fh.truncate(size - BLOCK_BYTES - BLOCK_BYTES // 2 + 1)
    before = digest(db)
    proc = subprocess.run(
        [sys.executable, "-m", "glasswork", "run", "--json", "-q", "--db", str(db), str(spec)],
        capture_output=True,
        text=True,
        env=toy_env,
        timeout=120,
    )
    assert proc.returncode == 1, proc.stderr
    assert "is damaged" in proc.stderr and "truncated" in proc.stderr and "--salvage" in proc.stderr
    assert "internal error" not in proc.stderr and digest(db) == before


def test_a_db_path_under_a_regular_file_is_a_clear_store_error(toy_env, tmp_path, monkeypatch):
    """``--db FILE/x.duckdb``: the store cannot be used as asked (exit 1, like an unwritable
    folder), with what is wrong and the way out; nothing runs."""
    monkeypatch.chdir(tmp_path)
    spec = write(tmp_path / "s.yaml", SPEC)
    result = CliRunner().invoke(cli, ["run", "-q", "--db", str(spec / "x.duckdb"), str(spec)])
    assert result.exit_code == 1, (result.output, result.exception)
    assert "Not a directory" in result.stderr and "--db" in result.stderr and "nothing was run" in result.stderr
    assert "internal error" not in result.output.lower()


def test_an_unreadable_schema_version_is_a_clear_store_error(toy_env, tmp_path, monkeypatch):
    import duckdb

    monkeypatch.chdir(tmp_path)
    db = tmp_path / "glasswork.duckdb"
    RunStore(db).open()
    con = duckdb.connect(str(db))
    con.execute("UPDATE meta SET value = 'abc' WHERE key = 'schema_version'")
    con.close()
    for args in (
        ["run", "-q", "--db", str(db), str(write(tmp_path / "s.yaml", SPEC))],
        ["runs", "list", "--db", str(db)],
    ):
        result = CliRunner().invoke(cli, args)
        assert result.exit_code == 1, (args, result.output, result.exception)
        assert "unreadable schema version ('abc'" in result.stderr and "--salvage" in result.stderr
        assert "internal error" not in result.output.lower()


def test_a_spec_store_path_through_a_symlink_out_of_its_folder_is_refused(toy_env, tmp_path, monkeypatch):
    """``store.path`` is relative to the spec and must stay in its folder once links are
    followed (docs/security.md); ``--db`` through the same link is the user's choice."""
    monkeypatch.chdir(tmp_path)
    folder, outside = tmp_path / "specs", tmp_path / "elsewhere"
    folder.mkdir()
    outside.mkdir()
    (folder / "runs").symlink_to(outside, target_is_directory=True)
    spec = write(folder / "s.yaml", SPEC + "store: {path: runs/history.duckdb}\n")
    for command in (["run", "-q"], ["sweep", "-j", "1"]):
        document = (
            spec
            if command[0] == "run"
            else write(
                folder / "w.yaml",
                SPEC + "store: {path: runs/history.duckdb}\nsweep: {grid: {objective.regularization: [0.0]}}\n",
            )
        )
        result = CliRunner().invoke(cli, [*command, str(document)])
        assert result.exit_code == 2, (command, result.output, result.exception)
        assert "store.path" in result.stderr and "outside the spec's folder" in result.stderr
        assert "--db" in result.stderr and "internal error" not in result.output.lower()
    assert list(outside.iterdir()) == []  # nothing written through the link
    assert (
        CliRunner().invoke(cli, ["run", "-q", "--db", str(folder / "runs" / "mine.duckdb"), str(spec)]).exit_code == 0
    )
    assert (outside / "mine.duckdb").exists()


def leave_free(folder: Path, filler: Path, free: int) -> None:
    """Shrink ``filler`` until ``folder``'s disk has about ``free`` bytes left."""
    now = os.statvfs(folder)
    have = now.f_bavail * now.f_frsize
    with filler.open("r+b") as fh:
        fh.truncate(max(filler.stat().st_size - (free - have), 0))


@pytest.fixture
def roomy_disk(tmp_path):
    """An 8 MiB tmpfs (needs root and mount); skipped where that is not allowed."""
    with tmpfs(tmp_path / "disk", "8m") as mount:
        if mount is None:
            pytest.skip("mounting a tmpfs needs root")
        yield mount


def test_a_fold_without_room_leaves_the_store_as_it_was_and_keeps_the_journal(roomy_disk, toy_env, tmp_path):
    """With room for the journal but not for the fold, the run exited 0 without a word, its
    checkpoint cut short, and every command then refused the store as "damaged (truncated)"."""
    db = roomy_disk / "glasswork.duckdb"
    spec = write(tmp_path / "s.yaml", SPEC)
    command = ("run", "--json", "-q", "--db", str(db), str(spec))
    first = glasswork(*command, env=toy_env)
    assert first.returncode == 0, first.stderr
    filler = fill(roomy_disk)
    leave_free(roomy_disk, filler, 600_000)
    before = digest(db)
    proc = glasswork(*command, env=toy_env)
    assert proc.returncode == 1, proc.stderr
    run_id = json.loads(proc.stdout)["run_id"]  # the result is printed
    assert "nearly full" in proc.stderr and "journals are kept" in proc.stderr, proc.stderr
    assert "internal error" not in proc.stderr and "Traceback" not in proc.stderr
    assert digest(db) == before and (roomy_disk / "glasswork.duckdb.events" / f"{run_id}.jsonl").exists()
    listed = glasswork("runs", "list", "--db", str(db), "--json", env=toy_env)
    assert listed.returncode == 0, listed.stderr  # readable while full: the run read from its journal
    assert run_id in {r["run_id"] for r in json.loads(listed.stdout)}
    filler.unlink()
    store = RunStore(db).open()
    assert store.get_run(run_id).state == "finished" and store.check()["ok"]
    assert not store.log_path(run_id).exists()


def test_a_checkpoint_cut_short_by_a_full_disk_keeps_the_journal_and_a_readable_store(
    roomy_disk, toy_env, tmp_path, monkeypatch
):
    """When the estimate is beaten (the room checked as none needed), DuckDB's checkpoint fails:
    a store error naming the full disk, the journal kept, and the store (its odd tail left by the
    cut checkpoint) still read and written once there is room."""
    import glasswork.store as store_module

    db = roomy_disk / "glasswork.duckdb"
    spec = write(tmp_path / "s.yaml", SPEC)
    assert glasswork("run", "-q", "--db", str(db), str(spec), env=toy_env).returncode == 0
    store = RunStore(db)
    records = [
        {"kind": "start", **_info("big").to_dict(full=True)},
        *[{"kind": "log", "elapsed": i / 1000, "message": os.urandom(400).hex()} for i in range(1500)],
        {"kind": "finish", "run_id": "big", "result": None, "error": "RuntimeError: x", "ended_at": "2026-01-01T09:00"},
    ]
    filler = fill(roomy_disk)
    leave_free(roomy_disk, filler, 1_600_000)
    monkeypatch.setattr(store_module, "FOLD_HEADROOM", 0)
    monkeypatch.setattr(store_module, "FOLD_JOURNAL_FACTOR", 0)
    with pytest.raises(StoreError, match="is full"):
        store.write_records(records)
    assert store.log_path("big").exists()
    assert store.check()["tables"]["runs"] is not None  # DuckDB reads it: never "damaged (truncated)"
    filler.unlink()
    RunStore(db).open()
    assert RunStore(db).get_run("big").state == "failed" and not store.log_path("big").exists()
    assert RunStore(db).check()["ok"]


def test_a_store_with_an_odd_tail_duckdb_reads_is_not_refused(toy_env, tmp_path, monkeypatch):
    """A checkpoint a full disk cut short leaves part of a block past the last whole one; DuckDB
    reads every table, so the store is used (padded to whole blocks before it is written)."""
    from glasswork.store.schema import BLOCK_BYTES, HEADER_BYTES

    monkeypatch.chdir(tmp_path)
    db = tmp_path / "glasswork.duckdb"
    spec = write(tmp_path / "s.yaml", SPEC)
    assert CliRunner().invoke(cli, ["run", "-q", "--db", str(db), str(spec)]).exit_code == 0
    with db.open("ab") as fh:
        fh.write(os.urandom(BLOCK_BYTES // 3))
    listed = CliRunner().invoke(cli, ["runs", "list", "--db", str(db), "--json"])
    assert listed.exit_code == 0, listed.output
    assert CliRunner().invoke(cli, ["run", "-q", "--db", str(db), str(spec)]).exit_code == 0
    assert (db.stat().st_size - HEADER_BYTES) % BLOCK_BYTES == 0
    assert len(RunStore(db).list_runs()) == 2 and RunStore(db).check()["ok"]
