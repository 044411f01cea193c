"""The fold trusts nothing it reads in ``<db>.events/``: a journal is folded only when its name is
its run id, it is a regular file within the size bound and every record has the shape glasswork
writes; a run stored as ended is never rewritten. Anything else is set aside in the quarantine
folder with one warning, every command goes on, and ``runs check`` is not sound until it is dealt
with. Run ids never lead out of the store; a deleted lock file never makes a run blame another
glasswork process."""

from __future__ import annotations

import json
import os
import subprocess
import sys
import time
from pathlib import Path

import pytest
from click.testing import CliRunner
from glasswork.cli import cli
from glasswork.store import RunStore, recovery
from processes import glasswork, running
from spec_files import write
from test_store import SPEC, _info


def run_once(db: Path, tmp_path: Path) -> str:
    result = CliRunner().invoke(cli, ["run", "--json", "-q", "--db", str(db), str(write(tmp_path / "s.yaml", SPEC))])
    assert result.exit_code == 0, result.output
    return json.loads(result.stdout)["run_id"]


def journal_of(store: RunStore, run_id: str) -> list[dict]:
    """A journal of a finished run, cut before its finish record (a partial copy)."""
    assert store.get_run(run_id).state == "finished"
    return [
        {"kind": "start", **_info(run_id).to_dict(full=True)},
        {"kind": "progress", "elapsed": 0.1, "objective": 0.5, "lower_bound": 0.0},
    ]


def lines(records: list[dict]) -> str:
    return "".join(json.dumps(r) + "\n" for r in records)


def test_a_partial_copy_of_a_journal_never_rewrites_a_finished_run(toy_env, tmp_path, monkeypatch):
    """``<id>-copy.jsonl`` (an editor's, a backup's) turned a finished optimal run into ``failed``
    and deleted its model, with exit 0 and no word."""
    monkeypatch.chdir(tmp_path)
    db = tmp_path / "glasswork.duckdb"
    run_id = run_once(db, tmp_path)
    store = RunStore(db)
    before = store.details(run_id)
    copy = store.events_dir / f"{run_id}-copy.jsonl"
    store.events_dir.mkdir(exist_ok=True)
    copy.write_text(lines(journal_of(store, run_id)))  # no finish record: a partial copy
    listed = CliRunner().invoke(cli, ["runs", "list", "--db", str(db), "--json"])
    assert listed.exit_code == 0, listed.output
    after = RunStore(db).details(run_id)
    assert after["state"] == "finished" and after["models"] == before["models"]
    assert f"{run_id}-copy.jsonl" in listed.stderr and "not folded" in listed.stderr
    assert listed.stderr.count("warning:") == 1
    [(name, why)] = recovery.quarantined(store.events_dir)
    assert name.endswith(f"{run_id}-copy.jsonl") and "names run" in why
    assert not copy.exists()
    check = CliRunner().invoke(cli, ["runs", "check", "--db", str(db), "--json"])
    assert check.exit_code == 1 and not json.loads(check.stdout)["ok"]
    assert json.loads(check.stdout)["quarantined_logs"][0]["why"] == why


def test_a_journal_named_after_a_stored_run_never_rewrites_it(toy_env, tmp_path, monkeypatch):
    monkeypatch.chdir(tmp_path)
    db = tmp_path / "glasswork.duckdb"
    run_id = run_once(db, tmp_path)
    store = RunStore(db)
    store.log_path(run_id).write_text(lines(journal_of(store, run_id)))
    said: list[str] = []
    RunStore(db, warn=said.append).open()
    assert store.get_run(run_id).state == "finished" and store.details(run_id)["models"]
    assert len(said) == 1 and "already stored as finished" in said[0]


START = {"kind": "start", **_info("r1", host="elsewhere", pid=1).to_dict(full=True)}
FINISH = {"kind": "finish", "run_id": "r1", "result": None, "error": "RuntimeError: no"}


