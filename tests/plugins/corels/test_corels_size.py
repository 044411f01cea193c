"""A plain CORELS spec stays small: the mining defaults, the size estimate and its warning."""

from __future__ import annotations

import math
import subprocess
import sys
from pathlib import Path

import numpy as np
import pytest
from click.testing import CliRunner
from corels_reference import brute_force, compas  # noqa: F401  (compas: a fixture)
from glasswork import Problem
from glasswork.cli import cli
from glasswork.plugins.corels.search import size
from glasswork.plugins.corels.search.size import SearchEstimate, estimate_search
from glasswork.plugins.corels.spec import CorelsConstraints, CorelsObjective, CorelsSearch
from glasswork.running.launch import Launch


def credit_csv(path: Path, n: int = 1200, seed: int = 0) -> None:
    """A credit-like table: numbers, words, a yes/no target and a few empty cells."""
    rng = np.random.default_rng(seed)
    age = rng.integers(19, 75, n)
    income = np.round(rng.lognormal(10.3, 0.5, n), -2)
    ratio = np.round(rng.beta(2, 5, n), 3)
    months = rng.integers(0, 360, n)
    housing = rng.choice(["own", "rent", "free"], n, p=[0.5, 0.4, 0.1])
    job = rng.choice(["salaried", "self-employed", "unemployed"], n, p=[0.7, 0.2, 0.1])
    score = (
        -1.5 + 3 * ratio + 0.8 * (job == "unemployed") - 0.01 * (age - 40) + 0.5 * (housing == "rent") - months / 300
    )
    default = rng.random(n) < 1 / (1 + np.exp(-score))
    lines = ["age,income,debt_ratio,months_employed,housing,job,default"]
    for i in range(n):
        inc = "" if i % 97 == 5 else f"{income[i]:.0f}"
        lines.append(f"{age[i]},{inc},{ratio[i]},{months[i]},{housing[i]},{job[i]},{'yes' if default[i] else 'no'}")
    path.write_text("\n".join(lines) + "\n")


PLAIN = (
    "name: plain\ndata:\n  source: credit.csv\n  target: default\n  missing: drop\n"
    "  binarize: {thresholds: 3}\nsolver: corels\nlimits: {time: 20}\n"
)


def test_the_default_mines_single_conditions() -> None:
    assert CorelsConstraints().max_card == 1
    assert CorelsConstraints().min_support is None  # = the regularization: Theorems 10 and 21


def test_a_plain_spec_on_an_ordinary_table_certifies(tmp_path: Path) -> None:
    """Before: pairs by default, 1,546 antecedents and no certificate in 60 s on such a table."""
    credit_csv(tmp_path / "credit.csv")
    (tmp_path / "plain.yaml").write_text(PLAIN)
    outcome = Launch.from_file(tmp_path / "plain.yaml", no_store=True).run()
    assert outcome.status.value == "optimal"
    assert outcome.result.stats["antecedents"] < 100
    assert outcome.result.stats["estimated_seconds"] < 20


def _problem(X: np.ndarray, y: np.ndarray) -> Problem:
    return Problem(
        name="t",
        X=X.astype(np.uint8),
        y=y.astype(np.int64),
        feature_names=[f"f{j}" for j in range(X.shape[1])],
        task="binary",
        classes=np.array(["no", "yes"]),
    )


@pytest.mark.parametrize("seed", range(6))
def test_the_estimate_bounds_what_it_says_it_bounds(seed: int) -> None:
    """Theorem 6's length holds for the brute-force optimum; the one-rule objective is the best list
    of at most one rule; every one-rule prefix an exhaustive search must expand is counted."""
    rng = np.random.default_rng(seed)
    n, p = 120, 6
    X = (rng.random((n, p)) < rng.uniform(0.2, 0.6, p)).astype(np.uint8)
    y = ((X[:, 0] & X[:, 1]) | (X[:, 2] & ~X[:, 3] & 1)).astype(np.int64) ^ (rng.random(n) < 0.1)
    lam = [0.005, 0.01, 0.02][seed % 3]
    problem = _problem(X, y)
    c = CorelsConstraints(negations=False, min_support=0.0)
    est = estimate_search(problem, CorelsObjective(regularization=lam), c, CorelsSearch(threads=1))
    best, prefix = brute_force(X, y, lam)
    one_rule, _ = brute_force(X, y, lam, max_len=1)
    assert est.antecedents == p and est.second_level == est.first_level * (p - 1)
    assert est.one_rule == pytest.approx(one_rule)
    assert len(prefix) <= est.max_length and len(prefix) <= max(est.depth, 1)
    # a one-rule prefix whose lower bound (plus the lookahead's lambda) is below R* is never pruned
    must = 0
    for j in range(p):
        cap = X[:, j].astype(bool)
        captured_errors = min(int(y[cap].sum()), int((1 - y[cap]).sum()))
        right = int(cap.sum()) - captured_errors
        if cap.sum() >= lam * n and right >= lam * n and lam + captured_errors / n + lam < best:
            must += 1
    assert must <= est.first_level


