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


class _Misspelled:
    """A plugin whose model view is misspelled: it must not load as "ok" and do nothing."""

    @staticmethod
    @hookimpl
    def render_modle(model: dict) -> None:
        return None


def test_a_misspelled_hook_implementation_is_the_plugins_load_error():
    reg = registry(("typo", _Misspelled), ("toy", toy_plugin))
    error = reg.plugins["typo"].error
    assert error is not None and "'render_modle' matches no glasswork hook" in error
    assert "did you mean 'render_model'" in error
    assert reg.plugins["typo"].to_dict()["status"] == "error"
    assert reg.pm.get_plugin("typo") is None  # unregistered: none of its hooks is ever called
    assert reg.plugins["toy"].ok and "toy" in reg.solvers


def test_hooks_are_called_through_pluggys_hook_caller():
    """Tracing (pluggy's add_hookcall_monitoring) sees every hook call, per plugin."""
    from glasswork.display import model_view

    reg = Registry(builtins=True, entry_points=False, disabled=())
    seen: list[tuple[str, list[str]]] = []
    undo = reg.pm.add_hookcall_monitoring(
        lambda name, impls, kwargs: seen.append((name, [i.plugin_name for i in impls])), lambda *a: None)
    try:
        panels = reg.monitor_panels("corels")
        reg.sweep_defaults("moss")
        model_view({"kind": "rule_list", "rules": [], "default": {"prediction": 1}}, registry=reg)
    finally:
        undo()
    assert [p.title for p in panels] == ["log10 remaining space", "queue by prefix length"]
    names = [name for name, _ in seen]
    assert names.count("monitor_panels") == 3  # once per plugin, each on its own
    assert ("monitor_panels", ["corels"]) in seen
    assert {"sweep_defaults", "render_model"} <= set(names)


def test_each_plugin_lists_the_hooks_it_implements():
    reg = Registry(builtins=True, entry_points=False, disabled=())
    for name in ("corels", "fasterrisk", "moss"):
        assert {"register_solvers", "render_model", "monitor_panels"} <= set(reg.plugins[name].hooks)
    assert reg.sweep_defaults("moss") == {"metric": "test_r2"} and reg.sweep_defaults("corels") == {}


def test_a_failing_panels_hook_stays_local():
    class _BadPanels:
        @staticmethod
        @hookimpl
        def monitor_panels(solver: str) -> list:
            raise RuntimeError("no panels today")

    reg = registry(("bad", _BadPanels), ("toy", toy_plugin))
    assert reg.monitor_panels("toy") == []  # toy describes none; bad's failure is not the monitor's
