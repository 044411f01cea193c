"""The one run path (``glasswork.running.launch``) and the run record (``glasswork.contract.record``) that the
CLI, the TUI, the sweep workers, the store and recovery share."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from glasswork.contract.events import JsonLinesSink, RecordSink
from glasswork.contract.record import RunRecord, stored_run
from glasswork.data import DataError
from glasswork.running.launch import Launch
from glasswork.spec.document import SpecError
from glasswork.store import RunStore


def toy_spec(folder: Path, data: Path, behaviour: str = "exact", extra: str = "") -> Path:
    path = folder / "toy.yaml"
    path.write_text(
        f"name: toy run\ndata:\n  source: {data}\n  target: label\nsolver: toy\n"
        f"search:\n  behaviour: {behaviour}\n  step_seconds: 0.01\n{extra}"
    )
    return path


def test_a_launch_records_the_same_run_every_consumer_sees(tmp_path, tiny_csv, toy_registry):
    db = tmp_path / "runs.duckdb"
    live: list[dict] = []
    launch = Launch.from_file(toy_spec(tmp_path, tiny_csv), registry=toy_registry, db=db)
    outcome = launch.run([RecordSink(live.append), JsonLinesSink(tmp_path / "events.jsonl")])
    assert outcome.status == "optimal" and launch.store is not None and launch.warnings == []

    run = RunRecord.of(live)
    assert run.start["run_id"] == outcome.info.run_id and "split" not in run.start
    assert run.result["objective"] == outcome.result.certificate.objective and run.error is None
    assert run.records() == live
    from_file = [json.loads(line) for line in (tmp_path / "events.jsonl").read_text().splitlines()]
    assert from_file == json.loads(json.dumps(live))  # the events file holds exactly these records

    store = RunStore(db)
    stored = stored_run(store.details(outcome.info.run_id), store.events(outcome.info.run_id))
    assert [e["kind"] for e in stored.events] == [e["kind"] for e in run.events]
    assert stored.result["status"] == "optimal" and stored.result["objective"] == run.result["objective"]
    assert stored.start["spec"] == run.start["spec"]


def test_a_stored_runs_finish_record_carries_its_rashomon_summary(tmp_path, tiny_csv, toy_registry):
    db = tmp_path / "runs.duckdb"
    live: list[dict] = []
    extra = "rashomon:\n  threshold: 1.0\n  max_models: 2\n"
    outcome = Launch.from_file(toy_spec(tmp_path, tiny_csv, extra=extra), registry=toy_registry, db=db).run(
        [RecordSink(live.append)]
    )
    whole = RunRecord.of(live).result["rashomon"]
    store = RunStore(db)
    stored = stored_run(store.details(outcome.info.run_id), store.events(outcome.info.run_id)).result["rashomon"]
    figures = ("count", "complete", "exhaustive", "threshold", "epsilon", "optimum", "optimum_proven", "kept")
    assert {k: stored[k] for k in figures} == {k: whole[k] for k in figures} and whole["count"] >= 2
    assert stored["multiplicity"] == json.loads(json.dumps(whole["multiplicity"]))
    assert "models" not in stored  # the members are rows: glasswork rashomon RUN lists them


def test_overrides_apply_before_validation(tmp_path, tiny_csv, toy_registry):
    spec = toy_spec(tmp_path, tiny_csv)
    launch = Launch.from_file(spec, ["objective.regularization=0.25"], registry=toy_registry, no_store=True)
    assert launch.loaded.spec.objective.regularization == 0.25 and not launch.recorded
    with pytest.raises(SpecError) as info:
        Launch.from_file(spec, ["objective.regularization=-1"], registry=toy_registry)
    assert info.value.issues[0].path == "objective.regularization"
    with pytest.raises(SpecError, match="PATH=VALUE"):
        Launch.from_file(spec, ["nonsense"], registry=toy_registry)


def test_bad_data_writes_nothing(tmp_path, toy_registry):
    bad = tmp_path / "bad.csv"
    bad.write_text("a,label\n1,0\n2,1\n")  # a is not 0/1
    db = tmp_path / "runs.duckdb"
    launch = Launch.from_file(toy_spec(tmp_path, bad), registry=toy_registry, db=db)
    with pytest.raises(DataError):
        launch.run()
    assert not db.exists()


def test_a_spec_can_turn_recording_off_unless_a_store_is_named(tmp_path, tiny_csv, toy_registry):
    spec = toy_spec(tmp_path, tiny_csv, extra="store:\n  enabled: false\n")
    assert not Launch.from_file(spec, registry=toy_registry).recorded
    assert Launch.from_file(spec, registry=toy_registry, db=tmp_path / "x.duckdb").recorded
    assert not Launch.from_file(spec, registry=toy_registry, db=tmp_path / "x.duckdb", no_store=True).recorded


def test_a_cancel_before_the_run_stops_it_as_soon_as_it_starts(tmp_path, tiny_csv, toy_registry):
    launch = Launch.from_file(toy_spec(tmp_path, tiny_csv, "endless"), registry=toy_registry, no_store=True)
    launch.cancel()
    outcome = launch.run()
    assert outcome.status == "cancelled" and outcome.interrupted


def test_a_launch_runs_once(tmp_path, tiny_csv, toy_registry):
    launch = Launch.from_file(toy_spec(tmp_path, tiny_csv), registry=toy_registry, no_store=True)
    assert launch.run().status == "optimal"
    with pytest.raises(RuntimeError, match="already run"):
        launch.run()
