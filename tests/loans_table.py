"""A newcomer's own table: loans with text and numeric columns and a yes/no target, as a CSV file
and as a DataFrame (issue 36's findings were made on tables like it)."""

from __future__ import annotations

from pathlib import Path

import numpy as np
import pandas as pd


def loans_frame(n: int = 400, seed: int = 1) -> pd.DataFrame:
    """Columns ``income``, ``credit_score``, ``purpose`` (text), ``employment`` (text), ``age``,
    ``debt_ratio`` and the target ``default`` (``yes``/``no``, about 40 % yes)."""
    rng = np.random.default_rng(seed)
    frame = pd.DataFrame(
        {
            "income": rng.normal(50_000, 15_000, n).round(0),
            "credit_score": rng.integers(450, 850, n),
            "purpose": rng.choice(["car", "home", "education", "business"], n),
            "employment": rng.choice(["salaried", "self-employed", "unemployed"], n, p=[0.6, 0.3, 0.1]),
            "age": rng.integers(18, 75, n),
            "debt_ratio": rng.uniform(0, 1, n).round(3),
        }
    )
    risk = (
        (frame.credit_score - 650) / 80
        - (frame.debt_ratio - 0.4) * 2
        - 1.2 * (frame.employment == "unemployed")
        + rng.normal(0, 1, n)
    )
    frame["default"] = np.where(risk < -0.9, "yes", "no")
    return frame


def write_loans(folder: Path, n: int = 400, seed: int = 1) -> Path:
    """The table as ``folder/loans.csv``."""
    path = folder / "loans.csv"
    loans_frame(n, seed).to_csv(path, index=False)
    return path


def loans_spec(folder: Path, solver: str, extra: str = "", binarize: bool = False) -> Path:
    """A plain spec for ``solver`` on the table (``extra``: more YAML lines), as ``folder/SOLVER.yaml``."""
    write_loans(folder)
    text = "name: loans\ndata:\n  source: loans.csv\n  target: default\n  positive: 'yes'\n"
    text += "  binarize: {thresholds: 3}\n" if binarize else ""
    text += f"solver: {solver}\nlimits: {{time: 30}}\n{extra}"
    path = folder / f"{solver}.yaml"
    path.write_text(text)
    return path
