"""Terminal output for the CLI: the consoles, numbers and gaps for people, the live progress line
on stderr and the printed result.

Rendering lives here, not in the runner, so the runner stays usable from notebooks and workers.
Every command prints through ``make_console``: on a terminal, rich's usual output; into a pipe or
a file, plain full lines (no colour, no wrapping at 80 columns, no table cut with an ellipsis).
"""

from __future__ import annotations

import math
import re
import sys
import time
from collections.abc import Iterable, Sequence
from typing import TYPE_CHECKING, Any

from glasswork.contract.events import Event
from glasswork.contract.result import relative_gap
from glasswork.quoting import terminal_text
from glasswork.rashomon import PointSet, SetSummary, decides_as
from glasswork.startup import discard_output
from rich.console import Console, Group
from rich.live import Live
from rich.segment import Segment
from rich.table import Table
from rich.text import Text

if TYPE_CHECKING:
    from glasswork.contract.record import RunInfo, RunOutcome


PIPE_WIDTH = 100_000
"""The width rich lays out for when the output is not a terminal: wide enough that no line of a
table or a model is wrapped or cut; nothing is padded to it (tables take the width they need)."""


_TRAILING_BLANKS = re.compile(r"[ \t]+(?=\n)")


class _CommandConsole(Console):
    """A console whose reader may leave (``| head``): the rest of its output is dropped and the
    command goes on (rich's own answer is ``SystemExit(1)``, which would end a stored run as failed
    and skip its exports). Into a pipe or a file (``trim``) its lines carry no trailing blanks:
    rich pads a table's cells to the column width, which a terminal hides and a file keeps."""

    def __init__(self, *args: Any, trim: bool = False, **kwargs: Any) -> None:
        super().__init__(*args, **kwargs)
        self.trim = trim

    def on_broken_pipe(self) -> None:
        if not self.stderr:  # a closed stderr: glasswork.cli.app.ClosableStderr drops what follows
            stdout_closed()

    def _render_buffer(self, buffer: Iterable[Segment]) -> str:
        text = super()._render_buffer(buffer)
        return _TRAILING_BLANKS.sub("", text) if self.trim else text


def make_console(*, stderr: bool = False) -> Console:
    """The console a command prints through: rich's own on a terminal; into a pipe or a file, one
    that neither wraps nor cuts (full lines a log or ``grep`` can read, without trailing blanks)
    and writes no colour codes."""
    console = _CommandConsole(stderr=stderr)
    if console.is_terminal:
        return console
    return _CommandConsole(
        stderr=stderr, width=PIPE_WIDTH, soft_wrap=True, no_color=True, highlight=False, emoji=False, trim=True
    )


def stdout_closed() -> None:
    """The reader of stdout went away (``glasswork ... | head``): what the command still prints, and
    Python's flush at exit, go to the null device instead of failing with ``BrokenPipeError``."""
    discard_output(sys.stdout)


def fmt_number(value: Any, digits: int = 6) -> str:
    """Numbers as people write them: ``-`` for missing or NaN, ``digits`` significant figures in
    positional notation with thousands separated (``1,234,568``, ``0.0799061``, ``4``); only the
    very small and very large in scientific notation, shortened (``9.48e-07``)."""
    if value is None:
        return "-"
    if isinstance(value, bool):
        return str(value)
    if isinstance(value, int):
        return f"{value:,}"
    if isinstance(value, float):
        if math.isnan(value):
            return "-"
        if math.isinf(value):
            return "inf" if value > 0 else "-inf"
        if value == 0:
            return "0"
        magnitude = math.floor(math.log10(abs(value)))
        if magnitude < -4 or magnitude >= 15:
            return f"{value:.{min(digits, 3)}g}"
        return _trimmed(f"{value:,.{max(0, digits - 1 - magnitude)}f}")
    return str(value)


def _trimmed(text: str) -> str:
    """``0.1000`` as ``0.1`` and ``4.000`` as ``4``: trailing zeros say nothing to a reader."""
    if "." in text:
        text = text.rstrip("0").rstrip(".")
    return "0" if text in ("-0", "") else text


