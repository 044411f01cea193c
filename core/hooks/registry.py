"""The plugin registry: finds solver plugins, loads each on its own, and reports what failed.

Built-in solvers are the sub-packages of ``glasswork.plugins``; third-party solvers come from
the ``glasswork`` entry-point group. Both register through the hooks in ``glasswork.hooks.specs``.
A plugin that fails to import, to register, or that registers something malformed is recorded
with its error and skipped: the others keep working and ``glasswork plugins`` shows the error.
``GLASSWORK_DISABLE_PLUGINS=name,...`` turns plugins off by name, and
``GLASSWORK_PLUGIN_MODULES=pkg.module,...`` loads plugin modules by import path, which is handy
while writing a plugin that is not packaged yet.

Built-in plugins are imported when first needed, so a run imports only its own solver's modules
(they pull in NumPy, SciPy and friends: the bulk of a short run's start-up). A built-in plugin is
named after the solver it registers and answers hooks only for its own solver's runs and models;
``find`` loads the plugin named after the solver asked for, a ``firstresult`` hook that no loaded
plugin answers loads the others and asks them, and ``plugins``, ``solvers`` and a missing solver
load them all. Third-party plugins (entry points, ``GLASSWORK_PLUGIN_MODULES``) are loaded at once:
they may register any solver name, so a clash with a built-in is still found. Hooks are called in
the order of discovery (built-ins, entry points, modules, explicit), as if all were loaded at once.
"""

from __future__ import annotations

import difflib
import functools
import importlib
import os
import pkgutil
import traceback
import typing
from collections.abc import Callable, Iterable, Iterator
from dataclasses import asdict, dataclass, field
from importlib import metadata
from typing import TYPE_CHECKING, Any

import pluggy
from glasswork._version import __version__
from glasswork.contract.solver import Solver
from glasswork.hooks import specs as hookspecs
from glasswork.hooks.specs import PROJECT
from glasswork.spec.models import SolverSpec

if TYPE_CHECKING:
    from glasswork.display.panels import Panel
    from glasswork.export.inputs import ExportRequest, ModelInputs

ENTRY_POINT_GROUP = "glasswork"
DISABLE_ENV = "GLASSWORK_DISABLE_PLUGINS"
MODULES_ENV = "GLASSWORK_PLUGIN_MODULES"


@dataclass
class PluginInfo:
    """What ``glasswork plugins`` lists for one plugin."""

    name: str
    origin: str  # "builtin", or the distribution that provides the entry point
    version: str
    module: str
    solvers: list[str] = field(default_factory=list)
    hooks: list[str] = field(default_factory=list)
    error: str | None = None
    disabled: bool = False

    @property
    def ok(self) -> bool:
        return self.error is None and not self.disabled

    def to_dict(self) -> dict[str, Any]:
        """The fields (lists copied), with the status ``error`` and ``disabled`` come to."""
        listed = {key: value for key, value in asdict(self).items() if key not in ("error", "disabled")}
        return {
            **listed,
            "status": "disabled" if self.disabled else ("error" if self.error else "ok"),
            "error": self.error,
        }


