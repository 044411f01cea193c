"""The Rashomon set as a type: the set a solver returns (``RashomonSet``, its ``RashomonMember``s),
its figures in summary (``SetSummary``: what the console, the card, the store and the terminal UI
show), where its enumeration stands while it runs (``SetProgress``, carried by a ``rashomon``
event) and the set of one point of a sweep a search runs (``PointSet``, a frontier's). What a
set says about its data (predictive multiplicity, model class reliance) is computed in
``glasswork.rashomon.multiplicity``; the store's tables of sets are ``glasswork.store.rashomon``.

Each has one dict form, read back by its ``from_dict``; the events of journals written before
``SetProgress`` existed (record form 1: the figures as ``rashomon_*`` keys among the event's
counters) are read by ``SetProgress.of_record`` too, and the run store keeps that flat form in its
``events.counters`` column (``SetProgress.counters``), so its files and exports are unchanged.
"""

from __future__ import annotations

import math
from collections.abc import Iterable, Mapping
from dataclasses import dataclass, field, replace
from typing import TYPE_CHECKING, Any, Protocol, TypeVar

from glasswork.contract.model import CertificateError, jsonable

if TYPE_CHECKING:
    from glasswork.contract.model import Model


@dataclass
class RashomonMember:
    """One model of a Rashomon set.

    ``features`` names the columns of the training matrix the model uses (what ``--uses`` and
    ``--avoids`` filter on, and what variable use counts); ``fingerprint`` is
    ``prediction_fingerprint`` of its predictions on the training rows. ``model`` is ``None``
    when the spec keeps summaries only (``rashomon.keep: summary``).

    ``metrics`` (``train_*``, ``test_*``) and ``fairness`` (``{"train": {METRIC: value}, "test":
    ...}``) are its figures, given when the set is recorded (``glasswork.rashomon.figures``);
    ``None`` until then, and for a member without a model (not available, never made up).
    """

    objective: float
    features: tuple[str, ...]
    fingerprint: str
    model: Model | None = None
    metrics: dict[str, float] | None = None
    fairness: dict[str, dict[str, float | None]] | None = None

    def to_dict(self) -> dict[str, Any]:
        out: dict[str, Any] = {
            "objective": jsonable(self.objective),
            "features": list(self.features),
            "fingerprint": self.fingerprint,
        }
        if self.model is not None:
            out["model"] = self.model.to_dict()
            out["model_text"] = self.model.to_text()
            out["size"] = int(self.model.size)
        if self.metrics is not None:
            out["metrics"] = {name: jsonable(value) for name, value in self.metrics.items()}
        if self.fairness is not None:
            out["fairness"] = {part: {m: jsonable(v) for m, v in said.items()} for part, said in self.fairness.items()}
        return out


def decides_as(members: Iterable[tuple[int, str | None]]) -> dict[int, int]:
    """Each member's rank -> the rank of the best member that decides every training row as it
    does (the same prediction fingerprint; itself when none ranks above it), from ``(rank,
    fingerprint)`` pairs. Lists written differently often decide alike (rules reordered, a rule
    no row reaches), so this is what tells the members' decisions apart; a member without a
    fingerprint (never the case for a kept one) is left out: its decisions are not known."""
    best: dict[str, int] = {}
    out: dict[int, int] = {}
    for rank, fingerprint in sorted(members, key=lambda pair: pair[0]):
        if fingerprint:
            out[rank] = best.setdefault(fingerprint, rank)
    return out


class Ranked(Protocol):
    """A listed member: anything with its rank in the set."""

    @property
    def rank(self) -> int: ...


RankedT = TypeVar("RankedT", bound=Ranked)


def one_per_decision(members: Iterable[RankedT], like: Mapping[int, int]) -> list[RankedT]:
    """The first of ``members`` (in their listed order) for each distinct decision ``like`` (from
    ``decides_as``) says; a member whose decisions are not known stands for itself. The listing's
    ``--distinct`` and the terminal UI's one-per-decision view."""
    seen: set[int] = set()
    out: list[RankedT] = []
    for member in members:
        decision = like.get(member.rank, member.rank)
        if decision not in seen:
            seen.add(decision)
            out.append(member)
    return out