def fmt_percent(fraction: float) -> str:
    """A share as a percentage with up to 3 significant figures and 3 decimals (``12.3 %``,
    ``0.106 %``); a share that would round to zero but is not zero reads ``< 0.001 %``."""
    percent = 100.0 * fraction
    if percent == 0:
        return "0 %"
    if abs(percent) < 0.0005:
        return "< 0.001 %" if percent > 0 else "> -0.001 %"
    magnitude = math.floor(math.log10(abs(percent)))
    return f"{_trimmed(f'{percent:,.{min(3, max(0, 2 - magnitude))}f}')} %"


def fmt_gap(objective: float | None, lower_bound: float | None, status: Any = None, *, compact: bool = False) -> str:
    """The gap as people read it, the one form every command and screen prints: the relative gap
    (``glasswork.contract.result.relative_gap``) in percent, and the absolute lower bound next to it, e.g.
    ``0.106 % (lower bound 0.2345)``. ``0 % (optimal)`` only for a run whose certificate is
    ``optimal``; a proof within a solver's tolerance keeps its gap and says both. ``-`` with no bound.
    ``compact`` is the same figure for a narrow column whose row shows the bound and status nearby:
    the percentage alone (``0.106 %``).
    """
    gap = relative_gap(objective, lower_bound)
    if gap is None:
        return "-"
    if compact:
        return fmt_percent(gap)
    optimal = str(status) == "optimal"
    if optimal and gap == 0:
        return "0 % (optimal)"
    bound = f"lower bound {fmt_number(lower_bound)}"
    return f"{fmt_percent(gap)} ({'optimal within tolerance, ' if optimal else ''}{bound})"


def plain_text(value: Any, style: str = "", *, newlines: bool = False) -> Text:
    """Data (a name, a label, a message) for a rich table or print: no markup is read in it and no
    control character (ESC, carriage return, bidi mark) reaches the terminal."""
    return Text(terminal_text(value, newlines=newlines), style=style)


def fmt_when(value: Any, *, seconds: bool = True) -> str:
    """A stored UTC time in the local time zone."""
    if value is None:
        return "-"
    return value.astimezone().strftime("%Y-%m-%d %H:%M:%S" if seconds else "%Y-%m-%d %H:%M")


def fmt_bytes(n: int) -> str:
    size = float(n)
    for unit in ("B", "KiB", "MiB", "GiB"):
        if size < 1024 or unit == "GiB":
            return f"{size:.1f} {unit}" if unit != "B" else f"{int(size)} B"
        size /= 1024
    return f"{n} B"


class ProgressSink:
    """A one-line live view on stderr: elapsed, incumbent, bound, gap, nodes.

    It stays silent for runs shorter than ``delay`` seconds, and when stderr is not a terminal,
    so scripted and piped runs get clean output.
    """

    def __init__(self, console: Console | None = None, *, delay: float = 0.5) -> None:
        self.console = console or make_console(stderr=True)
        self.delay = delay
        self._live: Live | None = None
        self._started = 0.0
        self._last: Event | None = None
        self._objective: float | None = None
        self._lower: float | None = None
        self._nodes: int | None = None
        self._solver = ""

    def on_start(self, run: RunInfo) -> None:
        self._started = time.monotonic()
        self._solver = run.solver

    def on_event(self, event: Event) -> None:
        if event.kind == "log":
            if event.level in ("warning", "error"):
                self.console.print(plain_text(event.message, "yellow", newlines=True))
            return
        if event.objective is not None:
            self._objective = event.objective
        if event.lower_bound is not None:
            self._lower = event.lower_bound
        if event.nodes is not None:
            self._nodes = event.nodes
        self._last = event
        if not self.console.is_terminal:
            return
        if self._live is None and time.monotonic() - self._started >= self.delay:
            self._live = Live(self._render(), console=self.console, refresh_per_second=8, transient=True)
            self._live.start()
        elif self._live is not None:
            self._live.update(self._render())

    def _render(self) -> Text:
        elapsed = time.monotonic() - self._started
        parts = [
            f"{self._solver} {elapsed:7.1f}s",
            f"best {fmt_number(self._objective)}",
            f"gap {fmt_gap(self._objective, self._lower)}",
        ]
        if self._nodes is not None:
            parts.append(f"nodes {self._nodes:,}")
        return Text("  ".join(parts), style="cyan")

    def on_finish(self, run: RunInfo, outcome: RunOutcome | None, error: BaseException | None) -> None:
        if self._live is not None:
            self._live.stop()
            self._live = None


