"""The Rashomon set's types: the progress an event carries, read back from both record forms,
the summary from any of the set's dict forms, and a sweep point's set."""

from __future__ import annotations

import math

import pytest
from glasswork.contract.events import Event
from glasswork.contract.solver import SolveContext
from glasswork.rashomon import PointSet, RashomonMember, RashomonSet, SetProgress, SetSummary, announced_set


def sent(**kwargs) -> list[Event]:  # type: ignore[no-untyped-def]
    events: list[Event] = []
    ctx = SolveContext(emit=events.append)
    if "optimum" in kwargs:
        ctx.rashomon_basis(kwargs.pop("optimum"), proven=True, epsilon=0.05)
    ctx.rashomon(7, (RashomonMember(0.3, ("a",), "f"),), threshold=0.315, lower_bound=0.31, **kwargs)
    return events


def test_an_event_carries_its_progress_typed_and_its_record_reads_back_in_both_forms():
    [own] = sent(optimum=0.3)
    assert own.rashomon == SetProgress(7, 0.315, optimum=0.3, optimum_proven=True, epsilon=0.05)
    record = own.to_dict()
    assert "counters" not in record and record["rashomon"]["count"] == 7
    assert SetProgress.of_record(record) == own.rashomon
    form_1 = {k: v for k, v in record.items() if k != "rashomon"} | {
        "counters": {
            "rashomon_count": 7,
            "rashomon_threshold": 0.315,
            "rashomon_optimum": 0.3,
            "rashomon_optimum_proven": True,
            "rashomon_epsilon": 0.05,
        }
    }
    assert SetProgress.of_record(form_1) == own.rashomon
    assert own.rashomon.counters() == form_1["counters"]
    [point] = sent(point=2, complete=False)
    assert point.rashomon == SetProgress(7, 0.315, point=2, complete=False)  # a point's set has no basis
    assert SetProgress.of_record(point.to_dict()) == point.rashomon


@pytest.mark.parametrize("bad", ["2; DROP TABLE runs", True, 0, -1, 1.5, [1]])
def test_a_point_that_is_not_one_is_placed_nowhere(bad):
    assert SetProgress.of_record({"kind": "rashomon", "rashomon": {"count": 3, "point": bad}}) is None
    assert SetProgress.of_record({"kind": "rashomon", "counters": {"rashomon_count": 3, "rashomon_point": bad}}) is None
    assert SetProgress.of_record({"kind": "progress", "counters": {"rashomon_count": 3}}) is None


def test_the_summary_reads_every_dict_form_of_a_set():
    members = [RashomonMember(0.30, ("a",), "f1"), RashomonMember(0.31, ("b",), "f2")]
    rset = RashomonSet(threshold=0.315, optimum=0.30, epsilon=0.05, count=9, complete=True, members=members)
    summary = SetSummary.of_set(rset, {"ambiguity": 0.1})
    assert (summary.count, summary.kept, summary.complete, summary.multiplicity) == (9, 2, True, {"ambiguity": 0.1})
    assert SetSummary.from_dict({**rset.to_dict(), "multiplicity": {"ambiguity": 0.1}}) == summary
    assert SetSummary.from_dict(summary.to_dict()) == summary
    assert list(summary.to_dict()) == [*(k for k in rset.to_dict() if k != "models"), "multiplicity"]
    assert "running" not in summary.to_dict() and summary.live().to_dict()["running"] is True
    odd = SetSummary.from_dict({"count": "9", "threshold": math.inf, "complete": "yes", "kept": True})
    assert (odd.count, odd.threshold, odd.complete, odd.kept) == (0, None, False, 0)  # not figures: nothing said


def test_the_announced_set_is_the_runs_own_never_a_points_and_never_complete():
    records = [e.to_dict() for e in (*sent(point=1, complete=True), *sent(optimum=0.3))]
    summary, members = announced_set(records)  # type: ignore[misc]
    assert summary.count == 7 and summary.complete is False and summary.optimum_proven is True
    assert summary.unenumerated_bound == 0.31 and len(members) == 1 and summary.kept == 1
    assert announced_set(records[:1]) is None  # a point's set only
    point = PointSet.of_progress(SetProgress.of_record(records[0]), 0.31)  # type: ignore[arg-type]
    assert point == PointSet(1, 7, True, 0.315, None)  # complete: nothing left to bound
    assert point.summary(kept=1).to_dict()["kept"] == 1
    assert PointSet.from_dict(point.to_dict()) == point


def test_decides_as_is_the_best_rank_with_the_same_fingerprint() -> None:
    """``decides_as`` against brute force on random fingerprints, given in any order; a member
    without a fingerprint is left out, never grouped with another."""
    import random

    from glasswork.rashomon import decides_as

    rng = random.Random(4)
    for _ in range(50):
        pairs = [(rank, rng.choice(["a", "b", "c", "d", None])) for rank in range(1, rng.randint(1, 30))]
        rng.shuffle(pairs)
        got = decides_as(pairs)
        for rank, fingerprint in pairs:
            if fingerprint is None:
                assert rank not in got
            else:
                assert got[rank] == min(r for r, f in pairs if f == fingerprint)
