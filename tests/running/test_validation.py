"""``glasswork validate`` refuses what ``run`` refuses before its search (issue 25): each mistake
that makes ``run`` exit 2 before solving makes ``validate`` exit 2 with the same message, read
from real files; a valid spec shows its data and the solver's size estimate."""

from __future__ import annotations

import json
import os
from pathlib import Path

import numpy as np
import pytest
from click.testing import CliRunner
from glasswork.cli import cli


def _table(n: int, *, regression: bool = False, constant: bool = False, weight: str = "1", seed: int = 0) -> str:
    """``a,b,c,w,y``: three numeric features, a weight column and a 0/1 (or numeric) target."""
    rng = np.random.default_rng(seed)
    X = rng.normal(size=(n, 3))
    y = X[:, 0] + 0.1 * rng.normal(size=n) if regression else (X[:, 0] > 0).astype(int)
    if constant:
        y[:] = 1
    return "a,b,c,w,y\n" + "".join(f"{r[0]:.4f},{r[1]:.4f},{r[2]:.4f},{weight},{t}\n" for r, t in zip(X, y))


BIN = "binarize: {thresholds: 2}, "
WHOLE = BIN + "split: {kind: none}"  # binarized, every row to train on
TWENTY = {"d.csv": _table(20)}


def _spec(solver: str, data: str, extra: str = "") -> str:
    return f"name: mistake\nsolver: {solver}\ndata: {{{data}}}\n{extra}\nlimits: {{time: 10}}\n"