def _is_records(value: Any) -> bool:
    return isinstance(value, list) and bool(value) and all(isinstance(v, dict) for v in value)


def _records_table(title: str, records: list[dict[str, Any]], limit: int = 50) -> Table:
    """A list of flat dicts (a score-card pool, a frontier) as a table of its scalar columns."""
    columns = [k for k, v in records[0].items() if isinstance(v, (int, float, str, bool)) or v is None]
    table = Table(title=title.replace("_", " ").capitalize(), title_justify="left", title_style="bold")
    for column in columns:
        table.add_column(plain_text(column), justify="right" if not isinstance(records[0][column], str) else "left")
    for record in records[:limit]:
        table.add_row(*(plain_text(_cell(c, record.get(c))) for c in columns))
    if len(records) > limit:
        table.caption = f"{len(records) - limit} more not shown (see --json)"
    return table


def _cell(column: str, value: Any) -> str:
    """A record's value; a ``gap`` (the relative gap, a fraction) in the one form of ``fmt_gap``'s
    column, a percentage (its row shows the objective and bound beside it)."""
    if column == "gap" and isinstance(value, (int, float)) and not isinstance(value, bool) and math.isfinite(value):
        return fmt_percent(float(value))
    return fmt_number(value)


def render_outcome(outcome: RunOutcome, console: Console) -> None:
    """Print the model, the certificate, the metrics and the search stats."""
    from glasswork.display.views import model_view

    info, result = outcome.info, outcome.result
    cert = result.certificate
    console.print(
        Text.assemble(
            plain_text(info.name, "bold"),
            plain_text(
                f"  solver {info.solver} {info.solver_version}  "
                f"train {info.n_train:,} rows, test {info.n_test:,} rows, {info.n_features:,} features"
            ),
        )
    )
    console.print()
    console.print("[bold]Model[/bold]")
    if result.model is None:  # no model meets the constraints: the reason, in the status' colour
        console.print(plain_text(outcome.no_model, "red" if cert.status.value == "infeasible" else "yellow"))
    else:  # the model as its plugin draws it (the render_model hook), else its own text
        console.print(model_view(result.model.to_dict(), result.model.to_text()))
    console.print()

    certificate = Table.grid(padding=(0, 2))
    status_style = "green" if cert.status.value == "optimal" else "yellow"
    certificate.add_row("status", Text(cert.status.value, style=status_style))
    certificate.add_row("objective", fmt_number(cert.objective, 10))
    certificate.add_row("lower bound", fmt_number(cert.lower_bound, 10))
    certificate.add_row("gap", fmt_gap(cert.objective, cert.lower_bound, cert.status))
    console.print(Group(Text("Certificate", style="bold"), certificate))
    console.print()

    if result.metrics:
        table = Table.grid(padding=(0, 2))
        for key, value in sorted(result.metrics.items()):
            if isinstance(value, (int, float)):
                table.add_row(plain_text(key), fmt_number(value))
        console.print(Group(Text("Metrics", style="bold"), table))
        console.print()

    stats = Table.grid(padding=(0, 2))
    stats.add_row("elapsed", f"{outcome.elapsed:.3f} s")
    stats.add_row("peak memory", fmt_bytes(outcome.peak_memory))
    for key, value in sorted(result.stats.items()):
        if isinstance(value, (int, float, str, bool)):
            stats.add_row(plain_text(key), plain_text(fmt_number(value)))
    console.print(Group(Text("Search", style="bold"), stats))
    for key, value in result.stats.items():
        if _is_records(value):
            console.print()
            console.print(_records_table(key, value))
    for table in fairness_tables(outcome.fairness):
        console.print()
        console.print(table)
    frontier = frontier_table(result.stats)
    if frontier is not None:
        console.print()
        console.print(frontier)
    rset = result.rashomon
    if rset is not None:
        console.print()
        like = decides_as((i + 1, m.fingerprint) for i, m in enumerate(rset.members))
        members = [
            {"rank": i + 1, **m.to_dict(), "decides_as": like.get(i + 1)}
            for i, m in enumerate(rset.members[:RUN_MEMBERS_SHOWN])
        ]
        console.print(Text("Rashomon set", style="bold"))
        render_rashomon(SetSummary.of_set(rset, outcome.multiplicity), members, console)
        if rset.kept > len(members):
            console.print(
                Text(f"best {len(members)} of {rset.kept:,} kept shown; 'glasswork rashomon RUN' lists them all")
            )
    if outcome.interrupted:
        console.print()
        console.print("[yellow]The run was interrupted; the model above is the best found before the stop.[/yellow]")


