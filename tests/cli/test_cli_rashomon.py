"""A Rashomon set on the command line: ``run`` (its lines and ``--json``), ``glasswork rashomon``
(list, filter, show, pick), ``export --member``, their errors, and hostile feature names."""

from __future__ import annotations

import csv
import json
from pathlib import Path

import numpy as np
import pytest
from click.testing import CliRunner
from glasswork.cli import cli
from spec_files import write

SPEC = """\
name: cli-set
solver: toy
data:
  source: sklearn:breast_cancer
  binarize: {thresholds: 2}
rashomon:
  epsilon: 0.5
  max_models: 5
"""


@pytest.fixture
def invoke(toy_env, tmp_path, monkeypatch):
    monkeypatch.chdir(tmp_path)
    runner = CliRunner()

    def call(*args: str):
        return runner.invoke(cli, list(args), catch_exceptions=False)

    return call


def run_json(invoke, path, *args: str) -> dict:
    result = invoke("run", "--json", "-q", str(path), *args)
    assert result.exit_code == 0, result.output
    return json.loads(result.stdout)


def test_run_json_has_the_set_with_its_count_exact_and_its_models_capped(invoke, tmp_path):
    doc = run_json(invoke, write(tmp_path / "s.yaml", SPEC), "--rashomon-models", "2")
    rashomon = doc["rashomon"]
    assert set(rashomon) >= {
        "count",
        "complete",
        "threshold",
        "epsilon",
        "optimum",
        "optimum_proven",
        "unenumerated_bound",
        "exhaustive",
        "kept",
        "models",
        "multiplicity",
    }
    assert rashomon["count"] == 6 and rashomon["kept"] == 5 and len(rashomon["models"]) == 2
    assert rashomon["complete"] is True and rashomon["epsilon"] == 0.5
    assert rashomon["threshold"] == pytest.approx(1.5 * doc["objective"])
    assert rashomon["models"][0]["objective"] == pytest.approx(doc["objective"])
    member = {"objective", "features", "fingerprint", "model", "model_text", "size", "metrics"}
    assert set(rashomon["models"][0]) == member
    assert set(rashomon["models"][0]["metrics"]) >= {"train_accuracy", "test_accuracy"}  # no fairness: section
    assert rashomon["multiplicity"]["rows"] == "test" and 0 <= rashomon["multiplicity"]["ambiguity"] <= 1
    default = run_json(invoke, write(tmp_path / "s.yaml", SPEC))
    assert len(default["rashomon"]["models"]) == 5  # under the default cap: every kept one
    plain = run_json(invoke, write(tmp_path / "p.yaml", SPEC.split("rashomon:")[0]))
    assert "rashomon" not in plain  # a run without a set: the document as before


def test_run_prints_the_set_in_a_few_lines(invoke, tmp_path):
    result = invoke("run", "-q", str(write(tmp_path / "s.yaml", SPEC)))
    assert result.exit_code == 0, result.output
    out = result.stdout
    assert "Rashomon set" in out and "6 models with objective <= " in out and "(epsilon 0.5 over the optimum" in out
    assert "; complete; 5 kept" in out and "over the 5 kept members of 6: ambiguity" in out
    assert "rank" in out and "decides as" in out and "worst_" in out


def test_a_stopped_enumeration_says_incomplete_with_its_bound(invoke, tmp_path):
    spec = write(tmp_path / "s.yaml", SPEC + "search: {rashomon_stop_after: 3}\n")
    doc = run_json(invoke, spec)
    assert doc["rashomon"]["complete"] is False and doc["rashomon"]["count"] == 3
    bound = doc["rashomon"]["unenumerated_bound"]
    assert bound is not None and bound >= doc["rashomon"]["models"][-1]["objective"]
    out = invoke("run", "-q", str(spec)).stdout
    assert "INCOMPLETE: the enumeration stopped; every model not counted has objective >= " in out
    listed = invoke("rashomon", "latest").stdout
    assert "INCOMPLETE" in listed


