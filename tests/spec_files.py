"""Writing small spec and data files in tests (a module of its own: every test folder may have a
conftest.py, so importing helpers from 'conftest' would be ambiguous)."""

from __future__ import annotations

from pathlib import Path


def write(path: Path, text: str) -> Path:
    path.write_text(text)
    return path