RUN_MEMBERS_SHOWN = 5  # members of a set ``glasswork run`` prints (``glasswork rashomon`` lists them all)


def rashomon_summary_text(summary: SetSummary) -> str:
    """A set in one line: its count, whether it is complete (else the bound on what was not
    enumerated, or that it is a sample), its threshold and epsilon, and how many are kept."""
    count, kept = summary.count, summary.kept
    parts = [f"{count:,} model{'s' if count != 1 else ''} with objective <= {fmt_number(summary.threshold)}"]
    if summary.epsilon is not None:
        proven = "" if summary.optimum_proven else ", not proven optimal"
        parts[0] += f" (epsilon {fmt_number(summary.epsilon)} over the optimum {fmt_number(summary.optimum)}{proven})"
    if summary.complete:
        parts.append("complete")
    elif summary.running:  # a live run's set, as its events have announced it so far
        parts.append("the run is still running: the count and the members grow until it ends")
    elif not summary.exhaustive:
        parts.append("a sample, not the whole set")
    else:
        bound = summary.unenumerated_bound
        parts.append(
            "INCOMPLETE: the enumeration stopped"
            + (f"; every model not counted has objective >= {fmt_number(bound)}" if bound is not None else "")
        )
    parts.append(f"{kept:,} kept")
    return "; ".join(parts)


def rashomon_point_text(point: PointSet) -> str:
    """One sweep point's set (``RunStore.rashomon_points``) in one line: its count (``+`` when
    incomplete), its threshold, and complete or the bound on every model it did not count; the
    same words in ``glasswork rashomon RUN`` and the terminal UI."""
    done = (
        "complete"
        if point.complete
        else f"incomplete (every model not counted >= {fmt_number(point.unenumerated_bound, 8)})"
    )
    return (
        f"point {point.point}: {point.count:,}{'' if point.complete else '+'} model{'' if point.count == 1 else 's'} "
        f"within objective {fmt_number(point.threshold, 8)}, {done}"
    )


