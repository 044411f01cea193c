"""MOSS Rashomon sets: the enumeration against brute force over every rule set, stopped runs,
the per-point sets of a frontier, the refusals, and the command line end to end."""

from __future__ import annotations

import itertools
import json

import numpy as np
import pytest
from glasswork.contract.result import Status
from glasswork.contract.solver import Limits, SolveContext, StopReason
from glasswork.data import DataError, load_problem
from glasswork.hooks.registry import get_registry
from glasswork.plugins.moss import MossSolver, rashomon
from glasswork.plugins.moss.branch_and_bound import BranchAndBound
from glasswork.plugins.moss.loss import H2Oracle
from glasswork.plugins.moss.rashomon import enumerate_rule_sets
from glasswork.spec.document import SpecError
from glasswork.spec.load import validate_spec
from moss_helpers import instance
from test_moss_solver import document


def brute_set(oracle: H2Oracle, stab: np.ndarray, k: int, stability: float, threshold: float):
    """Every rule set of at most k rules reaching ``stability`` with H2 <= threshold, best first."""
    found = []
    for size in range(0, k + 1):
        for s in itertools.combinations(range(stab.size), size):
            if stab[list(s)].sum() >= stability - 1e-9:
                value = oracle.value(s)
                if value <= threshold:
                    found.append((value, s))
    return sorted(found)


def certified(M, y, stab, k, stability, gamma):
    oracle = H2Oracle(M, y, gamma)
    return oracle, BranchAndBound(oracle, stab, k).solve(stability)


@pytest.mark.parametrize("direct", [1, 256])  # branch to single rule sets, or evaluate small subtrees
@pytest.mark.parametrize("seed", range(5))
@pytest.mark.parametrize("gamma", [0.05, 5.0])
def test_the_enumeration_is_every_rule_set_within_the_threshold_best_first(seed, gamma, direct, monkeypatch):
    monkeypatch.setattr(rashomon, "DIRECT_COMPLETIONS", direct)
    m, k = (11, 4) if seed < 3 else (15, 5)
    M, y, counts = instance(n=40, m=m, seed=seed)
    stab = counts.astype(np.float64)
    stability = float(np.sort(stab)[::-1][:k].sum()) * (0.4 + 0.1 * seed)
    oracle, p = certified(M, y, stab, k, stability, gamma)
    assert p.status is Status.OPTIMAL
    for eps in (0.0, 0.03, 0.3):
        threshold = (1 + eps) * p.h2
        expected = brute_set(oracle, stab, k, stability, threshold)
        found = enumerate_rule_sets(oracle, stab, k, stability, threshold, lower_bound=p.lower_bound, max_models=10**6)
        assert found.complete and found.unenumerated_bound is None and found.stopped is None
        assert found.count == len(expected) >= 1
        assert [s for _, s in found.members] == [s for _, s in expected]
        assert [v for v, _ in found.members] == pytest.approx([v for v, _ in expected], rel=1e-12)


def test_fractional_stability_and_an_absolute_threshold_below_the_optimum():
    M, y, counts = instance(n=30, m=10, seed=7)
    pi = counts / 50.0
    oracle, p = certified(M, y, pi, 3, float(np.sort(pi)[::-1][:3].sum()) * 0.5, 0.5)
    stability = float(np.sort(pi)[::-1][:3].sum()) * 0.5
    expected = brute_set(oracle, pi, 3, stability, p.h2 * 1.1)
    found = enumerate_rule_sets(oracle, pi, 3, stability, p.h2 * 1.1, lower_bound=p.lower_bound, max_models=5)
    assert found.count == len(expected) > 5 and len(found.members) == 5  # the count is exact, the kept capped
    assert [s for _, s in found.members] == [s for _, s in expected[:5]]
    empty = enumerate_rule_sets(oracle, pi, 3, stability, p.h2 * 0.99, lower_bound=p.lower_bound, max_models=5)
    assert empty.complete and empty.count == 0