class Registry:
    """Solver plugins, discovered once; ``solvers`` maps usable solver names to classes."""

    def __init__(
        self,
        *,
        builtins: bool = True,
        entry_points: bool = True,
        disabled: Iterable[str] | None = None,
        extra: Iterable[tuple[str, object]] = (),
    ) -> None:
        if disabled is None:
            disabled = [n.strip() for n in os.environ.get(DISABLE_ENV, "").split(",")]
        self.disabled = {n for n in disabled if n}
        self.pm = pluggy.PluginManager(PROJECT)
        self.pm.add_hookspecs(hookspecs)
        self._plugins: dict[str, PluginInfo] = {}
        self._solvers: dict[str, type[Solver]] = {}
        self._owners: dict[str, list[str]] = {}
        self._pending: dict[str, Callable[[], object]] = {}  # built-ins not imported yet
        self._order: dict[str, int] = {}  # discovery order, which decides the hooks' calling order

        if builtins:
            self._find_builtins()
        if entry_points:
            self._load_entry_points()
            self._load_env_modules()
        for name, obj in extra:
            self.add(obj, name=name, origin="explicit", version="0")
        self._collect_solvers([n for n in self._plugins if n not in self._pending])

    @property
    def plugins(self) -> dict[str, PluginInfo]:
        """Every plugin found, by name (loads the built-ins not loaded yet)."""
        self.load_all()
        return self._plugins

    @property
    def solvers(self) -> dict[str, type[Solver]]:
        """Every usable solver, by name (loads the built-ins not loaded yet)."""
        self.load_all()
        return self._solvers

    def load_all(self) -> None:
        """Import the built-in plugins not imported yet (``glasswork plugins``, ``schema``, the TUI)."""
        if self._pending:
            self._load_pending(list(self._pending))

    def find(self, name: str) -> type[Solver] | None:
        """The solver class ``name``, importing only its plugin when that is a built-in named
        after it; every plugin when not; ``None`` when no plugin provides it."""
        if name in self._pending:  # even when a third-party plugin gave ``name``: they would clash
            self._load_pending([name])
        if name not in self._solvers:
            self.load_all()
        return self._solvers.get(name)

    def _load_pending(self, names: list[str]) -> None:
        for name in names:
            self._load(self._plugins[name], self._pending.pop(name))
        self._collect_solvers(names)

    # -- loading ----------------------------------------------------------------------------

    def _find_builtins(self) -> None:
        """Note the built-in plugins (the sub-packages of ``glasswork.plugins``) without importing them."""
        package = importlib.import_module("glasswork.plugins")
        for mod in sorted(pkgutil.iter_modules(package.__path__), key=lambda m: m.name):
            if mod.name.startswith("_"):
                continue
            module_name = f"glasswork.plugins.{mod.name}.plugin"  # the shape of an entry point's module
            self._note(PluginInfo(mod.name, "builtin", __version__, module_name))
            self._pending[mod.name] = functools.partial(importlib.import_module, module_name)

    def _note(self, info: PluginInfo) -> None:
        self._plugins[info.name] = info
        self._order.setdefault(info.name, len(self._order))

    def _load_entry_points(self) -> None:
        for ep in sorted(metadata.entry_points(group=ENTRY_POINT_GROUP), key=lambda e: e.name):
            dist = getattr(ep, "dist", None)
            info = PluginInfo(
                ep.name,
                dist.name if dist is not None else "unknown distribution",
                dist.version if dist is not None else "unknown",
                ep.value,
            )
            if info.name in self._plugins:
                info.error = f"the plugin name {info.name!r} is already taken by {self._plugins[info.name].origin}"
                self._order.setdefault(f"{info.name} ({info.origin})", len(self._order))
                self._plugins[f"{info.name} ({info.origin})"] = info
                continue
            self._load(info, ep.load)

    def _load_env_modules(self) -> None:
        for module_name in (m.strip() for m in os.environ.get(MODULES_ENV, "").split(",")):
            if not module_name:
                continue
            info = PluginInfo(module_name, f"${MODULES_ENV}", "-", module_name)
            self._load(info, functools.partial(importlib.import_module, module_name))

    def add(self, obj: object, *, name: str, origin: str = "explicit", version: str = "0") -> PluginInfo:
        """Register an already imported plugin object (tests and notebooks)."""
        info = PluginInfo(name, origin, version, getattr(obj, "__name__", type(obj).__name__))
        self._load(info, lambda: obj)
        return info

    def _load(self, info: PluginInfo, load: Callable[[], object]) -> None:
        self._note(info)
        if info.name in self.disabled:
            info.disabled = True
            return
        try:
            obj = load()
            self.pm.register(obj, name=info.name)
        except Exception as exc:  # a broken plugin must never take the others down
            info.error = _describe(exc)
            return
        callers = self.pm.get_hookcallers(obj) or []
        unknown = sorted(c.name for c in callers if c.spec is None)
        if unknown:
            # a misspelled hook would otherwise load as "ok" and do nothing, silently
            self.pm.unregister(obj)
            info.error = "; ".join(_unknown_hook(name) for name in unknown)
            return
        info.hooks = sorted(c.name for c in callers)

    def _each(
        self, hook: str, *, calling_order: bool = False, among: Iterable[str] | None = None, **kwargs: Any
    ) -> Iterator[tuple[PluginInfo, Any]]:
        """Call ``hook`` once per working plugin (of those loaded, or those ``among``), through
        pluggy's hook caller (so its tracing and monitoring see every call), keeping each plugin's
        failure its own. Plugins come in discovery order, or with ``calling_order`` in the order
        pluggy itself would call them had all been loaded at once (the last found first,
        ``tryfirst``/``trylast`` respected)."""
        caller = getattr(self.pm.hook, hook)
        impls = sorted(
            caller.get_hookimpls(),
            key=lambda i: (0 if i.trylast else 2 if i.tryfirst else 1, self._order.get(i.plugin_name, 0)),
        )
        names = [impl.plugin_name for impl in impls]
        if calling_order:
            names.reverse()
        chosen = set(names if among is None else among)
        for name in names:
            info = self._plugins.get(name)
            if info is None or not info.ok or name not in chosen:
                continue
            others = [self.pm.get_plugin(n) for n in names if n != name]
            only = self.pm.subset_hook_caller(hook, remove_plugins=[o for o in others if o is not None])
            try:
                yield info, only(**kwargs)
            except Exception as exc:
                yield info, exc

    def _collect_solvers(self, names: Iterable[str]) -> None:
        """Call the ``register_solvers`` of the plugins ``names`` (just loaded), each on its own,
        so one failure stays local."""
        found: list[type[Solver]] = []
        for info, outcome in self._each("register_solvers", among=names, register=found.append):
            registered, found[:] = list(found), []
            try:
                if isinstance(outcome, Exception):
                    raise outcome
                for cls in registered:
                    _check_solver_class(cls)
            except Exception as exc:
                info.error = _describe(exc)
                continue
            for cls in registered:
                info.solvers.append(cls.name)
                self._owners.setdefault(cls.name, []).append(info.name)
                self._solvers[cls.name] = cls
        for name, owners in self._owners.items():
            if len(owners) > 1:
                self._solvers.pop(name, None)
                for owner in owners:
                    others = ", ".join(self._named(o) for o in owners if o != owner)
                    self._plugins[
                        owner
                    ].error = (
                        f"solver {name!r} is also registered by {others}; uninstall one or set {DISABLE_ENV}={owner}"
                    )

    def _named(self, plugin: str) -> str:
        """``plugin 'NAME' (ORIGIN)``: how messages name a plugin, with where it comes from."""
        info = self._plugins[plugin]
        return f"plugin {info.name!r} ({info.origin})"

    # -- queries ----------------------------------------------------------------------------

    def solver(self, name: str) -> type[Solver]:
        cls = self.find(name)
        if cls is None:
            raise KeyError(self.explain_unknown(name))
        return cls

    def plugin_of(self, solver: str) -> str:
        """How messages name the plugin that registered ``solver``: ``plugin 'NAME' (ORIGIN)``,
        so a fault in a plugin is laid at its door, not glasswork's."""
        owners = self._owners.get(solver) or []
        if not owners:
            return "an unregistered plugin"
        return self._named(owners[0])

    def explain_unknown(self, name: str) -> str:
        """Why ``name`` is not usable, and what to do about it: the plugins that clash over it,
        the plugin named after it that is disabled or failed to load, or the installed solvers
        (with their plugins) and how a plugin is installed."""
        self.load_all()
        owners = self._owners.get(name, [])
        if len(owners) > 1:
            return (
                f"solver {name!r} is registered by more than one plugin ({', '.join(map(self._named, owners))}); "
                "uninstall one or disable it with " + " or ".join(f"{DISABLE_ENV}={o}" for o in owners)
            )
        for key, info in self.plugins.items():
            if info.name == name and info.disabled:
                return f"solver {name!r} is disabled by {DISABLE_ENV}"
            if info.name == name and info.error:
                return (
                    f"solver {name!r} would come from {self._named(key)}, which failed to load: "
                    f"{info.error.splitlines()[-1]}; fix or reinstall it, or turn it off with "
                    f"{DISABLE_ENV}={info.name} ('glasswork plugins' shows every plugin's state)"
                )
        owner = {solver: self._plugins[owners[0]] for solver, owners in self._owners.items() if owners}
        installed = ", ".join(
            f"{solver} (plugin {owner[solver].name!r}, {owner[solver].origin})" for solver in sorted(self.solvers)
        )
        close = difflib.get_close_matches(name, list(self.solvers), n=1)
        message = (
            f"unknown solver {name!r}{f' (did you mean {close[0]!r}?)' if close else ''}; "
            f"installed solvers: {installed or 'none'}"
        )
        broken = [i.name for i in self.plugins.values() if i.error]
        if broken:
            message += f"; plugins that failed to load: {', '.join(broken)}"
        return (
            message + ". A solver comes from a plugin: pip install the package that provides it (it "
            "declares a 'glasswork' entry point), then 'glasswork plugins' lists it (docs/plugins.md)"
        )

    def register_commands(self, cli: Any) -> list[str]:
        """Let plugins add CLI commands; returns the errors of those that failed."""
        self.load_all()
        return [
            f"{info.name}: {_describe(outcome)}"
            for info, outcome in self._each("register_commands", cli=cli)
            if isinstance(outcome, Exception)
        ]

    def monitor_panels(self, solver: str) -> list[Panel]:
        """Fresh monitor panels for a run of ``solver`` (none when no plugin describes any).

        A plugin whose hook fails or returns something else than panels contributes nothing:
        the monitor still shows the bounds, the gap and the counters.
        """
        from glasswork.display.panels import Panel

        self.find(solver)  # a built-in describes only its own solver's runs
        panels: list[Panel] = []
        for _info, outcome in self._each("monitor_panels", solver=solver):
            for described in outcome if isinstance(outcome, list) else []:  # one result per plugin
                if isinstance(described, list):
                    panels.extend(p for p in described if isinstance(p, Panel))
        return panels

    def sweep_defaults(self, solver: str) -> dict[str, Any]:
        """What the plugin of ``solver`` sets as sweep defaults (``metric``, ``goal``); a broken
        hook leaves the general defaults in force."""
        answer = self.first("sweep_defaults", solver=solver)
        return dict(answer.value) if isinstance(answer.value, dict) else {}

    def render_model(
        self, model: dict[str, Any], *, compact: bool = False, stats: dict[str, Any] | None = None
    ) -> HookAnswer:
        """The first plugin's view of ``model`` (``render_model``); failures are in ``errors``."""
        return self.first("render_model", model=model, compact=compact, stats=stats or {})

    def export_model(self, model: dict[str, Any], format: str, request: ExportRequest) -> HookAnswer:
        """The first plugin's ``format`` text of ``model`` (``export_model``)."""
        return self.first("export_model", model=model, format=format, request=request)

    def rebuild_model(self, model: dict[str, Any], inputs: ModelInputs | None) -> HookAnswer:
        """The first plugin's model object rebuilt from ``model`` (``load_model``)."""
        return self.first("load_model", model=model, inputs=inputs)

    def first(self, hook: str, **kwargs: Any) -> HookAnswer:
        """A ``firstresult`` hook, one plugin at a time in pluggy's calling order: the first
        answer that is not ``None`` wins, and a plugin that raises is passed over (its failure
        is kept in the answer's ``errors``), so one broken plugin never hides another's answer.
        When no loaded plugin answers, the built-ins not loaded yet are loaded and asked."""
        answer = HookAnswer()
        asked = [name for name, info in self._plugins.items() if name not in self._pending]
        for round_ in (asked, None):
            if round_ is None:
                if not self._pending:
                    break
                round_ = list(self._pending)
                self._load_pending(round_)
            for info, outcome in self._each(hook, calling_order=True, among=round_, **kwargs):
                if isinstance(outcome, Exception):
                    answer.errors.append((info.name, outcome))
                elif outcome is not None:
                    answer.value, answer.plugin = outcome, info.name
                    return answer
        return answer