# case: (files, spec text). Files are text; None makes a folder, bytes are written as they are.
MISTAKES: dict[str, tuple[dict[str, str | bytes | None], str]] = {
    # the data layer (glasswork.data), whatever the solver
    "missing data file": ({}, _spec("corels", "source: nope.csv, target: y, " + WHOLE)),
    "missing target column": (TWENTY, _spec("corels", "source: d.csv, target: nosuch, " + WHOLE)),
    "positive label that does not occur": (
        TWENTY,
        _spec("corels", "source: d.csv, target: y, positive: emu, " + WHOLE),
    ),
    "constant target": (
        {"d.csv": _table(8, constant=True)},
        _spec("corels", "source: d.csv, target: y, " + WHOLE),
    ),
    "missing target value": (
        {"d.csv": "a,y\n1,1\n2,\n3,0\n"},
        _spec("corels", "source: d.csv, target: y, " + WHOLE),
    ),
    "missing feature value": (
        {"d.csv": "a,b,y\n1,0.5,1\n2,nan,0\n3,,1\n"},
        _spec("corels", "source: d.csv, target: y, " + WHOLE),
    ),
    "text in a numeric column": (
        {"d.csv": "a,b,y\n1,2,1\n2,abc,0\n3,4,1\n"},
        _spec("corels", "source: d.csv, target: y, " + WHOLE),
    ),
    "negative weight": (
        {"d.csv": "a,w,y\n1,2,1\n2,-1,0\n3,4,1\n"},
        _spec("corels", "source: d.csv, target: y, weights: w, " + WHOLE),
    ),
    "three labels for a binary task": (
        {"d.csv": "a,y\n1,cat\n2,dog\n3,cow\n"},
        _spec("corels", "source: d.csv, target: y, task: binary, " + WHOLE),
    ),
    "nothing left after the where filter": (
        TWENTY,
        _spec("corels", "source: d.csv, target: y, where: 'a > 100', " + WHOLE),
    ),
    "no feature column left": (
        TWENTY,
        _spec("corels", "source: d.csv, target: y, drop: [a, b, c, w], " + WHOLE),
    ),
    "where filter on an unknown column": (
        TWENTY,
        _spec("corels", "source: d.csv, target: y, where: 'nosuch > 1', " + WHOLE),
    ),
    "unknown column in columns": (
        TWENTY,
        _spec("corels", "source: d.csv, target: y, columns: [zz], " + WHOLE),
    ),
    "test label unseen in training": (
        {"d.csv": "a,y\n1,0\n2,1\n3,0\n", "t.csv": "a,y\n1,0\n2,7\n"},
        _spec("corels", "source: d.csv, test: t.csv, target: y, " + BIN.rstrip(", ")),
    ),
    "text in a numeric column of the test file": (
        {"d.csv": "a,y\n1,0\n2,1\n3,0\n", "t.csv": "a,y\n1,0\nten,1\n"},
        _spec("corels", "source: d.csv, test: t.csv, target: y, " + BIN.rstrip(", ")),
    ),
    "corels text files of different lengths": (
        {"p.out": "{a} 1 0 1 0\n", "p.label": "{y:0} 1 0 1\n{y:1} 0 1 0\n"},
        _spec("corels", "source: p.out, split: {kind: none}"),
    ),
    "corels vector line of the wrong length": (
        {"p.out": "{a} 1 0 1 0\n{b} 1 0 1\n", "p.label": "{y:0} 1 0 1 0\n{y:1} 0 1 0 1\n"},
        _spec("corels", "source: p.out, split: {kind: none}"),
    ),
    "a folder as the data file": (
        {"d.csv": None},
        _spec("corels", "source: d.csv, target: y, " + WHOLE),
    ),
    "a file that is not text": (
        {"d.csv": b"a,y\n1,0\n\xff\xfe,1\n"},
        _spec("corels", "source: d.csv, target: y, " + WHOLE),
    ),
    "a value data.types cannot take": (
        {"d.csv": "a,y\n1,0\nx,1\n3,0\n"},
        _spec("corels", "source: d.csv, target: y, types: {a: numeric}, " + WHOLE),
    ),
    "data.types naming an unknown column": (
        TWENTY,
        _spec("corels", "source: d.csv, target: y, types: {zz: category}, " + WHOLE),
    ),
    "a split seed beyond what the split takes": (
        TWENTY,
        _spec("corels", "source: d.csv, target: y, " + BIN + f"split: {{kind: holdout, seed: {2**70}}}"),
    ),
    "more folds than rows": (
        {"d.csv": _table(6)},
        _spec("corels", "source: d.csv, target: y, " + BIN + "split: {kind: kfold, folds: 50, stratify: false}"),
    ),
    "a store.path leading out of the spec's folder": (
        TWENTY,
        _spec("corels", "source: d.csv, target: y, " + WHOLE, "store: {path: out/runs.duckdb}"),
    ),
    # the solver's own checks: the task, then what solve refuses before its search
    "corels: features that are not 0/1": (TWENTY, _spec("corels", "source: d.csv, target: y, split: {kind: none}")),
    "corels: a regression target": (
        {"d.csv": _table(8, regression=True)},
        _spec("corels", "source: d.csv, target: y, " + WHOLE),
    ),
    "corels: a class weight for an unknown class": (
        TWENTY,
        _spec("corels", "source: d.csv, target: y, " + WHOLE, "objective: {class_weight: {x: 2}}"),
    ),
    "corels: sample weights that are not counts": (
        {"d.csv": _table(20, weight="0.5")},
        _spec("corels", "source: d.csv, target: y, weights: w, " + WHOLE),
    ),
    "fasterrisk: a numeric target": (
        {"d.csv": _table(8, regression=True)},
        _spec("fasterrisk", "source: d.csv, target: y, " + WHOLE),
    ),
    "fasterrisk: a class too small to stratify": (
        {"d.csv": _table(6, seed=3)},
        _spec("fasterrisk", "source: d.csv, target: y, " + BIN + "split: {kind: kfold, folds: 5}"),
    ),
    "fasterrisk: an include pattern that matches nothing": (
        TWENTY,
        _spec("fasterrisk", "source: d.csv, target: y, " + WHOLE, "constraints: {include: [nosuch*]}"),
    ),
    "fasterrisk: a class weight for an unknown class": (
        TWENTY,
        _spec("fasterrisk", "source: d.csv, target: y, " + WHOLE, "objective: {class_weight: {x: 2}}"),
    ),
    "fasterrisk: zero weights": (
        {"d.csv": _table(12, weight="0")},
        _spec("fasterrisk", "source: d.csv, target: y, weights: w, " + WHOLE),
    ),
    "moss: branch and bound on a binary target": (
        TWENTY,
        _spec("moss", "source: d.csv, target: y, split: {kind: none}", "search: {policy: branch_and_bound}"),
    ),
    "moss: a test split that leaves nothing to train on": (
        {"d.csv": _table(6, regression=True)},
        _spec("moss", "source: d.csv, target: y, split: {kind: holdout, test_size: 0.9}"),
    ),
    "moss: a stability rank beyond the grid of six rows": (
        {"d.csv": _table(6, regression=True)},
        _spec(
            "moss",
            "source: d.csv, target: y, split: {kind: none}",
            "objective: {candidates: {trees: 20}}\nconstraints: {stability_rank: 50}",
        ),
    ),
    "moss: a min_stability no rule set reaches": (
        {"d.csv": _table(40, regression=True)},
        _spec(
            "moss",
            "source: d.csv, target: y, split: {kind: none}",
            "objective: {candidates: {trees: 20}}\nconstraints: {min_stability: 1000}",
        ),
    ),
    "moss: zero weights": (
        {"d.csv": _table(12, regression=True, weight="0")},
        _spec("moss", "source: d.csv, target: y, weights: w, split: {kind: none}"),
    ),
}