def multiplicity_text(figures: dict[str, Any] | None) -> str | None:
    """The multiplicity figures in one line (``None`` when there are none)."""
    if not figures:
        return None
    if figures.get("error"):
        return f"no multiplicity figures: a member's model failed to predict ({figures['error']})"
    where = f"on {figures['n_rows']:,} {figures['rows']} rows" + (" (weighted)" if figures.get("weighted") else "")
    if figures.get("members", 0) < figures.get("count", 0):
        where += f", over the {figures['members']:,} kept members of {figures['count']:,}"
    if figures.get("spread_mean") is not None:  # regression: how far the members' predictions spread
        return (
            f"{where}: prediction spread mean {fmt_number(figures['spread_mean'], 4)}, "
            f"max {fmt_number(figures['spread_max'], 4)}, {figures['split_rows']:,} rows where members differ"
        )
    if figures.get("ambiguity") is None:
        return f"{where}: no prediction figures ({'; '.join(figures.get('notes') or [])})"
    text = f"{where}: ambiguity {fmt_percent(figures['ambiguity'])}, discrepancy {fmt_percent(figures['discrepancy'])}"
    if "split_rows" in figures:
        text += f", {figures['split_rows']:,} rows with a split vote"
    skipped = [n for n in figures.get("notes") or [] if not n.startswith("over the ")]  # what a huge set cut
    return text + (f" ({'; '.join(skipped)})" if skipped else "")


def member_rules(model: dict[str, Any] | None) -> list[str] | None:
    """A member's rules as its model prints them, in the order it applies them: each rule's text
    (``antecedent`` or ``text``, negations as written) with its ``prediction`` when it has one, then
    its default's; ``None`` for a model without rules (a score card) or a member kept as a summary."""
    if not isinstance(model, dict) or not isinstance(model.get("rules"), list):
        return None
    out = []
    for rule in model["rules"]:
        if not isinstance(rule, dict):
            return None
        text = rule.get("antecedent", rule.get("text"))
        if text is None:
            return None
        out.append(f"{text} -> {rule['prediction']}" if "prediction" in rule else str(text))
    default = model.get("default")
    if isinstance(default, dict) and "prediction" in default:
        out.append(f"else {default['prediction']}")
    return out


def rule_features(model: dict[str, Any] | None, feature_names: list[str]) -> dict[str, tuple[str, ...]]:
    """Each rule text of ``model`` (as ``member_rules`` prints it, without its prediction) and the
    features of the training matrix it reads (``items`` index ``feature_names``; ``conditions``
    name theirs): what ``--uses 'credit_score>645'`` stands for."""
    out: dict[str, tuple[str, ...]] = {}
    for rule in (model or {}).get("rules") or []:
        if not isinstance(rule, dict):
            continue
        text = rule.get("antecedent", rule.get("text"))
        read = [
            feature_names[int(item[0])]
            for item in rule.get("items") or []
            if isinstance(item, (list, tuple)) and item and 0 <= int(item[0]) < len(feature_names)
        ]
        read += [c["feature"] for c in rule.get("conditions") or [] if isinstance(c, dict) and "feature" in c]
        if isinstance(text, str) and read:
            out[text] = tuple(dict.fromkeys(read))
    return out


def rashomon_table(members: list[dict[str, Any]], *, title: str | None = None, figures: Sequence[str] = ()) -> Table:
    """Members of a set, one line each: rank, objective, the ``figures`` named (``n/a`` where a
    member has none: kept as a summary, or recorded before members had figures), its rules in
    the order the model applies them (``member_rules``; the features it uses for a model without
    rules) and the member it decides as (its ``decides_as``: ``glasswork.rashomon.decides_as``)."""
    from glasswork.rashomon.query import figures_of

    table = Table(title=title, title_justify="left", box=None, pad_edge=False)
    described = [member.get("rules") or member_rules(member.get("model")) for member in members]
    what = "rules" if any(described) else "features"
    columns = [("rank", "right"), ("objective", "right"), *((f, "right") for f in figures)]
    for column, justify in (*columns, (what, "left"), ("decides as", "left")):
        table.add_column(plain_text(column), justify=justify)  # type: ignore[arg-type]
    for member, rules in zip(members, described):
        features = member.get("features") or []
        text = "; ".join(rules) if rules else (", ".join(features) if features else "(none)")
        values = figures_of(member)
        table.add_row(
            str(member["rank"]),
            fmt_number(member.get("objective"), 8),
            *(_member_figure(name, values.get(name), member) for name in figures),
            plain_text(text),
            decision_text(member),
        )
    return table


