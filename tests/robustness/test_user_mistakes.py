"""Exit codes keep their promise (issue 17): every user mistake in every built-in solver (data
too small for the setting asked, options that do not fit the task) is exit 2 with the fix, never
a solver failure (1) or a traceback."""

from __future__ import annotations

import numpy as np
import pytest
from click.testing import CliRunner
from glasswork.cli import cli


def _csv(path, n, *, regression=False, constant_target=False, zero_weights=False, seed=0):
    rng = np.random.default_rng(seed)
    X = rng.normal(size=(n, 3))
    y = X[:, 0] + 0.1 * rng.normal(size=n) if regression else (X[:, 0] > 0).astype(int)
    if constant_target:
        y[:] = 1
    w = 0 if zero_weights else 1
    path.write_text("a,b,c,w,y\n" + "".join(f"{r[0]:.4f},{r[1]:.4f},{r[2]:.4f},{w},{t}\n" for r, t in zip(X, y)))
    return path.name


BIN = "binarize: {thresholds: 2}, "
MISTAKES = {
    # MOSS
    "moss: stability rank beyond the grid of six rows": (
        "moss",
        dict(n=6, regression=True),
        "split: {kind: none}",
        "constraints: {stability_rank: 50}",
        "stability_rank",
    ),
    "moss: min_stability above what any rule set reaches": (
        "moss",
        dict(n=40, regression=True),
        "split: {kind: none}",
        "constraints: {min_stability: 1000}",
        "min_stability",
    ),
    "moss: branch and bound on a binary target": (
        "moss",
        dict(n=40),
        "split: {kind: none}",
        "search: {policy: branch_and_bound}",
        "cutting_plane",
    ),
    "moss: a test split that leaves nothing to train on": (
        "moss",
        dict(n=6, regression=True),
        "split: {kind: holdout, test_size: 0.9}",
        "",
        "test_size",
    ),
    "moss: MOSEK asked for without a licence": (
        "moss",
        dict(n=20, regression=True),
        "split: {kind: none}",
        "search: {policy: mio, backend: mosek}",
        "licen",
    ),
    "moss: zero weights": (
        "moss",
        dict(n=12, regression=True, zero_weights=True),
        "weights: w, split: {kind: none}",
        "",
        "weight",
    ),
    # CORELS
    "corels: features that are not 0/1": ("corels", dict(n=6), "split: {kind: none}", "", "binarize"),
    "corels: a regression target": (
        "corels",
        dict(n=6, regression=True),
        BIN + "split: {kind: none}",
        "",
        "regression",
    ),
    "corels: a constant target": (
        "corels",
        dict(n=6, constant_target=True),
        BIN + "split: {kind: none}",
        "",
        "constant",
    ),
    "corels: more folds than rows": (
        "corels",
        dict(n=6),
        BIN + "split: {kind: kfold, folds: 50, stratify: false}",
        "",
        "folds",
    ),
    # FasterRisk
    "fasterrisk: a regression target": (
        "fasterrisk",
        dict(n=6, regression=True),
        BIN + "split: {kind: none}",
        "",
        "regression",
    ),
    "fasterrisk: a class too small to stratify": (
        "fasterrisk",
        dict(n=6, seed=3),
        BIN + "split: {kind: kfold, folds: 5}",
        "",
        "stratify",
    ),
    "fasterrisk: an include pattern that matches nothing": (
        "fasterrisk",
        dict(n=20),
        BIN + "split: {kind: none}",
        "constraints: {include: ['nosuch*']}",
        "nosuch",
    ),
    "fasterrisk: zero weights": (
        "fasterrisk",
        dict(n=12, zero_weights=True),
        BIN + "weights: w, split: {kind: none}",
        "",
        "weight",
    ),
}


@pytest.mark.parametrize("case", sorted(MISTAKES))
def test_each_user_mistake_is_exit_2_with_the_fix(case, tmp_path, monkeypatch):
    solver, data, data_extra, extra, mentions = MISTAKES[case]
    if "MOSEK" in case:
        from glasswork.plugins.moss.mio import mosek_licence

        if mosek_licence()[0]:
            pytest.skip("a MOSEK licence is present here")
    monkeypatch.chdir(tmp_path)
    source = _csv(tmp_path / "d.csv", **data)
    spec = tmp_path / "s.yaml"
    spec.write_text(
        f"name: mistake\nsolver: {solver}\ndata: {{source: {source}, target: y, {data_extra}}}\n"
        f"{extra}\nlimits: {{time: 10}}\n"
    )
    result = CliRunner().invoke(cli, ["run", "-q", "--no-store", str(spec)])
    assert result.exit_code == 2, result.output
    assert "Traceback" not in result.output and "failed:" not in result.stderr
    assert mentions.lower() in result.stderr.lower(), result.stderr
