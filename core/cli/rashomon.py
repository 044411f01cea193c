"""``glasswork rashomon``: a recorded run's Rashomon set, listed, filtered by the features its
members use, one member shown, and one picked for export (as ``glasswork export --member``)."""

from __future__ import annotations

import difflib
import json
from pathlib import Path
from typing import TYPE_CHECKING, Any

import click
from glasswork.cli.app import COUNT, DB_OPTION, EXIT_INVALID, cli, fail, file_option
from glasswork.cli.models import export_member, member_at, set_of
from glasswork.cli.runs import resolve_runs, store_at
from glasswork.export.formats import FORMATS

if TYPE_CHECKING:
    from glasswork.rashomon import PointSet


@cli.command("rashomon")
@click.argument("run_ref", metavar="RUN")
@click.option(
    "--uses",
    multiple=True,
    metavar="NAME",
    help="Only members using this feature, or any feature made from this raw column (repeatable).",
)
@click.option(
    "--avoids",
    multiple=True,
    metavar="NAME",
    help="Only members using neither this feature nor any feature made from this raw column (repeatable).",
)
@click.option("--limit", type=COUNT, default=50, show_default=True, help="List at most this many.")
@click.option("--show", "show_rank", type=COUNT, metavar="RANK", help="Show member RANK's model.")
@click.option(
    "--pick",
    "pick_rank",
    type=COUNT,
    metavar="RANK",
    help="Export member RANK (with --format, -o) as 'glasswork export RUN --member RANK' does.",
)
@click.option("--format", "fmt", type=click.Choice(FORMATS), default="json", show_default=True, help="With --pick.")
@file_option("-o", "--output", help="With --pick: write to this file.")
@click.option("--table", default="data", show_default=True, help="With --pick --format sql: the raw table.")
@click.option(
    "--point",
    type=COUNT,
    metavar="K",
    help="The set of point K of the sweep the run's search ran (a frontier), not the run's own: list, "
    "--show or --pick its members.",
)
@click.option("--json", "as_json", is_flag=True, help="Print the set (or the member) as JSON.")
@DB_OPTION
def rashomon(
    run_ref: str,
    uses: tuple[str, ...],
    avoids: tuple[str, ...],
    limit: int,
    show_rank: int | None,
    pick_rank: int | None,
    fmt: str,
    output: Path | None,
    table: str,
    point: int | None,
    as_json: bool,
    db: str | None,
) -> None:
    """List the Rashomon set of RUN (an id prefix or 'latest'): its summary, then its kept
    members best first (rank, objective, features, fingerprint)."""
    if show_rank is not None and pick_rank is not None:
        fail("give --show or --pick, not both", EXIT_INVALID, as_json=as_json)
    store = store_at(db)
    [run_id] = resolve_runs(store, (run_ref,))
    points = store.rashomon_points(run_id)
    if point is not None:
        chosen = _point_of(run_id, points, point, as_json)
        if pick_rank is not None:
            export_member(store, run_id, pick_rank, fmt, output, table, point=point)
        elif show_rank is not None:
            _show(store, run_id, show_rank, as_json, point=point)
        else:
            _point_set(store, run_id, chosen, uses, avoids, limit, as_json)
        return
    if points and store.rashomon_summary(run_id) is None and show_rank is None and pick_rank is None:
        _points_only(run_id, points, as_json)
        return
    summary = set_of(store, run_id, as_json=as_json)
    if pick_rank is not None:
        export_member(store, run_id, pick_rank, fmt, output, table)
        return
    if show_rank is not None:
        _show(store, run_id, show_rank, as_json)
        return
    details = store.details(run_id)
    if details.get("state") == "running":
        summary = summary.live()  # a live run's set so far, not a stopped enumeration
    resolved = {name: _features_named(store, run_id, details, name, as_json) for name in (*uses, *avoids)}
    members = store.rashomon_members(run_id, [resolved[n] for n in uses], [resolved[n] for n in avoids], limit)
    if as_json:
        click.echo(
            json.dumps(
                {
                    "run_id": run_id,
                    **summary.to_dict(),
                    "filters": {"uses": list(uses), "avoids": list(avoids), "limit": limit},
                    "models": [m.to_dict() for m in members],
                    **({"points": [p.to_dict() for p in points]} if points else {}),
                },
                indent=2,
                allow_nan=False,
            )
        )
        return
    from glasswork.display.console import make_console, plain_text, render_rashomon

    console = make_console()
    render_rashomon(summary, _listed(members), console)
    if uses or avoids:
        filters = [*(f"uses {n!r}" for n in uses), *(f"avoids {n!r}" for n in avoids)]
        console.print(plain_text(f"{len(members):,} kept member(s) that {' and '.join(filters)}", "dim"))
    if not members:
        console.print(plain_text("no kept member matches", "dim"))
    if points:
        _print_points(points, console)


def _listed(members: list[Any]) -> list[dict[str, Any]]:
    """Members as a listing prints them: without their models, with their rules in order."""
    from glasswork.display.console import member_rules

    return [{**m.to_dict(with_model=False), "rules": member_rules(m.model)} for m in members]


POINTS_ONLY = (
    "the run ended before it chose the point whose set is its own (its frontier was not solved); "
    "these are the sets of the points it enumerated"
)


def _points_only(run_id: str, points: list[PointSet], as_json: bool) -> None:
    """A run stopped or killed mid-sweep: no set of its own yet, the sets of the points it did."""
    if as_json:
        document = {"run_id": run_id, "count": None, "complete": False, "kept": 0, "note": POINTS_ONLY}
        listed = [p.to_dict() for p in points]
        click.echo(json.dumps({**document, "models": [], "points": listed}, indent=2, allow_nan=False))
        return
    from glasswork.display.console import make_console, plain_text

    console = make_console()
    console.print(plain_text(f"run {run_id[:12]}: {POINTS_ONLY}", "bold"))
    _print_points(points, console)


