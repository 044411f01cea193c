"""``glasswork rashomon``: a recorded run's Rashomon set, listed, filtered by the features its
members use, one member shown, and one picked for export (as ``glasswork export --member``)."""

from __future__ import annotations

import json
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING, Any

import click

from glasswork.cli.app import COUNT, DB_OPTION, EXIT_INVALID, EXIT_SOLVER, cli, export_target_options, fail
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
@click.option(
    "--where",
    "where",
    metavar="EXPR",
    help="Only members for which EXPR holds: comparisons of their figures (objective, size, test_auc, "
    "statistical_parity, ...), and, or, not, parentheses, uses(feature); e.g. "
    "'test_auc >= 0.7 and not uses(sex)'.",
)
@click.option("--sort", "sort", metavar="NAME", help="Order by this figure, smallest first (-NAME: largest first).")
@click.option("--desc", is_flag=True, help="With --sort: largest first.")
@click.option(
    "--distinct",
    is_flag=True,
    help="One member per distinct decision: of the members that predict every training row alike "
    "(the 'decides as' column), only the first listed.",
)
@click.option("--limit", type=COUNT, default=50, show_default=True, help="List at most this many.")
@click.option(
    "--summary",
    "full_summary",
    is_flag=True,
    help="With --uses, --avoids, --where, --sort or --distinct: print the whole set summary (multiplicity, "
    "reliance, fairness range) before the members, as the listing without them does.",
)
@click.option("--show", "show_rank", type=COUNT, metavar="RANK", help="Show member RANK's model.")
@click.option(
    "--pick",
    "pick_rank",
    type=COUNT,
    metavar="RANK",
    help="Export member RANK (with --format, -o) as 'glasswork export RUN --member RANK' does.",
)
@click.option("--format", "fmt", type=click.Choice(FORMATS), default="json", show_default=True, help="With --pick.")
@export_target_options("With --pick: write to this file.", "With --pick --format sql: the raw table.")
@click.option(
    "--point",
    type=COUNT,
    metavar="K",
    help="The set of point K of the sweep the run's search ran (a frontier), not the run's own: list, "
    "--show or --pick its members.",
)
@click.option(
    "--curves",
    "show_curves",
    is_flag=True,
    help="The set's figures as epsilon grows: at each objective where the set changes, its size, ambiguity, "
    "discrepancy and distinct prediction vectors on the training and test rows.",
)
@click.option("--json", "as_json", is_flag=True, help="Print the set (or the member) as JSON.")
@DB_OPTION
def rashomon(
    run_ref: str,
    uses: tuple[str, ...],
    avoids: tuple[str, ...],
    where: str | None,
    sort: str | None,
    desc: bool,
    distinct: bool,
    limit: int,
    full_summary: bool,
    show_rank: int | None,
    pick_rank: int | None,
    fmt: str,
    output: Path | None,
    table: str,
    point: int | None,
    show_curves: bool,
    as_json: bool,
    db: str | None,
) -> None:
    """List the Rashomon set of RUN (an id prefix or 'latest'): its summary, then its kept
    members best first (rank, objective, their figures, rules or features, and the best member
    that decides every training row alike); --where and --sort choose and order them by their
    figures, and then the listing is the answer: the set in one line, how many match, the members."""
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
            _point_set(store, run_id, chosen, Choice(uses, avoids, where, sort, desc, limit, distinct), as_json)
        return
    if points and store.rashomon_summary(run_id) is None and show_rank is None and pick_rank is None:
        _points_only(run_id, points, as_json)
        return
    summary = set_of(store, run_id, as_json=as_json)
    if show_curves:
        _print_curves(run_id, (summary.multiplicity or {}).get("curves"), as_json)
        return
    if pick_rank is not None:
        export_member(store, run_id, pick_rank, fmt, output, table)
        return
    if show_rank is not None:
        _show(store, run_id, show_rank, as_json)
        return
    details = store.details(run_id)
    if details.get("state") == "running":
        summary = summary.live()  # a live run's set so far, not a stopped enumeration
    choice = Choice(uses, avoids, where, sort, desc, limit, distinct)
    members, shown, matched, like = _chosen(store, run_id, details, choice, as_json)
    if as_json:
        click.echo(
            json.dumps(
                {
                    "run_id": run_id,
                    **summary.to_dict(),
                    "filters": choice.to_dict(),
                    "decisions": len(set(like.values())),
                    **({} if matched is None else {"matched": matched}),
                    "models": [_with_decision(m.to_dict(), like) for m in members],
                    **({"points": [p.to_dict() for p in points]} if points else {}),
                },
                indent=2,
                allow_nan=False,
            )
        )
        return
    from glasswork.display.console import make_console, plain_text, rashomon_summary_text, render_rashomon

    console = make_console()
    listed = _listed(members, like)
    if choice.narrows and not full_summary:  # the answer first: the set in one line, then what matched
        console.print(plain_text(f"{rashomon_summary_text(summary)}; {_decisions_text(like)}"))
    else:
        render_rashomon(summary, [], console)
        console.print(plain_text(_decisions_text(like), "dim"))
    _list_members(choice, members, listed, _columns(listed, shown, summary.fairness), console, matched, summary.kept)
    if points:
        _print_points(points, console)


