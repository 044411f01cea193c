"""Writing small spec and data files in tests (a module of its own: every test folder may have a
conftest.py, so importing helpers from 'conftest' would be ambiguous)."""

from __future__ import annotations

from pathlib import Path


def write(path: Path, text: str) -> Path:
    path.write_text(text)
    return path


# Column names that must stay data wherever they reach: Rich markup (first: the most used
# column), a comma, a quote, an angle bracket, unicode.
HOSTILE_COLUMNS = ["[bold red]boom[/]", "a,b", 'x"y', "<b>", "Ünïcødé"]


def write_frontier_spec(folder: Path, *, points: int = 4, rashomon: str = "{epsilon: 0.05}") -> Path:
    """A 120-row regression CSV over ``HOSTILE_COLUMNS`` and a MOSS spec solving a ``points``-point
    frontier (knee chosen) with a Rashomon set per point: a real frontier run in a few seconds."""
    import numpy as np

    rng = np.random.default_rng(1)
    X = rng.normal(size=(120, len(HOSTILE_COLUMNS))).round(3)
    y = 2 * (X[:, 0] > 0) + 1.5 * (X[:, 2] > 0.5) - (X[:, 4] < -0.3) + rng.normal(0, 0.3, 120)
    header = ",".join('"' + c.replace('"', '""') + '"' for c in HOSTILE_COLUMNS) + ",y\n"
    rows = "\n".join(",".join(str(v) for v in (*x, round(t, 3))) for x, t in zip(X, y))
    (folder / "m.csv").write_text(header + rows + "\n", encoding="utf-8")
    return write(
        folder / "m.yaml",
        "name: moss-frontier\nsolver: moss\n"
        "data: {source: m.csv, target: y, split: {kind: holdout, test_size: 0.25, seed: 0}}\n"
        "objective: {gamma: 0.001, candidates: {trees: 20, depth: 2, seed: 0, max_candidates: 10}}\n"
        f"constraints: {{max_rules: 3, frontier: {{points: {points}, choose: knee}}}}\n"
        f"rashomon: {rashomon}\n",
    )


def write_slow_read_spec(folder: Path, rows: int, *, extra: str = "") -> Path:
    """A CORELS spec over a ``rows``-row 0/1 CSV with ``HOSTILE_COLUMNS`` for a header, whose
    ``limits.time`` of a microsecond ends the run while a large file (400,000 rows: longer than
    one look at the clock) is read; ``extra`` is appended to the spec (a ``sweep:`` section)."""
    import numpy as np

    rng = np.random.default_rng(0)
    X = rng.integers(0, 2, size=(rows, len(HOSTILE_COLUMNS)))
    y = (X[:, 1] | X[:, 2]) ^ (rng.random(rows) < 0.1)
    header = ",".join('"' + c.replace('"', '""') + '"' for c in HOSTILE_COLUMNS) + ",y\n"
    body = "\n".join(",".join(map(str, r)) for r in np.column_stack([X, y]))
    (folder / "d.csv").write_text(header + body + "\n", encoding="utf-8")
    return write(
        folder / "s.yaml",
        "name: tiny\nsolver: corels\ndata: {source: d.csv, target: y}\n"
        "objective: {regularization: 0.01}\nlimits: {time: 0.000001}\n" + extra,
    )
