"""Plugin discovery: failures stay local, conflicts are explicit, plugins can be disabled."""

from __future__ import annotations

import io
from typing import Any, Literal

import pytest
import toy_plugin
from glasswork import SolverSpec, hookimpl
from glasswork.hooks.registry import Registry
from rich.console import Console


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
    [
        (_Raises, "RuntimeError: cannot register"),
        (_NotASolver, "not a subclass of glasswork.Solver"),
        (_Mismatch, "must be Literal['mismatch']"),
    ],
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
    assert "also registered by plugin 'twin'" in reg.plugins["toy"].error
    assert "also registered by plugin 'toy'" in reg.plugins["twin"].error
    assert "more than one plugin" in reg.explain_unknown("toy")
    with pytest.raises(KeyError, match="more than one plugin"):
        reg.solver("toy")


def test_an_unknown_solver_says_which_plugins_are_installed_and_how_to_add_one(monkeypatch):
    monkeypatch.setenv("GLASSWORK_PLUGIN_MODULES", "no_such_module_xyz")
    reg = Registry(builtins=False, entry_points=True, disabled=(), extra=[("toy", toy_plugin)])
    message = reg.explain_unknown("toyy")
    assert "unknown solver 'toyy' (did you mean 'toy'?)" in message
    assert "installed solvers: " in message and "toy (plugin 'toy', explicit)" in message
    assert "pip install" in message and "'glasswork' entry point" in message and "glasswork plugins" in message
    assert "failed to load: no_such_module_xyz" in message


def test_a_solver_whose_plugin_failed_to_load_names_it_and_what_to_do(monkeypatch):
    monkeypatch.setenv("GLASSWORK_PLUGIN_MODULES", "no_such_module_xyz")
    reg = Registry(builtins=False, entry_points=True, disabled=())
    message = reg.explain_unknown("no_such_module_xyz")
    assert "plugin 'no_such_module_xyz' ($GLASSWORK_PLUGIN_MODULES), which failed to load" in message
    assert "ModuleNotFoundError" in message
    assert "GLASSWORK_DISABLE_PLUGINS=no_such_module_xyz" in message and "glasswork plugins" in message


def test_a_clash_names_each_plugins_origin():
    class _Twin:
        register_solvers = staticmethod(hookimpl(toy_plugin.register_solvers))

    reg = registry(("toy", toy_plugin), ("twin", _Twin))
    assert "also registered by plugin 'twin' (explicit)" in reg.plugins["toy"].error
    message = reg.explain_unknown("toy")
    assert "plugin 'toy' (explicit), plugin 'twin' (explicit)" in message
    assert "GLASSWORK_DISABLE_PLUGINS=toy" in message and "GLASSWORK_DISABLE_PLUGINS=twin" in message


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
    from glasswork.display.views import model_view

    reg = Registry(builtins=True, entry_points=False, disabled=())
    reg.load_all()  # built-ins load when needed; here all three take part
    seen: list[tuple[str, list[str]]] = []
    undo = reg.pm.add_hookcall_monitoring(
        lambda name, impls, kwargs: seen.append((name, [i.plugin_name for i in impls])), lambda *a: None
    )
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


class _Loaded(tuple):
    """What ``_Answers.load_model`` rebuilds: a marker that predicts (``load_model`` asks for it)."""

    def predict(self, X: Any) -> Any:
        return X


class _Answers:
    """A plugin that answers every firstresult hook for its own model kind."""

    @staticmethod
    @hookimpl
    def render_model(model: dict[str, Any]) -> str | None:
        return "drawn by answers" if model.get("kind") == "answers" else None

    @staticmethod
    @hookimpl
    def export_model(model: dict[str, Any], format: str) -> str | None:
        return f"# {format} by answers" if model.get("kind") == "answers" else None

    @staticmethod
    @hookimpl
    def load_model(model: dict[str, Any]) -> object | None:
        return _Loaded(("loaded by answers", model["kind"])) if model.get("kind") == "answers" else None

    @staticmethod
    @hookimpl
    def sweep_defaults(solver: str) -> dict[str, Any] | None:
        return {"metric": "test_auc"} if solver == "answers" else None


class _RaisesInEveryHook:
    """Registered last, so pluggy would call it first: every hook raises."""

    @staticmethod
    @hookimpl
    def register_commands(cli: Any) -> None:
        raise RuntimeError("no commands today")

    @staticmethod
    @hookimpl
    def render_model(model: dict[str, Any]) -> None:
        raise RuntimeError("no view today")

    @staticmethod
    @hookimpl
    def export_model(model: dict[str, Any]) -> None:
        raise RuntimeError("no export today")

    @staticmethod
    @hookimpl
    def load_model(model: dict[str, Any]) -> None:
        raise RuntimeError("no model today")

    @staticmethod
    @hookimpl
    def sweep_defaults(solver: str) -> None:
        raise RuntimeError("no defaults today")

    @staticmethod
    @hookimpl
    def monitor_panels(solver: str) -> None:
        raise RuntimeError("no panels today")


