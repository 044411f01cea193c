"""The store reads a Rashomon set's events in both record forms: journals written before
``SetProgress`` (form 1, the set's figures as ``rashomon_*`` counters) fold into the same rows,
summaries and points as the typed form (form 2), and the ``events`` table keeps one form."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

from glasswork.contract.events import RecordSink
from glasswork.contract.record import event_of_stored
from glasswork.running.launch import Launch
from glasswork.spec.load import validate_spec
from glasswork.store import RunStore

DATA = {"source": "sklearn:breast_cancer", "binarize": {"thresholds": 2}}


def as_form_1(record: dict[str, Any]) -> dict[str, Any]:
    """A record as the previous version wrote it: a rashomon event's figures among its counters."""
    if record.get("kind") != "rashomon":
        return record
    out = {k: v for k, v in record.items() if k != "rashomon"}
    figures = {f"rashomon_{k}": v for k, v in record["rashomon"].items()}  # rashomon_count, rashomon_point, ...
    out["counters"] = {**(record.get("counters") or {}), **figures}
    return out


def records_of_a_run(tmp_path: Path, toy_registry: Any) -> list[dict[str, Any]]:
    spec = validate_spec(
        {"name": "set", "solver": "toy", "data": DATA, "rashomon": {"epsilon": 0.5, "max_models": 4}}, toy_registry
    )
    records: list[dict[str, Any]] = []
    Launch(spec, registry=toy_registry, db=tmp_path / "first.duckdb").run([RecordSink(records.append, full=True)])
    return records


def with_points(records: list[dict[str, Any]]) -> list[dict[str, Any]]:
    """The run's records with two sweep points' sets before its own (a frontier's, in form 2)."""
    member = {"objective": 0.5, "features": ["a'; DROP TABLE runs; --"], "fingerprint": "f" * 16}
    points = [
        {"kind": "rashomon", "elapsed": 0.01, "rashomon": {"count": 3, "threshold": 2.0, "point": 1, "complete": True}},
        {
            "kind": "rashomon",
            "elapsed": 0.02,
            "lower_bound": 1.5,
            "members": [member],
            "rashomon": {"count": 40, "threshold": 2.0, "point": 2, "complete": False},
        },
    ]
    return [records[0], *points, *records[1:]]


def fold_journal(db: Path, records: list[dict[str, Any]]) -> RunStore:
    """A store that finds ``records`` as an ended journal and folds it on opening."""
    store = RunStore(db)
    store.events_dir.mkdir(parents=True, exist_ok=True)
    lines = "".join(json.dumps(r) + "\n" for r in records)
    store.log_path(records[0]["run_id"]).write_text(lines, encoding="utf-8")
    return store.open()


def answers(store: RunStore, run_id: str) -> dict[str, Any]:
    summary = store.rashomon_summary(run_id)
    return {
        "summary": None if summary is None else summary.to_dict(),
        "points": [p.to_dict() for p in store.rashomon_points(run_id)],
        "members": [m.to_dict() for m in store.rashomon_members(run_id)],
        "point 2": [m.to_dict() for m in store.rashomon_members(run_id, point=2)],
        "events": [{k: v for k, v in e.items() if k != "elapsed"} for e in store.events(run_id)],
        "state": store.get_run(run_id).state,
    }


def test_a_journal_written_in_the_old_form_folds_as_the_typed_one(tmp_path, toy_registry):
    records = with_points(records_of_a_run(tmp_path, toy_registry))
    run_id = records[0]["run_id"]
    assert all("rashomon" in r and "counters" not in r for r in records if r["kind"] == "rashomon")  # form 2
    for cut in (len(records), len(records) - 1):  # finished, then killed before its finish record
        run = records[:cut]
        if cut < len(records):
            run[0] = {**run[0], "pid": 2**22 + 12345}  # a process of this host that no longer exists
        new = answers(fold_journal(tmp_path / f"new{cut}.duckdb", run), run_id)
        old = answers(fold_journal(tmp_path / f"old{cut}.duckdb", [as_form_1(r) for r in run]), run_id)
        assert old == new
        assert new["summary"] is not None and new["summary"]["count"] >= 4 and len(new["members"]) == 4
        assert [(p["point"], p["count"], p["complete"]) for p in new["points"]] == [(1, 3, True), (2, 40, False)]
        assert new["points"][1]["unenumerated_bound"] == 1.5 and new["point 2"][0]["features"] == [
            "a'; DROP TABLE runs; --"
        ]
        assert new["state"] == ("finished" if cut == len(records) else "failed")
        assert (new["summary"]["complete"] is True) == (cut == len(records))


def test_the_events_table_keeps_the_flat_form_and_reads_back_typed(tmp_path, toy_registry):
    """The ``events.counters`` column of a rashomon event reads as before the type (its exports
    are unchanged), and a stored row comes back as a form 2 record."""
    records = with_points(records_of_a_run(tmp_path, toy_registry))
    store = fold_journal(tmp_path / "g.duckdb", records)
    rows = [e for e in store.events(records[0]["run_id"]) if e["kind"] == "rashomon"]
    sent = [r for r in records if r["kind"] == "rashomon"]
    assert [row["counters"] for row in rows] == [as_form_1(r)["counters"] for r in sent]
    assert rows[0]["counters"] == {
        "rashomon_count": 3,
        "rashomon_threshold": 2.0,
        "rashomon_point": 1,
        "rashomon_complete": True,
    }
    back = [event_of_stored(row) for row in rows]
    assert [b["rashomon"] for b in back] == [r["rashomon"] for r in sent] and all("counters" not in b for b in back)