class RashomonError(CertificateError):
    """A solver's Rashomon set contradicts itself (a solver bug, never user error)."""


@dataclass
class RashomonSet:
    """Every model within ``threshold`` of the optimum that the solver enumerated.

    ``count`` is exact: the number of members enumerated, whether or not each was kept;
    ``members`` holds the kept ones (at most ``rashomon.max_models``), best first. ``complete``
    promises that every model of the class with objective <= ``threshold`` was counted. A run
    that stopped early says ``complete=False`` and gives ``unenumerated_bound``: a lower bound on
    the objective of every member it did not enumerate (so the members below it are certain).
    ``exhaustive=False`` marks a sample (a heuristic's pool): it is never complete and its count
    is what was seen. ``optimum`` is the objective the threshold came from and
    ``optimum_proven`` whether it is certified; with an unproven optimum the threshold is above
    the true one, so the set holds the true set (and more).

    A search stopped before it certified its optimum gives one set, whatever the solver
    (``RashomonSet.unproven``): its incumbent alone (when within the threshold), the threshold
    taken from the incumbent's objective, ``optimum_proven=False``, ``complete=False`` and the
    search's lower bound as ``unenumerated_bound``. Its count is 1, not 0: the incumbent is a
    model within the threshold, and every model not counted is bounded below by the search.

    Checked here, so no solver can hand over a set that contradicts itself: members best first,
    ``count >= len(members)``, an exhaustive set's members within the threshold and none better
    than ``optimum``, the optimum's model counted when the set says it enumerated it (complete,
    or ``unenumerated_bound`` above the optimum) and the optimum is within the threshold, a
    complete set bounds nothing unenumerated and has a proven optimum (enumerating everything up
    to a threshold above the optimum proves it), an incomplete exhaustive set bounds what it did
    not enumerate, and a sample is never complete. (An enumeration stopped before its first model
    may count 0: its bound then stays at or below the optimum.)
    """

    threshold: float
    optimum: float
    count: int
    complete: bool
    members: list[RashomonMember] = field(default_factory=list)
    epsilon: float | None = None
    unenumerated_bound: float | None = None
    exhaustive: bool = True
    optimum_proven: bool = True
    fairness: dict[str, Any] | None = None  # the range over the members (glasswork.rashomon.figures)

    def __post_init__(self) -> None:
        slack = 1e-9 * max(1.0, abs(self.threshold))
        if not math.isfinite(self.threshold) or not math.isfinite(self.optimum):
            raise RashomonError("a Rashomon set needs a finite threshold and optimum")
        if self.count < len(self.members):
            raise RashomonError(f"count {self.count} is below the {len(self.members)} members kept")
        objectives = [m.objective for m in self.members]
        if any(b < a - slack for a, b in zip(objectives, objectives[1:])):
            raise RashomonError("members must be ordered best first")
        if self.exhaustive and any(o > self.threshold + slack for o in objectives):
            raise RashomonError(f"a member's objective exceeds the threshold {self.threshold!r}")
        if self.complete and not self.exhaustive:
            raise RashomonError("a sample cannot be complete")
        if self.complete and self.unenumerated_bound is not None:
            raise RashomonError("a complete set leaves nothing unenumerated to bound")
        if not self.complete and self.exhaustive and self.unenumerated_bound is None:
            raise RashomonError("an incomplete set must bound what it did not enumerate")
        optimum_slack = 1e-9 * max(1.0, abs(self.optimum))
        if self.exhaustive and any(o < self.optimum - optimum_slack for o in objectives):
            raise RashomonError(f"a member's objective is below the optimum {self.optimum!r}")
        if self.exhaustive and self.count == 0 and self.optimum <= self.threshold + slack:
            if self.complete:
                raise RashomonError(
                    f"the optimum {self.optimum!r} is within the threshold {self.threshold!r}, so its model counts"
                )
            if self.unenumerated_bound is not None and self.unenumerated_bound > self.optimum + optimum_slack:
                raise RashomonError(
                    f"nothing counted, yet every model not enumerated is above the optimum {self.optimum!r}"
                )
        if self.complete and not self.optimum_proven and self.optimum <= self.threshold + slack:
            raise RashomonError("a complete set up to a threshold above its optimum proves the optimum")

    @classmethod
    def unproven(
        cls, incumbent: RashomonMember, threshold: float, lower_bound: float, *, epsilon: float | None = None
    ) -> RashomonSet:
        """The set of a search stopped before it certified its optimum (the class docstring's
        rule): the incumbent alone when within ``threshold`` (which the caller takes from the
        incumbent's objective), never complete, ``lower_bound`` (the search's) bounding every
        model not enumerated."""
        kept = [incumbent] if incumbent.objective <= threshold + 1e-9 * max(1.0, abs(threshold)) else []
        return cls(
            threshold=threshold,
            optimum=incumbent.objective,
            count=len(kept),
            complete=False,
            members=kept,
            epsilon=epsilon,
            unenumerated_bound=float(min(lower_bound, incumbent.objective)),
            optimum_proven=False,
        )

    @property
    def kept(self) -> int:
        return len(self.members)

    def to_dict(self, max_models: int | None = None) -> dict[str, Any]:
        """The JSON form (``glasswork run --json``'s ``rashomon``): the count exact, the models
        capped at ``max_models`` (all kept ones when ``None``)."""
        shown = self.members if max_models is None else self.members[:max_models]
        return {
            "count": self.count,
            "complete": self.complete,
            "exhaustive": self.exhaustive,
            "threshold": jsonable(self.threshold),
            "epsilon": self.epsilon,
            "optimum": jsonable(self.optimum),
            "optimum_proven": self.optimum_proven,
            "unenumerated_bound": jsonable(self.unenumerated_bound),
            "kept": self.kept,
            **({} if self.fairness is None else {"fairness": self.fairness}),
            "models": [m.to_dict() for m in shown],
        }


