"""The committed files in specs/: the JSON Schema is in step with the models, and every example
spec validates (and the README's example runs, in the slow end-to-end test)."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from glasswork.hooks.registry import Registry
from glasswork.spec.load import json_schema, load_spec

SPECS = Path(__file__).parent.parent / "specs"
SCHEMA = SPECS / "glasswork.schema.json"
BUILTIN = Registry(entry_points=False, disabled=())


def test_committed_schema_matches_the_models():
    current = json.loads(json.dumps(json_schema(BUILTIN), sort_keys=True))
    committed = json.loads(SCHEMA.read_text())
    assert committed == current, (
        "specs/glasswork.schema.json is stale: run `glasswork schema --builtin-only -o specs/glasswork.schema.json`"
    )


EXAMPLES = [
    p for p in sorted(SPECS.glob("*.yaml")) + sorted(SPECS.glob("*.json")) if not p.name.endswith(".schema.json")
]


@pytest.mark.parametrize("path", EXAMPLES, ids=lambda p: p.name)
def test_example_specs_validate(path):
    loaded = load_spec(path, BUILTIN)
    assert loaded.spec.name
