"""The documentation stays in step with the code it describes (as datasette's test_docs does)."""

from __future__ import annotations

import inspect
import re
from pathlib import Path

from glasswork import hookspecs

ROOT = Path(__file__).resolve().parent.parent


def _hookspecs() -> dict[str, list[str]]:
    """Every hook spec: its name and its arguments, in order."""
    return {
        name: list(inspect.signature(fn).parameters)
        for name, fn in vars(hookspecs).items()
        if callable(fn) and hasattr(fn, f"{hookspecs.PROJECT}_spec")
    }


def test_the_plugin_guides_hook_table_lists_every_hook_with_its_arguments():
    text = (ROOT / "docs" / "plugins.md").read_text(encoding="utf-8")
    hook_table = text[text.index("| hook | what it is for |") :].split("\n\n", 1)[0]
    table = re.findall(r"^\| `(\w+)\(([^)]*)\)` \|", hook_table, re.MULTILINE)
    documented = {name: [a.strip() for a in args.split(",") if a.strip()] for name, args in table}
    assert documented == _hookspecs()


def test_every_hook_spec_has_a_docstring():
    for name in _hookspecs():
        assert (getattr(hookspecs, name).__doc__ or "").strip(), f"hook {name} has no docstring"
