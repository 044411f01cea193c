"""The Rashomon set of a run: its near-optimal models, browsed live in the monitor as the set grows
(``RashomonPanel``) and from the run store once the run is recorded (``RashomonScreen``).

Both show the count, the threshold and what the count promises (complete, or a bound on every
model not enumerated yet), and a table of the best members; selecting one opens its model on the
model screen, drawn by its plugin's ``render_model`` hook (its own text when no plugin draws it),
the path every model in the TUI takes. Feature names are data: they reach the terminal only
through ``glasswork.display.console.plain_text``.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

from glasswork.display.console import (
    decision_text,
    member_rules,
    plain_text,
    rashomon_point_text,
    rashomon_summary_text,
)
from glasswork.rashomon import PointSet, SetSummary, one_per_decision
from glasswork.tui.state import RashomonView
from glasswork.tui.views import fmt
from glasswork.tui.widgets import BACK_KEY, FILTER_KEY, HELP_KEY, RowTable
from rich.text import Text
from textual import on, work
from textual.app import ComposeResult
from textual.binding import Binding
from textual.containers import Horizontal, Vertical, VerticalScroll
from textual.screen import Screen
from textual.suggester import SuggestFromList
from textual.widgets import DataTable, Footer, Input, Static

from glasswork.rashomon.figures import range_lines
from glasswork.rashomon.multiplicity import variable_use
from glasswork.rashomon.query import figure_names, member_figures, shown_figures, sorted_members

SHOWN_LIVE = 100  # members listed in the monitor's panel (the best ones; the count covers the rest)
STORED_LIMIT = 1000  # members listed by the stored set's screen at once (filters narrow it)
POINTS_ONLY = (
    "no set of its own: the run ended before it chose the point whose set is its own (its frontier "
    "was not solved); these are the sets of the points it enumerated"
)
SUMMARY_ONLY = "(kept as a summary: the spec's rashomon.keep is 'summary', so this member has no model)"


def set_summary(view: RashomonView, *, finished: bool) -> Text:
    """The set in two lines: how many models, within which threshold, and how sure the count is."""
    summary = view.summary
    text = Text()
    text.append("Rashomon set  ", style="bold")
    text.append(f"{summary.count:,}", style="bold cyan")
    text.append(" model" + ("" if summary.count == 1 else "s"))
    text.append("  within objective " + fmt(summary.threshold, 8))
    if summary.epsilon is not None:
        text.append(f" (epsilon {fmt(summary.epsilon, 4)})")
    text.append("\n")
    bound = summary.unenumerated_bound
    if not summary.exhaustive:
        text.append("a sample of near-optimal models, not the whole set", style="yellow")
    elif summary.complete:
        text.append("complete: every model within the threshold is counted", style="green")
    elif summary.running and not finished:
        text.append("enumerating", style="yellow")
        if bound is not None:
            text.append(f"; every model not enumerated yet has objective >= {fmt(bound, 8)}")
    else:
        text.append("incomplete", style="bold yellow")
        if bound is not None:
            text.append(f": every model not enumerated has objective >= {fmt(bound, 8)}")
        else:
            text.append(": the run ended before the set was enumerated")
    return text


def points_text(points: dict[int, PointSet]) -> Text:
    """The sets of a sweep's points done so far, one line: each point's count, ``+`` when incomplete."""
    shown = ", ".join(f"{k}: {p.count:,}{'' if p.complete else '+'}" for k, p in sorted(points.items()))
    return plain_text(f"sets per frontier point  {shown}")


def features_text(features: Any) -> Text:
    """A member's features, each as data (markup and control characters shown inert)."""
    names = [str(f) for f in features or ()]
    return plain_text("; ".join(names)) if names else Text("(constant model)", style="dim")


def member_text(features: Any, model: Any) -> Text:
    """A member as ``glasswork rashomon`` lists it: its rules in the order it applies them,
    negations as printed (``console.member_rules``), so two lists over the same features read
    apart; the features it uses for a model without rules (a score card, a summary)."""
    rules = member_rules(model)
    return plain_text("; ".join(rules)) if rules else features_text(features)


