"""Members with figures on the command line: ``run --json`` and ``glasswork rashomon`` carry each
member's metrics and audit and the set's fairness range, ``--where``/``--sort`` choose and order
them (errors exit 2 pointing at the column, hostile names stay data), the exported member carries
its figures, and a store of schema 7 is migrated with its members' figures not available."""

from __future__ import annotations

import csv
import json
import shutil
from pathlib import Path

import duckdb
import numpy as np
import pytest

from spec_files import write
from test_cli_rashomon import invoke  # noqa: F401  (the fixture: the CLI in-process, in tmp_path)
from glasswork.store import SCHEMA_VERSION

HOSTILE = ["a\x1b[31mred", "b'; DROP TABLE runs; --", 'c"quote']


@pytest.fixture
def spec(tmp_path: Path) -> Path:
    """The toy solver's set over three hostile 0/1 columns, with a protected group and test rows."""
    rng = np.random.default_rng(0)
    X = rng.integers(0, 2, size=(160, 3))
    y = X[:, 0].copy()
    y[:20] = 1 - y[:20]
    group = np.where(rng.random(160) < 0.4, "g'1", "other")
    with (tmp_path / "table.csv").open("w", newline="") as fh:
        out = csv.writer(fh)
        out.writerow([*HOSTILE, "group", "label"])
        out.writerows([*row, g, label] for row, g, label in zip(X, group, y))
    return write(
        tmp_path / "s.yaml",
        "name: figures\nsolver: toy\n"
        "data: {source: table.csv, target: label, positive: 1, audit_only: [group], "
        "split: {kind: holdout, test_size: 0.3, seed: 0}}\n"
        'fairness: {protected: {column: group, value: "g\'1"}, metrics: [statistical_parity, equal_opportunity]}\n'
        "rashomon: {epsilon: 10}\n",
    )


def listing(invoke, *args: str) -> dict:
    result = invoke("rashomon", "latest", "--json", *args)
    assert result.exit_code == 0, result.output
    return json.loads(result.stdout)


def test_members_carry_their_figures_and_the_set_its_range(invoke, spec):
    result = invoke("run", "--json", "-q", str(spec))
    assert result.exit_code == 0, result.output
    doc = json.loads(result.stdout)["rashomon"]
    assert doc["models"] and all(set(m["metrics"]) >= {"train_accuracy", "test_accuracy"} for m in doc["models"])
    assert all(set(m["fairness"]) == {"train", "test"} for m in doc["models"])
    fairness = doc["fairness"]
    assert fairness["exact"] is True and fairness["members"] == doc["count"]
    sp = [m["fairness"]["train"]["statistical_parity"] for m in doc["models"]]
    assert fairness["train"]["statistical_parity"]["min"] == pytest.approx(min(sp))
    assert fairness["train"]["statistical_parity"]["max"] == pytest.approx(max(sp))
    stored = listing(invoke, "--limit", "1000")
    assert stored["fairness"] == fairness  # the store holds what the run computed, never recomputes
    for kept, listed in zip(doc["models"], stored["models"]):
        assert listed["metrics"] == pytest.approx(kept["metrics"]) and listed["fairness"] == kept["fairness"]
    text = invoke("rashomon", "latest").stdout
    assert f"fairness over the set, exact over all {doc['count']:,} members of the complete set:" in text
    assert "statistical_parity: train " in text and "test_accuracy" in text
    exported = json.loads(invoke("export", "latest", "--member", "2", "--format", "json").stdout)
    second = stored["models"][1]
    assert exported["metrics"]["test_accuracy"] == pytest.approx(second["metrics"]["test_accuracy"])
    assert exported["metrics"]["train_statistical_parity"] == second["fairness"]["train"]["statistical_parity"]