@dataclass(frozen=True)
class Choice:
    """Which members a listing shows and in which order (``--uses``, ``--avoids``, ``--where``,
    ``--sort``/``--desc``, ``--limit``)."""

    uses: tuple[str, ...] = ()
    avoids: tuple[str, ...] = ()
    where: str | None = None
    sort: str | None = None
    desc: bool = False
    limit: int = 50
    distinct: bool = False

    @property
    def narrows(self) -> bool:
        """Whether the listing answers a question (a filter, an order, one per decision) rather
        than shows the set."""
        return bool(self.uses or self.avoids or self.where is not None or self.sort is not None or self.distinct)

    def to_dict(self) -> dict[str, Any]:
        return {
            "uses": list(self.uses),
            "avoids": list(self.avoids),
            "where": self.where,
            "sort": self.sort,
            "descending": self.desc or (self.sort or "").strip().startswith("-"),
            "distinct": self.distinct,
            "limit": self.limit,
        }


def _chosen(
    store: Any, run_id: str, details: dict[str, Any], choice: Choice, as_json: bool, point: int | None = None
) -> tuple[list[Any], list[str], int | None, dict[int, int]]:
    """The members ``choice`` lists, the figures it names (columns the listing shows), how
    many matched before ``--limit`` (``None`` when the store applied it) and which member each
    kept member decides as (``RunStore.rashomon_decisions``): the store filters by
    ``--uses``/``--avoids``; ``--where``, ``--sort`` and ``--distinct`` read every member's
    figures (recorded with the set, never recomputed), so the limit applies after them. An
    expression or a figure that cannot be read is exit 2, its column pointed at."""
    from glasswork.rashomon import one_per_decision
    from glasswork.rashomon.features import feature_lookup
    from glasswork.rashomon.query import QueryError, compile_query, figure_names, sort_key, sorted_members

    resolved = {
        name: _features_named(store, run_id, details, name, as_json, point) for name in (*choice.uses, *choice.avoids)
    }
    uses, avoids = [resolved[n] for n in choice.uses], [resolved[n] for n in choice.avoids]
    like = store.rashomon_decisions(run_id, point=point)
    if choice.where is None and choice.sort is None and not choice.distinct:
        return store.rashomon_members(run_id, uses, avoids, choice.limit, point=point), [], None, like
    members = store.rashomon_members(run_id, uses, avoids, point=point)
    known = figure_names(store.rashomon_members(run_id, point=point))
    option = "--where"
    try:
        shown: list[str] = []
        if choice.where is not None:
            query = compile_query(choice.where, known, lambda name: feature_lookup(store, run_id, details, name, point))
            members = [m for m in members if query.matches(m)]
            shown = query.figures()
        if choice.sort is not None:
            option = "--sort"
            name, descending = sort_key(choice.sort, known, choice.desc)
            members = sorted_members(members, name, descending)
            shown.append(name)
    except QueryError as exc:
        where = {"option": option, "column": exc.position + 1}
        fail(_query_error(option, exc), EXIT_INVALID, as_json=as_json, extra=where)
    if choice.distinct:
        members = one_per_decision(members, like)
    return members[: choice.limit], shown, len(members), like