def test_the_warning_names_what_to_change() -> None:
    big = SearchEstimate(
        antecedents=14626,
        samples=426,
        regularization=0.01,
        max_card=2,
        empty_list=0.37,
        one_rule=0.07,
        minority=0.0,
        max_length=7,
        depth=7,
        first_level=8770,
        second_level=128_261_250,
        log10_space=25.5,
        threads=2,
    )
    line = big.warning(60)
    assert line is not None and "\n" not in line
    assert "max_card: 1" in line and "regularization" in line and "1 min" in line
    small = SearchEstimate(
        antecedents=180,
        samples=426,
        regularization=0.01,
        max_card=1,
        empty_list=0.37,
        one_rule=0.14,
        minority=0.0,
        max_length=13,
        depth=13,
        first_level=83,
        second_level=14_857,
        log10_space=19.4,
        threads=2,
    )
    assert small.warning(60) is None
    assert small.warning(None) is None
    deep = SearchEstimate(
        **{**small.__dict__, "depth": 33, "log10_space": 35.2, "larger_regularizations": ((0.015, 4000.0), (0.02, 0.9))}
    )
    assert "objective.regularization: 0.02" in deep.warning(60)
    assert "objective.regularization: 0.015" in deep.warning(7200)
    premined = SearchEstimate(**{**big.__dict__, "max_card": None})  # a .out file: nothing to mine
    assert "max_card" not in premined.warning(60) and "regularization" in premined.warning(60)


@pytest.mark.slow  # (over 3 s: the README's command stays under 5 minutes; .ci/run's slow step runs it)
def test_run_warns_on_stderr_and_still_runs(tmp_path: Path) -> None:
    """Pairs of conditions on the credit table: warned before the search, never refused. (3 s, not
    1: reading the data counts against limits.time, and a loaded machine can take a second.)"""
    credit_csv(tmp_path / "credit.csv")
    (tmp_path / "plain.yaml").write_text(PLAIN)
    proc = subprocess.run(
        [
            sys.executable,
            "-c",
            "from glasswork.cli import main; main()",
            "run",
            "plain.yaml",
            "--no-store",
            "--json",
            "--set",
            "constraints.max_card=2",
            "--set",
            "limits.time=3",
        ],
        cwd=tmp_path,
        capture_output=True,
        text=True,
        timeout=300,
    )
    assert proc.returncode == 0, proc.stderr
    assert "unlikely to certify within 3 s" in proc.stderr and "max_card: 1" in proc.stderr
    assert '"status": "stopped_time"' in proc.stdout
    # glasswork validate shows the same estimate and the same warning, without searching
    checked = subprocess.run(
        [
            sys.executable,
            "-c",
            "from glasswork.cli import main; main()",
            "validate",
            "plain.yaml",
            "--set",
            "constraints.max_card=2",
            "--set",
            "limits.time=3",
        ],
        cwd=tmp_path,
        capture_output=True,
        text=True,
        timeout=300,
    )
    assert checked.returncode == 0, checked.stderr
    warned = " ".join(proc.stderr.split())
    start = warned.index("corels: unlikely to certify")
    said = " ".join(checked.stderr.split())
    assert "warning: plain.yaml: corels: unlikely to certify within 3 s" in said
    assert said[said.index("corels: unlikely") :].startswith(warned[start : warned.index("max_card: 1", start)])
    assert "plain.yaml: corels size: " in checked.stdout and "two-rule prefixes" in checked.stdout


def test_size_report_is_what_validate_can_show(tmp_path: Path) -> None:
    """The solver-neutral entry (``Solver.size_report``) gives the run's summary and warning."""
    from glasswork.plugins.corels import CorelsSolver

    credit_csv(tmp_path / "credit.csv")
    (tmp_path / "plain.yaml").write_text(PLAIN)
    launch = Launch.from_file(tmp_path / "plain.yaml", no_store=True, overrides=["constraints.max_card=2"])
    summary, warning = CorelsSolver(launch.loaded.spec).size_report(launch.prepare(), 20)
    assert summary.startswith("corels size: ") and "two-rule prefixes" in summary
    assert warning is not None and "max_card: 1" in warning


