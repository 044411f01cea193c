"""What MOSS reads (issue 25): text columns one-hot encoded rather than refused, numbers kept for
its own quantile grid, 0/1 columns read as they are (never ``x <= 0``), and thresholds written as
people write them, in the model, its exports and its card; the exports still predict as the model."""

from __future__ import annotations

import re
from pathlib import Path

import numpy as np
import pytest
from glasswork.display.report import build_report
from glasswork.export import export_run
from glasswork.plugins.moss.rules import Grid, Rule, threshold_text
from glasswork.quoting import html_text, markdown_text
from glasswork.running.launch import Launch
from glasswork.store import RunStore
from glasswork.testing.exports import expected, raw_columns, run_python, run_sql

SCIENTIFIC = re.compile(r"\d\.?\d*e[+-]\d")


def _csv(folder: Path) -> Path:
    rng = np.random.default_rng(3)
    n = 240
    income = rng.integers(20_000, 100_000, n)
    sex = rng.choice(["M", "F"], n)
    smoker = rng.integers(0, 2, n)
    y = income / 1000 + 8 * (sex == "M") + 5 * smoker + rng.normal(size=n)
    path = folder / "people.csv"
    lines = ["income,sex,smoker,y", *(f"{a},{b},{c},{d:.3f}" for a, b, c, d in zip(income, sex, smoker, y))]
    path.write_text("\n".join(lines) + "\n")
    return path


def _run(folder: Path, binarize: str = "") -> tuple[object, dict, Launch]:
    spec = folder / "moss.yaml"
    spec.write_text(
        f"name: people\ndata:\n  source: {_csv(folder)}\n  target: y\n{binarize}"
        "solver: moss\nobjective: {candidates: {trees: 60}}\nconstraints: {max_rules: 5}\nlimits: {time: 30}\n"
    )
    db = folder / "runs.duckdb"
    launch = Launch.from_file(spec, db=db)
    outcome = launch.run([])
    return outcome, RunStore(db).open().details(outcome.info.run_id), launch


def _rule_texts(details: dict) -> list[str]:
    return [r["text"] for r in details["models"][0]["model"]["rules"]]


def test_text_columns_are_one_hot_numbers_kept_and_exports_predict_as_the_model(tmp_path: Path) -> None:
    outcome, details, launch = _run(tmp_path)
    problem = outcome.problem  # type: ignore[attr-defined]
    assert problem.feature_names == ["income", "sex:M", "sex:F", "smoker"]
    assert problem.X[:, 0].max() > 1000  # income as it is: MOSS cuts it on its own grid
    texts = _rule_texts(details)
    assert texts and not any("<= 0" in t or "> 0" in t or SCIENTIFIC.search(t) for t in texts), texts
    assert any("sex:" in t or "smoker" in t for t in texts), texts
    model = outcome.result.model  # type: ignore[attr-defined]
    columns = raw_columns(launch.loaded.spec.data, problem, "test", launch.loaded.base_dir)
    want = expected(model, problem.X_test)
    assert run_python(export_run(details, "python"), columns) == want
    for engine in ("duckdb", "sqlite"):
        assert run_sql(export_run(details, "sql"), columns, engine, None) == want
    card, markdown = build_report(details, []), export_run(details, "markdown")
    assert all(html_text(t) in card and markdown_text(t) in markdown for t in texts)


def test_binary_features_of_a_binarize_section_are_read_as_they_are(tmp_path: Path) -> None:
    """`binarize: {}` gives 0/1 features (``income<=60100``); MOSS wrote them as ``income<=60100 <= 0``."""
    _, details, _ = _run(tmp_path, "  binarize: {}\n")
    texts = _rule_texts(details)
    assert texts and not any(t.endswith(("<= 0", "> 0")) or " <= 0 " in t or " > 0 " in t for t in texts), texts
    assert any(re.search(r"income(<=|>)\d+", t) for t in texts), texts


@pytest.mark.parametrize(
    "value, text",
    [
        (50560.0, "50560"),
        (50559.5, "50559.5"),
        (0.30000000000000004, "0.30000000000000004"),
        (-3.25, "-3.25"),
        (1e-9, "1e-09"),
        (0.0, "0"),
    ],
)
def test_thresholds_read_as_people_write_them(value: float, text: str) -> None:
    assert threshold_text(value) == text
    assert float(text) == value  # the shortest form that reads back as the same number


def test_a_rule_on_a_large_threshold_has_no_scientific_notation() -> None:
    grid = Grid([np.asarray([50559.5, 60100.0]), np.asarray([0.0])], ["income", "smoker"], [False, True])
    assert Rule(((0, 0, 1),), grid).text == "50559.5 < income <= 60100"
    assert Rule(((0, -1, 0), (1, -1, 0)), grid).text == "income <= 50559.5 and not-smoker"
    assert Rule(((1, 0, 1),), grid).text == "smoker"


def test_grid_thresholds_are_short_decimals_that_split_the_rows_as_the_quantiles_do() -> None:
    """The quantile grid's cuts read ``0.0179370363191228`` in a card; the shortest decimal between
    a cut and the next value splits the training rows identically."""
    rng = np.random.default_rng(5)
    X = np.column_stack([rng.normal(size=400) * 0.05, rng.integers(20_000, 100_000, 400) + 0.5])
    grid = Grid.fit(X, ["bmi", "income"], 10)
    for j in range(X.shape[1]):
        values = np.unique(X[:, j])
        quantiles = np.unique(np.quantile(X[:, j], np.arange(1, 10) / 10, method="linear"))
        quantiles = quantiles[quantiles < values[-1]]
        assert len(grid.thresholds[j]) == len(quantiles)
        np.testing.assert_array_equal(  # the same rows fall on each side of every cut
            X[:, j][:, None] <= grid.thresholds[j][None, :], X[:, j][:, None] <= quantiles[None, :]
        )
        texts = [threshold_text(t) for t in grid.thresholds[j]]
        assert all(len(t.replace("-", "").replace(".", "")) <= 6 for t in texts), texts