# -- the figures of a set, read from any of its dict forms --------------------------------------------


def _finite(value: Any) -> float | None:
    """A finite number as a float, else ``None`` (a non-finite or non-numeric value says nothing)."""
    if isinstance(value, bool) or not isinstance(value, (int, float)):
        return None
    return float(value) if math.isfinite(value) else None


def _count(value: Any) -> int | None:
    """A count as an int, else ``None`` (a boolean or a string is no count)."""
    if isinstance(value, bool) or not isinstance(value, (int, float)) or not math.isfinite(value):
        return None
    return int(value)


def _point(value: Any) -> int | None:
    """A sweep point's number (from 1), else ``None``."""
    return value if isinstance(value, int) and not isinstance(value, bool) and value >= 1 else None


@dataclass(frozen=True)
class SetSummary:
    """A Rashomon set without its members: what ``glasswork run`` and ``glasswork rashomon`` print,
    the model card and the terminal UI show, and ``rashomon_sets`` holds (one row).

    ``multiplicity`` holds the figures of ``glasswork.rashomon.multiplicity`` (``None`` without
    them), ``fairness`` the range of each audited metric over the members
    (``glasswork.rashomon.figures``; ``None`` without a ``fairness:`` section); ``running`` marks
    a live run's set as its events announced it so far (never complete).
    ``to_dict`` is the summary's JSON form (``glasswork runs show --json``'s ``rashomon``)."""

    count: int
    complete: bool
    exhaustive: bool = True
    threshold: float | None = None
    epsilon: float | None = None
    optimum: float | None = None
    optimum_proven: bool = False
    unenumerated_bound: float | None = None
    kept: int = 0
    multiplicity: dict[str, Any] | None = None
    running: bool = False
    fairness: dict[str, Any] | None = None

    @classmethod
    def of_set(cls, rset: RashomonSet, multiplicity: dict[str, Any] | None = None) -> SetSummary:
        return cls.from_dict({**rset.to_dict(max_models=0), "kept": rset.kept, "multiplicity": multiplicity})

    @classmethod
    def from_dict(cls, doc: Mapping[str, Any]) -> SetSummary:
        """Any dict form of a set: ``RashomonSet.to_dict``, the store's summary, a finish record's
        ``rashomon`` (models, when listed, are left out)."""
        models = doc.get("models")
        kept = _count(doc.get("kept"))
        if kept is None:
            kept = len(models) if isinstance(models, list) else 0
        multiplicity = doc.get("multiplicity")
        fairness = doc.get("fairness")
        return cls(
            count=_count(doc.get("count")) or 0,
            complete=doc.get("complete") is True,
            exhaustive=doc.get("exhaustive", True) is not False,
            threshold=_finite(doc.get("threshold")),
            epsilon=_finite(doc.get("epsilon")),
            optimum=_finite(doc.get("optimum")),
            optimum_proven=doc.get("optimum_proven") is True,
            unenumerated_bound=_finite(doc.get("unenumerated_bound")),
            kept=kept,
            multiplicity=multiplicity if isinstance(multiplicity, dict) else None,
            running=doc.get("running") is True,
            fairness=fairness if isinstance(fairness, dict) else None,
        )

    def to_dict(self) -> dict[str, Any]:
        out: dict[str, Any] = {
            "count": self.count,
            "complete": self.complete,
            "exhaustive": self.exhaustive,
            "threshold": self.threshold,
            "epsilon": self.epsilon,
            "optimum": self.optimum,
            "optimum_proven": self.optimum_proven,
            "unenumerated_bound": self.unenumerated_bound,
            "kept": self.kept,
            "multiplicity": self.multiplicity,
        }
        if self.fairness is not None:
            out["fairness"] = self.fairness
        if self.running:
            out["running"] = True
        return out

    def live(self) -> SetSummary:
        """The same figures, marked as a live run's set so far."""
        return replace(self, running=True)