def decision_text(member: dict[str, Any]) -> str:
    """The member a member decides as, for a table cell: ``itself``, ``member K``, ``-`` if not known."""
    like = member.get("decides_as")
    if like is None:
        return "-"
    return "itself" if like == member.get("rank") else f"member {like}"


def _member_figure(name: str, value: float | None, member: dict[str, Any]) -> str:
    """One figure of a member for a table cell: ``n/a`` when the member has no figures at all,
    ``undefined`` for a fairness figure of an empty cell, else four significant decimals."""
    if value is None:
        return "n/a" if member.get("metrics") is None else "undefined"
    return fmt_number(value, 4) if name in ("size",) or abs(value) >= 10 else f"{value:.4f}"


RELIANCE_ROWS_SHOWN = 10  # features (and raw columns) a set's reliance tables print, the most relied on first


def reliance_tables(figures: dict[str, Any] | None) -> list[Table]:
    """Each feature's share of the set and its importance range (model class reliance: lowest and
    highest over the members), then the range per raw column; the most relied on first."""
    figures = figures or {}
    use = figures.get("variable_use") or {}
    tables = []
    for heading, ranges, shares in (
        ("feature", figures.get("reliance") or {}, use),
        ("raw column", figures.get("reliance_columns") or {}, None),
    ):
        names = list(shares or ranges)
        if not names:
            continue
        names.sort(key=lambda n: (-((ranges.get(n) or [1.0, 1.0])[1]), -(use.get(n) or 0.0), n))
        table = Table(box=None, pad_edge=False)
        table.add_column(heading)
        if shares is not None:
            table.add_column("used by", justify="right")
        if ranges:  # none when the members keep no model (rashomon.keep: summary)
            table.add_column("reliance min", justify="right")
            table.add_column("reliance max", justify="right")
        for name in names[:RELIANCE_ROWS_SHOWN]:
            share = [] if shares is None else [fmt_percent(float(shares[name]))]
            low, high = ranges.get(name) or [None, None]
            table.add_row(plain_text(name), *share, *((fmt_number(low, 5), fmt_number(high, 5)) if ranges else ()))
        if len(names) > RELIANCE_ROWS_SHOWN:
            table.add_row(plain_text(f"({len(names) - RELIANCE_ROWS_SHOWN:,} more; --json has them all)"))
        tables.append(table)
    return tables


def render_rashomon(
    summary: SetSummary, members: list[dict[str, Any]], console: Console, figures: Sequence[str] | None = None
) -> None:
    """A set's summary line, its multiplicity figures (with each feature's share and reliance
    range), the range of each audited fairness metric over its members, and the given members
    with ``figures`` as columns (by default those ``query.shown_figures`` picks)."""
    from glasswork.rashomon.figures import range_lines
    from glasswork.rashomon.query import figure_names_of, shown_figures

    console.print(plain_text(rashomon_summary_text(summary)))
    line = multiplicity_text(summary.multiplicity)
    if line is not None:
        console.print(plain_text(line))
    for table in reliance_tables(summary.multiplicity):
        console.print(table)
    for line in range_lines(summary.fairness):
        console.print(plain_text(line))
    if members:
        if figures is None:
            figures = shown_figures(figure_names_of(members), (), summary.fairness)
        console.print(rashomon_table(members, figures=figures))


def fmt_difference(value: float | None) -> str:
    """A fairness figure (a difference of two rates, in [0, 1]) to four decimals, so a column of
    them lines up; ``undefined`` for an empty group or cell, never 0."""
    return "undefined" if value is None else f"{value:.4f}"


