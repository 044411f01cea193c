"""A NUL in a Parquet column name (which no SQL engine takes) is a data error naming the column,
for every solver; it was an internal error (a ``KeyError``) for all three."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

import duckdb
import pytest


@pytest.fixture
def nul_parquet(tmp_path: Path) -> Path:
    path = tmp_path / "nul.parquet"
    con = duckdb.connect()
    con.execute(
        'COPY (SELECT (range % 2)::INT AS "a\x00b", (range % 3 = 0)::INT AS c, ((range * 7) % 2)::INT AS y '
        f"FROM range(60)) TO '{path}' (FORMAT parquet)"
    )
    con.close()
    return path


@pytest.mark.parametrize("solver", ["corels", "fasterrisk", "moss"])
def test_a_nul_in_a_parquet_column_name_is_a_data_error(nul_parquet: Path, tmp_path: Path, solver: str):
    spec = tmp_path / "s.yaml"
    spec.write_text(f"name: t\nsolver: {solver}\ndata:\n  source: {nul_parquet.name}\n  target: y\n")
    command = [sys.executable, "-m", "glasswork", "run", "-q", "--no-store", str(spec)]
    proc = subprocess.run(command, capture_output=True, text=True, timeout=120)
    assert proc.returncode == 2, proc.stderr
    assert "NUL character" in proc.stderr and "a\\x00b" in proc.stderr and "nul.parquet" in proc.stderr
    assert "internal error" not in proc.stderr