def test_rashomon_lists_filters_and_limits(invoke, tmp_path):
    doc = run_json(invoke, write(tmp_path / "s.yaml", SPEC))
    models = doc["rashomon"]["models"]
    result = invoke("rashomon", "latest")
    assert result.exit_code == 0, result.output
    assert "6 models with objective" in result.stdout
    assert "decides as" in result.stdout and "fingerprint" not in result.stdout  # says what it means
    listed = json.loads(invoke("rashomon", "latest", "--json").stdout)
    assert listed["run_id"] == doc["run_id"] and listed["count"] == 6 and listed["kept"] == 5
    assert [m["rank"] for m in listed["models"]] == [1, 2, 3, 4, 5]
    assert [m["fingerprint"] for m in listed["models"]] == [m["fingerprint"] for m in models]
    first = models[0]["features"][0]
    used = json.loads(invoke("rashomon", "latest", "--json", "--uses", first).stdout)
    assert [m["rank"] for m in used["models"]] == [1] and used["filters"]["uses"] == [first]
    avoided = json.loads(invoke("rashomon", "latest", "--json", "--avoids", first, "--limit", "2").stdout)
    assert [m["rank"] for m in avoided["models"]] == [2, 3]
    text = invoke("rashomon", "latest", "--uses", first, "--avoids", first).stdout
    assert "no kept member matches" in text


def test_a_raw_column_filters_every_feature_made_from_it(invoke, tmp_path):
    """``--avoids sex`` is what a reviewer means: no member whose rules look at the column, through
    any of the features binarizing made from it."""
    from glasswork.store import RunStore

    doc = run_json(
        invoke, write(tmp_path / "s.yaml", SPEC), "--set", "rashomon.epsilon=5", "--set", "rashomon.max_models=200"
    )
    inputs = RunStore(tmp_path / "glasswork.duckdb").details(doc["run_id"])["inputs"]
    column_of = {f["name"]: {c["column"] for c in f["all"]} for f in inputs["features"]}  # binarized: conditions
    used = [m["features"][0] for m in doc["rashomon"]["models"] if m["features"]]
    [column] = column_of[used[0]]
    made_from = {name for name, cols in column_of.items() if column in cols}
    assert len(made_from) > 1  # thresholds: 2 makes two features of each numeric column
    listing = ("rashomon", "latest", "--json", "--limit", "1000")
    avoided = json.loads(invoke(*listing, "--avoids", column).stdout)["models"]
    assert len(avoided) > 1 and all(not set(m["features"]) & made_from for m in avoided)
    uses = json.loads(invoke(*listing, "--uses", column).stdout)["models"]
    assert uses and all(set(m["features"]) & made_from for m in uses)
    assert len(avoided) + len(uses) == doc["rashomon"]["kept"]


def test_a_feature_name_that_is_not_the_datas_is_exit_2_with_a_did_you_mean(invoke, tmp_path):
    doc = run_json(invoke, write(tmp_path / "s.yaml", SPEC))
    first = doc["rashomon"]["models"][0]["features"][0]
    result = invoke("rashomon", "latest", "--uses", first[:-1] + "x")
    assert result.exit_code == 2
    assert (
        f"has no feature or column {first[:-1] + 'x'!r}" in result.stderr and f"did you mean {first!r}" in result.stderr
    )
    # a feature of the data that no kept member uses is a fine question with an empty answer
    unused = "mean_radius<=12.27"
    assert unused not in {f for m in doc["rashomon"]["models"] for f in m["features"]}
    answer = json.loads(invoke("rashomon", "latest", "--json", "--uses", unused).stdout)
    assert answer["models"] == []


def test_show_and_pick_and_export_member(invoke, tmp_path):
    doc = run_json(invoke, write(tmp_path / "s.yaml", SPEC))
    second = doc["rashomon"]["models"][1]
    shown = invoke("rashomon", "latest", "--show", "2")
    assert shown.exit_code == 0 and "member 2: objective" in shown.stdout
    assert second["model_text"].splitlines()[0] in shown.stdout
    as_json = json.loads(invoke("rashomon", "latest", "--show", "2", "--json").stdout)
    assert as_json["model"] == second["model"] and as_json["rank"] == 2
    picked = invoke("rashomon", "latest", "--pick", "2", "--format", "json", "-o", str(tmp_path / "m.json"))
    assert picked.exit_code == 0, picked.output
    document = json.loads((tmp_path / "m.json").read_text())
    assert document["model"] == second["model"] and document["run"]["run_id"] == doc["run_id"]
    assert document["certificate"]["status"] == "rashomon member"  # not certified optimal
    assert document["certificate"]["objective"] == pytest.approx(second["objective"])
    assert document["inputs"]["features"]  # the run's inputs: it reads the raw columns as the optimum does
    exported = json.loads(invoke("export", "latest", "--member", "2", "--format", "json").stdout)
    assert exported == document
    optimum = json.loads(invoke("export", "latest", "--format", "json").stdout)
    assert optimum["model"] == doc["model"]  # without --member: the run's model, as before


