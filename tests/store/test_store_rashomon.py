"""The run store's Rashomon tables, against a real DuckDB file: a run's set written as rows and
read back (filters, ranks, summaries), an older store migrated, and a killed run's journal
recovered with the members its events announced."""

from __future__ import annotations

from typing import Any

import duckdb
import pytest
from glasswork.contract.events import RecordSink
from glasswork.running.launch import Launch
from glasswork.spec.load import validate_spec
from glasswork.store import MIGRATIONS, SCHEMA_VERSION, RunStore

DATA = {"source": "sklearn:breast_cancer", "binarize": {"thresholds": 2}}


def run_with_set(tmp_path, toy_registry, rashomon: dict[str, Any], search: dict[str, Any] | None = None, sinks=()):
    spec = validate_spec(
        {"name": "set", "solver": "toy", "data": DATA, "rashomon": rashomon, "search": search or {}}, toy_registry
    )
    db = tmp_path / "glasswork.duckdb"
    outcome = Launch(spec, registry=toy_registry, db=db).run(sinks)
    return RunStore(db), outcome


def test_a_set_is_written_as_rows_and_read_back_filtered(tmp_path, toy_registry):
    store, outcome = run_with_set(tmp_path, toy_registry, {"epsilon": 0.5, "max_models": 4})
    run_id = outcome.info.run_id
    rashomon = outcome.result.rashomon
    summary = store.rashomon_summary(run_id)
    assert summary is not None
    assert summary.count == rashomon.count > summary.kept == 4
    assert summary.complete is True and summary.exhaustive is True and summary.optimum_proven is True
    assert summary.threshold == pytest.approx(rashomon.threshold) and summary.epsilon == 0.5
    assert summary.optimum == pytest.approx(outcome.result.certificate.objective)
    members = store.rashomon_members(run_id)
    assert [m.rank for m in members] == [1, 2, 3, 4]
    for row, member in zip(members, rashomon.members):
        assert row.objective == pytest.approx(member.objective) and row.features == member.features
        assert row.fingerprint == member.fingerprint and row.model == member.model.to_dict()
        assert row.model_text == member.model.to_text()
    first = members[0].features[0]
    assert [m.rank for m in store.rashomon_members(run_id, uses=[first])] == [1]
    assert [m.rank for m in store.rashomon_members(run_id, avoids=[first])] == [2, 3, 4]
    assert store.rashomon_members(run_id, uses=[first], avoids=[first]) == []
    assert [m.rank for m in store.rashomon_members(run_id, limit=2)] == [1, 2]
    assert [m.rank for m in store.rashomon_members(run_id, rank=3)] == [3]
    assert store.rashomon_features(run_id) == sorted({f for m in members for f in m.features})


def test_summary_members_keep_no_model_and_a_run_without_a_set_has_no_rows(tmp_path, toy_registry):
    store, outcome = run_with_set(tmp_path, toy_registry, {"epsilon": 0.5, "keep": "summary"})
    members = store.rashomon_members(outcome.info.run_id)
    assert members and all(m.model is None and m.model_text is None and m.fingerprint for m in members)
    plain = validate_spec({"name": "plain", "solver": "toy", "data": DATA}, toy_registry)
    other = Launch(plain, registry=toy_registry, db=store.path).run()
    assert store.rashomon_summary(other.info.run_id) is None and store.rashomon_members(other.info.run_id) == []


def test_deleting_a_run_deletes_its_set(tmp_path, toy_registry):
    store, outcome = run_with_set(tmp_path, toy_registry, {"epsilon": 0.5})
    store.delete([outcome.info.run_id])
    con = duckdb.connect(str(store.path))
    try:
        assert con.execute("SELECT count(*) FROM rashomon_members").fetchall() == [(0,)]
        assert con.execute("SELECT count(*) FROM rashomon_sets").fetchall() == [(0,)]
    finally:
        con.close()


def test_a_version_3_store_is_migrated_to_hold_sets(tmp_path, toy_registry):
    db = tmp_path / "glasswork.duckdb"
    con = duckdb.connect(str(db))
    for step in MIGRATIONS[:3]:
        for statement in step:
            con.execute(statement)
    con.execute("INSERT INTO meta VALUES ('schema_version', '3')")
    con.execute(
        "INSERT INTO runs (run_id, name, solver, state, started_at, ended_at) "
        "VALUES ('old', 'old', 'toy', 'failed', now()::TIMESTAMP, now()::TIMESTAMP)"
    )
    con.close()
    assert RunStore(db).check()["ok"]  # a read-only check of an old store does not ask for tables it lacks
    store, outcome = run_with_set(tmp_path, toy_registry, {"epsilon": 0.5})
    assert store.rashomon_summary("old") is None and store.rashomon_summary(outcome.info.run_id) is not None
    con = duckdb.connect(str(db))
    try:
        assert con.execute("SELECT value FROM meta WHERE key = 'schema_version'").fetchall() == [(str(SCHEMA_VERSION),)]
    finally:
        con.close()
    assert store.check()["ok"] and store.check()["tables"]["rashomon_members"] > 0