@dataclass
class HookAnswer:
    """What a ``firstresult`` hook gave: the winning ``value`` (``None`` when no plugin answered),
    the ``plugin`` that gave it, and the ``errors`` of the plugins that raised on the way."""

    value: Any = None
    plugin: str | None = None
    errors: list[tuple[str, Exception]] = field(default_factory=list)

    def failure(self) -> str:
        """The raised errors in one line, for a message (empty when none raised)."""
        return "; ".join(f"plugin {name!r} failed: {type(exc).__name__}: {exc}" for name, exc in self.errors)


def _unknown_hook(name: str) -> str:
    known = sorted(
        n for n in dir(hookspecs) if isinstance(getattr(getattr(hookspecs, n), "glasswork_spec", None), dict)
    )
    close = difflib.get_close_matches(name, known, n=1)
    hint = f"did you mean {close[0]!r}?" if close else f"the hooks are {', '.join(known)}"
    return f"hook implementation {name!r} matches no glasswork hook ({hint})"


def _check_solver_class(cls: Any) -> None:
    if not (isinstance(cls, type) and issubclass(cls, Solver)):
        raise TypeError(f"{cls!r} is not a subclass of glasswork.Solver")
    name = getattr(cls, "name", None)
    if not isinstance(name, str) or not name:
        raise TypeError(f"{cls.__name__} has no 'name'")
    model = getattr(cls, "spec_model", None)
    if not (isinstance(model, type) and issubclass(model, SolverSpec)):
        raise TypeError(f"{cls.__name__}.spec_model must be a glasswork.SolverSpec subclass")
    tag = typing.get_args(model.model_fields["solver"].annotation)
    if tag != (name,):
        raise TypeError(f"{model.__name__}.solver must be Literal[{name!r}] to match {cls.__name__}.name")


def _describe(exc: BaseException) -> str:
    frames = traceback.extract_tb(exc.__traceback__)
    where = f" ({frames[-1].filename}:{frames[-1].lineno})" if frames else ""
    return f"{type(exc).__name__}: {exc}{where}"


_default: Registry | None = None


def get_registry(refresh: bool = False) -> Registry:
    """The process-wide registry, built on first use."""
    global _default
    if _default is None or refresh:
        _default = Registry()
    return _default
