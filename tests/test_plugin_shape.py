"""One plugin shape: the built-in plugins are laid out as the example third-party plugin is, and
every hook is written with its hookspec's arguments, in the plugins, the example and the docs.

A hook written with fewer arguments still works (pluggy passes arguments by name), which is how
``load_model`` came to be written with one argument by two plugins and two by the third: only a
check of the signatures keeps them one.
"""

from __future__ import annotations

import importlib
import inspect
import re
import types
from pathlib import Path

import pytest
from glasswork.hooks import specs as hookspecs
from glasswork.hooks.registry import Registry
from glasswork.hooks.specs import hookimpl

REPO = Path(__file__).resolve().parents[1]
EXAMPLE_SRC = REPO / "examples" / "glasswork-greedy" / "src"
BUILTINS = ("corels", "fasterrisk", "moss")
# the files every solver plugin has, as the example shows them (its spec model lives in solver.py)
SHAPE = {"__init__.py", "plugin.py", "solver.py", "model.py", "views.py", "export.py"}


def hookspec_arguments() -> dict[str, list[str]]:
    """Each hook's argument names, in order, as ``glasswork.hooks.specs`` declares them."""
    return {
        name: list(inspect.signature(fn).parameters)
        for name, fn in vars(hookspecs).items()
        if callable(fn) and hasattr(fn, f"{hookspecs.PROJECT}_spec")
    }


def implementations(module: types.ModuleType) -> dict[str, list[str]]:
    """The hooks ``module`` implements, with the argument names it writes them with."""
    return {
        name: list(inspect.signature(fn).parameters)
        for name, fn in vars(module).items()
        if callable(fn) and hasattr(fn, f"{hookspecs.PROJECT}_impl")
    }


def signature_mismatches(module: types.ModuleType) -> list[str]:
    specs = hookspec_arguments()
    return [
        f"{module.__name__}.{name}({', '.join(args)}): the hookspec is {name}({', '.join(specs.get(name, []))})"
        for name, args in sorted(implementations(module).items())
        if args != specs.get(name)
    ]


@pytest.fixture
def example_plugin(monkeypatch: pytest.MonkeyPatch) -> types.ModuleType:
    monkeypatch.syspath_prepend(str(EXAMPLE_SRC))
    return importlib.import_module("glasswork_greedy.plugin")


@pytest.mark.parametrize("name", BUILTINS)
def test_a_builtin_plugin_writes_every_hook_with_its_hookspec_arguments(name: str) -> None:
    module = importlib.import_module(f"glasswork.plugins.{name}.plugin")
    assert implementations(module), f"{module.__name__} implements no hook"
    assert signature_mismatches(module) == []


def test_the_example_plugin_writes_every_hook_with_its_hookspec_arguments(example_plugin: types.ModuleType) -> None:
    assert set(implementations(example_plugin)) >= {"register_solvers", "load_model", "render_model"}
    assert signature_mismatches(example_plugin) == []


def test_the_signature_check_sees_a_hook_written_with_fewer_arguments() -> None:
    module = types.ModuleType("short_plugin")

    @hookimpl
    def load_model(model: dict) -> None:
        return None

    module.load_model = load_model  # type: ignore[attr-defined]
    assert signature_mismatches(module) == ["short_plugin.load_model(model): the hookspec is load_model(model, inputs)"]


@pytest.mark.parametrize("name", BUILTINS)
def test_a_builtin_plugin_has_the_example_plugins_shape(name: str, example_plugin: types.ModuleType) -> None:
    """The registry loads ``plugin.py``, as an entry point names the example's; the package's
    ``__init__`` holds the public names and no hook."""
    example_files = {p.name for p in Path(example_plugin.__file__ or "").parent.glob("*.py")}
    assert SHAPE <= example_files
    folder = REPO / "plugins" / name
    assert SHAPE <= {p.name for p in folder.glob("*.py")}
    package = importlib.import_module(f"glasswork.plugins.{name}")
    assert implementations(package) == {}
    info = Registry(entry_points=False).plugins[name]
    assert (info.module, info.error) == (f"glasswork.plugins.{name}.plugin", None)


def test_the_docs_write_every_hook_as_its_hookspec() -> None:
    """The hook table of ``docs/plugins.md`` and its code examples use the hookspecs' arguments."""
    text = (REPO / "docs" / "plugins.md").read_text()
    specs = hookspec_arguments()
    hooks = text[text.index("| hook | what it is for |") :].split("\n\n")[0]
    table = dict(re.findall(r"^\| `(\w+)\(([^)]*)\)` \|", hooks, re.M))
    assert set(table) == set(specs)
    written = re.findall(r"@hookimpl\s*\ndef (\w+)\(([^)]*)\)", text)
    assert {name for name, _ in written} >= {"register_solvers", "render_model", "export_model", "load_model"}
    for name, args in list(table.items()) + written:
        assert [a.split(":")[0].strip() for a in args.split(",") if a.strip()] == specs[name], name
