"""Example problem specs and the generated JSON Schema, shipped as package data."""

from pathlib import Path

SPECS_DIR = Path(__file__).parent