def test_the_space_grows_with_the_depth_past_half_the_antecedents() -> None:
    """Issue 36: ``C(56, 56) = 1`` printed "10^0 antecedent sets" though ``C(56, 28)`` is about 10^16."""
    from glasswork.plugins.corels.search.size import _log10_sets_up_to

    sizes = [_log10_sets_up_to(56, depth) for depth in range(57)]
    assert all(a <= b for a, b in zip(sizes, sizes[1:])) and all(a < b for a, b in zip(sizes[:40], sizes[1:40]))
    assert sizes[56] == pytest.approx(56 * math.log10(2))
    assert sizes[28] > 15.8


def test_a_depth_the_bounds_do_not_limit_is_warned_on_a_newcomers_table(tmp_path: Path) -> None:
    """Issue 36: with no max_prefix_length and a small lambda, the depth bound reached the number of
    antecedents and the estimate said a fraction of a second, without a warning; the search then
    stopped at its limit far from certified."""
    from loans_table import loans_spec

    spec = loans_spec(tmp_path, "corels", binarize=True)
    result = CliRunner().invoke(
        cli,
        ["validate", str(spec), "--set", "objective.regularization=0.002", "--set", "data.binarize.thresholds=8"],
    )
    assert result.exit_code == 0, result.output
    size = next(line for line in result.output.splitlines() if "corels size" in line)
    antecedents = int(size.split("corels size: ")[1].split(" antecedents")[0].replace(",", ""))
    assert f"prefixes of at most {antecedents} rules" in size
    assert "10^0 " not in size and "the bounds do not limit the depth" in size
    assert "unlikely to certify" in result.output and "max_prefix_length" in result.output
    bounded = CliRunner().invoke(
        cli,
        [
            "validate",
            str(spec),
            "--set",
            "objective.regularization=0.002",
            "--set",
            "data.binarize.thresholds=8",
            "--set",
            "constraints.max_prefix_length=3",
        ],
    )
    assert "the bounds do not limit the depth" not in bounded.output


def test_with_the_tail_table_the_estimate_follows_the_compas_searches(tmp_path: Path, compas) -> None:
    """COMPAS's .out has 194 units, so the search builds its tail table. The searches took 17.7
    CPU-s at lambda 0.0025 and 999 s on two threads at 0.001 (docs/maintainers/corels-measurements.md);
    the estimate says seconds and minutes there, where before the table it said "more than a year"
    at 0.001. With the table switched off it is the old rule of thumb again."""
    spec = tmp_path / "compas.yaml"
    spec.write_text(
        "name: compas\ndata:\n  source: data:corels/compas_train.out\nsolver: corels\n"
        "objective: {regularization: 0.001}\nsearch: {threads: 2}\n"
    )

    def estimate(*overrides: str) -> SearchEstimate:
        launch = Launch.from_file(spec, no_store=True, overrides=list(overrides))
        loaded = launch.loaded.spec
        return estimate_search(launch.prepare(), loaded.objective, loaded.constraints, loaded.search)

    at = estimate()
    assert at.tail_table and 5 * 60 < at.rough_seconds < 3 * 3600
    assert at.warning(1800) is None
    assert estimate("objective.regularization=0.0025").rough_seconds < 60
    off = estimate("search.ablation=[tail_table]")
    assert not off.tail_table and off.rough_seconds > 86400 * 365 and off.warning(1800) is not None
    # without compress every one of the 6,489 samples is a unit: too many for the table's 64 MB
    assert not estimate("search.compress=false").tail_table


def test_the_tail_table_changes_only_the_deep_searches_time() -> None:
    """A deep search's rough time with and without the table; the second level's is the same."""
    base = {
        "antecedents": 155, "samples": 6489, "regularization": 0.001, "max_card": None, "empty_list": 0.45,
        "one_rule": 0.37, "minority": 0.3, "max_length": 50, "depth": 49, "first_level": 151,
        "second_level": 23_254, "log10_space": 40.1, "threads": 2,
    }  # fmt: skip
    plain, tabled = SearchEstimate(**base), SearchEstimate(**base, tail_table=True)
    assert plain.rough_seconds == pytest.approx(10 ** (40.1 - 22) / 2)
    assert tabled.rough_seconds == pytest.approx(
        10 ** (size.TAIL_TABLE_LOG10_SLOPE * 40.1 - size.TAIL_TABLE_LOG10_OFFSET) / 2
    )
    shallow = {**base, "depth": 5, "log10_space": 8.8}
    assert SearchEstimate(**shallow).rough_seconds == SearchEstimate(**shallow, tail_table=True).rough_seconds