def fairness_tables(audit: dict[str, Any] | None) -> list[Table]:
    """The fairness audit (``glasswork.fairness.audit``), one table per protected group: each metric on
    the training and test rows, the group's rows against the reference's in the caption. An
    undefined figure (an empty group or cell) reads ``undefined``, never 0."""
    if not audit:
        return []
    if "error" in audit:
        table = Table.grid()
        table.add_row(plain_text(f"no fairness figures: the model failed to predict ({audit['error']})", "yellow"))
        return [table]
    parts = [part for part in ("train", "test") if part in audit]
    tables = []
    for i, label in enumerate(audit.get("groups") or []):
        table = Table(
            title=Text.assemble("Fairness: ", plain_text(label), " against the rest"),
            title_justify="left",
            title_style="bold",
        )
        table.add_column("metric")
        for part in parts:
            table.add_column(part, justify="right")
        per_part = [audit[part]["groups"][i] for part in parts]
        for metric in audit.get("metrics") or []:
            if metric not in per_part[0]:
                continue  # calibration of a model without probabilities
            cells = [g.get(metric) for g in per_part]
            table.add_row(plain_text(metric), *(plain_text(fmt_difference(v)) for v in cells))
        sizes = [
            f"{part} {g['protected']['rows']:,} protected / {g['reference']['rows']:,} reference rows"
            for part, g in zip(parts, per_part)
        ]
        table.caption = plain_text("; ".join(sizes))
        table.caption_justify = "left"
        tables.append(table)
    return tables


def fairness_text(audit: dict[str, Any] | None) -> str | None:
    """The fairness audit in one line (the groups, then each metric on the training / test rows),
    ``None`` without one: for a summary where a table does not fit (the TUI's run screen)."""
    if not audit:
        return None
    if "error" in audit:
        return f"no figures: the model failed to predict ({audit['error']})"
    parts = [part for part in ("train", "test") if part in audit]
    figures = []
    for metric in audit.get("metrics") or []:
        if parts and metric in audit[parts[0]]:
            values = (audit[part].get(metric) for part in parts)
            figures.append(f"{metric} " + " / ".join(fmt_difference(v) for v in values))
    return f"{'; '.join(audit.get('groups') or [])} against the rest ({' / '.join(parts)}): " + ", ".join(figures)


MODEL_LINE = 60
"""The most characters of a model's text a table cell shows (``one_line``)."""


def one_line(text: Any) -> str:
    """A model's text on one line for a table cell: its lines joined by `` / ``, runs of blanks
    made one, cut at ``MODEL_LINE`` characters (``...``); ``-`` without text."""
    if not isinstance(text, str) or not text.strip():
        return "-"
    joined = " / ".join(" ".join(line.split()) for line in text.splitlines() if line.strip())
    return joined if len(joined) <= MODEL_LINE else joined[: MODEL_LINE - 3].rstrip() + "..."


def frontier_table(stats: Any) -> Table | None:
    """The accuracy-fairness frontier of a run (``glasswork.frontier``, in its stats), one row per
    point: the limit it was held to, its model's figure, its certificate and the model on one
    line; ``None`` for a run without one. ``run`` and ``runs show`` print it."""
    from glasswork.frontier import end_words, frontier_of, limit_words

    document = frontier_of(stats)
    if document is None:
        return None
    metric = str(document.get("metric"))
    table = Table(
        title=plain_text(f"Fairness frontier: objective against {metric}"), title_justify="left", title_style="bold"
    )
    for column in ("#", "held to", metric, "objective", "lower bound", "gap", "status", "model"):
        table.add_column(plain_text(column), justify="left" if column in ("status", "model") else "right")
    for point, held in zip(document["points"], limit_words(document)):
        if not isinstance(point, dict):
            continue
        first = one_line(point.get("model_text"))
        status = str(point.get("status")) + (" (dominated)" if point.get("dominated") else "")
        cells = [
            point.get("point"),
            held,
            fmt_difference(point.get("unfairness")) if point.get("objective") is not None else "-",
            fmt_number(point.get("objective"), 10),
            fmt_number(point.get("lower_bound"), 10),
            fmt_gap(point.get("objective"), point.get("lower_bound"), point.get("status"), compact=True),
            status,
            first,
        ]
        table.add_row(*(plain_text(c) for c in cells))
    table.caption = plain_text(end_words(document))
    table.caption_justify = "left"
    return table