@pytest.mark.parametrize(
    "text, why",
    [
        (lines([{**START, "started_at": "yesterday"}, FINISH]), "started_at"),
        (
            lines([START, {**FINISH, "result": {"status": 5, "model": {"kind": "x"}}}]),
            "no known status",
        ),
        (lines([{k: v for k, v in START.items() if k not in ("name", "spec")}, FINISH]), "no text 'name'"),
        (lines([START, {"kind": "progress", "elapsed": "soon"}, FINISH]), "'elapsed' that is not a number"),
        (lines([START]) + "[" * 200_000 + "]" * 200_000 + "\n" + lines([FINISH]), None),
        (lines([START, {**FINISH, "ended_at": "at noon"}]), "ended_at"),
        (lines([{**START, "run_id": "../../x"}, FINISH]), "not the file's"),
        (lines([START, {"kind": "progress", "nodes": -3}, FINISH]), "'nodes' that is not a count"),
        (lines([START, {"kind": "rashomon", "elapsed": 0.1, "rashomon": [3]}, FINISH]), "'rashomon' that is not"),
        (lines([START, {**FINISH, "result": {"status": "optimal", "model": None}}]), "has no model"),
        (lines([START, {**FINISH, "result": {"status": "infeasible", "model": "x"}}]), "model that is not an object"),
    ],
    ids=[
        "bad-date",
        "status-5",
        "missing-fields",
        "text-figure",
        "nested-brackets",
        "bad-end",
        "other-id",
        "nodes",
        "set-progress",
        "optimal-without-model",
        "model-not-object",
    ],
)
def test_a_malformed_journal_is_set_aside_and_every_command_goes_on(toy_env, tmp_path, monkeypatch, text, why):
    """Each of these gave "internal error" on every command, ``run`` included, while ``runs
    check`` called the store sound. (200,000 nested brackets are one unreadable line, skipped as
    a damaged line is: the rest of the journal folds.)"""
    monkeypatch.chdir(tmp_path)
    db = tmp_path / "glasswork.duckdb"
    store = RunStore(db).open()
    store.events_dir.mkdir(exist_ok=True)
    store.log_path("r1").write_text(text)
    check = CliRunner().invoke(cli, ["runs", "check", "--db", str(db), "--json"])
    if why is not None:
        assert check.exit_code == 1 and why in json.dumps(json.loads(check.stdout)["refused_logs"])
    listed = CliRunner().invoke(cli, ["runs", "list", "--db", str(db), "--json"])
    assert listed.exit_code == 0, listed.output
    assert "internal error" not in listed.output
    ran = CliRunner().invoke(cli, ["run", "-q", "--db", str(db), str(write(tmp_path / "s.yaml", SPEC))])
    assert ran.exit_code == 0, ran.output
    if why is None:
        assert [r.run_id for r in store.list_runs()].count("r1") == 1
        return
    assert "r1.jsonl" in listed.stderr and why in listed.stderr and listed.stderr.count("warning:") == 1
    assert "r1" not in [r.run_id for r in store.list_runs()]
    assert [why in w for _, w in recovery.quarantined(store.events_dir)] == [True]


def test_a_folder_a_fifo_and_a_link_are_set_aside_without_hanging(toy_env, tmp_path):
    """A FIFO hung every command, and a link to /dev/zero read 2.1 GB in 40 s."""
    db = tmp_path / "glasswork.duckdb"
    store = RunStore(db).open()
    store.events_dir.mkdir(exist_ok=True)
    (store.events_dir / "folder.jsonl").mkdir()
    os.mkfifo(store.events_dir / "pipe.jsonl")
    (store.events_dir / "zero.jsonl").symlink_to("/dev/zero")
    outside = tmp_path / "elsewhere.jsonl"
    outside.write_text(lines([START, FINISH]))
    (store.events_dir / "r1.jsonl").symlink_to(outside)
    started = time.monotonic()
    proc = glasswork("runs", "list", "--db", str(db), "--json", env=toy_env, timeout=60)
    assert proc.returncode == 0, proc.stderr
    assert time.monotonic() - started < 30
    said = proc.stderr
    for name, kind in [
        ("folder.jsonl", "a folder"),
        ("pipe.jsonl", "a FIFO"),
        ("zero.jsonl", "a symbolic link"),
        ("r1.jsonl", "a symbolic link"),
    ]:
        assert name in said and kind in said, said
    assert said.count("warning:") == 4
    assert outside.exists() and [p.name for p in recovery.journals(store.events_dir)] == []
    assert len(recovery.quarantined(store.events_dir)) == 4