def test_where_and_sort_choose_members_by_their_figures(invoke, spec):
    assert invoke("run", "-q", str(spec)).exit_code == 0
    every = listing(invoke, "--limit", "1000")["models"]
    assert len(every) >= 4
    middle = sorted(m["metrics"]["test_accuracy"] for m in every)[len(every) // 2]
    where = f"test_accuracy >= {middle!r} and not uses('{HOSTILE[1].replace(chr(39), chr(92) + chr(39))}')"
    chosen = listing(invoke, "--where", where, "--sort", "-test_accuracy", "--limit", "1000")
    expected = [
        m for m in every if m["metrics"]["test_accuracy"] >= middle and HOSTILE[1] not in m["features"]
    ]  # the same members, chosen by hand
    expected.sort(key=lambda m: (-m["metrics"]["test_accuracy"], m["rank"]))
    assert [m["rank"] for m in chosen["models"]] == [m["rank"] for m in expected] and expected
    assert chosen["filters"]["where"] == where and chosen["filters"]["descending"] is True
    cut = listing(invoke, "--sort", "statistical_parity", "--desc", "--limit", "2")
    assert cut["matched"] == len(every)  # how many the limit cut from
    limited = cut["models"]
    by_parity = sorted(every, key=lambda m: (-m["fairness"]["train"]["statistical_parity"], m["rank"]))
    assert [m["rank"] for m in limited] == [m["rank"] for m in by_parity[:2]]  # the limit applies after the sort
    uses = listing(invoke, "--where", f"uses({HOSTILE[0]})", "--limit", "1000")["models"]
    assert uses and all(HOSTILE[0] in m["features"] for m in uses)
    assert len(uses) == sum(HOSTILE[0] in m["features"] for m in every)
    quoted = listing(invoke, "--where", 'uses("c\\"quote")', "--limit", "1000")["models"]
    assert quoted and all(HOSTILE[2] in m["features"] for m in quoted)
    text = invoke("rashomon", "latest", "--where", where, "--sort", "-test_accuracy").stdout
    assert "\x1b" not in text and "sorted by test_accuracy, largest first" in text
    assert f"{len(expected):,} kept member(s) that match" in text


@pytest.mark.parametrize(
    ("args", "column", "words"),
    [
        (("--where", "test_accuracy >= 0.5 and"), 25, "expected a number or a figure"),
        (("--where", "tset_accuracy > 0"), 1, "did you mean 'test_accuracy'"),
        (("--where", "uses(nope) or objective > 0"), 6, "has no feature or column 'nope'"),
        (("--where", "uses(a\x1b[31mrde)"), 6, "has no feature or column"),
        (("--where", "__import__('os').system('echo hi')"), 11, "expected a comparison"),
        (("--sort", "-colour"), 2, "no member has a figure 'colour'"),
    ],
)
def test_a_bad_expression_is_exit_2_pointing_at_its_column(invoke, spec, args, column, words):
    assert invoke("run", "-q", str(spec)).exit_code == 0
    result = invoke("rashomon", "latest", *args)
    assert result.exit_code == 2 and words in result.stderr and f"(at column {column})" in result.stderr
    assert "\x1b" not in result.stderr  # a hostile expression is shown escaped
    caret = result.stderr.splitlines()[-1]
    assert caret.strip() == "^"
    as_json = invoke("rashomon", "latest", "--json", *args)
    assert as_json.exit_code == 2 and json.loads(as_json.stdout)["column"] == column


def test_a_store_of_schema_7_is_migrated_and_its_members_figures_are_not_available(invoke, spec, tmp_path):
    assert invoke("run", "-q", str(spec)).exit_code == 0
    old = tmp_path / "old.duckdb"
    shutil.copy(tmp_path / "glasswork.duckdb", old)
    con = duckdb.connect(str(old))
    try:  # version 8 only appended columns: without them the file is as version 7 wrote it
        con.execute("ALTER TABLE rashomon_sets DROP COLUMN fairness")
        for table in ("rashomon_members", "rashomon_point_members"):
            for column in ("size", "metrics", "fairness"):
                con.execute(f"ALTER TABLE {table} DROP COLUMN {column}")
        con.execute("UPDATE meta SET value = '7' WHERE key = 'schema_version'")
    finally:
        con.close()
    kept = listing(invoke, "--db", str(old), "--limit", "1000")
    assert kept["models"] and all(m["metrics"] is None and m["fairness"] is None for m in kept["models"])
    assert "fairness" not in kept
    con = duckdb.connect(str(old))
    try:
        assert con.execute("SELECT value FROM meta WHERE key = 'schema_version'").fetchall() == [(str(SCHEMA_VERSION),)]
    finally:
        con.close()
    text = invoke("rashomon", "latest", "--db", str(old), "--where", "objective >= 0")
    assert text.exit_code == 0 and "have no figures (n/a)" in text.stdout
    unknown = invoke("rashomon", "latest", "--db", str(old), "--where", "test_accuracy > 0")
    assert unknown.exit_code == 2 and "no member has a figure 'test_accuracy'" in unknown.stderr


def test_the_card_draws_the_fairness_range_with_the_member_at_each_end(invoke, spec, tmp_path):
    doc = json.loads(invoke("run", "--json", "-q", str(spec)).stdout)["rashomon"]
    assert invoke("report", "latest", "-o", "card.html").exit_code == 0
    html = (tmp_path / "card.html").read_text(encoding="utf-8")
    section = html.split("<h3>Fairness over the set</h3>")[1].split("<h2", 1)[0]  # up to the set explorer
    assert f"exact over all {doc['count']:,} members of the complete set" in section
    low = doc["fairness"]["test"]["equal_opportunity"]
    assert f"(member {low['min_rank']})" in section and "<th>test max</th>" in section
    assert "\x1b" not in html and "DROP TABLE" not in section  # features are not in the range's table