@pytest.mark.parametrize("polls", [1, 2, 5, 12])
def test_a_stopped_enumeration_is_incomplete_and_bounds_what_it_did_not_enumerate(polls, monkeypatch):
    monkeypatch.setattr(rashomon, "DIRECT_COMPLETIONS", 1)
    M, y, counts = instance(n=40, m=11, seed=3)
    stab, k = counts.astype(np.float64), 4
    stability = float(np.sort(stab)[::-1][:k].sum()) * 0.5
    oracle, p = certified(M, y, stab, k, stability, 0.05)
    threshold = 1.3 * p.h2
    expected = brute_set(oracle, stab, k, stability, threshold)
    seen = itertools.count(1)  # the stop fires at the polls-th check, as a time limit would
    found = enumerate_rule_sets(
        oracle,
        stab,
        k,
        stability,
        threshold,
        lower_bound=p.lower_bound,
        max_models=10**6,
        stop=lambda nodes: Status.STOPPED_NODES if next(seen) >= polls else None,
    )
    assert not found.complete and found.stopped is Status.STOPPED_NODES
    assert found.count < len(expected)
    # best first: what was enumerated is the best of the set, and the bound holds for the rest
    assert [s for _, s in found.members] == [s for _, s in expected[: found.count]]
    bound = found.unenumerated_bound
    assert bound is not None and all(v >= bound - 1e-9 for v, _ in expected[found.count :])


SMALL = {"candidates": {"trees": 40, "depth": 2, "seed": 0, "max_candidates": 12}}


def solve_with(doc, limits: Limits | None = None, events: list | None = None, stop_at: int | None = None):
    spec = validate_spec(doc, get_registry())
    problem = load_problem(spec.data)
    ctx = SolveContext(limits, emit=events.append if events is not None else None)
    if stop_at is not None:  # Ctrl-C as soon as the enumeration has visited stop_at nodes
        check = ctx.check

        def interrupting(nodes=None):
            if nodes is not None and nodes >= stop_at:
                ctx.request_stop(StopReason.CANCEL)
            return check(nodes)

        ctx.check = interrupting  # type: ignore[method-assign]
    solver = MossSolver(spec)
    return solver.solve(problem, ctx), solver, problem


def pool_oracle(solver: MossSolver, problem):
    """The candidate pool the solver built, as an oracle and tree counts, for the brute force."""
    target, _ = solver._target(problem)
    pool = solver._pool(problem, target)
    return H2Oracle(pool.M, target - pool.y_mean, solver.spec.objective.gamma), pool.counts.astype(np.float64)


def test_the_solver_returns_the_set_of_its_point_as_brute_force_finds_it():
    events: list = []
    doc = document(objective=SMALL, constraints={"max_rules": 3}, rashomon={"epsilon": 0.05, "max_models": 4})
    result, solver, problem = solve_with(doc, events=events)
    oracle, counts = pool_oracle(solver, problem)
    rs = result.rashomon
    expected = brute_set(oracle, counts, 3, result.stats["epsilon"] * solver_trees(result), rs.threshold)
    assert rs.complete and rs.optimum_proven and rs.count == len(expected) > 4 and rs.kept == 4
    assert rs.optimum == pytest.approx(result.certificate.objective) == pytest.approx(expected[0][0])
    assert [m.objective for m in rs.members] == pytest.approx([v for v, _ in expected[:4]], rel=1e-12)
    first = rs.members[0]
    assert first.model is not None and first.model.to_text() == result.model.to_text()  # the optimum leads
    assert first.features == tuple(problem.feature_names[j] for j in result.model.features_used)
    assert len({m.fingerprint for m in rs.members}) == 4
    sent = [e for e in events if e.kind == "rashomon"]
    assert sent and sent[-1].rashomon.count == rs.count
    assert sum(len(e.members) for e in sent) == rs.kept
    assert result.stats["rashomon"]["count"] == rs.count and result.stats["rashomon"]["complete"]


def solver_trees(result) -> float:
    return float(result.stats["trees"])


def test_summary_members_have_no_model():
    doc = document(objective=SMALL, constraints={"max_rules": 3}, rashomon={"epsilon": 0.02, "keep": "summary"})
    result, _, _ = solve_with(doc)
    assert result.rashomon.count >= 1 and all(m.model is None and m.fingerprint for m in result.rashomon.members)


