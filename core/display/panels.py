"""Monitor panels: the charts a solver's counters feed, as plain descriptions with their data.

A plugin returns fresh panels from ``monitor_panels`` (``glasswork.hooks.specs``); each folds the
records of a run (``feed``), and the terminal UI draws them. They live in a module of their own,
below the registry, which checks what a plugin returns.
Nothing here imports Textual or rich.
"""

from __future__ import annotations

import math
from abc import ABC, abstractmethod
from dataclasses import dataclass, field
from typing import Any

MAX_POINTS = 20_000  # per panel series; older points are thinned beyond this


def finite(value: Any) -> float | None:
    """A record's figure as a float, or ``None`` when it is missing, not a number, or infinite."""
    if isinstance(value, bool) or not isinstance(value, (int, float)):
        return None
    value = float(value)
    return value if math.isfinite(value) else None


# -- monitor panels ----------------------------------------------------------------------------------


@dataclass
class Panel(ABC):
    """A chart of the monitor, fed every record of a run (``start``, events, ``finish``).

    ``feed`` folds one record (an ``Event.to_dict()`` form, or the ``finish`` record with the
    result document); ``has_data`` says whether the panel has anything to draw yet, so panels
    appear only once a run reports what they show.
    """

    title: str
    xlabel: str = ""
    color: str = "cyan"

    @abstractmethod
    def feed(self, record: dict[str, Any]) -> None: ...

    @property
    @abstractmethod
    def has_data(self) -> bool: ...


def _counters(record: dict[str, Any]) -> dict[str, Any]:
    counters = record.get("counters")
    return counters if isinstance(counters, dict) else {}


def _figure(record: dict[str, Any], name: str) -> float | None:
    """A named figure of an event: ``objective``, ``lower_bound``, ``nodes``, ``gap``, or a counter."""
    if name in ("objective", "lower_bound", "nodes", "gap", "elapsed"):
        return finite(record.get(name))
    return finite(_counters(record).get(name))


@dataclass
class Series:
    """A time series of (elapsed, value) that thins itself so it never grows without bound."""

    xs: list[float] = field(default_factory=list)
    ys: list[float] = field(default_factory=list)

    def add(self, x: float, y: float | None) -> None:
        if y is None:
            return
        if self.xs and x == self.xs[-1]:
            self.ys[-1] = y
            return
        self.xs.append(x)
        self.ys.append(y)
        if len(self.xs) > MAX_POINTS:  # keep every other old point, the recent ones as they are
            half = MAX_POINTS // 2
            self.xs[:half], self.ys[:half] = self.xs[:half:2], self.ys[:half:2]

    def sampled(self, limit: int = 400) -> tuple[list[float], list[float]]:
        """At most ``limit`` points for drawing, always including the last one."""
        n = len(self.xs)
        if n <= limit:
            return list(self.xs), list(self.ys)
        idx = sorted({int(i * n / limit) for i in range(limit)} | {n - 1})
        return [self.xs[i] for i in idx], [self.ys[i] for i in idx]

    def __len__(self) -> int:
        return len(self.xs)


@dataclass
class SeriesPanel(Panel):
    """A line of one numeric counter against elapsed seconds (e.g. log10 of the remaining space)."""

    counter: str = ""
    xlabel: str = "seconds"
    series: Series = field(default_factory=Series, repr=False)

    def feed(self, record: dict[str, Any]) -> None:
        if record.get("kind") in ("progress", "incumbent"):
            x = finite(record.get("elapsed"))
            if x is not None:
                self.series.add(x, _figure(record, self.counter))

    @property
    def has_data(self) -> bool:
        return bool(len(self.series))


@dataclass
class BarsPanel(Panel):
    """Bars of the latest value of a counter that maps keys to numbers (a histogram, a profile).

    Once reported, the latest value is what the panel shows, also when it is empty (a search's
    queue at its end): the panel never goes on showing an earlier state.
    """

    counter: str = ""
    values: dict[str, float] = field(default_factory=dict, repr=False)
    reported: bool = field(default=False, repr=False)

    def feed(self, record: dict[str, Any]) -> None:
        value = _counters(record).get(self.counter)
        if isinstance(value, dict):
            self.values = {str(k): float(v) for k, v in value.items() if finite(v) is not None}
            self.reported = True

    @property
    def has_data(self) -> bool:
        return self.reported

    def bars(self) -> tuple[list[str], list[float]]:
        """Labels and heights, numeric keys in numeric order."""

        def order(key: str) -> tuple[int, float | str]:
            try:
                return (0, float(key))
            except ValueError:
                return (1, key)

        keys = sorted(self.values, key=order)
        return keys, [self.values[k] for k in keys]


@dataclass
class ScatterPanel(Panel):
    """Points ``(x, y)`` gathered from events (e.g. a frontier as its points are certified).

    ``x`` and ``y`` name figures of an event (``objective``, ``lower_bound``, ``nodes`` or a
    counter); an event carrying both adds a point. When the final result's ``stats`` holds a
    list of records under ``result_points``, its ``result_x`` / ``result_y`` fields replace the
    points gathered on the way (the solver's final word).
    """

    x: str = ""
    y: str = "objective"
    result_points: str | None = None
    result_x: str | None = None
    result_y: str | None = None
    points: list[tuple[float, float]] = field(default_factory=list, repr=False)

    def feed(self, record: dict[str, Any]) -> None:
        if record.get("kind") == "finish":
            self._from_result(record.get("result") or {})
            return
        x, y = _figure(record, self.x), _figure(record, self.y)
        if x is not None and y is not None and (not self.points or self.points[-1] != (x, y)):
            self.points.append((x, y))

    def _from_result(self, result: dict[str, Any]) -> None:
        rows = (result.get("stats") or {}).get(self.result_points) if self.result_points else None
        if not isinstance(rows, list):
            return
        x_key, y_key = self.result_x or self.x, self.result_y or self.y
        points = [(finite(r.get(x_key)), finite(r.get(y_key))) for r in rows if isinstance(r, dict)]
        self.points = [(x, y) for x, y in points if x is not None and y is not None]

    @property
    def has_data(self) -> bool:
        return bool(self.points)