# found once the solver has prepared its search (MOSS's forest of candidate rules), after the run
# store opened; validate finds them through Solver.size_report, which grows the same forest
NEED_THE_SEARCH_S_PREPARATION = {
    "moss: a stability rank beyond the grid of six rows",
    "moss: a min_stability no rule set reaches",
}


def _lay_out(folder: Path, files: dict[str, str | bytes | None], spec: str) -> None:
    for name, content in files.items():
        if content is None:
            (folder / name).mkdir()
        elif isinstance(content, bytes):
            (folder / name).write_bytes(content)
        else:
            (folder / name).write_text(content)
    (folder / "s.yaml").write_text(spec)
    outside = folder.parent / f"{folder.name}-outside"
    outside.mkdir(exist_ok=True)
    os.symlink(outside, folder / "out")  # where the store.path case leads


@pytest.mark.parametrize("case", sorted(MISTAKES))
def test_validate_refuses_what_run_refuses_before_solving_with_the_same_message(case, tmp_path, monkeypatch):
    folder = tmp_path / "project"
    folder.mkdir()
    files, spec = MISTAKES[case]
    _lay_out(folder, files, spec)
    monkeypatch.chdir(folder)
    monkeypatch.delenv("GLASSWORK_DB", raising=False)
    checked = CliRunner().invoke(cli, ["validate", "s.yaml"])
    assert sorted(p.name for p in folder.iterdir()) == sorted([*files, "s.yaml", "out"])  # validate writes nothing
    run = CliRunner().invoke(cli, ["run", "-q", "s.yaml"])
    assert run.exit_code == 2, run.output
    said = [line for line in run.stderr.splitlines() if line.strip() and not line.endswith("nothing was run.")]
    assert said and "Traceback" not in run.output
    if case not in NEED_THE_SEARCH_S_PREPARATION:  # refused before the run store opens: no file
        assert sorted(p.name for p in folder.iterdir()) == sorted([*files, "s.yaml", "out"])
    assert checked.exit_code == 2, checked.output
    for line in said:
        assert line in checked.stderr.splitlines(), (line, checked.stderr)
    assert "ok (" not in checked.output and "Traceback" not in checked.output


def test_data_types_of_an_unknown_column_points_at_the_spec_line(tmp_path, monkeypatch):
    monkeypatch.chdir(tmp_path)
    (tmp_path / "d.csv").write_text(_table(20))
    (tmp_path / "s.yaml").write_text(
        "name: x\nsolver: corels\ndata:\n  source: d.csv\n  target: y\n  binarize: {}\n  types:\n    zz: category\n"
    )
    result = CliRunner().invoke(cli, ["validate", "--json", "s.yaml"])
    assert result.exit_code == 2
    [entry] = json.loads(result.stdout)
    [issue] = entry["issues"]
    assert (issue["kind"], issue["path"], issue["line"]) == ("data", "data.types.zz", 8)
    assert issue["file"] == str(tmp_path / "s.yaml") and "'zz'" in issue["message"] and "d.csv" in issue["message"]
    run = CliRunner().invoke(cli, ["run", "-q", "--no-store", "s.yaml"])
    assert run.exit_code == 2 and f"{tmp_path / 's.yaml'}:8: data.types.zz: " in run.stderr


def test_no_data_checks_the_spec_alone(tmp_path, monkeypatch):
    monkeypatch.chdir(tmp_path)
    (tmp_path / "s.yaml").write_text(_spec("corels", "source: elsewhere.csv, target: y, " + WHOLE))
    result = CliRunner().invoke(cli, ["validate", "--no-data", "s.yaml"])
    assert result.exit_code == 0 and "s.yaml: ok (corels, 'mistake') (data not read)" in result.stdout
    result = CliRunner().invoke(cli, ["validate", "--no-data", "--json", "s.yaml"])
    [entry] = json.loads(result.stdout)
    assert entry["valid"] is True and entry["data_checked"] is False and entry["size"] is None
    assert CliRunner().invoke(cli, ["validate", "s.yaml"]).exit_code == 2