def test_a_plugin_raising_in_every_hook_leaves_the_others_answers():
    """docs/plugins.md: every hook is called one plugin at a time, so a plugin whose hook raises
    only loses its own contribution; the workbench's callers (model views, exports, load_model,
    sweeps, the CLI) all go through the registry."""
    import click
    from glasswork.display.views import model_view
    from glasswork.export import ExportRequest, export_model, load_model

    reg = registry(("toy", toy_plugin), ("answers", _Answers), ("raises", _RaisesInEveryHook))
    model = {"kind": "answers"}
    assert reg.render_model(model).value == "drawn by answers"
    assert model_view(model, registry=reg) == "drawn by answers"
    assert export_model(model, ExportRequest("python", None), reg) == "# python by answers"
    answer = reg.export_model(model, "sql", ExportRequest("sql", None))
    assert (answer.value, answer.plugin) == ("# sql by answers", "answers")
    assert [name for name, _ in answer.errors] == ["raises"]
    document = {"format": "glasswork.model", "version": 1, "kind": "answers", "model": model}
    assert load_model(document, reg).model == ("loaded by answers", "answers")
    assert reg.sweep_defaults("answers") == {"metric": "test_auc"}
    assert reg.monitor_panels("toy") == []
    assert reg.register_commands(click.Group()) == [
        "raises: RuntimeError: no commands today (" + __file__ + ":" + str(_line_of("no commands today")) + ")"
    ]


def _line_of(text: str) -> int:
    return next(i for i, line in enumerate(open(__file__, encoding="utf-8"), 1) if text in line)


def test_when_only_a_raising_plugin_could_answer_the_caller_says_so():
    from glasswork.display.views import model_view
    from glasswork.export import ExportError, ExportRequest, export_model, load_model

    reg = registry(("toy", toy_plugin), ("raises", _RaisesInEveryHook))
    console = Console(file=io.StringIO(), width=200)
    console.print(model_view({"kind": "mystery"}, "the model's own text", registry=reg))
    shown = console.file.getvalue()
    assert "the model's own text" in shown and "no view today" in shown
    with pytest.raises(ExportError, match="no export today"):
        export_model({"kind": "mystery"}, ExportRequest("python", None), reg)
    with pytest.raises(ExportError, match="no model today"):
        load_model({"format": "glasswork.model", "version": 1, "kind": "mystery", "model": {"kind": "mystery"}}, reg)
    assert reg.sweep_defaults("toy") == {}


def test_firstresult_hooks_keep_pluggys_calling_order():
    """The registry asks plugins in the order pluggy would (the last registered first), so the
    answer is the one pluggy's own firstresult call would give."""

    class _AlsoAnswers:
        @staticmethod
        @hookimpl
        def render_model(model: dict[str, Any]) -> str:
            return "drawn by also"

    reg = registry(("answers", _Answers), ("also", _AlsoAnswers))
    assert (
        reg.render_model({"kind": "answers"}).value
        == reg.pm.hook.render_model(model={"kind": "answers"}, compact=False, stats={})
        == "drawn by also"
    )


def test_no_caller_outside_the_registry_calls_a_hook_directly():
    """``registry.pm.hook.<name>(...)`` skips the one-plugin-at-a-time promise; only the
    registry itself may call pluggy's hook caller."""
    import re
    from pathlib import Path

    import glasswork

    roots = [
        Path(glasswork.__file__).parent,
        Path(glasswork.__file__).parent.parent / "tui",
        Path(glasswork.__file__).parent.parent / "plugins",
    ]
    offenders = [
        f"{path}:{number}"
        for root in roots
        for path in root.rglob("*.py")
        if path.name != "registry.py"
        for number, line in enumerate(path.read_text(encoding="utf-8").splitlines(), 1)
        if re.search(r"\bpm\.hook\.\w+\(", line)
    ]
    assert not offenders, offenders


def test_a_builtin_not_loaded_yet_still_answers_and_clashes():
    """Built-ins load when needed: a firstresult hook that the loaded plugins leave unanswered asks
    the rest, and a third-party plugin registering a built-in's solver name still clashes with it."""
    reg = Registry(builtins=True, entry_points=False, disabled=())
    assert reg.find("corels") is not None
    assert reg.sweep_defaults("moss") == {"metric": "test_r2"}  # moss was not loaded by find

    class _Impostor:
        @staticmethod
        @hookimpl
        def register_solvers(register):
            from glasswork.plugins.corels import CorelsSolver

            register(CorelsSolver)

    clash = Registry(builtins=True, entry_points=False, disabled=(), extra=[("impostor", _Impostor())])
    assert clash.find("corels") is None
    assert "more than one plugin" in clash.explain_unknown("corels")
