"""The search step of the run path (``glasswork.running.runner`` inside ``glasswork.running.launch.Launch``): limits,
cancellation, failures and sinks, with a real (tiny, exact) solver."""

from __future__ import annotations

import _thread
import json
import threading
import time

import pytest
from glasswork.contract.events import CollectingSink, JsonLinesSink
from glasswork.contract.result import Status
from glasswork.data import DataError
from glasswork.running.launch import Launch
from glasswork.running.runner import RunAborted, SolverFailure
from glasswork.spec.load import validate_spec


def spec(registry, **sections):
    doc = {"name": "t", "solver": "toy", "data": {"source": "sklearn:breast_cancer", "binarize": {"thresholds": 2}}}
    doc.update(sections)
    return validate_spec(doc, registry)


def launch(registry, solver_spec):
    """The spec on the run path, recorded nowhere."""
    return Launch(solver_spec, registry=registry, no_store=True)


def test_exact_run_is_optimal_with_metrics_and_events(toy_registry):
    sink = CollectingSink()
    outcome = launch(toy_registry, spec(toy_registry)).run([sink])
    cert = outcome.result.certificate
    assert cert.status is Status.OPTIMAL and cert.gap == 0.0
    metrics = outcome.result.metrics
    assert {"train_accuracy", "train_auc", "test_accuracy", "test_log_loss"} <= set(metrics)
    # objective = training error of the stump (no regularization) = 1 - train accuracy
    assert cert.objective == pytest.approx(1 - metrics["train_accuracy"])
    assert sink.run is not None and sink.finished and sink.outcome is outcome
    assert sink.of_kind("incumbent") and sink.of_kind("progress")
    assert outcome.info.n_train + outcome.info.n_test == 569
    assert len(outcome.info.data_fingerprint) == 64


@pytest.mark.parametrize(
    "limits, status",
    [
        ({"time": 0.3}, Status.STOPPED_TIME),
        ({"nodes": 5}, Status.STOPPED_NODES),
        ({"memory": 1}, Status.STOPPED_MEMORY),
    ],
)
def test_limits_stop_the_search_with_a_gap(toy_registry, limits, status):
    started = time.monotonic()
    outcome = launch(toy_registry, spec(toy_registry, search={"behaviour": "endless"}, limits=limits)).run()
    cert = outcome.result.certificate
    assert cert.status is status
    assert cert.gap is not None and cert.gap > 0
    assert time.monotonic() - started < 5


def test_time_limit_backstop_reaches_a_solver_that_only_polls_the_flag(toy_registry):
    """The runner raises the flag itself at the deadline."""
    outcome = launch(
        toy_registry, spec(toy_registry, search={"behaviour": "ignore_stop", "step_seconds": 0.5}, limits={"time": 0.2})
    ).run()
    assert outcome.result.certificate.status is Status.STOPPED_TIME


class InterruptingSink(CollectingSink):
    """Sends SIGINT to the main thread once the search is running (the first progress event);
    the second interrupt, if asked for, comes from a thread while the runner waits."""

    def __init__(self, times: int = 1) -> None:
        super().__init__()
        self.times = times

    def on_event(self, event):
        super().on_event(event)
        if self.times and event.kind in ("progress", "incumbent"):
            self.times -= 1
            if self.times:
                threading.Timer(0.3, _thread.interrupt_main).start()
            _thread.interrupt_main()


def test_ctrl_c_cancels_and_keeps_the_best_model(toy_registry):
    sink = InterruptingSink()
    outcome = launch(toy_registry, spec(toy_registry, search={"behaviour": "endless"})).run([sink])
    assert outcome.interrupted
    assert outcome.result.certificate.status is Status.CANCELLED
    assert outcome.result.certificate.lower_bound == 0.0
    assert outcome.result.model.size == 1
    assert any("interrupted" in (e.message or "") for e in sink.of_kind("log"))


def test_second_ctrl_c_abandons_the_run(toy_registry):
    sink = InterruptingSink(times=2)
    with pytest.raises(RunAborted):
        launch(toy_registry, spec(toy_registry, search={"behaviour": "ignore_stop", "step_seconds": 1.0})).run([sink])
    assert sink.finished and isinstance(sink.error, RunAborted)
    time.sleep(1.0)  # let the abandoned worker finish before the next test


def test_solver_exception_is_a_solver_failure(toy_registry):
    sink = CollectingSink()
    with pytest.raises(SolverFailure, match="toy solver asked to fail"):
        launch(toy_registry, spec(toy_registry, search={"behaviour": "raise"})).run([sink])
    assert sink.finished and sink.outcome is None


def test_a_solver_failure_names_the_plugin(toy_registry):
    """A solver that raises mid-search is its plugin's fault: the message says whose."""
    with pytest.raises(SolverFailure, match=r"solver 'toy' from plugin 'toy' \(explicit\) failed: .*asked to fail"):
        launch(toy_registry, spec(toy_registry, search={"behaviour": "raise"})).run()
    with pytest.raises(SolverFailure, match=r"from plugin 'toy' \(explicit\) returned"):
        launch(toy_registry, spec(toy_registry, search={"behaviour": "bad_result"})).run()