def test_a_node_limit_and_ctrl_c_leave_an_honest_incomplete_set():
    wider = {"candidates": {**SMALL["candidates"], "max_candidates": 40}}
    doc = document(objective=wider, constraints={"max_rules": 3, "stability_rank": 8}, rashomon={"epsilon": 0.3})
    full, _, _ = solve_with(doc)
    assert full.rashomon.complete and full.rashomon.count > 30
    spent = full.stats["nodes"]
    for limits, stop_at, status in (
        (Limits(nodes=spent + 40), None, Status.STOPPED_NODES),
        (None, spent + 40, Status.CANCELLED),
    ):
        result, _, _ = solve_with(doc, limits, stop_at=stop_at)
        rs = result.rashomon
        assert not rs.complete and rs.count < full.rashomon.count
        assert result.stats["rashomon"]["stopped"] == str(status)
        assert [m.objective for m in rs.members] == [m.objective for m in full.rashomon.members[: rs.count]]
        rest = [m.objective for m in full.rashomon.members[rs.count :]]
        assert rs.unenumerated_bound is not None and min(rest) >= rs.unenumerated_bound - 1e-9
    # a search stopped before its optimum is proven: core's rule, the incumbent alone
    result, _, _ = solve_with(doc, Limits(nodes=1))
    rs = result.rashomon
    assert result.certificate.status is Status.STOPPED_NODES
    assert not rs.optimum_proven and not rs.complete and rs.count == 1
    assert rs.members[0].objective == rs.optimum == result.certificate.objective
    assert rs.unenumerated_bound == result.certificate.lower_bound <= full.rashomon.optimum


def test_a_frontier_has_a_set_per_point_and_the_chosen_points_is_the_result():
    doc = document(
        objective=SMALL,
        constraints={"max_rules": 3, "frontier": {"points": 4, "choose": 2}},
        rashomon={"epsilon": 0.04},
    )
    result, solver, problem = solve_with(doc)
    oracle, counts = pool_oracle(solver, problem)
    rows = result.stats["frontier"]
    B = solver_trees(result)
    for row in rows:
        expected = brute_set(oracle, counts, 3, row["epsilon"] * B - 1e-9, 1.04 * row["h2"])
        assert row["rashomon_count"] == len(expected) and row["rashomon_complete"] is True
        assert row["rashomon_seconds"] >= 0
    assert result.rashomon.count == rows[1]["rashomon_count"] and result.rashomon.optimum == rows[1]["h2"]
    assert result.stats["rashomon"]["points"] == 4
    without, _, _ = solve_with({k: v for k, v in doc.items() if k != "rashomon"})
    assert "rashomon_count" not in without.stats["frontier"][0] and without.rashomon is None


@pytest.mark.parametrize("policy", ["heuristic", "mio"])
def test_policies_without_a_certified_optimum_are_refused_at_the_sections_line(policy):
    doc = document(search={"policy": policy}, rashomon={"epsilon": 0.01})
    with pytest.raises(SpecError) as err:
        validate_spec(doc, get_registry())
    assert "search.policy branch_and_bound or cutting_plane" in str(err.value) and policy in str(err.value)
    assert err.value.issues[0].path == "rashomon"


def test_a_binary_target_is_refused_before_the_search():
    doc = {**document(rashomon={"epsilon": 0.01}), "data": {"source": "sklearn:breast_cancer"}}
    spec = validate_spec(doc, get_registry())
    with pytest.raises(DataError, match="squared loss"):
        MossSolver(spec).check(load_problem(spec.data))


def test_a_pool_too_large_for_the_gram_matrix_is_refused_before_the_search(monkeypatch):
    monkeypatch.setattr(H2Oracle, "GRAM_MAX", 5)  # the 12 candidates then exceed it
    doc = document(objective=SMALL, constraints={"max_rules": 3}, search={"policy": "cutting_plane"})
    with pytest.raises(DataError, match="at most 5 candidate rules"):
        solve_with({**doc, "rashomon": {"epsilon": 0.01}})
    assert solve_with(doc)[0].rashomon is None  # without the section the cutting plane runs as before