def _print_points(points: list[PointSet], console: Any) -> None:
    """One line per sweep point's set: its count, ``+`` when incomplete, and its threshold."""
    from glasswork.display.console import plain_text, rashomon_point_text

    for p in points:
        console.print(plain_text(rashomon_point_text(p)))


def _point_of(run_id: str, points: list[PointSet], point: int, as_json: bool) -> PointSet:
    """Sweep point ``point``'s set as ``rashomon_points`` gives it; exit 2 when the run has none."""
    found = next((p for p in points if p.point == point), None)
    if found is None:
        have = ", ".join(str(p.point) for p in points)
        fail(
            f"run {run_id[:12]} has no set for point {point}"
            + (
                f"; the points with a set are {have}"
                if points
                else " (its search ran no sweep of points, such as a frontier: drop --point)"
            ),
            EXIT_INVALID,
            as_json=as_json,
        )
    return found


def _point_set(
    store: Any,
    run_id: str,
    point: PointSet,
    uses: tuple[str, ...],
    avoids: tuple[str, ...],
    limit: int,
    as_json: bool,
) -> None:
    """List point ``point``'s set: its summary (count, complete or the bound, threshold, how
    many members are kept) and its kept members best first, filtered as the run's set is."""
    k = point.point
    details = store.details(run_id)
    resolved = {name: _features_named(store, run_id, details, name, as_json, k) for name in (*uses, *avoids)}
    kept = len(store.rashomon_members(run_id, point=k))
    members = store.rashomon_members(run_id, [resolved[n] for n in uses], [resolved[n] for n in avoids], limit, point=k)
    if as_json:
        document = {
            "run_id": run_id,
            **point.listing(kept),
            "filters": {"uses": list(uses), "avoids": list(avoids), "limit": limit},
            "models": [m.to_dict() for m in members],
        }
        click.echo(json.dumps(document, indent=2, allow_nan=False))
        return
    from glasswork.display.console import make_console, plain_text, rashomon_summary_text, rashomon_table

    console = make_console()
    console.print(plain_text(f"point {k}'s set: {rashomon_summary_text(point.summary(kept))}", "bold"))
    if members:
        console.print(rashomon_table(_listed(members)))
    else:
        console.print(plain_text("no kept member matches" if kept else "no member of this point's set is kept", "dim"))


def _show(store: Any, run_id: str, rank: int, as_json: bool, *, point: int | None = None) -> None:
    member = member_at(store, run_id, rank, want_model=True, as_json=as_json, point=point)
    if as_json:
        click.echo(
            json.dumps(
                {"run_id": run_id, **({} if point is None else {"point": point}), **member.to_dict()},
                indent=2,
                allow_nan=False,
            )
        )
        return
    from glasswork.display.console import fmt_number, make_console, plain_text
    from glasswork.display.views import model_view

    console = make_console()
    features = ", ".join(member.features) or "(none)"
    console.print(
        plain_text(
            f"member {rank}: objective {fmt_number(member.objective, 10)}; features {features}; "
            f"fingerprint {member.fingerprint}",
            "bold",
        )
    )
    console.print(model_view(member.model, member.model_text, stats={}))


def _features_named(
    store: Any, run_id: str, details: dict[str, Any], name: str, as_json: bool, point: int | None = None
) -> tuple[str, ...]:
    """The features a ``--uses``/``--avoids`` name stands for: itself when it is a feature of the
    run's data; every feature made from it when it is a raw column (``sex`` for ``sex:Male`` and
    ``sex:Male,juvenile-crimes:>0``, from the run's recorded inputs), so "avoids sex" means no
    rule looks at that column; the features a rule reads when it is the text of a rule a member
    prints (``credit_score>645``, a negation of ``credit_score<=645``). Anything else is exit 2
    with the closest names."""
    inputs = details.get("inputs") or {}
    entries = [f for f in inputs.get("features") or [] if isinstance(f, dict) and isinstance(f.get("name"), str)]
    known = [f["name"] for f in entries] or store.rashomon_features(run_id)
    if name in known:
        return (name,)
    from_column = tuple(
        f["name"]
        for f in entries
        if f.get("column") == name
        or any(isinstance(c, dict) and c.get("column") == name for c in f.get("all") or f.get("any") or [])
    )
    if from_column:
        return from_column
    from glasswork.display.console import rule_features

    feature_names = [f["name"] for f in entries]
    for member in store.rashomon_members(run_id, point=point):  # a rule as a member prints it
        read = rule_features(member.model, feature_names).get(name)
        if read:
            return read
    columns = sorted(
        {f["column"] for f in entries if isinstance(f.get("column"), str)}
        | {
            c["column"]
            for f in entries
            for c in f.get("all") or f.get("any") or []
            if isinstance(c, dict) and isinstance(c.get("column"), str)
        }
    )
    names = [k for k in [*known, *columns] if isinstance(k, str)]
    # a word a long name starts with ("age" for "age in years") is far from it as a ratio: name those first
    starting = [k for k in columns if k.casefold().startswith(name.casefold())] if name.strip() else []
    close = [*starting, *(c for c in difflib.get_close_matches(name, names, n=3, cutoff=0.6) if c not in starting)][:3]
    hint = f"; did you mean {' or '.join(repr(c) for c in close)}?" if close else ""
    fail(
        f"run {run_id[:12]} has no feature or column {name!r} (feature names are exact, as "
        f"'glasswork rashomon RUN' lists them){hint}",
        EXIT_INVALID,
        as_json=as_json,
    )