# Record form 1 (journals written before ``SetProgress``) named a set's figures among a ``rashomon``
# event's counters ``rashomon_<field>``; the run store's ``events.counters`` column still does.
FLAT_PREFIX = "rashomon_"


@dataclass(frozen=True)
class SetProgress:
    """Where a set's enumeration stands, as one ``rashomon`` event tells it (``ctx.rashomon``).

    ``count`` is the running count and ``threshold`` the set's. Without ``point`` it is the run's
    own set, with ``optimum``, ``optimum_proven`` and ``epsilon`` (what the set is measured from,
    ``ctx.rashomon_basis``) once the solver said them. With ``point`` (from 1) it is the whole set
    of one point of a sweep the search runs (a frontier's), sent when that point's enumeration
    ended, ``complete`` saying whether it counted everything."""

    count: int
    threshold: float | None = None
    point: int | None = None
    complete: bool | None = None
    optimum: float | None = None
    optimum_proven: bool | None = None
    epsilon: float | None = None

    def to_dict(self) -> dict[str, Any]:
        """The event record's ``rashomon`` (record form 2): the figures said, by name."""
        return {name: jsonable(value) for name, value in self.__dict__.items() if value is not None}

    @classmethod
    def from_dict(cls, doc: Mapping[str, Any]) -> SetProgress | None:
        """Read back ``to_dict``'s form; ``None`` when a point is named that is not one (a record
        no reader can place)."""
        point = _point(doc.get("point"))
        if doc.get("point") is not None and point is None:
            return None
        proven = doc.get("optimum_proven")
        return cls(
            count=_count(doc.get("count")) or 0,
            threshold=_finite(doc.get("threshold")),
            point=point,
            complete=None if point is None and doc.get("complete") is None else doc.get("complete") is True,
            optimum=_finite(doc.get("optimum")),
            optimum_proven=None if proven is None else proven is True,
            epsilon=_finite(doc.get("epsilon")),
        )

    @classmethod
    def of_record(cls, record: Mapping[str, Any]) -> SetProgress | None:
        """The progress a ``rashomon`` event record carries, in either record form; ``None`` for
        any other record (or one whose figures cannot be placed)."""
        if record.get("kind") != "rashomon":
            return None
        said = record.get("rashomon")
        if isinstance(said, Mapping):
            return cls.from_dict(said)
        counters = record.get("counters")
        return cls.from_counters(counters if isinstance(counters, Mapping) else {})

    @classmethod
    def from_counters(cls, counters: Mapping[str, Any]) -> SetProgress | None:
        """Record form 1 (and the store's ``events.counters``): the figures as ``rashomon_*`` keys."""
        return cls.from_dict({name: counters.get(FLAT_PREFIX + name) for name in cls.__dataclass_fields__})

    def counters(self) -> dict[str, Any]:
        """The figures under their flat names (record form 1), as the store's ``events`` table keeps them."""
        return {FLAT_PREFIX + name: value for name, value in self.to_dict().items()}

    @staticmethod
    def without_flat_names(counters: Mapping[str, Any]) -> dict[str, Any]:
        """A ``rashomon`` event's counters without the set's figures (the solver's own, if any)."""
        flat = {FLAT_PREFIX + name for name in SetProgress.__dataclass_fields__}
        return {k: v for k, v in counters.items() if k not in flat}