SPEC = """\
name: moss-set
solver: moss
data: {source: sklearn:diabetes, split: {kind: holdout, test_size: 0.25, seed: 0}}
objective:
  gamma: 0.001
  candidates: {trees: 40, depth: 2, seed: 0, max_candidates: 12}
constraints: {max_rules: 3}
rashomon:
  epsilon: 0.05
  max_models: 6
"""


def test_run_then_rashomon_then_export_member_on_the_command_line(tmp_path, monkeypatch):
    from click.testing import CliRunner
    from glasswork.cli import cli

    monkeypatch.chdir(tmp_path)
    (tmp_path / "set.yaml").write_text(SPEC)
    runner = CliRunner()
    run = runner.invoke(cli, ["run", "--json", "-q", "set.yaml"], catch_exceptions=False)
    assert run.exit_code == 0, run.output
    doc = json.loads(run.stdout)
    rashomon = doc["rashomon"]
    assert rashomon["complete"] and rashomon["count"] >= rashomon["kept"] == 6
    listed = runner.invoke(cli, ["rashomon", "latest", "--json"], catch_exceptions=False)
    assert listed.exit_code == 0, listed.output
    models = json.loads(listed.stdout)["models"]
    assert [m["objective"] for m in models] == pytest.approx([m["objective"] for m in rashomon["models"]])
    text = runner.invoke(cli, ["rashomon", "latest"], catch_exceptions=False)
    assert text.exit_code == 0 and str(rashomon["count"]) in text.stdout
    exported = runner.invoke(cli, ["export", "latest", "--member", "2", "--format", "json"], catch_exceptions=False)
    assert exported.exit_code == 0, exported.output
    member = json.loads(exported.stdout)
    assert member["model"] == rashomon["models"][1]["model"] and member["model"]["kind"] == "rule_set"
    python = runner.invoke(cli, ["export", "latest", "--member", "2", "--format", "python"], catch_exceptions=False)
    assert python.exit_code == 0 and "def " in python.stdout
    refused = tmp_path / "refused.yaml"
    refused.write_text(
        SPEC.replace("constraints: {max_rules: 3}", "constraints: {max_rules: 3}\nsearch: {policy: heuristic}")
    )
    result = runner.invoke(cli, ["run", "-q", "--no-store", str(refused)])
    assert result.exit_code == 2 and "refused.yaml:9" in result.output and "cutting_plane" in result.output


def test_the_frontier_text_shows_each_points_count_and_marks_an_incomplete_one():
    from glasswork.plugins.moss.model import Frontier, FrontierRow

    def row(count, complete):
        return FrontierRow(
            0.5, 0.5, 10.0, 10.0, 0.0, "optimal", ["a"], [1.0], rashomon_count=count, rashomon_complete=complete
        )

    text = Frontier([row(12, True), row(7, False), row(None, None)], chosen=0, requested=3).to_text()
    lines = text.splitlines()
    assert lines[0].split()[-1] == "rashomon"
    assert [line.split()[-1] for line in lines[2:]] == ["12", "7+", "-"]
    plain = Frontier([row(None, None)], chosen=0, requested=1)
    assert "rashomon" not in plain.to_text() and "rashomon_count" not in plain.to_dict()[0]


def test_the_frontier_view_shows_the_counts_only_when_sets_were_asked_for():
    from glasswork.plugins.moss.views import frontier_view
    from rich.console import Console

    def drawn(rows):
        console = Console(width=200, record=True)
        console.print(frontier_view(rows))
        return console.export_text()

    row = {"point": 1, "chosen": True, "epsilon": 0.5, "h1": 0.5, "h2": 10.0, "lower_bound": 10.0, "status": "optimal"}
    with_sets = drawn([{**row, "rashomon_count": 1234, "rashomon_complete": False}, {**row, "point": 2}])
    assert "rashomon" in with_sets and "1,234+" in with_sets
    assert "rashomon" not in drawn([row])
