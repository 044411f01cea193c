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

from glasswork.display.console import member_rules, plain_text, rashomon_point_text, rashomon_summary_text
from glasswork.rashomon import PointSet, SetSummary
from glasswork.tui.state import RashomonView
from glasswork.tui.views import fmt
from glasswork.tui.widgets import BACK_KEY, FILTER_KEY, HELP_KEY, RowTable
from rich.text import Text
from textual import on, work
from textual.app import ComposeResult
from textual.binding import Binding
from textual.containers import Horizontal, Vertical
from textual.screen import Screen
from textual.suggester import SuggestFromList
from textual.widgets import DataTable, Footer, Input, Static

from glasswork.rashomon.figures import range_lines
from glasswork.rashomon.query import figure_names, member_figures, shown_figures

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
    """A recorded run's set, read from the run store: filtered by a feature the members use or
    avoid, a member opened (enter) or exported (``e``) like any run's model. A frontier run lists
    its points' sets too; choosing one (``p``, then enter) lists that point's members in the same
    table, as ``glasswork rashomon RUN --point K`` does, and enter on the run's set goes back."""

    BINDINGS = [
        Binding("m", "show", "show model"),
        Binding("p", "points", "frontier points' sets"),
        Binding("e", "export", "export member"),
        Binding("c", "curves", "curves"),
        FILTER_KEY,
        BACK_KEY,
        HELP_KEY,
    ]
    DEFAULT_CSS = """
    RashomonScreen #set-summary { height: auto; padding: 0 1; background: $boost; }
    RashomonScreen #set-points { height: auto; max-height: 12; }
    RashomonScreen #set-filters { height: 3; }
    RashomonScreen #set-filters Input { width: 1fr; }
    RashomonScreen #set-status { height: auto; max-height: 3; padding: 0 1; color: $text-muted; }
    RashomonScreen DataTable { height: 1fr; }
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
        self.members: list[Any] = []  # RashomonMemberRow, as listed
        self.features: list[str] = []
        self.kept: dict[int | None, int] = {}  # members kept per set, once counted
        self.written: list[Path] = []

    @property
    def run_id(self) -> str:
        return str(self.details["run_id"])

    def compose(self) -> ComposeResult:
        yield Static(self._summary(), id="set-summary")
        if self.points:
            yield RowTable(id="set-points")
        with Horizontal(id="set-filters"):
            yield Input(placeholder="uses feature (exact name)", id="f-uses")
            yield Input(placeholder="avoids feature (exact name)", id="f-avoids")
        yield RowTable(id="members")
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
        self._load("", "")
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

    def _filters(self) -> tuple[str, str]:
        return self.query_one("#f-uses", Input).value.strip(), self.query_one("#f-avoids", Input).value.strip()

    @on(Input.Submitted)
    def _filter_changed(self) -> None:
        self._load(*self._filters())
        self.query_one("#members", DataTable).focus()

    def action_filter(self) -> None:
        self.query_one("#f-uses", Input).focus()

    @work(thread=True, exclusive=True, group="rashomon", exit_on_error=False)
    def _load(self, uses: str, avoids: str) -> None:
        """List the kept members of the set chosen (the run's, or a point's) through the filters."""
        from glasswork.store import StoreError

        point = self.point
        try:
            features = self.store.rashomon_features(self.run_id, point=point)
            if point not in self.kept:
                self.kept[point] = len(self.store.rashomon_members(self.run_id, point=point))
            rows = self.store.rashomon_members(
                self.run_id, [uses] if uses else [], [avoids] if avoids else [], STORED_LIMIT, point=point
            )
        except StoreError as exc:
            self.app.call_from_thread(self.notify, str(exc), title="run store", severity="error")
            return
        self.app.call_from_thread(self._show, point, features, rows, uses, avoids)

    def _show(self, point: int | None, features: list[str], rows: list[Any], uses: str, avoids: str) -> None:
        if point != self.point:
            return  # another set was chosen meanwhile: its own load lists it
        self.features = features
        self.members = rows
        for selector in ("#f-uses", "#f-avoids"):
            self.query_one(selector, Input).suggester = SuggestFromList(self.features, case_sensitive=True)
        table = self.query_one("#members", DataTable)
        fairness = SetSummary.from_dict(self.details.get("rashomon") or {}).fairness if point is None else None
        figures = shown_figures(figure_names(rows), (), fairness)
        table.clear(columns=True)
        for column in ("rank", "objective", *figures, "rules or features"):
            table.add_column(plain_text(column), key=column)
        for row in rows:
            values = member_figures(row)
            cells = [figure_cell(values.get(name), row.metrics is not None) for name in figures]
            table.add_row(
                str(row.rank), fmt(row.objective, 8), *cells, member_text(row.features, row.model), key=str(row.rank)
            )
        status = Text()
        if point is not None:  # the CLI's words for a point's set (glasswork rashomon RUN --point K)
            chosen = next(p for p in self.points if p.point == point)
            text = rashomon_summary_text(chosen.summary(self.kept.get(point, 0)))
            status.append_text(plain_text(f"point {point}'s set: {text}\n", "bold"))
        status.append(f"{len(rows):,} member(s) listed")
        if len(rows) >= STORED_LIMIT:
            status.append(f" (the best {STORED_LIMIT:,}; a filter narrows them)")
        for label, name in (("using", uses), ("avoiding", avoids)):
            if name:
                status.append_text(plain_text(f"  {label} {name!r}"))
                if name not in self.features:
                    status.append("  (no kept member uses it: names are exact)", style="yellow")
        self.query_one("#set-status", Static).update(status)

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
            self.members = []
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