def test_errors_are_exit_2_with_a_message(invoke, tmp_path):
    run_json(invoke, write(tmp_path / "p.yaml", SPEC.split("rashomon:")[0]))
    result = invoke("rashomon", "latest")
    assert result.exit_code == 2 and "has no Rashomon set" in result.stderr
    assert invoke("export", "latest", "--member", "1", "--format", "json").exit_code == 2
    run_json(invoke, write(tmp_path / "s.yaml", SPEC))
    for args in (("--show", "6"), ("--pick", "99"), ("--show", "1", "--pick", "1")):
        result = invoke("rashomon", "latest", *args)
        assert result.exit_code == 2, args
    assert "ranks 1 to 5); there is no rank 99" in invoke("rashomon", "latest", "--pick", "99").stderr
    run_json(invoke, write(tmp_path / "k.yaml", SPEC + "  keep: summary\n"))
    assert "kept as a summary" in invoke("rashomon", "latest", "--show", "1").stderr
    result = invoke("export", "latest", "--member", "1", "--format", "json")
    assert result.exit_code == 2 and "kept as a summary" in result.stderr
    listed = invoke("rashomon", "latest")
    assert listed.exit_code == 0 and "6 models" in listed.stdout  # summaries still list


HOSTILE = ["a\x1b[31mred", "b'; DROP TABLE runs; --", "c<script>x</script>"]


def test_hostile_feature_names_are_listed_escaped_and_filtered_exactly(invoke, tmp_path):
    rng = np.random.default_rng(0)
    X = rng.integers(0, 2, size=(80, 3))
    y = X[:, 0].copy()
    y[:5] = 1 - y[:5]
    with (tmp_path / "hostile.csv").open("w", newline="") as fh:
        out = csv.writer(fh)
        out.writerow([*HOSTILE, "label"])
        out.writerows([*row, label] for row, label in zip(X, y))
    spec = write(
        tmp_path / "h.yaml",
        "name: hostile\nsolver: toy\ndata: {source: hostile.csv, target: label}\nrashomon: {epsilon: 10}\n",
    )
    doc = run_json(invoke, spec)
    used = {f for m in doc["rashomon"]["models"] for f in m["features"]}
    assert set(HOSTILE) <= used
    for args in ((), ("--show", "1")):
        out = invoke("rashomon", "latest", *args).stdout
        assert "\x1b" not in out
    out = invoke("run", "-q", str(spec)).stdout
    assert "\x1b" not in out
    answer = json.loads(invoke("rashomon", "latest", "--json", "--uses", HOSTILE[1]).stdout)
    assert answer["models"] and all(HOSTILE[1] in m["features"] for m in answer["models"])
    missing = invoke("rashomon", "latest", "--uses", "a\x1b[31mrde")
    assert missing.exit_code == 2 and "\x1b" not in missing.stderr


def test_runs_show_gives_the_sets_summary(invoke, tmp_path):
    doc = run_json(invoke, write(tmp_path / "s.yaml", SPEC))
    out = invoke("runs", "show", "latest").stdout
    assert "Rashomon set" in out and "6 models with objective" in out and "ambiguity" in out
    assert f"glasswork rashomon {doc['run_id'][:12]}" in out
    shown = json.loads(invoke("runs", "show", "latest", "--json").stdout)
    assert shown["rashomon"]["count"] == 6 and shown["rashomon"]["kept"] == 5
    run_json(invoke, write(tmp_path / "p.yaml", SPEC.split("rashomon:")[0]))
    assert "Rashomon" not in invoke("runs", "show", "latest").stdout
    assert "rashomon" not in json.loads(invoke("runs", "show", "latest", "--json").stdout)


def test_rashomon_json_has_weighted_figures_and_reliance_per_raw_column(invoke, tmp_path):
    rng = np.random.default_rng(7)
    path = tmp_path / "w.csv"
    with path.open("w", newline="") as handle:
        out = csv.writer(handle)
        out.writerow(["age", "priors", "label", "w"])
        for _ in range(120):
            age, priors = int(rng.integers(18, 70)), int(rng.integers(0, 9))
            label = int((age < 30 or priors > 4) != (rng.random() < 0.15))
            out.writerow([age, priors, label, float(rng.choice([0.5, 1.0, 3.0]))])
    spec = write(
        tmp_path / "w.yaml",
        f"name: weighted\nsolver: toy\ndata:\n  source: {path}\n  target: label\n  weights: w\n"
        "  binarize: {thresholds: 3}\nrashomon:\n  epsilon: 5\n  max_models: 50\n",
    )
    run_json(invoke, spec)
    listed = json.loads(invoke("rashomon", "latest", "--json").stdout)
    figures = listed["multiplicity"]
    assert figures["weighted"] is True and 0 <= figures["split_share"] <= 1
    # each raw column's range covers its binarized features' shuffles together: both columns are used
    assert set(figures["reliance_columns"]) == {"age", "priors"}
    assert all(low <= high for low, high in figures["reliance_columns"].values())
    assert set(figures["reliance"]) == set(figures["variable_use"]) and len(figures["reliance"]) > 2