def figure_cell(value: float | None, scored: bool) -> Text:
    """One figure of a member: ``n/a`` for a member without figures (kept as a summary, or
    recorded before members had them), ``undefined`` for an empty cell of a group."""
    if value is None:
        return Text("n/a" if not scored else "undefined", style="dim")
    return Text(f"{value:.4f}" if abs(value) < 10 else fmt(value, 6), justify="right")


def variable_use_text(members: list[Any], names: list[str], width: int = 12) -> Text:
    """The share of ``members`` using each feature (``glasswork.rashomon.multiplicity.variable_use``,
    as the set's own figures count it), largest first, each with a bar; names are data."""
    text = Text(f"variable use ({len(members):,} listed)\n", style="bold")
    shares = variable_use([row.features for row in members], names)
    if not shares:
        text.append("no feature used" if members else "no member listed", style="dim")
        return text
    for name, share in sorted(shares.items(), key=lambda item: -item[1]):
        filled = round(share * width)
        text.append("█" * filled, style="cyan")
        text.append("░" * (width - filled), style="dim")
        text.append(f" {share:>4.0%} ")
        text.append_text(plain_text(name))
        text.append("\n")
    text.rstrip()
    return text


def member_title(run_name: str, rank: int, objective: Any, point: int | None = None) -> str:
    of = "the Rashomon set" if point is None else f"point {point}'s Rashomon set"
    return f"{run_name}: member {rank} of {of} (objective {fmt(objective, 8)})"


def show_member(screen: Screen[Any], title: str, member: dict[str, Any], solver: str | None) -> None:
    """The member's model on the model screen, through its plugin's view (else its text)."""
    from glasswork.tui.model_screen import ModelScreen

    model = member.get("model")
    text = member.get("model_text") if model is not None else SUMMARY_ONLY
    screen.app.push_screen(ModelScreen(title, model, text, None, solver))


class RashomonPanel(Vertical):
    """The monitor's view of a set while it grows: the summary and the best members, best first;
    enter on a member opens its model. Hidden until the run reports a set."""

    DEFAULT_CSS = """
    RashomonPanel { width: 1fr; border-left: solid $primary-darken-2; padding: 0 1; }
    RashomonPanel #rashomon-summary { height: auto; max-height: 5; }
    RashomonPanel DataTable { height: 1fr; }
    """

    def __init__(self, **kwargs: Any) -> None:
        super().__init__(**kwargs)
        self.display = False
        self.shown: list[dict[str, Any]] = []
        self.run_name = ""
        self.solver: str | None = None
        self._gw_version = -1
        self._gw_finished = False

    def compose(self) -> ComposeResult:
        yield Static(id="rashomon-summary")
        yield RowTable(id="rashomon-members")

    def on_mount(self) -> None:
        table = self.query_one(DataTable)
        for column in ("rank", "objective", "rules or features"):
            table.add_column(column, key=column)

    def show(
        self,
        view: RashomonView | None,
        *,
        finished: bool,
        run_name: str,
        solver: str | None,
        points: dict[int, PointSet] | None = None,
    ) -> None:
        """Redraw when the set changed (new members, a new count, a sweep point's set, the run's end)."""
        points = points or {}
        version = (-1 if view is None else view.version) + len(points)
        if (view is None and not points) or (version == self._gw_version and finished == self._gw_finished):
            return
        self._gw_version, self._gw_finished = version, finished
        self.run_name, self.solver = run_name, solver
        self.display = True
        summary = Text() if view is None else set_summary(view, finished=finished)
        if points:
            summary = Text("\n").join([line for line in (summary, points_text(points)) if line.plain])
        self.query_one("#rashomon-summary", Static).update(summary)
        if view is None:
            return
        table = self.query_one(DataTable)
        cursor = table.cursor_row
        self.shown = view.members[:SHOWN_LIVE]
        table.clear()
        for rank, member in enumerate(self.shown, start=1):
            text = member_text(member.get("features"), member.get("model"))
            table.add_row(str(rank), fmt(member.get("objective"), 8), text)
        if self.shown:
            table.move_cursor(row=min(max(cursor, 0), len(self.shown) - 1))

    @on(DataTable.RowSelected)
    def _selected(self, event: DataTable.RowSelected) -> None:
        event.stop()
        row = event.cursor_row
        if 0 <= row < len(self.shown):
            member = self.shown[row]
            show_member(self.screen, member_title(self.run_name, row + 1, member.get("objective")), member, self.solver)