def _with_decision(doc: dict[str, Any], like: dict[int, int]) -> dict[str, Any]:
    """A member's JSON form with ``decides_as``: the rank of the best member that predicts every
    training row as it does (its own rank when none ranks above it; ``null`` when not known)."""
    return {**doc, "decides_as": like.get(int(doc["rank"]))}


def _decisions_text(like: dict[int, int]) -> str:
    """How many distinct decisions the kept members make, in words."""
    distinct = len(set(like.values()))
    return (
        f"the {len(like):,} kept member(s) decide the training rows in {distinct:,} distinct way(s) "
        "('decides as': the best member predicting every training row alike; --distinct lists one per way)"
    )


def _query_error(option: str, error: Any) -> str:
    """A ``QueryError`` as the terminal shows it: the message, the expression (control characters
    escaped, so the caret lines up with what is printed) and a caret under the column."""
    return f"{option}: {error}\n" + "\n".join(f"  {line}" for line in error.pointed().splitlines())


def _columns(listed: list[dict[str, Any]], chosen: list[str], fairness: dict[str, Any] | None) -> list[str]:
    from glasswork.rashomon.query import figure_names_of, shown_figures

    return shown_figures(figure_names_of(listed), chosen, fairness)


def _list_members(
    choice: Choice,
    members: list[Any],
    listed: list[dict[str, Any]],
    figures: list[str],
    console: Any,
    matched: int | None = None,
    kept: int | None = None,
) -> None:
    """The members a listing shows: first what it was narrowed to (how many matched, in which
    order, when the limit cut them: ``matched``, else ``kept`` when nothing filtered), then the
    table, then which members have no figures to be chosen by."""
    from glasswork.display.console import plain_text, rashomon_table

    filters = [*(f"uses {n!r}" for n in choice.uses), *(f"avoids {n!r}" for n in choice.avoids)]
    if choice.where is not None:
        filters.append(f"match {choice.where!r}")
    count = len(members) if matched is None else matched
    if matched is None and kept is not None and not (choice.uses or choice.avoids):
        count = max(kept, len(members))
    said = f"{count:,} kept member(s)" + (f" that {' and '.join(filters)}" if filters else "")
    if choice.distinct:
        said += ", one per distinct decision"
    if choice.sort is not None:
        order = "largest" if choice.to_dict()["descending"] else "smallest"
        said += f"; sorted by {choice.sort.strip().lstrip('-')}, {order} first"
    if count > len(members):
        said += f"; the first {len(members):,} listed (--limit)"
    if choice.narrows or count > len(members):
        console.print(plain_text(said, "bold" if choice.narrows else "dim"))
    if members:
        console.print(rashomon_table(listed, figures=figures))
    else:
        console.print(plain_text("no kept member matches", "dim"))
    bare = sum(1 for m in members if m.metrics is None)
    if bare:
        console.print(
            plain_text(
                f"{bare:,} listed member(s) have no figures (n/a): kept as a summary (rashomon.keep: summary), "
                "of a frontier point's set, or recorded before members had figures; a condition on a figure "
                "never holds for them",
                "dim",
            )
        )


def _listed(members: list[Any], like: dict[int, int]) -> list[dict[str, Any]]:
    """Members as a listing prints them: without their models, with their rules in order and the
    member each decides as."""
    from glasswork.display.console import member_rules

    return [{**_with_decision(m.to_dict(with_model=False), like), "rules": member_rules(m.model)} for m in members]


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


def _point_set(store: Any, run_id: str, point: PointSet, choice: Choice, as_json: bool) -> None:
    """List point ``point``'s set: its summary (count, complete or the bound, threshold, how
    many members are kept) and its kept members best first, filtered as the run's set is."""
    k = point.point
    details = store.details(run_id)
    kept = len(store.rashomon_members(run_id, point=k))
    members, shown, matched, like = _chosen(store, run_id, details, choice, as_json, k)
    if as_json:
        document = {
            "run_id": run_id,
            **point.listing(kept),
            "filters": choice.to_dict(),
            "decisions": len(set(like.values())),
            "models": [_with_decision(m.to_dict(), like) for m in members],
        }
        click.echo(json.dumps(document, indent=2, allow_nan=False))
        return
    from glasswork.display.console import make_console, plain_text, rashomon_summary_text

    console = make_console()
    console.print(plain_text(f"point {k}'s set: {rashomon_summary_text(point.summary(kept))}", "bold"))
    if kept:
        console.print(plain_text(_decisions_text(like), "dim"))
        listed = _listed(members, like)
        _list_members(choice, members, listed, _columns(listed, shown, None), console, matched, kept)
    else:
        console.print(plain_text("no member of this point's set is kept", "dim"))