def test_a_journal_past_the_size_bound_is_set_aside_unread(tmp_path, monkeypatch):
    from glasswork.store import journal

    monkeypatch.setattr(journal, "MAX_JOURNAL_BYTES", 1000)
    store = RunStore(tmp_path / "glasswork.duckdb").open()
    store.events_dir.mkdir(exist_ok=True)
    store.log_path("r1").write_text(lines([START, *[{"kind": "log", "elapsed": 0.0, "message": "x" * 100}] * 20]))
    said: list[str] = []
    RunStore(store.path, warn=said.append).open()
    assert len(said) == 1 and "more than the 1,000" in said[0]


def test_runs_check_names_journals_waiting_and_refused(tmp_path):
    store = RunStore(tmp_path / "glasswork.duckdb").open()
    store.events_dir.mkdir(exist_ok=True)
    store.log_path("r1").write_text(lines([START, FINISH]))
    (store.events_dir / "odd.jsonl").write_text(lines([START, FINISH]))
    report = store.check()
    assert report["pending_logs"] == ["r1.jsonl"] and list(report["refused_logs"]) == ["odd.jsonl"]
    assert not report["ok"] and any("odd.jsonl cannot be folded" in p for p in report["problems"])


def test_a_run_id_never_names_a_file_outside_the_store(toy_env, tmp_path, monkeypatch):
    """A run id holding ``../`` made ``runs delete`` unlink a ``.jsonl`` file outside the store."""
    import duckdb

    monkeypatch.chdir(tmp_path)
    (tmp_path / "store").mkdir()
    db = tmp_path / "store" / "glasswork.duckdb"
    run_once(db, tmp_path)
    victim = tmp_path / "victim.jsonl"
    victim.write_text("keep me\n")
    con = duckdb.connect(str(db))
    con.execute("INSERT INTO runs (run_id, name, state) VALUES ('../../victim', 'evil', 'finished')")
    con.close()
    deleted = CliRunner().invoke(cli, ["runs", "delete", "../../victim", "--db", str(db), "-y"])
    assert deleted.exit_code == 0, deleted.output
    assert victim.read_text() == "keep me\n"
    with pytest.raises(Exception, match="not a run id"):
        RunStore(db).log_path("../../victim")


HOLDER = """
import sys, time
from glasswork.store import RunStore
with RunStore(sys.argv[1]).file.writing() as con:
    print("held", flush=True)
    time.sleep(float(sys.argv[2]))
"""


@pytest.mark.slow  # (over 3 s: the README's command stays under 5 minutes; .ci/run's slow step runs it)
def test_a_deleted_lock_file_never_makes_a_run_blame_another_glasswork_process(toy_env, tmp_path):
    """With ``<db>.lock`` deleted while a glasswork process held the store, the next one locked a
    new file, met DuckDB's own lock, and told the user to close "the program holding it": another
    glasswork run. It now leaves its journal to that process, as when the lock is taken."""
    db = tmp_path / "glasswork.duckdb"
    RunStore(db).open()
    with running([sys.executable, "-c", HOLDER, str(db), "6"], stdout=subprocess.PIPE, text=True, env=toy_env) as proc:
        assert proc.stdout.readline().strip() == "held"
        (tmp_path / "glasswork.duckdb.lock").unlink()
        records = [START, {**FINISH, "ended_at": "2026-01-01T00:00:01"}]
        RunStore(db, lock_timeout=1).write_records(records)  # raised "... Close the program holding it"
        assert RunStore(db).log_path("r1").exists()  # kept for whoever folds next
        proc.wait(timeout=30)
    assert RunStore(db).get_run("r1").state == "failed"
