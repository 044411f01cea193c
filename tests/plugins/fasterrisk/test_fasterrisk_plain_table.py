"""A plain FasterRisk spec on a newcomer's yes/no table with text columns runs: text columns are
one-hot encoded by default as for MOSS, numbers kept (issue 36)."""

from __future__ import annotations

from pathlib import Path

from glasswork.hooks.registry import get_registry
from glasswork.running.launch import Launch
from glasswork.spec.load import load_spec
from loans_table import loans_spec


def test_a_plain_spec_on_a_table_with_text_columns_runs(tmp_path: Path) -> None:
    spec = loans_spec(tmp_path, "fasterrisk", "constraints: {sparsity: 3}\nsearch: {certify_time: 1}\n")
    loaded = load_spec(spec, get_registry())
    assert loaded.spec.data.binarize is not None and loaded.spec.data.binarize.numeric == "keep"
    outcome = Launch.from_file(spec, [], db=tmp_path / "runs.duckdb").run([])
    assert outcome.problem is not None and "employment:unemployed" in outcome.problem.feature_names
    assert "income" in outcome.problem.feature_names  # a number, kept as it is
    assert outcome.result.model is not None


def test_an_explicit_binarize_section_is_used_as_written(tmp_path: Path) -> None:
    spec = loans_spec(tmp_path, "fasterrisk", binarize=True)
    loaded = load_spec(spec, get_registry())
    assert loaded.spec.data.binarize is not None and loaded.spec.data.binarize.numeric == "thresholds"