class RashomonScreen(Screen[None]):
    """A recorded run's set, read from the run store: its members with their figures (test
    accuracy and AUC, the audited fairness figures, size, how many features), filtered by an
    expression of ``glasswork rashomon --where``'s language (``glasswork.rashomon.query``) and by a
    feature the members use or avoid, sorted by any column (``s``/``r`` or a click on its header),
    with the share of the listed members using each feature beside them (``v`` hides it); each
    member's "decides as" (the best kept member predicting every training row alike,
    ``glasswork.rashomon.decides_as`` over every kept member) and ``d`` for one member per
    decision, the first in the order shown (``glasswork rashomon --distinct``); a
    member opened (enter) or exported (``e``) like any run's model. A frontier run lists its points' sets too; choosing
    one (``p``, then enter) lists that point's members in the same table, as ``glasswork rashomon
    RUN --point K`` does, and enter on the run's set goes back."""

    BINDINGS = [
        Binding("m", "show", "show model"),
        Binding("p", "points", "frontier points' sets"),
        Binding("e", "export", "export member"),
        Binding("c", "curves", "curves"),
        FILTER_KEY,
        Binding("s", "sort", "sort by next column"),
        Binding("r", "reverse", "reverse order"),
        Binding("v", "variable_use", "variable use"),
        Binding("d", "distinct", "one per decision"),
        BACK_KEY,
        HELP_KEY,
    ]
    DEFAULT_CSS = """
    RashomonScreen #set-summary { height: auto; padding: 0 1; background: $boost; }
    RashomonScreen #set-points { height: auto; max-height: 12; }
    RashomonScreen #set-filters { height: 3; }
    RashomonScreen #set-filters Input { width: 1fr; }
    RashomonScreen #set-filters #f-where { width: 2fr; }
    RashomonScreen #where-error { height: auto; max-height: 4; padding: 0 1; color: $error; }
    RashomonScreen #set-body { height: 1fr; }
    RashomonScreen DataTable { height: 1fr; width: 1fr; }
    RashomonScreen #variable-use-box { width: 40; height: 1fr; border-left: solid $primary-darken-2; }
    RashomonScreen #variable-use { height: auto; padding: 0 1; }
    RashomonScreen #set-status { height: auto; max-height: 4; padding: 0 1; color: $text-muted; }
    """

    def __init__(self, store: Any, details: dict[str, Any], folder: Path | None = None) -> None:
        super().__init__()
        self.store = store
        self.details = details
        self.folder = folder
        own = details.get("rashomon")
        self.view = RashomonView.from_summary(SetSummary.from_dict(own or {}))
        # a frontier's sets, one per point (RunStore.rashomon_points), as glasswork rashomon lists them
        self.points = [PointSet.from_dict(p) for p in details.get("rashomon_points") or []]
        # the set listed: the run's own (None), or a point's; a run with none of its own opens its first point
        self.point: int | None = None if own or not self.points else self.points[0].point
        self.members: list[Any] = []  # RashomonMemberRow, as listed (sorted, at most STORED_LIMIT)
        self.matched: list[Any] = []  # every kept member the filters let through, best first
        self.features: list[str] = []
        self.known: list[str] = []  # the figures some kept member of the set has (what the filter takes)
        self.kept: dict[int | None, list[Any]] = {}  # every kept member per set, once read
        self.set_features: dict[int | None, list[str]] = {}  # the features its members use
        # per set, each kept member's rank -> the rank it decides as (RunStore.rashomon_decisions)
        self.decisions: dict[int | None, dict[int, int]] = {}
        self.distinct = False  # one member per decision (d), as glasswork rashomon --distinct
        self.ordered = 0  # the members the filters, the order and one-per-decision give, before STORED_LIMIT
        self.where = ""  # the expression applied (a bad one leaves it as it was)
        self.where_figures: list[str] = []
        self.uses_avoids = ("", "")
        self.sort: tuple[str, bool] = ("rank", False)  # the column sorted on, and whether largest first
        self.columns: list[str] = []
        self.written: list[Path] = []

    @property
    def run_id(self) -> str:
        return str(self.details["run_id"])

    def compose(self) -> ComposeResult:
        yield Static(self._summary(), id="set-summary")
        if self.points:
            yield RowTable(id="set-points")
        with Horizontal(id="set-filters"):
            yield Input(placeholder="where: test_auc >= 0.7 and not uses(sex)", id="f-where")
            yield Input(placeholder="uses feature (exact name)", id="f-uses")
            yield Input(placeholder="avoids feature (exact name)", id="f-avoids")
        yield Static(id="where-error")
        with Horizontal(id="set-body"):
            yield RowTable(id="members")
            with VerticalScroll(id="variable-use-box"):  # one line per feature used: it may be long
                yield Static(id="variable-use")
        yield Static(id="set-status")
        yield Footer()

    def _summary(self) -> Text:
        text = plain_text(f"run {self.run_id[:12]}  {self.details.get('name') or ''}", "bold")
        text.append("\n")
        if not self.details.get("rashomon"):  # stopped mid-frontier: the sets of the points done only
            text.append(POINTS_ONLY, style="yellow")
            return text
        text.append_text(set_summary(self.view, finished=True))
        summary = self.view.summary
        if not summary.running and summary.kept < summary.count:
            text.append(f"\n{summary.kept:,} of them kept (rashomon.max_models), best first")
        for line in range_lines(SetSummary.from_dict(self.details["rashomon"]).fairness):
            text.append("\n")
            text.append_text(plain_text(line))
        return text

    def _point_rows(self) -> list[tuple[int | None, Text]]:
        """The sets one can list, each a row of the points' table: the run's own set (when it
        has one), then each frontier point's (count, complete or the bound, threshold); the
        point whose kept members are the run's own set's (a frontier's chosen point) says so."""
        rows: list[tuple[int | None, Text]] = []
        if self.details.get("rashomon"):
            rows.append((None, Text("the run's Rashomon set", style="bold")))
        for point in self.points:
            line = plain_text(rashomon_point_text(point))
            if point.shared and self.details.get("rashomon"):
                line.append("  the run's own set", style="green")
            rows.append((point.point, line))
        return rows

    def on_mount(self) -> None:
        table = self.query_one("#members", DataTable)
        for column in ("rank", "objective", "rules or features"):
            table.add_column(column, key=column)
        if self.points:
            points = self.query_one("#set-points", DataTable)
            points.add_column(Text("sets per frontier point: enter lists a set's members", style="bold"), key="set")
            for point, line in self._point_rows():
                points.add_row(line, key="run" if point is None else str(point))
            rows = [point for point, _ in self._point_rows()]
            points.move_cursor(row=rows.index(self.point))
        self.query_one("#where-error", Static).display = False
        self._load("", "", "")
        table.focus()

    def check_action(self, action: str, parameters: tuple[object, ...]) -> bool | None:
        """``p`` is offered only for a run with frontier points' sets to choose from."""
        return bool(self.points) if action == "points" else True

    def action_curves(self) -> None:
        """The run's set's figures as epsilon grows (``glasswork.tui.curves``)."""
        from glasswork.tui.curves import NO_CURVES, CurvesScreen, curves_of

        doc = curves_of(self.details.get("rashomon"))
        if doc is None:
            self.notify(NO_CURVES, severity="warning")
            return
        self.app.push_screen(CurvesScreen(f"run {self.run_id[:12]}", doc))

    def action_points(self) -> None:
        if self.points:
            self.query_one("#set-points", DataTable).focus()

    def _filters(self) -> tuple[str, str, str]:
        uses, avoids, where = (self.query_one(f"#f-{n}", Input).value.strip() for n in ("uses", "avoids", "where"))
        return uses, avoids, where

    @on(Input.Submitted)
    def _filter_changed(self) -> None:
        self.query_one("#where-error", Static).display = False  # shown again if the new one is bad too
        self._load(*self._filters())
        self.query_one("#members", DataTable).focus()

    def action_filter(self) -> None:
        self.query_one("#f-where", Input).focus()

    @work(thread=True, exclusive=True, group="rashomon", exit_on_error=False)
    def _load(self, uses: str, avoids: str, where: str) -> None:
        """The kept members of the set chosen (the run's, or a point's) that the filters let
        through: ``uses``/``avoids`` by the store, ``where`` read against the figures recorded
        with the set (never recomputed); an expression that cannot be read is shown, not applied."""
        from glasswork.rashomon.features import feature_lookup
        from glasswork.rashomon.query import QueryError, compile_query
        from glasswork.store import StoreError

        point = self.point
        try:
            if point not in self.kept:  # read once per set: a new filter needs no read of its own
                self.set_features[point] = self.store.rashomon_features(self.run_id, point=point)
                self.decisions[point] = self.store.rashomon_decisions(self.run_id, point=point)
                self.kept[point] = self.store.rashomon_members(self.run_id, point=point)
            features, kept = self.set_features[point], self.kept[point]
            known = figure_names(kept)
            query = None
            if where:
                query = compile_query(
                    where, known, lambda name: feature_lookup(self.store, self.run_id, self.details, name, point)
                )
            rows = kept
            if uses or avoids:
                named = ([uses] if uses else [], [avoids] if avoids else [])
                rows = self.store.rashomon_members(self.run_id, *named, point=point)
        except StoreError as exc:
            self.app.call_from_thread(self.notify, str(exc), title="run store", severity="error")
            return
        except QueryError as exc:
            self.app.call_from_thread(self._bad_where, exc)
            return
        if query is not None:
            rows = [row for row in rows if query.matches(row)]
        chosen = (uses, avoids, where, [] if query is None else query.figures())
        self.app.call_from_thread(self._show, point, features, known, rows, chosen)

    def _bad_where(self, error: Any) -> None:
        """An expression that cannot be read: its message and a caret under the column, inline;
        the members listed (and the filter they were listed by) stay as they were."""
        kept = repr(self.where) if self.where else "none"
        lines = [
            plain_text(f"filter not applied: {error}", "bold"),
            *(plain_text(line) for line in error.pointed().splitlines()),
            plain_text(f"the filter in force is still {kept}", "dim"),
        ]
        said = Text("\n").join(lines)
        box = self.query_one("#where-error", Static)
        box.update(said)
        box.display = True

    def _show(
        self, point: int | None, features: list[str], known: list[str], rows: list[Any], chosen: tuple[Any, ...]
    ) -> None:
        if point != self.point:
            return  # another set was chosen meanwhile: its own load lists it
        uses, avoids, self.where, self.where_figures = chosen
        self.uses_avoids = (uses, avoids)
        self.features, self.known, self.matched = features, known, rows
        self.query_one("#where-error", Static).display = False
        for selector in ("#f-uses", "#f-avoids"):
            self.query_one(selector, Input).suggester = SuggestFromList(self.features, case_sensitive=True)
        self._redraw()

    def _columns(self) -> list[str]:
        """The table's columns: rank, objective and the member each decides as, the figures
        (``shown_figures``: accuracy and AUC, every audited fairness metric on the training and
        test rows, those the filter and the sort name), size, the number of features used, and
        the rules."""
        fairness = SetSummary.from_dict(self.details.get("rashomon") or {}).fairness if self.point is None else None
        audited = [
            name
            for metric in (fairness or {}).get("metrics") or []
            for name in (metric, f"test_{metric}")
            if name in self.known
        ]
        sort = [self.sort[0]] if self.sort[0] in self.known else []
        figures = shown_figures(self.known, [*audited, *self.where_figures, *sort], fairness)
        shown = [f for f in figures if f != "size"]
        return ["rank", "objective", "decides as", *shown, "size", "n_features", "rules or features"]

    def _like(self) -> dict[int, int]:
        """The set listed's decisions: each kept member's rank -> the rank it decides as."""
        return self.decisions.get(self.point) or {}

    def _sorted(self) -> list[Any]:
        name, descending = self.sort
        sign = -1 if descending else 1
        if name == "n_features":
            return sorted(self.matched, key=lambda row: (sign * len(row.features), row.rank))
        if name == "decides as":  # the members deciding alike together, each decision's best first
            like = self._like()
            return sorted(self.matched, key=lambda row: (sign * like.get(row.rank, row.rank), row.rank))
        if name == "rank" and not descending:
            return list(self.matched)
        return sorted_members(self.matched, name, descending)

    def _ordered(self) -> list[Any]:
        """The members matched in the order chosen; with ``d``, only the first of each decision
        (``one_per_decision``, as ``glasswork rashomon --distinct``, after the filters and the sort)."""
        ordered = self._sorted()
        if not self.distinct:
            return ordered
        return one_per_decision(ordered, self._like())

    def _redraw(self) -> None:
        """Fill the table, the variable use and the status from the members matched, as sorted."""
        table = self.query_one("#members", DataTable)
        current = self._current()
        ordered = self._ordered()
        self.ordered = len(ordered)
        self.members = ordered[:STORED_LIMIT]
        self.columns = self._columns()
        like = self._like()
        table.clear(columns=True)
        for column in self.columns:
            label = plain_text(column)
            if column == self.sort[0]:
                label.append(" ▼" if self.sort[1] else " ▲", style="bold")
            table.add_column(label, key=column)
        for row in self.members:
            values = member_figures(row)
            cells = [figure_cell(values.get(name), row.metrics is not None) for name in self.columns[3:-3]]
            size = Text("n/a", style="dim") if row.size is None else Text(str(row.size), justify="right")
            table.add_row(
                str(row.rank),
                fmt(row.objective, 8),
                decision_text({"rank": row.rank, "decides_as": like.get(row.rank)}),
                *cells,
                size,
                Text(str(len(row.features)), justify="right"),
                member_text(row.features, row.model),
                key=str(row.rank),
            )
        if current is not None and current in self.members:
            table.move_cursor(row=self.members.index(current))
        elif self.members:  # its member left the listing (one per decision): the first one
            table.move_cursor(row=0)
        self.query_one("#variable-use", Static).update(variable_use_text(self.members, self.features))
        self.query_one("#set-status", Static).update(self._status())

    def _status(self) -> Text:
        point = self.point
        status = Text()
        kept = len(self.kept.get(point) or [])
        if point is not None:  # the CLI's words for a point's set (glasswork rashomon RUN --point K)
            chosen = next(p for p in self.points if p.point == point)
            text = rashomon_summary_text(chosen.summary(kept))
            status.append_text(plain_text(f"point {point}'s set: {text}\n", "bold"))
        status.append(f"{len(self.members):,} member(s) listed")
        if self.distinct:
            status.append(", one per distinct decision", style="bold")
        if self.ordered > len(self.members):
            status.append(f" (the first {STORED_LIMIT:,}; a filter narrows them)")
        uses, avoids = self.uses_avoids
        if uses or avoids or self.where:
            status.append(f"; {len(self.matched):,} of {kept:,} kept match", style="bold")
        for label, name in (("using", uses), ("avoiding", avoids)):
            if name:
                status.append_text(plain_text(f"  {label} {name!r}"))
                if name not in self.features:
                    status.append("  (no kept member uses it: names are exact)", style="yellow")
        if self.where:
            status.append_text(plain_text(f"  where {self.where!r}"))
        name, descending = self.sort
        if (name, descending) != ("rank", False):
            status.append(f"  sorted by {name}, {'largest' if descending else 'smallest'} first")
        like = self._like()
        if like:
            ways = len(set(like.values()))
            said = f"\nthe {len(like):,} kept member(s) decide the training rows in {ways:,} distinct way(s)"
            status.append(said + ("" if self.distinct else "; d lists one per way"), style="dim")
        elif kept:  # a set recorded without its members' prediction fingerprints
            status.append("\nwhich member each decides as is not recorded for this set ('-')", style="dim")
        return status

    def action_sort(self) -> None:
        """Sort on the next column (after the rules, back to rank), smallest first."""
        sortable = self.columns[:-1] or ["rank"]
        at = sortable.index(self.sort[0]) if self.sort[0] in sortable else -1
        self._sort_on(sortable[(at + 1) % len(sortable)], False)

    def action_variable_use(self) -> None:
        """Show or hide the variable use beside the table (room for long rules)."""
        panel = self.query_one("#variable-use-box")
        panel.display = not panel.display

    def action_distinct(self) -> None:
        """List one member per decision (the first in the order shown), or every member again."""
        self.distinct = not self.distinct
        self._redraw()

    def action_reverse(self) -> None:
        self._sort_on(self.sort[0], not self.sort[1])

    @on(DataTable.HeaderSelected, "#members")
    def _header_clicked(self, event: DataTable.HeaderSelected) -> None:
        """A click on a header sorts on its column; a second click reverses the order."""
        event.stop()
        name = str(event.column_key.value)
        if name == "rules or features":
            return
        self._sort_on(name, not self.sort[1] if name == self.sort[0] else False)

    def _sort_on(self, name: str, descending: bool) -> None:
        self.sort = (name, descending)
        self._redraw()

    def _current(self) -> Any:
        table = self.query_one("#members", DataTable)
        if not self.members or not 0 <= table.cursor_row < len(self.members):
            return None
        return self.members[table.cursor_row]

    @on(DataTable.RowSelected, "#members")
    def _selected(self) -> None:
        self.action_show()

    @on(DataTable.RowSelected, "#set-points")
    def _set_chosen(self, event: DataTable.RowSelected) -> None:
        """List the members of the set chosen in the points' table."""
        event.stop()
        key = event.row_key.value
        point = None if key == "run" or key is None else int(key)
        if point != self.point:
            self.point = point
            self.members, self.matched = [], []
            self.query_one("#members", DataTable).clear()
        self._load(*self._filters())
        self.query_one("#members", DataTable).focus()

    def action_show(self) -> None:
        row = self._current()
        if row is None:
            self.notify("no member selected")
            return
        title = member_title(str(self.details.get("name") or ""), row.rank, row.objective, self.point)
        member = {"model": row.model, "model_text": row.model_text}
        show_member(self, title, member, self.details.get("solver"))

    def action_export(self) -> None:
        row = self._current()
        point = self.point
        if row is None:
            self.notify("no member selected")
            return
        if row.model is None:
            self.notify(SUMMARY_ONLY, title="export", severity="warning")
            return
        self._export(row, point)

    @work(thread=True, exclusive=True, group="export", exit_on_error=False)
    def _export(self, row: Any, point: int | None) -> None:
        """Write the member in every format its run allows, as the run screen's ``e`` does."""
        from glasswork.export import FORMATS, ExportError, default_path, export_run, member_details, write_file

        details = member_details(
            self.details, row.rank, row.objective, row.model, point=point, metrics=row.metrics, fairness=row.fairness
        )
        folder = self.folder or Path.cwd()
        written, skipped = [], []
        for form in FORMATS:
            path = default_path(details, form, folder)
            try:
                write_file(path, export_run(details, form))
            except ExportError as exc:
                skipped.append(f"{form}: {exc}")
                continue
            written.append(path)
        self.written += written
        of = "" if point is None else f" of point {point}'s set"
        message = f"member {row.rank}{of} " + (
            ("exported to " + ", ".join(str(p) for p in written)) if written else "not exported"
        )
        if skipped:
            message += "\n" + "\n".join(skipped)
        self.app.call_from_thread(
            self.notify, message, title="export", severity="warning" if skipped else "information", timeout=12
        )
