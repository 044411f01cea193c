"""The bounded torture suite CI runs (issue 17); ``bench/torture.py`` runs the long one. Each
case ends with the store opened, checked and compared with the runs' own event files: no
problem and no lost event or result is the only pass."""

from __future__ import annotations

import random

import harness
import pytest

pytestmark = [pytest.mark.torture, pytest.mark.slow]


def passed(tally: harness.Tally) -> None:
    assert tally.problems == [], "\n".join(tally.problems)
    assert tally.events_lost == 0 and tally.results_lost == 0


def test_kill_9_during_runs_and_a_sweep_loses_nothing(tmp_path):
    tally = harness.Tally()
    rng = random.Random(17)
    harness.kill_runs(tmp_path, 5, rng, tally)
    harness.kill_sweeps(tmp_path, 1, rng, tally)
    passed(tally)
    assert tally.kills == 6 and tally.runs_checked >= 4 and tally.events_checked > 0


def test_concurrent_runs_sweeps_readers_and_kills_on_one_store(tmp_path):
    """Issue 23: 16 runs at once (3 killed with SIGKILL), a sweep and a reader on one store:
    nobody waits on or is refused by the store, every run that exited 0 is stored with what it
    printed, every event is there, the store is sound and no journal is left."""
    tally = harness.Tally()
    harness.concurrent_runs(tmp_path, 16, tally, rng=random.Random(23), kills=3, sweeps=1, readers=1)
    passed(tally)
    assert tally.refused == 0 and tally.kills == 3 and tally.runs_checked >= 13 and tally.reads > 0


def test_a_held_store_and_a_damaged_store(tmp_path):
    tally = harness.Tally()
    harness.held_store(tmp_path, tally)
    harness.damaged_store(tmp_path, tally)
    passed(tally)


def test_a_full_disk(tmp_path):
    tally = harness.Tally()
    if not harness.full_disk(tmp_path, tally):
        pytest.skip("mounting a tmpfs needs root")
    passed(tally)


def test_a_plugin_that_hangs_ignores_cancel_prints_to_stdout_and_eats_memory(tmp_path):
    tally = harness.Tally()
    harness.rogue_plugins(tmp_path, tally)
    passed(tally)
    assert tally.cases == 4
