"""What the monitor knows about a run, built from the same JSON records whatever their source.

An owned run (launched in the app), a followed events file and a run read back from DuckDB all
produce ``{"kind": ...}`` dicts: ``start`` (the run's identity), ``progress`` / ``incumbent`` /
``log`` / ``rashomon`` (``Event.to_dict()``) and ``finish`` (the result or the error). ``RunState``
folds them into series and figures and feeds the solver's monitor panels (from its plugin's hook),
and a run's Rashomon set into a ``RashomonView``;
``LogFollower`` reads an events file incrementally. Neither imports Textual, so both are tested
without a terminal.
"""

from __future__ import annotations

from bisect import insort
from collections import deque
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any

from glasswork.display import Series, finite
from glasswork.rashomon import PointSet, SetProgress, SetSummary
from glasswork.record import stored_run
from glasswork.result import relative_gap
from glasswork.store.journal import JournalReader

if TYPE_CHECKING:
    from glasswork.display import Panel
    from glasswork.registry import Registry

RATE_WINDOW = 2.0  # seconds of elapsed time over which counter rates are measured
MEMBERS_HELD = 500  # members of a Rashomon set the monitor holds in memory, the best ones


def _objective_key(member: dict[str, Any]) -> float:
    objective = finite(member.get("objective"))
    return float("inf") if objective is None else objective


@dataclass
class RashomonView:
    """A run's Rashomon set as the monitor knows it: the running count and threshold, the bound
    on what is not enumerated yet, and the best ``cap`` members received (dicts in
    ``RashomonMember.to_dict()`` form), best first whatever order the batches arrived in.

    ``complete`` is ``None`` while the run goes on; the finish record settles it (a run that ended
    without a set in its result, cancelled or failed, is not complete). ``version`` grows with
    every change, so a screen redraws its table only when something new arrived.
    """

    count: int = 0
    threshold: float | None = None
    epsilon: float | None = None
    bound: float | None = None
    complete: bool | None = None
    exhaustive: bool = True
    kept: int | None = None
    received: int = 0
    members: list[dict[str, Any]] = field(default_factory=list)
    cap: int = MEMBERS_HELD
    version: int = 0

    def feed(self, record: dict[str, Any], progress: SetProgress | None = None) -> None:
        """One ``rashomon`` event of the run's set (its ``SetProgress``, read from the record when
        not given): the running count, the threshold, new members."""
        progress = SetProgress.of_record(record) if progress is None else progress
        if progress is not None:
            self.count = max(self.count, progress.count)
            if progress.threshold is not None:
                self.threshold = progress.threshold
        bound = finite(record.get("lower_bound"))
        if bound is not None:
            self.bound = bound
        for member in record.get("members") or []:
            if isinstance(member, dict):
                self._add(member)
        self.count = max(self.count, self.received)
        self.version += 1

    def _add(self, member: dict[str, Any]) -> None:
        self.received += 1
        key = _objective_key(member)
        if len(self.members) >= self.cap and key >= _objective_key(self.members[-1]):
            return  # no better than the worst one held: the count says it exists
        insort(self.members, member, key=_objective_key)  # after equal objectives: arrival order kept
        del self.members[self.cap :]

    def finish(self, summary: SetSummary | None, models: list[Any] | None = None) -> None:
        """The run ended: its result's set (in summary) settles the figures and, when ``models``
        lists them, the members; without one the set is incomplete."""
        self.version += 1
        if summary is None:
            self.complete = False
            return
        self.count = summary.count or self.count
        self.complete = summary.complete
        self.exhaustive = summary.exhaustive
        self.threshold = summary.threshold
        self.epsilon = summary.epsilon
        self.bound = summary.unenumerated_bound
        self.kept = summary.kept
        if models:
            self.members = []
            self.received = 0
            for member in models:
                if isinstance(member, dict):
                    self._add(member)

    @classmethod
    def from_summary(cls, summary: SetSummary) -> RashomonView:
        """A stored set's figures (``RunStore.rashomon_summary``), without its members."""
        view = cls()
        view.finish(summary)
        return view


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
    rashomon: RashomonView | None = None  # from the first ``rashomon`` record on
    # the sets of a sweep's points (a frontier's), by point: ``rashomon`` records of a point's set
    rashomon_points: dict[int, PointSet] = field(default_factory=dict)
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
    def no_model(self) -> str | None:
        """Why the finished run has no model (infeasible, or stopped before any met the
        constraints: ``glasswork.result.no_model_reason``), ``None`` otherwise."""
        if self.model is not None or self.result is None:
            return None
        reason = self.result.get("no_model")
        return reason if isinstance(reason, str) else None

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
        if kind == "rashomon":
            # its lower_bound bounds what the set has not enumerated, not the optimum: not a bound point
            progress = SetProgress.of_record(r)
            if progress is None:
                return  # no figures a reader can place
            if progress.point is not None:  # a point's set, not the run's
                self.rashomon_points[progress.point] = PointSet.of_progress(progress, r.get("lower_bound"))
                return
            if self.rashomon is None:
                self.rashomon = RashomonView()
            self.rashomon.feed(r, progress)
            if r.get("nodes") is not None:
                self.nodes = int(r["nodes"])
            self._feed_panels(r)
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
        document = (result or {}).get("rashomon")
        if document and self.rashomon is None:
            self.rashomon = RashomonView()
        if self.rashomon is not None:
            summary = SetSummary.from_dict(document) if document else None
            self.rashomon.finish(summary, document.get("models") if document else None)
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