def test_a_solver_that_never_stops_at_its_limit_is_abandoned(toy_registry, monkeypatch, tmp_path):
    """A solver that never looks at ``ctx.check`` or the stop flag would hold a run (a sweep, a
    CI job) past its time limit for ever: past a grace it is abandoned as its plugin's failure,
    the run's sinks are told it failed, and the run store (a real DuckDB file) records it as
    failed beside the run before it, still readable."""
    import glasswork.running.runner
    import toy_plugin
    from glasswork.store import RunStore

    db = tmp_path / "runs.duckdb"
    before = Launch(spec(toy_registry), registry=toy_registry, db=db).run()

    monkeypatch.setattr(glasswork.running.runner, "WATCHDOG_GRACE_SECONDS", 0.1)
    monkeypatch.setattr(glasswork.running.runner, "ABANDON_SECONDS", 0.3, raising=False)
    sink = CollectingSink()
    document = spec(toy_registry, search={"behaviour": "ignore_stop", "step_seconds": 3.0}, limits={"time": 0.1})
    with pytest.raises(SolverFailure, match=r"solver 'toy' from plugin 'toy' \(explicit\) did not stop .*time limit"):
        Launch(document, registry=toy_registry, db=db).run([sink])
    # abandoned while the solver still ignored the stop (it sleeps 3 s, abandoned 0.4 s in): asked of
    # the solver itself, not of a wall clock that also counts reading the data under load
    assert not toy_plugin.IGNORING_STOP.is_set()
    assert sink.finished and isinstance(sink.error, SolverFailure)
    assert any("has not stopped" in (e.message or "") for e in sink.of_kind("log"))
    assert toy_plugin.IGNORING_STOP.wait(30)  # let the abandoned worker finish before the next test
    states = {r.run_id: (r.state, r.error or "") for r in RunStore(db).list_runs()}
    assert states.pop(before.info.run_id)[0] == "finished"
    [(state, error)] = states.values()
    assert state == "failed" and "did not stop" in error


def test_a_non_result_is_a_solver_failure(toy_registry):
    with pytest.raises(SolverFailure, match="not a glasswork.Result"):
        launch(toy_registry, spec(toy_registry, search={"behaviour": "bad_result"})).run()


def test_a_failing_sink_is_detached_not_fatal(toy_registry):
    class Broken(CollectingSink):
        def on_event(self, event):
            raise OSError("disk full")

    good = CollectingSink()
    run = launch(toy_registry, spec(toy_registry))
    outcome = run.run([Broken(), good])
    assert outcome.result.certificate.status is Status.OPTIMAL
    assert good.events and any("disk full" in e for e in run.warnings)


def test_events_file_has_start_events_and_finish(toy_registry, tmp_path):
    path = tmp_path / "run.events.jsonl"
    outcome = launch(toy_registry, spec(toy_registry)).run([JsonLinesSink(path)])
    records = [json.loads(line) for line in path.read_text().splitlines()]
    assert records[0]["kind"] == "start" and records[0]["run_id"] == outcome.info.run_id
    assert records[-1]["kind"] == "finish" and records[-1]["result"]["status"] == "optimal"
    assert {"incumbent", "progress"} <= {r["kind"] for r in records[1:-1]}


def test_task_mismatch_is_a_data_error(toy_registry):
    s = validate_spec({"name": "t", "solver": "toy", "data": {"source": "sklearn:iris"}}, toy_registry)
    with pytest.raises(DataError, match="handles binary targets, but the data's target is multiclass"):
        launch(toy_registry, s).run()


def test_a_data_error_raised_by_the_solver_stays_a_data_error(toy_registry, monkeypatch):
    import toy_plugin

    def refuse(problem, regularization):
        raise DataError("features must be 0/1", hint="add a binarize: section")

    monkeypatch.setattr(toy_plugin, "best_stump", refuse)
    with pytest.raises(DataError, match="features must be 0/1"):
        launch(toy_registry, spec(toy_registry)).run()


def test_cancel_from_another_thread(toy_registry):
    run = launch(toy_registry, spec(toy_registry, search={"behaviour": "endless"}))

    class CancelOnProgress(CollectingSink):
        def on_event(self, event):
            super().on_event(event)
            if event.kind == "progress" and len(self.events) > 3:
                threading.Thread(target=run.cancel).start()

    outcome = run.run([CancelOnProgress()])
    assert outcome.result.certificate.status is Status.CANCELLED and outcome.interrupted


def test_the_programmatic_run(tmp_path, toy_env):
    import glasswork

    path = tmp_path / "s.yaml"
    path.write_text("name: api\nsolver: toy\ndata: {source: sklearn:breast_cancer, binarize: {thresholds: 2}}\n")
    sink = CollectingSink()
    outcome = glasswork.run(path, sinks=[sink])
    assert outcome.status is Status.OPTIMAL and sink.finished