def test_a_valid_spec_shows_its_data_and_the_size_estimate(tmp_path, monkeypatch):
    monkeypatch.chdir(tmp_path)
    (tmp_path / "d.csv").write_text(_table(40))
    (tmp_path / "s.yaml").write_text(_spec("corels", "source: d.csv, target: y, " + WHOLE))
    result = CliRunner().invoke(cli, ["validate", "s.yaml", "--set", "objective.regularization=0.05"])
    assert result.exit_code == 0, result.output
    assert "s.yaml: ok (corels, 'mistake'): 40 training rows, 7 features, binary target" in result.stdout
    assert "s.yaml: corels size: " in result.stdout and "antecedents" in result.stdout
    doc = json.loads(CliRunner().invoke(cli, ["validate", "--json", "s.yaml"]).stdout)[0]
    assert doc["valid"] and doc["data"]["rows"] == 40 and doc["size"]["summary"].startswith("corels size: ")
    assert not (tmp_path / "glasswork.duckdb").exists()  # validating records nothing


def test_ctrl_c_while_reading_the_data_is_exit_130(tmp_path, monkeypatch):
    from glasswork.running.launch import Launch

    def interrupt(self):
        raise KeyboardInterrupt

    monkeypatch.chdir(tmp_path)
    (tmp_path / "d.csv").write_text(_table(20))
    (tmp_path / "s.yaml").write_text(_spec("corels", "source: d.csv, target: y, " + WHOLE))
    monkeypatch.setattr(Launch, "prepare", interrupt)
    result = CliRunner().invoke(cli, ["validate", "s.yaml"])
    assert result.exit_code == 130 and "s.yaml: interrupted while validating; nothing was run." in result.stderr


def test_a_solver_whose_check_breaks_is_exit_1_without_a_traceback(tmp_path, monkeypatch):
    from glasswork.plugins.corels import CorelsSolver

    def broken(self, problem, time_limit):
        raise ZeroDivisionError("a plugin's bug")

    monkeypatch.chdir(tmp_path)
    (tmp_path / "d.csv").write_text(_table(20))
    (tmp_path / "s.yaml").write_text(_spec("corels", "source: d.csv, target: y, " + WHOLE))
    monkeypatch.setattr(CorelsSolver, "size_report", broken)
    result = CliRunner().invoke(cli, ["validate", "s.yaml"])
    assert result.exit_code == 1, result.output
    assert "solver 'corels' failed while checking the data: ZeroDivisionError: a plugin's bug" in result.stderr
    assert "Traceback" not in result.output and "ok (" not in result.output


def test_validate_shows_what_loading_noticed_as_run_does(tmp_path, monkeypatch):
    """An ID column is named by validate (stderr and --json), not only once the run starts."""
    monkeypatch.chdir(tmp_path)
    rows = ["id,x,y"] + [f"C{i},{i % 7},{'yes' if i % 3 else 'no'}" for i in range(150)]
    (tmp_path / "d.csv").write_text("\n".join(rows) + "\n")
    (tmp_path / "s.yaml").write_text("name: ids\ndata:\n  source: d.csv\n  target: y\n  binarize: {}\nsolver: corels\n")
    result = CliRunner().invoke(cli, ["validate", "s.yaml"])
    assert result.exit_code == 0, result.output
    assert "warning: " in result.stderr and 'column "id" has 120 distinct values' in result.stderr
    assert 'drop: ["id"]' in result.stderr
    doc = json.loads(CliRunner().invoke(cli, ["validate", "--json", "s.yaml"]).stdout)[0]
    assert any('column "id"' in note for note in doc["data"]["warnings"])


def test_a_solver_whose_pre_search_check_breaks_is_named_by_validate_and_run(tmp_path, monkeypatch, capsys):
    """A plugin's ``check`` that raises (not a DataError) is the plugin's fault: exit 1 naming the
    solver and its plugin, from validate and from run alike, never "internal error ... report it"."""
    import sys

    from glasswork.cli import main
    from glasswork.plugins.corels import CorelsSolver

    def broken(self, problem):
        raise ZeroDivisionError("a plugin's bug")

    monkeypatch.chdir(tmp_path)
    (tmp_path / "d.csv").write_text(_table(20))
    (tmp_path / "s.yaml").write_text(_spec("corels", "source: d.csv, target: y, " + WHOLE))
    monkeypatch.setattr(CorelsSolver, "check", broken)
    for command in (["validate", "s.yaml"], ["run", "s.yaml", "--no-store"]):
        monkeypatch.setattr(sys, "argv", ["glasswork", *command])
        with pytest.raises(SystemExit) as stop:
            main()
        out, err = capsys.readouterr()
        assert stop.value.code == 1, (command, out, err)
        assert "solver 'corels' from plugin" in err and "ZeroDivisionError: a plugin's bug" in err, err
        assert "internal error" not in err and "report it" not in err and "ok (" not in out
