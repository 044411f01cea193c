"""CORELS on a table whose column names hold the characters antecedent names are built from."""

from __future__ import annotations

import csv
import json

import numpy as np
import pytest
from click.testing import CliRunner
from glasswork.cli import cli
from spec_files import write


@pytest.mark.parametrize("max_card", [1, 2])
def test_a_column_name_with_a_comma_is_a_column_like_any_other(tmp_path, monkeypatch, max_card):
    monkeypatch.chdir(tmp_path)
    rng = np.random.default_rng(0)
    with open(tmp_path / "t.csv", "w", newline="") as f:
        out = csv.writer(f)
        out.writerow(["a,b", "age", "y"])
        for _ in range(150):
            ab, age = float(rng.random() * 10), int(rng.integers(18, 80))
            out.writerow([round(ab, 2), age, "yes" if (ab > 5) != (rng.random() < 0.1) else "no"])
    spec = write(
        tmp_path / "s.yaml",
        "name: comma\nsolver: corels\ndata: {source: t.csv, target: y, binarize: {thresholds: 3}}\n"
        f"objective: {{regularization: 0.01}}\nconstraints: {{max_card: {max_card}, max_prefix_length: 2}}\n",
    )
    result = CliRunner().invoke(cli, ["run", "--json", "-q", "--no-store", str(spec)], catch_exceptions=False)
    assert result.exit_code == 0, result.output
    doc = json.loads(result.stdout)
    assert any(r["antecedent"].startswith("a,b") for r in doc["model"]["rules"])