def test_a_killed_runs_journal_keeps_the_members_its_events_announced(tmp_path, toy_registry):
    """A run killed before its finish record: folding its journal records it failed, with the
    members its ``rashomon`` events carried, the last running count, and the set not complete."""
    records: list[dict[str, Any]] = []
    _, outcome = run_with_set(
        tmp_path / "first", toy_registry, {"epsilon": 0.5}, sinks=[RecordSink(records.append, full=True)]
    )
    assert records[-1]["kind"] == "finish"
    killed = records[:-1]  # the process died before writing its finish record
    killed[0] = {**killed[0], "pid": 2**22 + 12345}  # a process of this host that no longer exists
    store = RunStore(tmp_path / "recovered.duckdb").open()
    store.write_records(killed)
    run_id = outcome.info.run_id
    assert store.get_run(run_id).state == "failed"
    summary = store.rashomon_summary(run_id)
    assert summary is not None and summary.complete is False and summary.optimum_proven is False
    assert summary.count == outcome.result.rashomon.count
    assert summary.threshold == pytest.approx(outcome.result.rashomon.threshold)
    assert [m.fingerprint for m in store.rashomon_members(run_id)] == [
        m.fingerprint for m in outcome.result.rashomon.members
    ]


def test_a_salvaged_store_keeps_its_sets(tmp_path, toy_registry):
    store, outcome = run_with_set(tmp_path, toy_registry, {"epsilon": 0.5})
    copied = store.salvage(tmp_path / "salvaged.duckdb")
    assert copied["rashomon_members"] == outcome.result.rashomon.kept and copied["rashomon_sets"] == 1
    assert RunStore(tmp_path / "salvaged.duckdb").rashomon_summary(outcome.info.run_id).count == (
        outcome.result.rashomon.count
    )


def test_the_documented_rashomon_query_gives_the_variable_use(tmp_path, toy_registry):
    """docs/run-store.md's query on the set's tables answers what the multiplicity figures say."""
    import re
    from pathlib import Path

    store, outcome = run_with_set(tmp_path, toy_registry, {"epsilon": 0.5, "max_models": 4})
    doc = (Path(__file__).parents[2] / "docs" / "run-store.md").read_text()
    query = re.findall(r"```sql\n(.*?)```", doc, re.S)[2]
    assert "rashomon_members" in query
    con = duckdb.connect(str(store.path), read_only=True)
    try:
        rows = con.execute(query).fetchall()
    finally:
        con.close()
    assert dict(rows) == pytest.approx(outcome.multiplicity["variable_use"])


def test_a_live_runs_set_is_read_as_it_grows(tmp_path):
    """Readers merge a live run's journal: the members its ``rashomon`` events announced so far
    are listed (what the terminal UI browses while the set grows), never as complete."""
    from glasswork.contract.events import Event
    from glasswork.contract.record import RunInfo
    from glasswork.rashomon import RashomonMember
    from glasswork.store import StoreSink

    store = RunStore(tmp_path / "glasswork.duckdb").open()
    sink = StoreSink(store)
    sink.on_start(
        RunInfo(
            run_id="live",
            name="b",
            solver="toy",
            solver_version="1",
            spec_hash="h",
            spec={},
            spec_path=None,
            data_fingerprint="f",
            n_train=1,
            n_test=0,
            n_features=2,
            started_at="2026-01-01T00:00:00+00:00",
        )
    )

    def announce(count: int, *members: RashomonMember) -> None:
        sink.on_event(
            Event("rashomon", 0.1, counters={"rashomon_count": count, "rashomon_threshold": 0.5}, members=members)
        )

    announce(1, RashomonMember(0.1, ("a",), "f1"))
    assert [(m.rank, m.features) for m in store.rashomon_members("live")] == [(1, ("a",))]
    announce(3, RashomonMember(0.2, ("b",), "f2"), RashomonMember(0.3, ("a", "b"), "f3"))
    summary = store.rashomon_summary("live")
    assert summary.count == 3 and summary.kept == 3 and summary.complete is False
    assert summary.threshold == 0.5
    assert [m.rank for m in store.rashomon_members("live", uses=["b"])] == [2, 3]
    assert store.get_run("live").state == "running"
    sink.journal.close()
