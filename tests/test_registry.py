"""Plugin discovery: failures stay local, conflicts are explicit, plugins can be disabled."""

from __future__ import annotations

from typing import Any, Literal

import pytest

import toy_plugin
from glasswork import SolverSpec, hookimpl
from glasswork.registry import Registry


def registry(*plugins: tuple[str, object], disabled: tuple[str, ...] = ()) -> Registry:
    return Registry(builtins=False, entry_points=False, disabled=disabled, extra=plugins)


class _Raises:
    @staticmethod
    @hookimpl
    def register_solvers(register: Any) -> None:
        raise RuntimeError("cannot register")


class _NotASolver:
    @staticmethod
    @hookimpl
    def register_solvers(register: Any) -> None:
        register(dict)


class _WrongTagSpec(SolverSpec):
    solver: Literal["other"]


class _WrongTag(toy_plugin.ToySolver):
    name = "mismatch"
    spec_model = _WrongTagSpec


class _Mismatch:
    @staticmethod
    @hookimpl
    def register_solvers(register: Any) -> None:
        register(_WrongTag)


def test_toy_plugin_registers():
    reg = registry(("toy", toy_plugin))
    assert reg.solver("toy") is toy_plugin.ToySolver
    assert reg.plugins["toy"].solvers == ["toy"]
    assert reg.plugins["toy"].ok


@pytest.mark.parametrize(
    "plugin, message",
    [(_Raises, "RuntimeError: cannot register"), (_NotASolver, "not a subclass of glasswork.Solver"),
     (_Mismatch, "must be Literal['mismatch']")],
)
def test_a_broken_plugin_is_reported_and_the_rest_keep_working(plugin, message):
    reg = registry(("broken", plugin), ("toy", toy_plugin))
    assert message in reg.plugins["broken"].error
    assert list(reg.solvers) == ["toy"]


def test_a_plugin_module_that_fails_to_import(monkeypatch):
    monkeypatch.setenv("GLASSWORK_PLUGIN_MODULES", "no_such_module_xyz,toy_plugin")
    reg = Registry(builtins=False, entry_points=True, disabled=())
    assert "ModuleNotFoundError" in reg.plugins["no_such_module_xyz"].error
    assert "toy" in reg.solvers


def test_two_plugins_claiming_one_name_is_an_error():
    class _Twin:
        register_solvers = staticmethod(hookimpl(toy_plugin.register_solvers))

    reg = registry(("toy", toy_plugin), ("twin", _Twin))
    assert "toy" not in reg.solvers
    assert "also registered by plugin twin" in reg.plugins["toy"].error
    assert "also registered by plugin toy" in reg.plugins["twin"].error
    assert "more than one plugin" in reg.explain_unknown("toy")
    with pytest.raises(KeyError, match="more than one plugin"):
        reg.solver("toy")


def test_disabled_plugins_are_listed_but_not_loaded():
    reg = registry(("toy", toy_plugin), disabled=("toy",))
    assert reg.plugins["toy"].disabled and not reg.solvers
    assert "disabled" in reg.explain_unknown("toy")


def test_disable_through_the_environment(monkeypatch):
    monkeypatch.setenv("GLASSWORK_DISABLE_PLUGINS", " toy , other")
    reg = Registry(builtins=False, entry_points=False, extra=[("toy", toy_plugin)])
    assert reg.disabled == {"toy", "other"} and not reg.solvers


def test_builtin_plugins_load_cleanly():
    reg = Registry(builtins=True, entry_points=False, disabled=())
    for info in reg.plugins.values():
        assert info.origin == "builtin"
        assert info.error is None, f"{info.name}: {info.error}"