def test_the_first_word_of_a_long_column_name_suggests_that_column(invoke, tmp_path):
    """``--uses age`` on a table whose column is ``age in whole years`` names that column: difflib
    alone finds nothing (a short word is far, as a ratio, from a long name that starts with it)."""
    rng = np.random.default_rng(0)
    with open(tmp_path / "t.csv", "w", newline="") as f:
        out = csv.writer(f)
        out.writerow(["age in whole years", "city", "y"])
        for _ in range(120):
            age = int(rng.integers(18, 80))
            out.writerow([age, rng.choice(["Oslo", "Roma"]), "yes" if age > 50 else "no"])
    spec = SPEC.replace("sklearn:breast_cancer", "t.csv\n  target: y").replace("thresholds: 2", "thresholds: 3")
    run_json(invoke, write(tmp_path / "s.yaml", spec))
    result = invoke("rashomon", "latest", "--uses", "age")
    assert result.exit_code == 2
    assert "did you mean 'age in whole years'" in result.stderr


@pytest.mark.parametrize(
    "args",
    [
        ("rashomon", "latest", "--limit", "99999999999999999999"),
        ("rashomon", "latest", "--show", "99999999999999999999"),
        ("export", "latest", "--member", "99999999999999999999", "--format", "json"),
        ("runs", "list", "--limit", "99999999999999999999"),
    ],
)
def test_a_count_past_what_the_store_holds_is_a_usage_error(invoke, tmp_path, args):
    """``rashomon RUN --limit 99999999999999999999`` was an internal error (DuckDB's BIGINT)."""
    run_json(invoke, write(tmp_path / "s.yaml", SPEC))
    result = CliRunner().invoke(cli, list(args))
    assert result.exit_code == 2, result.output
    assert "99999999999999999999 is not in the range" in result.stderr and "internal error" not in result.output


def test_members_are_listed_as_their_rules_and_filtered_by_a_rule_they_print(tmp_path: Path) -> None:
    """Issue 36: the listing printed each member's features in column order without negations, so
    different lists looked identical, and ``--uses 'credit_score>645'`` refused a rule ``--show`` prints."""
    from click.testing import CliRunner
    from glasswork.cli import cli
    from loans_table import loans_spec

    spec = loans_spec(tmp_path, "corels", "rashomon: {epsilon: 0.05}\n", binarize=True)
    db = str(tmp_path / "runs.duckdb")
    runner = CliRunner()
    assert runner.invoke(cli, ["run", "-q", str(spec), "--db", db]).exit_code == 0
    listed = runner.invoke(cli, ["rashomon", "latest", "--db", db], env={"COLUMNS": "250"})
    assert listed.exit_code == 0, listed.output
    document = json.loads(runner.invoke(cli, ["rashomon", "latest", "--json", "--db", db]).stdout)
    rows = [line for line in listed.output.splitlines() if " -> " in line]
    assert len(rows) == len(document["models"]) > 1
    assert len(set(" ".join(r.split()[2:-1]) for r in rows)) == len(rows)  # no two lists read alike
    for row, member in zip(rows, document["models"]):
        rules = [r["antecedent"] for r in member["model"]["rules"]]
        shown = " ".join(row.split()[2:-1])
        assert [shown.index(f"{a} -> ") for a in rules] == sorted(shown.index(f"{a} -> ") for a in rules)
    negated = next(
        (r["antecedent"] for m in document["models"] for r in m["model"]["rules"] if ">" in r["antecedent"]), None
    )
    assert negated is not None  # a negation a member prints, not a feature of the data
    uses = runner.invoke(cli, ["rashomon", "latest", "--uses", negated, "--json", "--db", db])
    assert uses.exit_code == 0, uses.output
    assert json.loads(uses.stdout)["models"]
    avoids = runner.invoke(cli, ["rashomon", "latest", "--avoids", negated, "--json", "--db", db])
    assert avoids.exit_code == 0, avoids.output