@dataclass(frozen=True)
class PointSet:
    """The set of one point of a sweep a run's search ran (a frontier), from its last
    ``SetProgress``: ``shared`` when its kept members are the run's own set's (the frontier's
    chosen point), ``unenumerated_bound`` the event's bound when it did not count everything."""

    point: int
    count: int
    complete: bool
    threshold: float | None = None
    unenumerated_bound: float | None = None
    shared: bool = False

    @classmethod
    def of_progress(cls, progress: SetProgress, lower_bound: Any = None, *, shared: bool = False) -> PointSet:
        if progress.point is None:
            raise ValueError("the run's own set is not a point's")
        complete = progress.complete is True
        return cls(
            point=progress.point,
            count=progress.count,
            complete=complete,
            threshold=progress.threshold,
            unenumerated_bound=None if complete else _finite(lower_bound),
            shared=shared,
        )

    @classmethod
    def from_dict(cls, doc: Mapping[str, Any]) -> PointSet:
        return cls(
            point=int(doc["point"]),
            count=_count(doc.get("count")) or 0,
            complete=doc.get("complete") is True,
            threshold=_finite(doc.get("threshold")),
            unenumerated_bound=_finite(doc.get("unenumerated_bound")),
            shared=doc.get("shared") is True,
        )

    def to_dict(self) -> dict[str, Any]:
        return dict(self.__dict__)

    def listing(self, kept: int) -> dict[str, Any]:
        """The point's figures with ``kept`` of its members, as ``glasswork rashomon RUN --point K
        --json`` gives them (a point's set is always enumerated exhaustively)."""
        return {**self.to_dict(), "exhaustive": True, "kept": kept}

    def summary(self, kept: int) -> SetSummary:
        """The point's set in the terms of a run's (``glasswork rashomon RUN --point K``)."""
        return SetSummary(
            count=self.count,
            complete=self.complete,
            threshold=self.threshold,
            unenumerated_bound=self.unenumerated_bound,
            kept=kept,
        )


def announced_set(records: Iterable[Mapping[str, Any]]) -> tuple[SetSummary, list[dict[str, Any]]] | None:
    """The run's own set its ``rashomon`` event records announced (a run still going, or killed
    before its finish record): the summary (the last running count and threshold, the bound of
    the last event that gave one, the optimum, its proof and epsilon as the solver last said them,
    never complete: nobody certified it) and the members sent, in order. ``None`` when no event
    spoke of the run's set (a sweep point's set is not the run's)."""
    announced = [
        (r, progress) for r in records if (progress := SetProgress.of_record(r)) is not None and progress.point is None
    ]
    if not announced:
        return None
    members = [m for r, _ in announced for m in r.get("members") or []]

    def last(name: str) -> Any:  # the latest word on a figure of the set
        return next((getattr(p, name) for _, p in reversed(announced) if getattr(p, name) is not None), None)

    summary = SetSummary(
        count=max(announced[-1][1].count, len(members)),
        complete=False,
        threshold=last("threshold"),
        epsilon=last("epsilon"),
        optimum=last("optimum"),
        optimum_proven=last("optimum_proven") is True,  # a stop before the proof: False
        unenumerated_bound=next(
            (_finite(r["lower_bound"]) for r, _ in reversed(announced) if r.get("lower_bound") is not None), None
        ),
        kept=len(members),
    )
    return summary, members
