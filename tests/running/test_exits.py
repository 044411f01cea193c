"""One mapping from an error to an exit code and a message (``glasswork.running.exits``), and every front
end of the run path using it: ``glasswork run``, the monitor (``glasswork monitor`` and its
``OwnedRun``), the sweep workers (``run_point``) and ``glasswork sweep``."""

from __future__ import annotations

from pathlib import Path

import pytest
from click.testing import CliRunner
from glasswork.cli import cli
from glasswork.data import DataError
from glasswork.running.exits import EXIT_INTERRUPTED, EXIT_INVALID, EXIT_SOLVER, RunFailure, run_failure
from glasswork.running.launch import Launch
from glasswork.running.runner import RunAborted, SolverFailure
from glasswork.spec.document import SpecError, SpecIssue
from glasswork.store import StoreError, StorePathError
from glasswork.sweep.workers import run_point
from glasswork.tui.sources import OwnedRun, load_spec_or_error
from ruamel.yaml import YAML


@pytest.mark.parametrize(
    "error, code, title",
    [
        (SpecError([SpecIssue("s.yaml", 3, 1, "limits.time", "must be positive")]), EXIT_INVALID, "Invalid spec"),
        (DataError("column 'x' is missing"), EXIT_INVALID, "Bad data"),
        (StorePathError("store.path leads outside"), EXIT_INVALID, "The run store cannot be used"),
        (StoreError("cannot open the store"), EXIT_SOLVER, "The run store cannot be used"),
        (SolverFailure("solver 'toy' failed: RuntimeError: boom"), EXIT_SOLVER, "The run failed"),
        (RunAborted("run abandoned"), EXIT_INTERRUPTED, "Run abandoned"),
        (KeyboardInterrupt(), EXIT_INTERRUPTED, "Interrupted"),
    ],
)
def test_each_error_has_one_code_and_message(error: BaseException, code: int, title: str) -> None:
    failure = run_failure(error)
    assert (failure.code, failure.title, failure.expected) == (code, title, True)
    assert failure.message("s.yaml").startswith("s.yaml: ") and "internal error" not in failure.reason


def test_a_spec_error_carries_its_issues_and_an_interrupt_where_it_landed() -> None:
    failure = run_failure(SpecError([SpecIssue("s.yaml", 3, 1, "limits.time", "must be positive")]))
    assert failure.details == ("s.yaml:3:1: limits.time: must be positive",)
    assert failure.reason == "invalid spec (1 error(s)); nothing was run."
    assert run_failure(KeyboardInterrupt(), stage="loading the data").reason == (
        "interrupted while loading the data; nothing was run."
    )


def test_an_unexpected_error_is_a_bug_not_the_users_input() -> None:
    assert run_failure(RuntimeError("boom")) == RunFailure(
        EXIT_SOLVER, "The run failed", "RuntimeError: boom", (), False
    )


# -- the front ends --------------------------------------------------------------------------------


def toy_document(data: Path, **search: object) -> dict:
    return {"name": "exits", "solver": "toy", "data": {"source": str(data), "target": "label"}, "search": search}


def write_spec(folder: Path, document: dict) -> Path:
    path = folder / "spec.yaml"
    YAML(typ="safe").dump(document, path)
    return path


def expected_failure(path: Path) -> RunFailure:
    """What the run path itself raises for this spec, as the mapping reports it."""
    with pytest.raises((DataError, SolverFailure, StoreError)) as info:
        Launch.from_file(path, no_store=True).run()
    return run_failure(info.value)


@pytest.mark.parametrize("case", ["bad data", "solver failure"])
def test_every_front_end_reports_a_failed_run_alike(case: str, toy_env, tiny_csv: Path, tmp_path: Path) -> None:
    document = toy_document(tiny_csv, behaviour="raise")
    if case == "bad data":
        document = toy_document(tiny_csv)
        document["data"]["target"] = "no_such_column"
    path = write_spec(tmp_path, document)
    expected = expected_failure(path)
    assert expected.code == (EXIT_INVALID if case == "bad data" else EXIT_SOLVER)

    run = CliRunner().invoke(cli, ["run", "-q", "--no-store", "--debug", str(path)])
    assert run.exit_code == expected.code and expected.message(str(path)) in run.stderr

    source = OwnedRun(load_spec_or_error(str(path), no_store=True))
    source.run()
    [failed] = [r for r in source.poll() if r["kind"] == "failed"]
    assert source.exit_code == expected.code
    assert (failed["title"], failed["message"]) == (expected.title, expected.message(source.title))

    finish = run_point(document, str(tmp_path))[-1]
    assert finish["kind"] == "finish" and finish["result"] is None and finish["error"] == expected.reason


def test_every_front_end_refuses_an_unusable_store_alike(toy_env, tiny_csv: Path, tmp_path: Path) -> None:
    path = write_spec(tmp_path, {**toy_document(tiny_csv), "sweep": {"grid": {"objective.regularization": [0.0]}}})
    db = str(path / "x.duckdb")  # under a regular file: the store cannot be used as asked
    with pytest.raises(StoreError) as info:
        Launch.from_file(path, db=db).open_store()
    expected = run_failure(info.value)
    assert expected.code == EXIT_SOLVER

    for command in (["run", "-q"], ["monitor"], ["sweep", "-j", "1"]):
        result = CliRunner().invoke(cli, [*command, "--db", db, str(path)])
        assert result.exit_code == expected.code, (command, result.output)
        assert expected.message(str(path)) in result.stderr, (command, result.stderr)

    source = OwnedRun(load_spec_or_error(str(path), db=db))
    source.run()
    [failed] = [r for r in source.poll() if r["kind"] == "failed"]
    assert source.exit_code == expected.code
    assert (failed["title"], failed["message"]) == (expected.title, expected.message(source.title))


def test_every_front_end_refuses_an_invalid_spec_alike(toy_env, tiny_csv: Path, tmp_path: Path) -> None:
    document = toy_document(tiny_csv)
    document["limits"] = {"time": -1}
    path = write_spec(tmp_path, document)
    with pytest.raises(SpecError) as info:
        Launch.from_file(path)
    expected = run_failure(info.value)
    assert expected.code == EXIT_INVALID

    for command in (["run", "-q", "--no-store"], ["monitor", "--no-store"]):
        result = CliRunner().invoke(cli, [*command, str(path)])
        assert result.exit_code == expected.code, (command, result.output)
        assert expected.message(str(path)) in result.stderr and expected.details[0] in result.stderr

    title, message = load_spec_or_error(str(path), no_store=True)
    assert title == expected.title and message.endswith(expected.message(str(path)))
    assert expected.details[0] in message
