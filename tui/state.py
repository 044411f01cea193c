"""What the monitor knows about a run, built from the same JSON records whatever their source.

An owned run (launched in the app), a followed events file and a run read back from DuckDB all
produce ``{"kind": ...}`` dicts: ``start`` (the run's identity), ``progress`` / ``incumbent`` /
``log`` (``Event.to_dict()``) and ``finish`` (the result or the error). ``RunState`` folds them
into series and figures and feeds the solver's monitor panels (from its plugin's hook);
``LogFollower`` reads an events file incrementally. Neither imports Textual, so both are tested
without a terminal.
"""

from __future__ import annotations

from collections import deque
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any

from glasswork.display import Series, finite
from glasswork.record import stored_run
from glasswork.result import relative_gap
from glasswork.store.journal import JournalReader

if TYPE_CHECKING:
    from glasswork.display import Panel
    from glasswork.registry import Registry

RATE_WINDOW = 2.0  # seconds of elapsed time over which counter rates are measured


@dataclass
class RunState:
    """Everything the live monitor shows, folded from records in arrival order."""

    info: dict[str, Any] = field(default_factory=dict)
    objective: Series = field(default_factory=Series)
    lower_bound: Series = field(default_factory=Series)
    counters: dict[str, Any] = field(default_factory=dict)
    rates: dict[str, float] = field(default_factory=dict)
    nodes: int | None = None
    elapsed: float = 0.0
    first_gap: float | None = None
    gap: float | None = None
    model: dict[str, Any] | None = None
    model_text: str | None = None
    panels: list[Panel] = field(default_factory=list)  # the solver's, from its monitor_panels hook
    messages: deque[tuple[float, str, str]] = field(default_factory=lambda: deque(maxlen=200))
    result: dict[str, Any] | None = None
    error: str | None = None
    finished: bool = False
    n_records: int = 0
    registry: Registry | None = field(default=None, repr=False)  # None: the process-wide one
    _history: deque[tuple[float, dict[str, float]]] = field(default_factory=lambda: deque(maxlen=4096))

    # -- identity -----------------------------------------------------------------------------

    @property
    def run_id(self) -> str:
        return str(self.info.get("run_id") or "")

    @property
    def name(self) -> str:
        return str(self.info.get("name") or "")

    @property
    def solver(self) -> str:
        return str(self.info.get("solver") or "")

    @property
    def status(self) -> str:
        """``running`` until the finish record; then the certificate's status or ``failed``."""
        if not self.finished:
            return "running"
        if self.result is None:
            return "failed"
        return str(self.result.get("status"))

    @property
    def best_objective(self) -> float | None:
        if self.result is not None and finite(self.result.get("objective")) is not None:
            return float(self.result["objective"])
        return self.objective.ys[-1] if self.objective.ys else None

    @property
    def best_lower_bound(self) -> float | None:
        if self.result is not None:
            return finite(self.result.get("lower_bound"))
        return self.lower_bound.ys[-1] if self.lower_bound.ys else None

    @property
    def gap_closed(self) -> float | None:
        """Share of the first observed gap that has been closed since (1.0 once proven optimal)."""
        if self.gap is None:
            return None
        if self.gap < 5e-5:  # within the usual solver tolerances: the bar shows it closed, the number still says it
            return 1.0
        if not self.first_gap:
            return 1.0 if self.gap == 0 else None
        return max(0.0, min(1.0, 1.0 - self.gap / self.first_gap))

    # -- folding ------------------------------------------------------------------------------

    def feed(self, records: list[dict[str, Any]] | dict[str, Any]) -> None:
        for record in [records] if isinstance(records, dict) else records:
            self._feed_one(record)

    def _feed_one(self, r: dict[str, Any]) -> None:
        self.n_records += 1
        kind = r.get("kind")
        if kind == "start":
            self.info = {k: v for k, v in r.items() if k not in ("kind", "split")}
            self.panels = self._registry().monitor_panels(self.solver)
            return
        if kind == "finish":
            self._finish(r)
            self._feed_panels(r)
            return
        t = finite(r.get("elapsed")) or 0.0
        self.elapsed = max(self.elapsed, t)
        if kind == "log":
            self.messages.append((t, str(r.get("level") or "info"), str(r.get("message") or "")))
            return
        obj, lb = finite(r.get("objective")), finite(r.get("lower_bound"))
        self.objective.add(t, obj)
        if lb is not None:
            # the bound is only ever certified upwards; a solver may report a weaker one later
            self.lower_bound.add(t, lb)
        gap = relative_gap(obj, lb)
        if gap is not None:
            self.gap = gap
            if self.first_gap is None and gap > 0:
                self.first_gap = gap
        counters = dict(r.get("counters") or {})
        nodes = r.get("nodes")
        if nodes is not None:
            self.nodes = int(nodes)
        self._feed_panels(r)
        if counters:
            self.counters.update(counters)
        self._rates(t, counters)
        if kind == "incumbent" and r.get("model") is not None:
            self.model = r["model"]
            self.model_text = r.get("model_text")

    def _registry(self) -> Registry:
        if self.registry is None:
            from glasswork.registry import get_registry

            self.registry = get_registry()
        return self.registry

    def _feed_panels(self, record: dict[str, Any]) -> None:
        for panel in list(self.panels):
            try:
                panel.feed(record)
            except Exception as exc:  # a plugin's panel must never take the monitor down
                self.panels.remove(panel)
                self.messages.append((self.elapsed, "warning", f"panel {panel.title!r} removed: {exc}"))

    def _rates(self, t: float, counters: dict[str, Any]) -> None:
        figures = {k: float(v) for k, v in counters.items() if finite(v) is not None}
        if self.nodes is not None:
            figures["nodes"] = float(self.nodes)
        if not figures:
            return
        self._history.append((t, figures))
        while len(self._history) > 2 and t - self._history[1][0] >= RATE_WINDOW:
            self._history.popleft()
        t0, old = self._history[0]
        if t - t0 <= 0:
            return
        self.rates = {k: (v - old[k]) / (t - t0) for k, v in figures.items() if k in old}

    def _finish(self, r: dict[str, Any]) -> None:
        self.finished = True
        result = r.get("result")
        if result:
            self.result = result
            if result.get("model") is not None:
                self.model = result["model"]
                self.model_text = result.get("model_text")
            obj, lb = finite(result.get("objective")), finite(result.get("lower_bound"))
            stats = result.get("stats") or {}
            t = finite(stats.get("elapsed")) or self.elapsed
            self.elapsed = max(self.elapsed, t)
            if obj is not None and (not self.objective.ys or self.objective.ys[-1] != obj):
                self.objective.add(t, obj)
            if lb is not None and (not self.lower_bound.ys or self.lower_bound.ys[-1] != lb):
                self.lower_bound.add(t, lb)
            if finite(result.get("gap")) is not None:
                self.gap = float(result["gap"])
        else:
            self.error = str(r.get("error") or "the run failed without a result")

    # -- the store's form ---------------------------------------------------------------------

    @classmethod
    def from_store(cls, details: dict[str, Any], events: list[dict[str, Any]]) -> RunState:
        """A run read back from DuckDB (``RunStore.details`` and ``RunStore.events``)."""
        state = cls()
        state.feed(stored_run(details, events).records())
        return state


LogFollower = JournalReader  # the store's one reader of a run's journal (torn lines kept back)