def _show(store: Any, run_id: str, rank: int, as_json: bool, *, point: int | None = None) -> None:
    member = member_at(store, run_id, rank, want_model=True, as_json=as_json, point=point)
    like = store.rashomon_decisions(run_id, point=point)
    if as_json:
        click.echo(
            json.dumps(
                {
                    "run_id": run_id,
                    **({} if point is None else {"point": point}),
                    **_with_decision(member.to_dict(), like),
                },
                indent=2,
                allow_nan=False,
            )
        )
        return
    from glasswork.display.console import decision_text, fmt_number, make_console, plain_text
    from glasswork.display.views import model_view

    console = make_console()
    features = ", ".join(member.features) or "(none)"
    console.print(
        plain_text(
            f"member {rank}: objective {fmt_number(member.objective, 10)}; features {features}; "
            f"decides as {decision_text(_with_decision(member.to_dict(), like))} (fingerprint {member.fingerprint})",
            "bold",
        )
    )
    console.print(plain_text(member_figures_text(member)))
    console.print(model_view(member.model, member.model_text, stats={}))


def member_figures_text(member: Any) -> str:
    """A member's figures in one line (metrics, then the fairness audit per part), or why it has none."""
    if member.metrics is None:
        return "figures: not available (recorded before members had figures)"
    named = [*member.metrics.items()]
    for part, figures in (member.fairness or {}).items():
        named += [(f"{part}_{m}", v) for m, v in figures.items()]
    said = [f"{name} {'undefined' if value is None else f'{value:.4f}'}" for name, value in named]
    return "figures: " + ", ".join(said)


def _features_named(
    store: Any, run_id: str, details: dict[str, Any], name: str, as_json: bool, point: int | None = None
) -> tuple[str, ...]:
    """The features a ``--uses``/``--avoids`` name stands for
    (``glasswork.rashomon.features.feature_lookup``); anything else is exit 2 with the closest names."""
    from glasswork.rashomon.features import feature_lookup

    found = feature_lookup(store, run_id, details, name, point)
    if isinstance(found, str):
        fail(found, EXIT_INVALID, as_json=as_json)
    return found


def _print_curves(run_id: str, doc: Any, as_json: bool) -> None:
    """``--curves``: the curves recorded with the set (``glasswork.rashomon.curves``), as a table
    or JSON; a run recorded without them is told so (exit 2), never shown an empty curve."""
    if isinstance(doc, dict) and "error" in doc:
        fail(
            f"run {run_id} has no curves: a member's model failed to predict ({doc['error']})",
            EXIT_SOLVER,
            as_json=as_json,
        )
    if not isinstance(doc, dict) or not isinstance(doc.get("points"), dict):
        fail(
            f"run {run_id} has no curves: its set was recorded before glasswork kept them, or without a model "
            "to compare its members with; run its spec again",
            EXIT_INVALID,
            as_json=as_json,
        )
    if as_json:
        click.echo(json.dumps({"run_id": run_id, "curves": doc}, indent=2, allow_nan=False))
        return
    from glasswork.display.console import make_console, plain_text
    from glasswork.rashomon.curves import coverage

    console = make_console()
    console.print(plain_text(f"the set as epsilon grows, {coverage(doc)}"))
    console.print(_curves_table(doc))
    for note in doc.get("notes") or []:
        console.print(plain_text(note))


def _curves_table(doc: dict[str, Any]) -> Any:
    """The curves as a rich table: a row per threshold where the set changes."""
    from rich.table import Table

    from glasswork.display.console import plain_text
    from glasswork.rashomon.curves import SIZE_NOTE, cells, header, rows

    table = Table()
    for name in header(doc):
        table.add_column(name, justify="right")
    points = rows(doc)
    for point in points:
        table.add_row(*(plain_text(c) for c in cells(doc, point)))
    if points and not all(p.get("exact") for p in points):
        table.caption = plain_text(SIZE_NOTE)
        table.caption_justify = "left"
    return table
