"""``glasswork rashomon RUN`` as a person choosing a member reads it: with a filter the answer comes
first (the set in one line, how many match, the members; ``--summary`` adds the rest), each member
says which member it decides as (the same ``rashomon.decides_as`` the explorer uses), ``--distinct``
lists one member per decision, and a mistyped figure gets the one meant. One CORELS set over a small
table of churned customers, with a hostile column name, built once for the module."""

from __future__ import annotations

import json
from typing import Any

import numpy as np
import pandas as pd
import pytest
from click.testing import CliRunner

from glasswork.cli import cli

SALARY = "salary'; DROP TABLE runs; --"


@pytest.fixture(scope="module")
def call(tmp_path_factory: pytest.TempPathFactory) -> Any:
    """The CLI on a store holding one set of 20 rule lists within 5 % (2 distinct decisions among them)."""
    folder = tmp_path_factory.mktemp("listing")
    rng = np.random.default_rng(5)
    n = 240
    frame = pd.DataFrame(
        {
            SALARY: rng.integers(15, 120, n),
            "region": rng.choice(["north", "south", "east"], n),
            "years_at_job": rng.integers(0, 30, n),
            "late_payments": rng.poisson(1.0, n),
        }
    )
    risk = -(frame[SALARY] - 50) / 25 + frame.late_payments * 0.8 - frame.years_at_job / 15 + rng.normal(0, 0.7, n)
    frame["churned"] = np.where(risk > 0.6, "yes", "no")
    frame.to_csv(folder / "train.csv", index=False)
    spec = {
        "name": "churn",
        "data": {
            "source": "train.csv",
            "target": "churned",
            "positive": "yes",
            "binarize": {"thresholds": 3},
            "split": {"kind": "holdout", "test_size": 0.3, "seed": 0},
        },
        "solver": "corels",
        "objective": {"regularization": 0.01},
        "limits": {"time": 30},
        "rashomon": {"epsilon": 0.05},
    }
    (folder / "spec.json").write_text(json.dumps(spec))
    runner = CliRunner()
    db = str(folder / "runs.duckdb")

    def invoke(*args: str) -> Any:
        return runner.invoke(cli, [*args, "--db", db], catch_exceptions=False)

    assert invoke("run", "-q", str(folder / "spec.json")).exit_code == 0
    return invoke


def listed(call: Any, *args: str) -> dict[str, Any]:
    result = call("rashomon", "latest", "--json", "--limit", "1000", *args)
    assert result.exit_code == 0, result.output
    return json.loads(result.stdout)


def test_each_member_decides_as_the_best_member_predicting_alike(call):
    every = listed(call)["models"]
    assert len(every) >= 10
    for m in every:  # by hand: the lowest rank with the same training predictions
        assert m["decides_as"] == min(o["rank"] for o in every if o["fingerprint"] == m["fingerprint"])
    ways = {m["decides_as"] for m in every}
    assert 1 < len(ways) < len(every) and listed(call)["decisions"] == len(ways)
    cut = listed(call, "--limit", "3")  # a listing cut by --limit still says it from every kept member
    assert [m["decides_as"] for m in cut["models"]] == [m["decides_as"] for m in every[:3]]
    text = call("rashomon", "latest", "--limit", "1000").stdout
    assert "decides as" in text and "itself" in text and f"in {len(ways)} distinct way(s)" in text
    alike = next(m for m in every if m["decides_as"] != m["rank"])
    line = next(row for row in text.splitlines() if row.strip().startswith(f"{alike['rank']} "))
    assert line.rstrip().endswith(f"member {alike['decides_as']}")
    shown = call("rashomon", "latest", "--show", str(alike["rank"])).stdout
    assert f"decides as member {alike['decides_as']} (fingerprint {alike['fingerprint']})" in shown
    one = json.loads(call("rashomon", "latest", "--show", str(alike["rank"]), "--json").stdout)
    assert one["decides_as"] == alike["decides_as"]


def test_distinct_lists_the_first_listed_member_of_each_decision(call):
    every = listed(call)["models"]
    best = listed(call, "--distinct")
    assert [m["rank"] for m in best["models"]] == sorted({m["decides_as"] for m in every})
    assert best["filters"]["distinct"] is True and best["matched"] == len(best["models"])
    by_auc = listed(call, "--distinct", "--sort", "-test_auc")["models"]
    ordered = sorted(every, key=lambda m: (-m["metrics"]["test_auc"], m["rank"]))
    first: dict[int, int] = {}
    for m in ordered:
        first.setdefault(m["decides_as"], m["rank"])
    assert [m["rank"] for m in by_auc] == list(first.values())  # per decision, the best by the sort
    text = call("rashomon", "latest", "--distinct").stdout
    assert f"{len(first)} kept member(s), one per distinct decision" in text


def test_a_filtered_listing_is_the_answer_first(call):
    where = f"test_auc >= 0.8 and not uses(region) and uses('{SALARY.replace(chr(39), chr(92) + chr(39))}')"
    result = call("rashomon", "latest", "--where", where, "--sort", "-test_auc")
    assert result.exit_code == 0, result.output
    lines = result.stdout.splitlines()
    matched = listed(call, "--where", where)["matched"]
    assert "models with objective <=" in lines[0] and "distinct way(s)" in lines[0]
    assert (
        lines[1].startswith(f"{matched} kept member(s) that match") and "sorted by test_auc, largest first" in lines[1]
    )
    assert lines[2].split()[:2] == ["rank", "objective"] and len(lines) == 3 + matched
    assert "reliance min" not in result.stdout and "used by" not in result.stdout  # the summary, on request
    full = call("rashomon", "latest", "--where", where, "--summary").stdout
    assert "reliance min" in full and full.index("reliance min") < full.index(f"{matched} kept member(s) that match")
    plain = call("rashomon", "latest").stdout  # no filter: the set's summary, as before
    assert "reliance min" in plain and "kept member(s) that" not in plain
    kept = len(listed(call)["models"])
    cut = call("rashomon", "latest", "--limit", "3").stdout  # the limit cut says from how many
    assert f"{kept} kept member(s); the first 3 listed (--limit)" in cut


def test_a_figure_named_without_its_part_is_told_the_one_meant(call):
    result = call("rashomon", "latest", "--where", "auc >= 0.85")
    assert result.exit_code == 2
    assert "no member has a figure 'auc'; did you mean 'train_auc' or 'test_auc'?" in result.stderr
